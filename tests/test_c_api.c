/* The C API's status codes and messages (hympi/hympi.h), in C as a user
 * writes it: a call before MPI_Init, NULL handles, a bad config, an unknown
 * scheme, a scheme above the thread level, a field of another domain, a
 * failing callback under HYMPI_ON_ERROR_RETURN, a call after MPI_Finalize.
 * Every rank checks every case; prints "N passed, M failed" from rank 0.
 *
 *   usage: test_c_api           (the checks; any number of ranks)
 *          test_c_api --abort   (a callback fails on rank 1 under the default
 *                                policy: every rank stops, one line)
 */
#include <hympi/hympi.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int passed = 0, failed = 0, rank = 0;

/* One check: rc must be `want` and, when `text` is given, the last error
 * must contain it. */
static void expect(const char* label, int rc, int want, const char* text) {
  const char* msg = hympi_last_error();
  if (rc == want && (!text || strstr(msg, text))) {
    ++passed;
  } else {
    ++failed;
    fprintf(stderr, "FAIL (rank %d): %s: got %d, want %d; message: '%s'%s%s\n", rank, label, rc,
            want, msg, text ? " should contain " : "", text ? text : "");
  }
}

/* Adds 1 per point: the sum over the grid is its number of points. */
static int count_points(const hympi_box* box, int thread, void* user, double* partial) {
  (void)thread;
  (void)user;
  *partial += (double)(box->hi[0] - box->lo[0]) * (box->hi[1] - box->lo[1]) *
              (box->hi[2] - box->lo[2]);
  return 0;
}

/* Fails every box with 7 on every rank (so that every rank returns). */
static int fail_always(const hympi_box* box, int thread, void* user, double* partial) {
  (void)box;
  (void)thread;
  (void)user;
  (void)partial;
  return 7;
}

/* Fails on rank 1 only (--abort). */
static int fail_on_rank_1(const hympi_box* box, int thread, void* user, double* partial) {
  (void)box;
  (void)thread;
  (void)partial;
  return *(const int*)user == 1 ? 5 : 0;
}

static hympi_domain_config small_config(void) {
  hympi_domain_config c;
  hympi_domain_config_init(&c);
  c.grid[0] = 8;
  c.grid[1] = 7;
  c.grid[2] = 6;
  c.threads = 2;
  return c;
}

