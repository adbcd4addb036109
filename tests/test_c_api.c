/* The C API's status codes and messages for bad input (hympi/hympi.h): calls
 * before MPI_Init and after MPI_Finalize, NULL handles and arguments, an
 * unknown scheme, a halo of 0 or thicker than a rank's box, a field of
 * another domain, an unwritable report path, and a callback that fails
 * under HYMPI_ON_ERROR_RETURN (every rank finishes the sweep; the failing
 * one gets HYMPI_ERR_KERNEL and a message naming scheme and box), and
 * hympi_sweep_block's (depth 0, more sweeps than the depth, in == out,
 * NULL and foreign fields, a failing callback; the layout's halo counts the
 * depth, and an odd block swaps the handles), hympi_tune_block's (bad
 * sweeps, trial blocks once per shape, a block after it), and a box stencil's (an
 * unknown stencil value; a box domain's halo holds its edges and corners). Runs at
 * any rank count; prints one line per failure and "N passed, N failed".
 * With --abort: a callback fails on the last rank under the default policy
 * (HYMPI_ON_ERROR_ABORT): every rank stops with one line, no hang. */
#include <hympi/hympi.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int passed, failed, rank = 0, size = 1;

static void check(int ok, const char* what) {
  int mine = ok ? 0 : 1, any = mine;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any) {
    ++failed;
    if (!ok) printf("FAIL rank %d: %s (last error: '%s')\n", rank, what, hympi_last_error());
  } else {
    ++passed;
  }
}

static int contains(const char* text, const char* part) { return strstr(text, part) != NULL; }

static int box_empty(const hympi_box* box) {
  return box->hi[0] <= box->lo[0] || box->hi[1] <= box->lo[1] || box->hi[2] <= box->lo[2];
}

static int fail_on_last_rank(const hympi_box* box, int thread, void* user, double* partial) {
  (void)thread;
  (void)user;
  *partial += 1.0;
  return rank == size - 1 && !box_empty(box) ? 7 : 0;
}

/* The layout of the deep domain's fields, for add_one. */
static int g_halo;
static ptrdiff_t g_sj, g_sk;

/* A pair update: out = in + 1 on the box (halo points included). */
static int add_one(const double* in, double* out, const hympi_box* box, int thread, void* user) {
  (void)thread;
  (void)user;
  for (int k = box->lo[2]; k < box->hi[2]; ++k)
    for (int j = box->lo[1]; j < box->hi[1]; ++j)
      for (int i = box->lo[0]; i < box->hi[0]; ++i) {
        const ptrdiff_t p = (i + g_halo) + g_sj * (j + g_halo) + g_sk * (k + g_halo);
        out[p] = in[p] + 1.0;
      }
  return 0;
}

/* A pair update that fails on the last rank's boxes. */
static int fail_pair(const double* in, double* out, const hympi_box* box, int thread, void* user) {
  (void)thread;
  (void)in;
  (void)out;
  (void)user;
  return rank == size - 1 && !box_empty(box) ? 5 : 0;
}

/* Whether every own point of the field holds `value`. */
static int all_equal(hympi_domain d, hympi_field f, double value) {
  int n[3];
  double* data = NULL;
  hympi_domain_local(d, n, NULL);
  hympi_field_data(f, &data);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i)
        if (data[(i + g_halo) + g_sj * (j + g_halo) + g_sk * (k + g_halo)] != value) return 0;
  return 1;
}

/* The box domain's check (box_stencil below): every point of a periodic
 * grid holds its global index, and each of its 26 neighbours in the halo
 * must hold the neighbour's (wrapped) index after the exchange. */
static int g_n[3], g_offset[3], g_grid[3];
static const double* g_data;

static double global_index(int i, int j, int k) {
  const int g[3] = {(i % g_grid[0] + g_grid[0]) % g_grid[0], (j % g_grid[1] + g_grid[1]) % g_grid[1],
                    (k % g_grid[2] + g_grid[2]) % g_grid[2]};
  return g[0] + (double)g_grid[0] * (g[1] + (double)g_grid[1] * g[2]);
}

static int count_wrong_neighbours(const hympi_box* box, int thread, void* user, double* partial) {
  (void)thread;
  (void)user;
  for (int k = box->lo[2]; k < box->hi[2]; ++k)
    for (int j = box->lo[1]; j < box->hi[1]; ++j)
      for (int i = box->lo[0]; i < box->hi[0]; ++i)
        for (int dk = -1; dk <= 1; ++dk)
          for (int dj = -1; dj <= 1; ++dj)
            for (int di = -1; di <= 1; ++di) {
              const ptrdiff_t p =
                  (i + di + g_halo) + g_sj * (j + dj + g_halo) + g_sk * (k + dk + g_halo);
              *partial += g_data[p] != global_index(g_offset[0] + i + di, g_offset[1] + j + dj,
                                                    g_offset[2] + k + dk);
            }
  return 0;
}

