/* The explicit heat equation with non-zero Dirichlet values, through the C
 * API: u' = u + nu (S(u) - 6 u), nu = 1/8, S the sum of the six neighbours,
 * where a neighbour beyond a physical face (hympi_domain_boundaries) holds
 * that face's boundary value. By default the -k face is hot (1.0) and the
 * others are 0. The initial field is heat.c's.
 *
 *   mpirun -n 3 ./dirichlet_c --halo-depth 4 --steps 9 --boundary 0,0,0.5,0,1,0
 *
 * The boundary values live in the halo beyond each physical face, which
 * hympi never writes (docs/user-kernels.md, "Boundary values"): the program
 * fills them once, before the first sweep, and they persist. It fills
 *   - every array the update reads: both arrays of the ping-pong pair (after
 *     each sweep the other one is read);
 *   - the whole slab beyond the face, including its part in the halo of the
 *     other axes: a temporal block (--halo-depth > 1) recomputes points of
 *     its neighbours' boxes, and reads the boundary values there.
 * --fill face (only over the rank's own box) and --fill first (only the
 * first array) break these two rules on purpose: tests/dirichlet_test.sh
 * shows what they change.
 *
 * Options: --grid N | NXxNYxNZ (default 24x20x18), --steps N (8), --scheme
 * NAME (pure MPI), --threads N (1), --halo-depth H (H steps per exchange
 * through hympi_sweep_block, default 1), --proc-grid PXxPYxPZ (default:
 * chosen), --periodic AXES (a subset of xyz, default none), --boundary
 * V0,V1,V2,V3,V4,V5 (the values of the faces -i,+i,-j,+j,-k,+k; default
 * 0,0,0,0,1,0), --fill slab|face|first (slab).
 *
 * Prints "checksum sum S l2 L" and "fingerprint F": F is a sum modulo 2^64
 * of a hash of every point's global index and bits, the same whatever the
 * decomposition, so that tests/dirichlet_reference.c can be compared with
 * it to the last bit.
 */
#include <hympi/hympi.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dirichlet_problem.h"

static const double kNu = 0.125;

/* Which arrays and which points of the halo get the boundary values. */
enum Fill { FILL_SLAB, FILL_FACE, FILL_FIRST };

typedef struct {
  long steps;
  double boundary[6]; /* faces -i, +i, -j, +j, -k, +k */
  enum Fill fill;
} Options;

/* The fields' layout (hympi_domain_layout) and the rank's box. */
typedef struct {
  int halo, n[3], offset[3];
  ptrdiff_t sj, sk;
} Layout;

static ptrdiff_t at(const Layout* l, int i, int j, int k) {
  return (i + l->halo) + l->sj * (j + l->halo) + l->sk * (k + l->halo);
}

/* One box of the update (it may reach into the halo in a sweep block). */
static int heat_pair(const double* u, double* u_new, const hympi_box* box, int thread, void* user) {
  const Layout* l = (const Layout*)user;
  (void)thread;
  for (int k = box->lo[2]; k < box->hi[2]; ++k)
    for (int j = box->lo[1]; j < box->hi[1]; ++j)
      for (int i = box->lo[0]; i < box->hi[0]; ++i) {
        const ptrdiff_t p = at(l, i, j, k);
        const double s = u[p - 1] + u[p + 1] + u[p - l->sj] + u[p + l->sj] + u[p - l->sk] + u[p + l->sk];
        u_new[p] = u[p] + kNu * (s - 6.0 * u[p]);
      }
  return 0;
}

/* hympi_sweep's callback: the pair update on the arrays of this step. */
typedef struct {
  const double* u;
  double* u_new;
  const Layout* layout;
} Step;

static int heat_box(const hympi_box* box, int thread, void* user, double* partial) {
  const Step* s = (const Step*)user;
  (void)partial;
  return heat_pair(s->u, s->u_new, box, thread, (void*)s->layout);
}

/* The initial field on the own box, and the boundary values beyond every
 * physical face: the whole slab (fill slab), or only over the own box along
 * the other axes (fill face). A point beyond two faces (an edge of the
 * halo) is never read by a star stencil: whichever value it gets is fine. */