int main(int argc, char** argv) {
  const int abort_mode = argc > 1 && strcmp(argv[1], "--abort") == 0;
  hympi_domain_config config = small_config();
  hympi_domain domain = NULL;

  /* Before MPI_Init: a state error, not a crash. */
  expect("create before MPI_Init", hympi_domain_create(MPI_COMM_WORLD, &config, &domain),
         HYMPI_ERR_STATE, "before MPI_Init");

  /* FUNNELED on purpose: a MULTIPLE scheme must be refused by name. */
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  if (abort_mode) {
    config.scheme = "masteronly";
    expect("create", hympi_domain_create(MPI_COMM_WORLD, &config, &domain), HYMPI_SUCCESS, NULL);
    hympi_field f = NULL;
    hympi_field_create(domain, &f);
    hympi_sweep(domain, 1, &f, fail_on_rank_1, &rank);
    /* Not reached when the policy works: rank 1 aborts the job. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("not stopped\n");
    MPI_Finalize();
    return 1;
  }

  /* NULL handles and pointers. */
  expect("create NULL config", hympi_domain_create(MPI_COMM_WORLD, NULL, &domain),
         HYMPI_ERR_USAGE, "NULL");
  expect("create NULL domain", hympi_domain_create(MPI_COMM_WORLD, &config, NULL),
         HYMPI_ERR_USAGE, "NULL");
  int size[3], offset[3];
  expect("local NULL domain", hympi_domain_local(NULL, size, offset), HYMPI_ERR_USAGE, "NULL");
  expect("sweep NULL domain", hympi_sweep(NULL, 0, NULL, count_points, NULL), HYMPI_ERR_USAGE,
         "NULL");
  expect("field_data NULL", hympi_field_data(NULL, NULL), HYMPI_ERR_USAGE, "NULL");
  expect("free NULL pointer", hympi_domain_free(NULL), HYMPI_ERR_USAGE, "NULL");

  /* A bad config: every rank gets the same answer (collective validation). */
  config.halo = 0;
  expect("halo 0", hympi_domain_create(MPI_COMM_WORLD, &config, &domain), HYMPI_ERR_USAGE,
         "`halo` must be between 1 and 64");
  expect("halo 0 leaves no domain", domain == NULL, 1, NULL);
  config = small_config();
  config.scheme = "nosuch";
  expect("unknown scheme", hympi_domain_create(MPI_COMM_WORLD, &config, &domain), HYMPI_ERR_USAGE,
         "unknown scheme 'nosuch' (one of: masteronly");
  config.scheme = "multiple";
  if (provided < MPI_THREAD_MULTIPLE)
    expect("scheme above the thread level", hympi_domain_create(MPI_COMM_WORLD, &config, &domain),
           HYMPI_ERR_USAGE, "needs MPI_THREAD_MULTIPLE");
  config = small_config();
  config.on_error = 9;
  expect("bad on_error", hympi_domain_create(MPI_COMM_WORLD, &config, &domain), HYMPI_ERR_USAGE,
         "on_error");

  /* A good domain, under the "return" policy. */
  config = small_config();
  config.scheme = "masteronly";
  config.on_error = HYMPI_ON_ERROR_RETURN;
  expect("create", hympi_domain_create(MPI_COMM_WORLD, &config, &domain), HYMPI_SUCCESS, NULL);
  expect("last error cleared", (int)strlen(hympi_last_error()), 0, NULL);

  /* A second domain of another shape: its fields are refused by the first. */
  hympi_domain_config other_config = small_config();
  other_config.grid[0] = 12;
  hympi_domain other = NULL;
  expect("create other", hympi_domain_create(MPI_COMM_WORLD, &other_config, &other),
         HYMPI_SUCCESS, NULL);
  hympi_field u = NULL, foreign = NULL, wrapped = NULL;
  expect("field", hympi_field_create(domain, &u), HYMPI_SUCCESS, NULL);
  expect("field of other", hympi_field_create(other, &foreign), HYMPI_SUCCESS, NULL);
  expect("wrap NULL data", hympi_field_wrap(domain, NULL, &wrapped), HYMPI_ERR_USAGE,
         "null pointer");
  expect("sweep with a field of another domain",
         hympi_sweep(domain, 1, &foreign, count_points, NULL), HYMPI_ERR_USAGE,
         "belongs to another domain");
  expect("sweep without fields", hympi_sweep(domain, 0, &u, count_points, NULL), HYMPI_ERR_USAGE,
         "at least one field");
  expect("sweep NULL callback", hympi_sweep(domain, 1, &u, NULL, NULL), HYMPI_ERR_USAGE,
         "callback");
  expect("checksum of a field of another domain", hympi_checksum(domain, foreign, NULL, NULL),
         HYMPI_ERR_USAGE, "another domain");

  /* The sums: every point counted once, over threads and ranks. */
  double sum = 0;
  expect("sweep_sum", hympi_sweep_sum(domain, 1, &u, count_points, NULL, &sum), HYMPI_SUCCESS,
         NULL);
  expect("sweep_sum counts every point once", sum == 8.0 * 7 * 6, 1, NULL);
  expect("for_each", hympi_for_each(other, count_points, NULL, &sum), HYMPI_SUCCESS, NULL);
  expect("for_each counts every point once", sum == 12.0 * 7 * 6, 1, NULL);

  /* A failing callback: HYMPI_ERR_KERNEL naming the scheme and the box, and
   * the domain still works afterwards. */
  expect("failing callback", hympi_sweep(domain, 1, &u, fail_always, NULL), HYMPI_ERR_KERNEL,
         "box callback returned 7");
  expect("failing callback names the scheme", HYMPI_ERR_KERNEL, HYMPI_ERR_KERNEL,
         "under scheme 'masteronly' on box [");
  expect("sweep after a failure", hympi_sweep_sum(domain, 1, &u, count_points, NULL, &sum),
         HYMPI_SUCCESS, NULL);
  expect("sum after a failure", sum == 8.0 * 7 * 6, 1, NULL);

  /* Freeing sets the handle to NULL; a NULL handle is then refused. */
  expect("field free", hympi_field_free(&u), HYMPI_SUCCESS, NULL);
  expect("field handle NULL after free", u == NULL, 1, NULL);
  hympi_field_free(&foreign);
  expect("domain free", hympi_domain_free(&other), HYMPI_SUCCESS, NULL);
  expect("domain handle NULL after free", other == NULL, 1, NULL);
  expect("freed domain", hympi_domain_threads(other, &config.threads), HYMPI_ERR_USAGE, "NULL");
  hympi_domain_free(&domain);

  int totals[2] = {passed, failed};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();

  /* After MPI_Finalize: a state error again (counted on this rank only). */
  const int passed_before = passed, failed_before = failed;
  config = small_config();
  expect("create after MPI_Finalize", hympi_domain_create(MPI_COMM_WORLD, &config, &domain),
         HYMPI_ERR_STATE, "after MPI_Finalize");
  const int late_failed = failed - failed_before;
  if (rank == 0)
    printf("%d passed, %d failed\n", totals[0] + passed - passed_before, totals[1] + late_failed);
  return totals[1] + late_failed == 0 ? 0 : 1;
}
