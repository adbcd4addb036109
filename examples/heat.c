/* The explicit heat equation in C under any hympi scheme, chosen at run time:
 *   u' = u + nu (S(u) - 6 u),  nu = 1/8,
 * S the sum of the six neighbours; zero outside a Dirichlet boundary, or
 * periodic. The initial field is the reference problem's
 * ((7i + 13j + 29k) % 17) / 16 - 0.5 on global indices.
 *
 *   mpirun -n 4 ./heat_c --scheme funneled --threads 3 --grid 64 --steps 20
 *
 * Options: --grid N | NXxNYxNZ | NX NY NZ (default 32), --steps N (10),
 * --scheme NAME (pure MPI), --threads N (1), --reserved M, --periodic,
 * --halo-depth H (temporal blocking: H steps per halo exchange through
 * hympi_sweep_block, default 1; the wavefront's tile height is chosen by
 * hympi_tune_block before the clock starts), --report PATH (the JSON summary that
 * hympi-lab study --app reads).
 *
 * Every scheme prints the same checksum (to round-off); every halo depth
 * the same as depth 1, to the last bit. Build with CMake
 * (find_package(hympi), target hympi::hympi) or with
 *   mpicc heat.c $(pkg-config --cflags --libs hympi) -o heat_c
 */
#include <hympi/hympi.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double kNu = 0.125;

/* The fields' layout (hympi_domain_layout). */
typedef struct {
  int halo;
  ptrdiff_t sj, sk;
} Layout;

/* What the sweep's box callback needs: the two arrays and their layout. */
typedef struct {
  const double* u;
  double* u_new;
  Layout layout;
} Heat;

/* One box of the update: reads u (halos included), writes u_new. The box
 * may reach into the halo (negative indices) in a sweep block. */
static void heat_update(const double* u, double* u_new, const Layout* l, const hympi_box* box) {
  for (int k = box->lo[2]; k < box->hi[2]; ++k)
    for (int j = box->lo[1]; j < box->hi[1]; ++j) {
      const ptrdiff_t row = l->halo + l->sj * (j + l->halo) + l->sk * (k + l->halo);
      for (int i = box->lo[0]; i < box->hi[0]; ++i) {
        const ptrdiff_t p = row + i;
        const double s = u[p - 1] + u[p + 1] + u[p - l->sj] + u[p + l->sj] + u[p - l->sk] + u[p + l->sk];
        u_new[p] = u[p] + kNu * (s - 6.0 * u[p]);
      }
    }
}

/* hympi_sweep's callback: one step, one exchange. */
static int heat_box(const hympi_box* box, int thread, void* user, double* partial) {
  const Heat* h = (const Heat*)user;
  (void)thread;
  (void)partial;
  heat_update(h->u, h->u_new, &h->layout, box);
  return 0;
}

/* hympi_sweep_block's callback: hympi passes the arrays of each sweep. */
static int heat_pair(const double* in, double* out, const hympi_box* box, int thread, void* user) {
  (void)thread;
  heat_update(in, out, (const Layout*)user, box);
  return 0;
}

/* The initial field into u (count doubles, zero in the halo: beyond a
 * Dirichlet face it stays zero), and u's copy into own. The copy writes
 * every page of the program's own array before the clock starts (calloc's
 * pages are mapped at their first write, which would otherwise fall in the
 * first timed step). */
static void set_initial(double* u, double* own, size_t count, const int size[3], const int offset[3],
                        const Layout* l) {
  memset(u, 0, count * sizeof(double));
  for (int k = 0; k < size[2]; ++k)
    for (int j = 0; j < size[1]; ++j)
      for (int i = 0; i < size[0]; ++i) {
        const long long gi = offset[0] + i, gj = offset[1] + j, gk = offset[2] + k;
        u[(i + l->halo) + l->sj * (j + l->halo) + l->sk * (k + l->halo)] =
            (double)((7 * gi + 13 * gj + 29 * gk) % 17) / 16.0 - 0.5;
      }
  memcpy(own, u, count * sizeof(double));
}