static void fill(double* u, const Layout* l, const int physical[6], const Options* o, int interior) {
  const int h = l->halo;
  for (int k = -h; k < l->n[2] + h; ++k)
    for (int j = -h; j < l->n[1] + h; ++j)
      for (int i = -h; i < l->n[0] + h; ++i) {
        const int c[3] = {i, j, k};
        int inside = 1;
        for (int a = 0; a < 3; ++a) inside = inside && c[a] >= 0 && c[a] < l->n[a];
        if (inside) {
          if (interior) u[at(l, i, j, k)] = initial_value(l->offset[0] + i, l->offset[1] + j, l->offset[2] + k);
          continue;
        }
        for (int f = 0; f < 6; ++f) {
          const int a = f / 2, beyond = f % 2 == 0 ? c[a] < 0 : c[a] >= l->n[a];
          if (!physical[f] || !beyond) continue;
          int over_box = 1;
          for (int b = 0; b < 3; ++b)
            if (b != a) over_box = over_box && c[b] >= 0 && c[b] < l->n[b];
          if (o->fill == FILL_FACE && !over_box) continue;
          u[at(l, i, j, k)] = o->boundary[f];
        }
      }
}

/* Collective: the fingerprint of the own points (dirichlet_problem.h). */
static unsigned long long fingerprint(const double* u, const Layout* l, const int grid[3]) {
  uint64_t mine = 0, all = 0;
  for (int k = 0; k < l->n[2]; ++k)
    for (int j = 0; j < l->n[1]; ++j)
      for (int i = 0; i < l->n[0]; ++i) {
        const long long g = (l->offset[0] + i) + (long long)grid[0] * ((l->offset[1] + j) + (long long)grid[1] * (l->offset[2] + k));
        mine += point_hash(g, u[at(l, i, j, k)]);
      }
  MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return (unsigned long long)all;
}

static const char* const kUsage =
    "dirichlet_c [--grid N|NXxNYxNZ] [--steps N] [--scheme NAME] [--threads N] [--halo-depth H] "
    "[--proc-grid PXxPYxPZ] [--periodic AXES] [--boundary V0,V1,V2,V3,V4,V5] [--fill slab|face|first]";

/* Bad input: one line from rank 0 (every rank parses the same arguments). */
static int usage_error(int rank, const char* message, const char* value) {
  if (rank == 0) fprintf(stderr, "dirichlet_c: %s %s (usage: %s)\n", message, value, kUsage);
  return 2;
}

/* N or NXxNYxNZ of positive integers, else 0. */
static int parse_dims(const char* text, int dims[3]) {
  char tail;
  if (sscanf(text, "%dx%dx%d%c", &dims[0], &dims[1], &dims[2], &tail) != 3) {
    if (sscanf(text, "%d%c", &dims[0], &tail) != 1) return 0;
    dims[1] = dims[2] = dims[0];
  }
  return dims[0] >= 1 && dims[1] >= 1 && dims[2] >= 1;
}

/* A whole number in [lo, hi], else -1. */
static long parse_long(const char* text, long lo, long hi) {
  char* end = NULL;
  const long v = strtol(text, &end, 10);
  return end == text || *end != '\0' || v < lo || v > hi ? -1 : v;
}

static int parse_boundary(const char* text, double values[6]) {
  char* end = NULL;
  for (int f = 0; f < 6; ++f) {
    values[f] = strtod(text, &end);
    if (end == text || *end != (f < 5 ? ',' : '\0')) return 0;
    text = end + 1;
  }
  return 1;
}

/* The options into config and o: -1 to run, else the exit code (0 after
 * --help, 2 for bad input). */