/* A box stencil's config: an unknown stencil value is refused by name; a
 * periodic box domain brings every edge and corner of the halo. */
static void box_stencil(hympi_domain_config c) {
  hympi_domain d = NULL;
  c.stencil = 5;
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &d) == HYMPI_ERR_USAGE && d == NULL &&
            contains(hympi_last_error(), "`stencil` 5 is unknown: accepted 0 (star) or 1 (box)"),
        "an unknown stencil");
  c.stencil = HYMPI_STENCIL_BOX;
  c.periodic[0] = c.periodic[1] = c.periodic[2] = 1;
  c.threads = 2;
  c.scheme = "funneled";
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &d) == HYMPI_SUCCESS, "a box domain");
  hympi_field f = NULL;
  double* data = NULL;
  check(hympi_field_create(d, &f) == HYMPI_SUCCESS && hympi_field_data(f, &data) == HYMPI_SUCCESS &&
            hympi_domain_local(d, g_n, g_offset) == HYMPI_SUCCESS &&
            hympi_domain_layout(d, &g_halo, &g_sj, &g_sk, NULL) == HYMPI_SUCCESS,
        "a field of the box domain");
  for (int a = 0; a < 3; ++a) g_grid[a] = c.grid[a];
  for (int k = 0; k < g_n[2]; ++k)
    for (int j = 0; j < g_n[1]; ++j)
      for (int i = 0; i < g_n[0]; ++i)
        data[(i + g_halo) + g_sj * (j + g_halo) + g_sk * (k + g_halo)] =
            global_index(g_offset[0] + i, g_offset[1] + j, g_offset[2] + k);
  g_data = data;
  double wrong = -1;
  check(hympi_sweep_sum(d, 1, &f, count_wrong_neighbours, NULL, &wrong) == HYMPI_SUCCESS && wrong == 0,
        "a box domain's halo holds every edge and corner");
  hympi_field_free(&f);
  hympi_domain_free(&d);
}

/* hympi_tune_block: bad sweeps and a NULL callback refused; on rows wider
 * than a core's L2 holds (two tile heights to try) the first call runs
 * blocks and a second none; a block after it, on re-zeroed fields, gives
 * the plain sweeps' result. */
static void tune_block_checks(hympi_domain_config c) {
  hympi_domain d = NULL;
  c.grid[0] = 2000;
  c.grid[1] = 64;
  c.grid[2] = 12;
  c.depth = 3;
  c.threads = 2;
  c.scheme = NULL;
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &d) == HYMPI_SUCCESS, "a wide domain of depth 3");
  size_t count = 0;
  hympi_field a = NULL, b = NULL;
  check(hympi_domain_layout(d, &g_halo, &g_sj, &g_sk, &count) == HYMPI_SUCCESS &&
            hympi_field_create(d, &a) == HYMPI_SUCCESS && hympi_field_create(d, &b) == HYMPI_SUCCESS,
        "two fields of the wide domain");
  const hympi_field a0 = a, b0 = b;
  int blocks = -1;
  check(hympi_tune_block(d, &a, &b, 4, add_one, NULL, &blocks) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "4 sweeps, but the domain's depth allows 1 to 3") && blocks == -1,
        "tune_block: more sweeps than the depth");
  check(hympi_tune_block(d, &a, &b, 0, add_one, NULL, NULL) == HYMPI_ERR_USAGE, "tune_block: 0 sweeps");
  check(hympi_tune_block(d, &a, &b, 3, NULL, NULL, NULL) == HYMPI_ERR_USAGE, "tune_block: a NULL callback");
  check(hympi_tune_block(d, &a, &b, 3, add_one, NULL, &blocks) == HYMPI_SUCCESS && blocks >= 4 &&
            ((a == a0 && b == b0) || (a == b0 && b == a0)),
        "tune_block runs the trial blocks (two per height) and keeps the two fields");
  check(hympi_tune_block(d, &a, &b, 3, add_one, NULL, &blocks) == HYMPI_SUCCESS && blocks == 0,
        "a second tune_block for the same shape runs no block");
  double *pa = NULL, *pb = NULL;
  hympi_field_data(a, &pa);
  hympi_field_data(b, &pb);
  memset(pa, 0, count * sizeof(double));
  memset(pb, 0, count * sizeof(double));
  check(hympi_sweep_block(d, &a, &b, 3, add_one, NULL) == HYMPI_SUCCESS && all_equal(d, a, 3.0),
        "a block after tune_block: 3 sweeps' result");
  hympi_field_free(&a);
  hympi_field_free(&b);
  hympi_domain_free(&d);
}

