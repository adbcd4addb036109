/* The C API's Field I/O (hympi/hympi.h, last section) against a reference
 * computed here: hympi_domain_grid; gather to the last rank and scatter
 * from rank 0; a file written on one rank (a sub-communicator) and on every
 * rank, read back on every rank bit for bit; and its status codes on every
 * rank alike: a field that is NULL on the last rank only, a missing file, a
 * file of another grid, an unwritable path, a bad root, a NULL global array
 * on the root, a bad name. Runs at any rank count; prints one line per
 * failure and "N passed, N failed". */
#include <hympi/hympi.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int passed, failed, rank = 0, size = 1;

static void check(int ok, const char* what) {
  int mine = ok ? 0 : 1, any = mine;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any) {
    ++failed;
    if (!ok) printf("FAIL rank %d: %s (last error: '%s')\n", rank, what, hympi_last_error());
  } else {
    ++passed;
  }
}

static int contains(const char* text, const char* part) { return strstr(text, part) != NULL; }

enum { NX = 9, NY = 8, NZ = 7 };

/* The reference values, computed once: the same expression compiled at two
 * places may round differently (C's default -ffp-contract=fast fuses
 * multiply-adds where it inlines). */
static double g_reference[NX * NY * NZ];

static void make_reference(void) {
  for (int k = 0; k < NZ; ++k)
    for (int j = 0; j < NY; ++j)
      for (int i = 0; i < NX; ++i) g_reference[i + NX * (j + NY * k)] = cos(0.3 * i - 0.05 * j * k) + i * 1e-7 + k;
}

/* One multiplication rounds the same wherever it is compiled. */
static double reference(int i, int j, int k, double scale) { return scale * g_reference[i + NX * (j + NY * k)]; }

/* Every own point of f: the reference (fill) or whether it holds it (compare). */
static int visit(hympi_domain d, hympi_field f, double scale, int fill) {
  int n[3], off[3], h = 0;
  ptrdiff_t sj = 0, sk = 0;
  double* data = NULL;
  hympi_domain_local(d, n, off);
  hympi_domain_layout(d, &h, &sj, &sk, NULL);
  hympi_field_data(f, &data);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        double* p = &data[(i + h) + sj * (j + h) + sk * (k + h)];
        const double want = reference(off[0] + i, off[1] + j, off[2] + k, scale);
        if (fill)
          *p = want;
        else if (memcmp(p, &want, sizeof want) != 0)
          return 0;
      }
  return 1;
}

static int global_holds(const double* g, double scale) {
  for (int k = 0; k < NZ; ++k)
    for (int j = 0; j < NY; ++j)
      for (int i = 0; i < NX; ++i)
        if (g[i + NX * (j + NY * k)] != reference(i, j, k, scale)) return 0;
  return 1;
}