static int parse_options(int argc, char** argv, hympi_domain_config* config, Options* o, int rank) {
  const double hot_below[6] = {0, 0, 0, 0, 1, 0};
  config->grid[0] = 24;
  config->grid[1] = 20;
  config->grid[2] = 18;
  o->steps = 8;
  memcpy(o->boundary, hot_below, sizeof hot_below);
  o->fill = FILL_SLAB;
  for (int a = 1; a < argc; ++a) {
    const char* arg = argv[a];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      if (rank == 0) printf("usage: %s\n(options: see the comment at the top of examples/dirichlet.c)\n", kUsage);
      return 0;
    }
    if (a + 1 >= argc) return usage_error(rank, "missing value for", arg);
    const char* value = argv[++a];
    long v = 0;
    if (strcmp(arg, "--grid") == 0) {
      if (!parse_dims(value, config->grid)) return usage_error(rank, "bad value for --grid:", value);
    } else if (strcmp(arg, "--proc-grid") == 0) {
      if (!parse_dims(value, config->proc_grid)) return usage_error(rank, "bad value for --proc-grid:", value);
    } else if (strcmp(arg, "--steps") == 0) {
      if ((o->steps = parse_long(value, 1, 1L << 30)) < 0) return usage_error(rank, "bad value for --steps:", value);
    } else if (strcmp(arg, "--threads") == 0) {
      if ((v = parse_long(value, 1, 1024)) < 0) return usage_error(rank, "bad value for --threads (1..1024):", value);
      config->threads = (int)v;
    } else if (strcmp(arg, "--halo-depth") == 0) {
      if ((v = parse_long(value, 1, 64)) < 0) return usage_error(rank, "bad value for --halo-depth (1..64):", value);
      config->depth = (int)v;
    } else if (strcmp(arg, "--scheme") == 0) {
      config->scheme = value;
    } else if (strcmp(arg, "--periodic") == 0) {
      if (strspn(value, "xyz") != strlen(value)) return usage_error(rank, "bad value for --periodic (axes of xyz):", value);
      for (int d = 0; d < 3; ++d) config->periodic[d] = strchr(value, "xyz"[d]) != NULL;
    } else if (strcmp(arg, "--boundary") == 0) {
      if (!parse_boundary(value, o->boundary))
        return usage_error(rank, "bad value for --boundary (six numbers, comma-separated):", value);
    } else if (strcmp(arg, "--fill") == 0) {
      if (strcmp(value, "slab") == 0) o->fill = FILL_SLAB;
      else if (strcmp(value, "face") == 0) o->fill = FILL_FACE;
      else if (strcmp(value, "first") == 0) o->fill = FILL_FIRST;
      else return usage_error(rank, "bad value for --fill (slab, face or first):", value);
    } else {
      return usage_error(rank, "unknown option", arg);
    }
  }
  return -1;
}

static void fail(const char* what) {
  fprintf(stderr, "dirichlet_c: %s\n", what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char** argv) {
  int provided = 0, rank = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hympi_domain_config config;
  hympi_domain_config_init(&config);
  Options o;
  const int parsed = parse_options(argc, argv, &config, &o, rank);
  if (parsed >= 0) {
    MPI_Finalize();
    return parsed;
  }
  hympi_domain domain = NULL;
  int rc = hympi_domain_create(MPI_COMM_WORLD, &config, &domain);
  if (rc == HYMPI_ERR_USAGE) {
    if (rank == 0) fprintf(stderr, "dirichlet_c: %s\n", hympi_last_error());
    MPI_Finalize();
    return 2;
  }
  if (rc != HYMPI_SUCCESS) fail(hympi_last_error());

  Layout l;
  int physical[6];
  hympi_domain_local(domain, l.n, l.offset);
  hympi_domain_layout(domain, &l.halo, &l.sj, &l.sk, NULL);
  hympi_domain_boundaries(domain, physical);
  hympi_field in = NULL, out = NULL;
  double *u = NULL, *v = NULL;
  if (hympi_field_create(domain, &in) != HYMPI_SUCCESS || hympi_field_create(domain, &out) != HYMPI_SUCCESS)
    fail(hympi_last_error());
  hympi_field_data(in, &u);
  hympi_field_data(out, &v);
  fill(u, &l, physical, &o, 1);
  if (o.fill != FILL_FIRST) fill(v, &l, physical, &o, 0);

  for (long s = 0; s < o.steps;) {
    if (config.depth > 1) {
      /* Up to depth steps per exchange; hympi swaps in and out. */
      const int block = (int)(o.steps - s < config.depth ? o.steps - s : config.depth);
      rc = hympi_sweep_block(domain, &in, &out, block, heat_pair, &l);
      s += block;
    } else {
      double *from = NULL, *to = NULL;
      hympi_field_data(in, &from);
      hympi_field_data(out, &to);
      Step step = {from, to, &l};
      rc = hympi_sweep(domain, 1, &in, heat_box, &step);
      const hympi_field t = in;
      in = out;
      out = t;
      s += 1;
    }
    if (rc != HYMPI_SUCCESS) fail(hympi_last_error());
  }

  double sum = 0, l2 = 0;
  hympi_checksum(domain, in, &sum, &l2);
  hympi_field_data(in, &u);
  const unsigned long long print = fingerprint(u, &l, config.grid);
  if (rank == 0) printf("checksum sum %.17g l2 %.17g\nfingerprint %016llx\n", sum, l2, print);
  hympi_field_free(&in);
  hympi_field_free(&out);
  hympi_domain_free(&domain);
  MPI_Finalize();
  return 0;
}