static int count_points(const hympi_box* box, int thread, void* user, double* partial) {
  (void)thread;
  (void)user;
  *partial += (double)(box->hi[0] - box->lo[0]) * (box->hi[1] - box->lo[1]) * (box->hi[2] - box->lo[2]);
  return 0;
}

int main(int argc, char** argv) {
  hympi_domain_config c;
  hympi_domain_config_init(&c);
  c.grid[0] = 12;
  c.grid[1] = 10;
  c.grid[2] = 9;
  hympi_domain d = NULL;
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &d) == HYMPI_ERR_STATE &&
            contains(hympi_last_error(), "before MPI_Init"),
        "a call before MPI_Init is HYMPI_ERR_STATE");

  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  if (argc > 1 && strcmp(argv[1], "--abort") == 0) {
    c.scheme = "masteronly";
    c.threads = 2;
    hympi_field f = NULL;
    if (hympi_domain_create(MPI_COMM_WORLD, &c, &d) == HYMPI_SUCCESS &&
        hympi_field_create(d, &f) == HYMPI_SUCCESS)
      hympi_sweep(d, 1, &f, fail_on_last_rank, NULL);
    /* Not reached when the policy works: the failing rank ends the job. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("not stopped\n");
    MPI_Finalize();
    return 1;
  }

  check(hympi_domain_create(MPI_COMM_WORLD, NULL, &d) == HYMPI_ERR_USAGE, "NULL config");
  c.scheme = "nosuch";
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &d) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "unknown scheme 'nosuch' (one of: masteronly"),
        "an unknown scheme is named with the list");
  c.scheme = NULL;
  c.halo = 0;
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &d) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "`halo` 0 is out of range: accepted 1 .. 64"),
        "halo 0");
  c.halo = 2;
  c.grid[0] = 2 * size - 1; /* every rank along x (y and z have one point): boxes of 1 point */
  c.grid[1] = c.grid[2] = 1;
  c.periodic[0] = 1;
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &d) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "`halo` 2 needs at least 2 points per rank along x"),
        "a halo thicker than a rank's box");
  c.halo = 1;
  c.grid[0] = 12;
  c.grid[1] = 10;
  c.grid[2] = 9;
  c.periodic[0] = 0;
  c.on_error = 9;
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &d) == HYMPI_ERR_USAGE, "a bad on_error");
  check(hympi_sweep(NULL, 0, NULL, count_points, NULL) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "NULL or freed"),
        "a NULL domain");

  c.on_error = HYMPI_ON_ERROR_RETURN;
  c.threads = 2;
  c.scheme = "funneled";
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &d) == HYMPI_SUCCESS, "a good domain");
  hympi_domain other = NULL;
  c.scheme = NULL;
  c.threads = 1;
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &other) == HYMPI_SUCCESS, "a second domain");
  hympi_field u = NULL, foreign = NULL;
  check(hympi_field_create(d, &u) == HYMPI_SUCCESS, "a field");
  check(hympi_field_create(other, &foreign) == HYMPI_SUCCESS, "a field of the other domain");
  check(hympi_field_wrap(d, NULL, &foreign) == HYMPI_ERR_USAGE, "wrapping a NULL array");
  hympi_field two[2] = {u, foreign};
  check(hympi_sweep(d, 2, two, count_points, NULL) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "field 1 belongs to another domain"),
        "a field of another domain in a sweep");
  check(hympi_sweep(d, 0, two, count_points, NULL) == HYMPI_ERR_USAGE, "no fields");
  check(hympi_sweep(d, 1, &u, NULL, NULL) == HYMPI_ERR_USAGE, "a NULL callback");

  double sum = 0;
  const int rc = hympi_sweep_sum(d, 1, &u, fail_on_last_rank, NULL, &sum);
  if (rank == size - 1)
    check(rc == HYMPI_ERR_KERNEL && contains(hympi_last_error(), "scheme 'funneled' on box [") &&
              contains(hympi_last_error(), "the box callback returned 7"),
          "a failing callback gives HYMPI_ERR_KERNEL naming scheme and box");
  else
    check(rc == HYMPI_SUCCESS, "the other ranks finish the sweep");
  check(hympi_sweep_sum(d, 1, &u, count_points, NULL, &sum) == HYMPI_SUCCESS && sum == 12 * 10 * 9,
        "the domain keeps working after a failed callback");

  /* Temporal blocking. */
  c.depth = 0;
  hympi_domain refused = NULL;
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &refused) == HYMPI_ERR_USAGE && refused == NULL &&
            contains(hympi_last_error(), "`depth` 0 is out of range: accepted 1 .. 64"),
        "depth 0");
  hympi_domain deep = NULL;
  c.depth = 3;
  c.threads = 2;
  c.scheme = "funneled";
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &deep) == HYMPI_SUCCESS, "a domain of depth 3");
  check(hympi_domain_layout(deep, &g_halo, &g_sj, &g_sk, NULL) == HYMPI_SUCCESS && g_halo == 3,
        "the layout's halo counts the depth (1 x 3 layers)");
  hympi_field a = NULL, b = NULL;
  check(hympi_field_create(deep, &a) == HYMPI_SUCCESS && hympi_field_create(deep, &b) == HYMPI_SUCCESS,
        "two fields of the deep domain");
  const hympi_field a0 = a, b0 = b;
  check(hympi_sweep_block(deep, &a, &b, 4, add_one, NULL) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "4 sweeps, but the domain's depth allows 1 to 3"),
        "more sweeps than the depth");
  check(hympi_sweep_block(deep, &a, &a, 2, add_one, NULL) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "the same field"),
        "in == out");
  check(hympi_sweep_block(deep, &a, &b, 2, NULL, NULL) == HYMPI_ERR_USAGE, "a NULL pair callback");
  check(hympi_sweep_block(deep, &a, NULL, 2, add_one, NULL) == HYMPI_ERR_USAGE, "a NULL out");
  check(hympi_sweep_block(deep, &a, &u, 2, add_one, NULL) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "belongs to another domain"),
        "a field of another domain in a block");
  /* Fields start at 0 (halos too: Dirichlet, nothing outside), each sweep adds 1. */
  check(hympi_sweep_block(deep, &a, &b, 2, add_one, NULL) == HYMPI_SUCCESS && a == a0 && b == b0 &&
            all_equal(deep, a, 2.0),
        "an even block leaves the handles, *in holds 2 sweeps' result");
  check(hympi_sweep_block(deep, &a, &b, 3, add_one, NULL) == HYMPI_SUCCESS && a == b0 && b == a0 &&
            all_equal(deep, a, 5.0),
        "an odd block swaps them, *in holds 5 sweeps' result");
  const int brc = hympi_sweep_block(deep, &a, &b, 3, fail_pair, NULL);
  if (rank == size - 1)
    check(brc == HYMPI_ERR_KERNEL && contains(hympi_last_error(), "the box callback returned 5"),
          "a failing pair callback gives HYMPI_ERR_KERNEL");
  else
    check(brc == HYMPI_SUCCESS, "the other ranks finish the block");
  hympi_field_free(&a);
  hympi_field_free(&b);
  hympi_domain_free(&deep);
  tune_block_checks(c);
  c.depth = 1;
  c.threads = 1;
  c.scheme = NULL;
  box_stencil(c);

  check(hympi_report_json(d, "/nonexistent-dir/r.json", "t") == HYMPI_ERR_OUTPUT &&
            contains(hympi_last_error(), "cannot write /nonexistent-dir/r.json"),
        "an unwritable report path is HYMPI_ERR_OUTPUT on every rank");

  check(hympi_field_free(&u) == HYMPI_SUCCESS && u == NULL, "field_free clears the handle");
  hympi_field_free(&foreign);
  check(hympi_domain_free(&d) == HYMPI_SUCCESS && d == NULL, "domain_free clears the handle");
  check(hympi_domain_threads(d, &c.threads) == HYMPI_ERR_USAGE, "a freed domain");
  hympi_domain_free(&other);
  /* A domain still alive at MPI_Finalize: freeing it afterwards is a state
   * error and makes no MPI call (its communicator cannot be freed then). */
  hympi_domain late = NULL;
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &late) == HYMPI_SUCCESS, "a domain kept past MPI_Finalize");
  const int me = rank;
  MPI_Finalize();
  check(hympi_domain_free(&late) == HYMPI_ERR_STATE && late == NULL &&
            contains(hympi_last_error(), "after MPI_Finalize"),
        "freeing a domain after MPI_Finalize is HYMPI_ERR_STATE, no crash");
  c.scheme = NULL;
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &d) == HYMPI_ERR_STATE &&
            contains(hympi_last_error(), "after MPI_Finalize"),
        "a call after MPI_Finalize is HYMPI_ERR_STATE");
  if (me == 0) printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
