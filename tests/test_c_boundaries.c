/* The process grid, rank order and physical boundaries through the C API:
 * a forced hympi_domain_config.proc_grid is the one used (every rank's box
 * is the uneven split's box of a distinct grid position), and
 * hympi_domain_boundaries marks exactly the faces on the global grid's edge
 * along non-periodic axes, for slab and 2-D grids, periodic and not; bad
 * grids and rank orders are refused with one message on every rank.
 * Runs at any rank count; prints one line per failure and
 * "N passed, N failed". */
#include <hympi/hympi.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed, rank = 0, size = 1;

static void check(int ok, const char* what) {
  int mine = ok ? 0 : 1, any = 0; /* a failure on any rank fails all */
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any) {
    ++failed;
    if (!ok) printf("FAIL rank %d: %s (last error: '%s')\n", rank, what, hympi_last_error());
  } else {
    ++passed;
  }
}

static int contains(const char* text, const char* part) { return strstr(text, part) != NULL; }

/* This rank's position along one axis of `parts` processes over n points:
 * the p whose uneven split (the first n % parts get one more) is the box. */
static int position_along(int n, int parts, int offset, int extent) {
  const int base = n / parts, extra = n % parts;
  for (int p = 0; p < parts; ++p)
    if (offset == p * base + (p < extra ? p : extra) && extent == base + (p < extra ? 1 : 0)) return p;
  return -1;
}

/* A domain of grid 12x10x9 on process grid `dims` (of `size` ranks): its
 * boxes tile the grid in that shape and its boundaries are the edges. */
static void grid_case(const int dims[3], const int periodic[3], int ranks_per_node, int order) {
  char label[160];
  snprintf(label, sizeof label, "proc_grid %dx%dx%d periodic %d%d%d rpn %d order %d", dims[0],
           dims[1], dims[2], periodic[0], periodic[1], periodic[2], ranks_per_node, order);
  hympi_domain_config c;
  hympi_domain_config_init(&c);
  c.grid[0] = 12;
  c.grid[1] = 10;
  c.grid[2] = 9;
  for (int a = 0; a < 3; ++a) {
    c.proc_grid[a] = dims[a];
    c.periodic[a] = periodic[a];
  }
  c.ranks_per_node = ranks_per_node;
  c.rank_order = order;
  hympi_domain d = NULL;
  const int rc = hympi_domain_create(MPI_COMM_WORLD, &c, &d);
  check(rc == HYMPI_SUCCESS, label);
  if (rc != HYMPI_SUCCESS) return;
  int n[3], offset[3], at[3], boundary[6];
  hympi_domain_local(d, n, offset);
  for (int a = 0; a < 3; ++a) at[a] = position_along(c.grid[a], dims[a], offset[a], n[a]);
  const int placed = at[0] >= 0 && at[1] >= 0 && at[2] >= 0;
  check(placed, label);
  /* Every grid position is one rank's: the positions are a permutation. */
  int mine = placed ? at[0] + dims[0] * (at[1] + dims[1] * at[2]) : -1;
  int* all = malloc(sizeof(int) * (size_t)size);
  int* seen = calloc((size_t)size, sizeof(int));
  MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  int tiled = 1;
  for (int r = 0; r < size; ++r) {
    if (all[r] < 0 || all[r] >= size || seen[all[r]]) tiled = 0;
    else seen[all[r]] = 1;
  }
  free(all);
  free(seen);
  check(tiled, label);

  check(hympi_domain_boundaries(d, boundary) == HYMPI_SUCCESS, "hympi_domain_boundaries");
  int right = 1;
  for (int a = 0; a < 3; ++a) {
    right = right && boundary[2 * a] == (!periodic[a] && offset[a] == 0);
    right = right && boundary[2 * a + 1] == (!periodic[a] && offset[a] + n[a] == c.grid[a]);
  }
  check(right, label);
  hympi_domain_free(&d);
}

/* A config that must be refused on every rank with `message`. */
static void refused(const hympi_domain_config* c, const char* message) {
  hympi_domain d = NULL;
  check(hympi_domain_create(MPI_COMM_WORLD, c, &d) == HYMPI_ERR_USAGE && d == NULL &&
            contains(hympi_last_error(), message),
        message);
}

static void bad_input(void) {
  hympi_domain_config c;
  hympi_domain_config_init(&c);
  check(c.proc_grid[0] == 0 && c.proc_grid[1] == 0 && c.proc_grid[2] == 0 &&
            c.rank_order == HYMPI_RANK_ORDER_SEQUENTIAL,
        "hympi_domain_config_init: a chosen grid, sequential order");
  c.grid[0] = 12;
  c.grid[1] = 10;
  c.grid[2] = 9;
  char message[160];
  c.proc_grid[0] = size + 1;
  c.proc_grid[1] = c.proc_grid[2] = 1;
  snprintf(message, sizeof message, "`proc_grid` %dx1x1 has %d processes, but there are %d ranks",
           size + 1, size + 1, size);
  refused(&c, message);
  c.proc_grid[0] = 0;
  c.proc_grid[1] = size;
  refused(&c, "must have every dimension >= 1 (or all 0: chosen node-aware)");
  if (size > 1) {
    c.proc_grid[0] = size;
    c.proc_grid[1] = 1;
    c.grid[0] = 1;
    snprintf(message, sizeof message,
             "`grid` has 1 points along x but the process grid %dx1x1 has %d processes there", size, size);
    refused(&c, message);
    c.grid[0] = 12;
  }
  c.proc_grid[0] = c.proc_grid[1] = c.proc_grid[2] = 0;
  c.rank_order = 7;
  refused(&c, "rank_order must be HYMPI_RANK_ORDER_SEQUENTIAL or HYMPI_RANK_ORDER_ROUND_ROBIN (got 7)");
  check(hympi_domain_boundaries(NULL, (int[6]){0}) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "NULL or freed"),
        "boundaries of a NULL domain");
  c.rank_order = HYMPI_RANK_ORDER_SEQUENTIAL;
  hympi_domain d = NULL;
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &d) == HYMPI_SUCCESS, "a default domain");
  check(hympi_domain_boundaries(d, NULL) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "boundary must not be NULL"),
        "a NULL boundary array");
  hympi_domain_free(&d);
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int periodics[3][3] = {{0, 0, 0}, {1, 1, 1}, {0, 1, 0}};
  const int slab[3] = {size, 1, 1}, pencil[3] = {1, 1, size};
  for (int p = 0; p < 3; ++p) {
    grid_case(slab, periodics[p], 0, HYMPI_RANK_ORDER_SEQUENTIAL);
    grid_case(pencil, periodics[p], 0, HYMPI_RANK_ORDER_SEQUENTIAL);
    if (size % 2 == 0) {
      const int square[3] = {2, size / 2, 1};
      grid_case(square, periodics[p], 0, HYMPI_RANK_ORDER_SEQUENTIAL);
      /* Virtual nodes of 2 ranks, round robin: rank r on node r % (size/2). */
      grid_case(square, periodics[p], 2, HYMPI_RANK_ORDER_ROUND_ROBIN);
    }
  }
  bad_input();
  if (rank == 0) printf("%d passed, %d failed\n", passed, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}