/* A positive integer (or 0 when allow_zero), else -1. */
static long parse_count(const char* text, int allow_zero) {
  char* end = NULL;
  const long v = strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < (allow_zero ? 0 : 1) || v > (1L << 30)) return -1;
  return v;
}

/* Bad input: one line from rank 0, then every rank exits with code 2 (every
 * rank parses the same arguments, so all of them come here). */
static const char* const kUsage =
    "heat_c [--grid N|NXxNYxNZ|NX NY NZ] [--steps N] [--scheme NAME] [--threads N] "
    "[--reserved M] [--periodic] [--halo-depth H] [--report PATH]";

static int usage_error(int rank, const char* message, const char* value) {
  if (rank == 0)
    fprintf(stderr, "heat_c: %s%s%s (usage: %s)\n", message, value ? " " : "", value ? value : "",
            kUsage);
  MPI_Finalize();
  return 2;
}

int main(int argc, char** argv) {
  int provided = 0, rank = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  hympi_domain_config config;
  hympi_domain_config_init(&config);
  config.grid[0] = config.grid[1] = config.grid[2] = 32;
  long steps = 10;
  const char* report = NULL;
  for (int a = 1; a < argc; ++a) {
    const char* arg = argv[a];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      if (rank == 0) printf("usage: %s\n(options: see the comment at the top of examples/heat.c)\n", kUsage);
      MPI_Finalize();
      return 0;
    }
    if (strcmp(arg, "--periodic") == 0) {
      config.periodic[0] = config.periodic[1] = config.periodic[2] = 1;
      continue;
    }
    if (a + 1 >= argc) return usage_error(rank, "missing value for", arg);
    const char* value = argv[++a];
    if (strcmp(arg, "--grid") == 0) {
      /* N, NXxNYxNZ, or three numbers NX NY NZ. */
      int n[3];
      char tail;
      if (sscanf(value, "%dx%dx%d%c", &n[0], &n[1], &n[2], &tail) == 3) {
        config.grid[0] = n[0];
        config.grid[1] = n[1];
        config.grid[2] = n[2];
      } else if (a + 2 < argc && parse_count(argv[a + 1], 0) > 0 && parse_count(argv[a + 2], 0) > 0) {
        config.grid[0] = (int)parse_count(value, 0);
        config.grid[1] = (int)parse_count(argv[a + 1], 0);
        config.grid[2] = (int)parse_count(argv[a + 2], 0);
        a += 2;
      } else {
        const long v = parse_count(value, 0);
        config.grid[0] = config.grid[1] = config.grid[2] = (int)v;
      }
      if (config.grid[0] < 1 || config.grid[1] < 1 || config.grid[2] < 1)
        return usage_error(rank, "bad value for --grid:", value);
    } else if (strcmp(arg, "--steps") == 0) {
      if ((steps = parse_count(value, 1)) < 0) return usage_error(rank, "bad value for --steps:", value);
    } else if (strcmp(arg, "--threads") == 0) {
      if ((config.threads = (int)parse_count(value, 0)) < 1)
        return usage_error(rank, "bad value for --threads:", value);
    } else if (strcmp(arg, "--reserved") == 0) {
      if ((config.reserved = (int)parse_count(value, 1)) < 0)
        return usage_error(rank, "bad value for --reserved:", value);
    } else if (strcmp(arg, "--halo-depth") == 0) {
      /* 1..64; hympi_domain_create names a depth deeper than a rank's box. */
      const long v = parse_count(value, 1);
      if (v < 1 || v > 64) return usage_error(rank, "bad value for --halo-depth (1..64):", value);
      config.depth = (int)v;
    } else if (strcmp(arg, "--scheme") == 0) {
      config.scheme = value;
    } else if (strcmp(arg, "--report") == 0) {
      report = value;
    } else {
      return usage_error(rank, "unknown option", arg);
    }
  }

  hympi_domain domain = NULL;
  int rc = hympi_domain_create(MPI_COMM_WORLD, &config, &domain);
  if (rc == HYMPI_ERR_USAGE) return usage_error(rank, hympi_last_error(), NULL);
  if (rc != HYMPI_SUCCESS) {
    fprintf(stderr, "heat_c: %s\n", hympi_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int size[3], offset[3], halo;
  ptrdiff_t sj, sk;
  size_t count;
  hympi_domain_local(domain, size, offset);
  hympi_domain_layout(domain, &halo, &sj, &sk, &count);

  /* u from hympi (first touched by its threads); u_new in the program's own
   * array, registered with hympi_field_wrap. */
  hympi_field fields[2];
  double* u = NULL;
  double* own = calloc(count, sizeof(double));
  if (!own || hympi_field_create(domain, &fields[0]) != HYMPI_SUCCESS ||
      hympi_field_wrap(domain, own, &fields[1]) != HYMPI_SUCCESS) {
    fprintf(stderr, "heat_c: %s\n", own ? hympi_last_error() : "out of memory");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  hympi_field_data(fields[0], &u);
  Layout layout = {halo, sj, sk};
  if (config.depth > 1) {
    /* Temporal blocking: the blocks that choose the wavefront's tile height
     * run here, before the clock, so that the timed loop runs at its steady
     * speed from the first block. They overwrite both fields: initialised
     * below. */
    hympi_field a = fields[0], b = fields[1];
    const int block = (int)(steps < config.depth ? steps : config.depth);
    if (hympi_tune_block(domain, &a, &b, block, heat_pair, &layout, NULL) != HYMPI_SUCCESS) {
      fprintf(stderr, "heat_c: %s\n", hympi_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  set_initial(u, own, count, size, offset, &layout);

  hympi_field in = fields[0], out = fields[1];
  hympi_start_clock(domain);
  for (long s = 0; s < steps;) {
    if (config.depth > 1) {
      /* Up to depth steps per exchange; hympi swaps in and out. */
      const int block = (int)(steps - s < config.depth ? steps - s : config.depth);
      rc = hympi_sweep_block(domain, &in, &out, block, heat_pair, &layout);
      s += block;
    } else {
      double *u_in = NULL, *u_out = NULL;
      hympi_field_data(in, &u_in);
      hympi_field_data(out, &u_out);
      Heat h = {u_in, u_out, layout};
      rc = hympi_sweep(domain, 1, &in, heat_box, &h);
      const hympi_field t = in;
      in = out;
      out = t;
      s += 1;
    }
    if (rc != HYMPI_SUCCESS) {
      fprintf(stderr, "heat_c: %s\n", hympi_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  hympi_stop_clock(domain);

  double sum = 0, l2 = 0;
  hympi_checksum(domain, in, &sum, &l2);
  /* An unwritable report: the checksum still prints, the exit code is 4
   * (hympi solve's for output errors) on every rank (the call is collective). */
  int exit_code = 0;
  if (report || getenv("HYMPI_REPORT_JSON")) {
    /* The report carries u's checksum by name (the study compares it
     * between schemes) and this file's compiler and flags. */
    const char* names[1] = {"u"};
    if (HYMPI_REPORT_BUILD(domain) != HYMPI_SUCCESS ||
        hympi_report_json_fields(domain, report, "heat", 1, &in, names) != HYMPI_SUCCESS) {
      exit_code = 4;
      if (rank == 0) fprintf(stderr, "heat_c: %s\n", hympi_last_error());
    }
  }
  if (rank == 0) printf("checksum sum %.17g l2 %.17g\n", sum, l2);

  hympi_field_free(&fields[0]);
  hympi_field_free(&fields[1]);
  free(own);
  hympi_domain_free(&domain);
  MPI_Finalize();
  return exit_code;
}
