/* The report of a user's program through the C API (hympi_report_json_fields,
 * hympi_report_build): each named field's checksum written as hympi_checksum
 * computes it, to the last bit (read back from the file); the combined
 * "checksum" and "l2" of them all; the program's compiler and flags beside
 * hympi's; the old hympi_report_json still writing a report without
 * checksums; and bad names (NULL, empty, repeated) refused with
 * HYMPI_ERR_USAGE on every rank, before any collective. Runs at any rank
 * count; prints one line per failure and "N passed, N failed". */
#include <hympi/hympi.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int passed, failed, rank = 0;

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

/* The whole file (rank 0), or NULL. */
static char* read_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  char* text = calloc(1 << 20, 1);
  if (text) fread(text, 1, (1 << 20) - 1, f);
  fclose(f);
  return text;
}

/* The number after `"key": ` that follows `"field": "name"` in text; NAN
 * when missing. nlohmann writes an object's keys sorted: field, l2, sum. */
static double field_value(const char* text, const char* name, const char* key) {
  char anchor[96], label[32];
  snprintf(anchor, sizeof anchor, "\"field\": \"%s\"", name);
  snprintf(label, sizeof label, "\"%s\": ", key);
  const char* at = text ? strstr(text, anchor) : NULL;
  const char* end = at ? strchr(at, '}') : NULL;
  const char* value = at ? strstr(at, label) : NULL;
  if (!value || value > end) return NAN;
  return strtod(value + strlen(label), NULL);
}

/* Rank 0's reading of a value, on every rank. */
static double shared(double value) {
  MPI_Bcast(&value, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return value;
}

static int contains(const char* text, const char* part) { return text && strstr(text, part) != NULL; }

/* Fills a field with a value of its global point (the same at any rank count). */
static void fill(hympi_domain d, hympi_field field, double scale) {
  int size[3], offset[3], halo;
  ptrdiff_t sj, sk;
  size_t count;
  double* u = NULL;
  hympi_domain_local(d, size, offset);
  hympi_domain_layout(d, &halo, &sj, &sk, &count);
  hympi_field_data(field, &u);
  for (int k = 0; k < size[2]; ++k)
    for (int j = 0; j < size[1]; ++j)
      for (int i = 0; i < size[0]; ++i)
        u[(i + halo) + sj * (j + halo) + sk * (k + halo)] =
            scale * ((offset[0] + i) % 7 - 3.25 + 0.1 * (offset[1] + j) - 0.01 * (offset[2] + k));
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  hympi_domain_config c;
  hympi_domain_config_init(&c);
  c.grid[0] = c.grid[1] = c.grid[2] = 12;
  hympi_domain d = NULL;
  hympi_field f[2] = {NULL, NULL};
  check(hympi_domain_create(MPI_COMM_WORLD, &c, &d) == HYMPI_SUCCESS &&
            hympi_field_create(d, &f[0]) == HYMPI_SUCCESS && hympi_field_create(d, &f[1]) == HYMPI_SUCCESS,
        "a domain and two fields");
  fill(d, f[0], 1.0);
  fill(d, f[1], -2.5);
  double sum[2], l2[2];
  hympi_checksum(d, f[0], &sum[0], &l2[0]);
  hympi_checksum(d, f[1], &sum[1], &l2[1]);

  /* A path per run of the test: ctest may run it in both builds at once. */
  char path[128];
  snprintf(path, sizeof path, "/tmp/hympi-report-fields-%d.json", rank == 0 ? (int)getpid() : 0);
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  const char* names[2] = {"u", "v_new"};
  check(HYMPI_REPORT_BUILD(d) == HYMPI_SUCCESS, "HYMPI_REPORT_BUILD");
  check(hympi_report_build(d, "test-cc 1.0", "-O2 -ffast-math") == HYMPI_SUCCESS, "hympi_report_build");
  check(hympi_report_json_fields(d, path, "t", 2, f, names) == HYMPI_SUCCESS, "a report of two named fields");
  char* text = rank == 0 ? read_file(path) : NULL;
  check(rank != 0 || text != NULL, "the report was written");
  check(shared(field_value(text, "u", "sum")) == sum[0] && shared(field_value(text, "u", "l2")) == l2[0],
        "u's sum and l2 in the report are hympi_checksum's, to the last bit");
  check(shared(field_value(text, "v_new", "sum")) == sum[1] &&
            shared(field_value(text, "v_new", "l2")) == l2[1],
        "v_new's sum and l2 in the report are hympi_checksum's, to the last bit");
  int has_build = contains(text, "\"app_compiler\": \"test-cc 1.0\"") &&
                  contains(text, "\"app_flags\": \"-O2 -ffast-math\"") && contains(text, "\"compiler\": ");
  MPI_Bcast(&has_build, 1, MPI_INT, 0, MPI_COMM_WORLD);
  check(has_build, "the program's compiler and flags beside hympi's (the last hympi_report_build)");
  free(text);

  /* Names left out: field1, field2. The old call: no checksums. */
  check(hympi_report_json_fields(d, path, "t", 2, f, NULL) == HYMPI_SUCCESS, "fields without names");
  text = rank == 0 ? read_file(path) : NULL;
  check(shared(field_value(text, "field2", "sum")) == sum[1], "unnamed fields are field1, field2");
  free(text);
  check(hympi_report_json(d, path, "t") == HYMPI_SUCCESS, "hympi_report_json still writes a report");
  text = rank == 0 ? read_file(path) : NULL;
  int none = contains(text, "\"checksums\": []") && contains(text, "\"checksum\": null");
  MPI_Bcast(&none, 1, MPI_INT, 0, MPI_COMM_WORLD);
  check(none, "hympi_report_json's report has no checksums");
  free(text);

  /* Bad names: refused on every rank, nothing written. */
  const char* missing[2] = {"u", NULL};
  const char* empty[2] = {"u", ""};
  const char* twice[2] = {"u", "u"};
  check(hympi_report_json_fields(d, path, "t", 2, f, missing) == HYMPI_ERR_USAGE &&
            strstr(hympi_last_error(), "names[1] is NULL: give one name per field") != NULL,
        "a NULL name");
  check(hympi_report_json_fields(d, path, "t", 2, f, empty) == HYMPI_ERR_USAGE &&
            strstr(hympi_last_error(), "1..64 printable ASCII") != NULL,
        "an empty name");
  check(hympi_report_json_fields(d, path, "t", 2, f, twice) == HYMPI_ERR_USAGE &&
            strstr(hympi_last_error(), "field name 'u' is given twice") != NULL,
        "a name given twice");
  check(hympi_report_json_fields(d, path, "t", -1, f, names) == HYMPI_ERR_USAGE, "a negative count");
  if (rank == 0) remove(path);

  hympi_field_free(&f[0]);
  hympi_field_free(&f[1]);
  hympi_domain_free(&d);
  if (rank == 0) printf("%d passed, %d failed\n", passed, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}