static hympi_domain make_domain(MPI_Comm comm, int nz) {
  hympi_domain_config c;
  hympi_domain_config_init(&c);
  c.grid[0] = NX;
  c.grid[1] = NY;
  c.grid[2] = nz;
  hympi_domain d = NULL;
  hympi_domain_create(comm, &c, &d);
  return d;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  make_reference();
  char dir[256] = "";
  if (rank == 0) {
    const char* base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/hympi_c_field_io.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) dir[0] = '\0';
  }
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  char path[300], one[300], missing[300];
  snprintf(path, sizeof path, "%s/c.raw", dir);
  snprintf(one, sizeof one, "%s/one.raw", dir);
  snprintf(missing, sizeof missing, "%s/missing.raw", dir);

  hympi_domain d = make_domain(MPI_COMM_WORLD, NZ);
  check(d != NULL, "a domain");
  int grid[3] = {0, 0, 0};
  check(hympi_domain_grid(d, grid) == HYMPI_SUCCESS && grid[0] == NX && grid[1] == NY && grid[2] == NZ,
        "hympi_domain_grid");
  hympi_field u = NULL, v = NULL;
  hympi_field_create(d, &u);
  hympi_field_create(d, &v);
  visit(d, u, 1.0, 1);
  double* global = malloc(sizeof(double) * NX * NY * NZ);
  check(hympi_field_gather(d, u, size - 1, rank == size - 1 ? global : NULL) == HYMPI_SUCCESS &&
            (rank != size - 1 || global_holds(global, 1.0)),
        "gather to the last rank");
  if (rank == 0)
    for (int k = 0; k < NZ; ++k)
      for (int j = 0; j < NY; ++j)
        for (int i = 0; i < NX; ++i) global[i + NX * (j + NY * k)] = reference(i, j, k, 2.0);
  check(hympi_field_scatter(d, rank == 0 ? global : NULL, 0, v) == HYMPI_SUCCESS && visit(d, v, 2.0, 0),
        "scatter from rank 0");

  /* Written on rank 0 alone, read on every rank; then written by all. */
  MPI_Comm solo = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &solo);
  if (solo != MPI_COMM_NULL) {
    hympi_domain s = make_domain(solo, NZ);
    hympi_field w = NULL;
    hympi_field_create(s, &w);
    visit(s, w, 3.0, 1);
    if (hympi_field_write(s, w, one, "one") != HYMPI_SUCCESS) printf("FAIL: %s\n", hympi_last_error());
    hympi_field_free(&w);
    hympi_domain_free(&s);
    MPI_Comm_free(&solo);
  }
  check(hympi_field_read(d, v, one) == HYMPI_SUCCESS && visit(d, v, 3.0, 0),
        "a file written on 1 rank reads back on every rank");
  check(hympi_field_write(d, u, path, "c") == HYMPI_SUCCESS, "a write on every rank");
  check(hympi_field_read(d, v, path) == HYMPI_SUCCESS && visit(d, v, 1.0, 0), "... reads back");

  /* Bad input: the same code on every rank. */
  check(hympi_field_write(d, rank == size - 1 ? NULL : u, path, "c") == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "is NULL or belongs to another domain"),
        "a field NULL on the last rank only fails every rank");
  check(hympi_field_read(d, v, missing) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "No such file or directory"),
        "a missing file");
  hympi_domain other = make_domain(MPI_COMM_WORLD, NZ - 1);
  hympi_field o = NULL;
  hympi_field_create(other, &o);
  check(hympi_field_read(other, o, path) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "holds a 9x8x7 grid") && contains(hympi_last_error(), "9x8x6"),
        "a file of another grid");
  check(hympi_field_read(d, o, path) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "belongs to another domain"),
        "a field of another domain");
  check(hympi_field_write(d, u, "/nonexistent-dir/c.raw", "c") == HYMPI_ERR_OUTPUT &&
            contains(hympi_last_error(), "cannot write /nonexistent-dir/c.raw"),
        "an unwritable path");
  check(hympi_field_gather(d, u, size, global) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "is out of range: accepted 0 .. "),
        "a bad root");
  check(hympi_field_scatter(d, NULL, 0, u) == HYMPI_ERR_USAGE &&
            contains(hympi_last_error(), "the global array on the root (rank 0) is null"),
        "a NULL global array on the root");
  check(hympi_field_write(d, u, path, "") == HYMPI_ERR_USAGE && contains(hympi_last_error(), "name ''"),
        "an empty name");
  check(hympi_domain_grid(NULL, grid) == HYMPI_ERR_USAGE, "a NULL domain");

  hympi_field_free(&o);
  hympi_domain_free(&other);
  hympi_field_free(&u);
  hympi_field_free(&v);
  hympi_domain_free(&d);
  free(global);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const char* suffixes[] = {"", ".json", ".xmf"};
    char name[320];
    for (int s = 0; s < 3; ++s) {
      snprintf(name, sizeof name, "%s%s", path, suffixes[s]);
      remove(name);
      snprintf(name, sizeof name, "%s%s", one, suffixes[s]);
      remove(name);
    }
    rmdir(dir);
    printf("%d passed, %d failed\n", passed, failed);
  }
  MPI_Finalize();
  return failed ? 1 : 0;
}
