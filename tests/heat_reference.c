/* The serial reference of examples/heat.c and heat.f90: the same explicit
 * heat equation on the whole grid, plain loops, no MPI and no hympi.
 *   usage: heat_reference NX NY NZ STEPS PERIODIC(0|1)
 * Prints "checksum sum S l2 L" as the examples do. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int n[3];
static int periodic;

/* The value at (i, j, k): zero beyond a Dirichlet boundary, wrapped if periodic. */
static double at(const double* a, long i, long j, long k) {
  long p[3] = {i, j, k};
  for (int d = 0; d < 3; ++d) {
    if (p[d] >= 0 && p[d] < n[d]) continue;
    if (!periodic) return 0.0;
    p[d] = (p[d] + n[d]) % n[d];
  }
  return a[p[0] + (long)n[0] * (p[1] + (long)n[1] * p[2])];
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: heat_reference NX NY NZ STEPS PERIODIC\n");
    return 2;
  }
  for (int d = 0; d < 3; ++d) n[d] = atoi(argv[1 + d]);
  const int steps = atoi(argv[4]);
  periodic = atoi(argv[5]);
  const long total = (long)n[0] * n[1] * n[2];
  double* u = malloc(total * sizeof(double));
  double* v = malloc(total * sizeof(double));
  if (!u || !v) return 1;
  for (long k = 0; k < n[2]; ++k)
    for (long j = 0; j < n[1]; ++j)
      for (long i = 0; i < n[0]; ++i)
        u[i + n[0] * (j + n[1] * k)] = (double)((7 * i + 13 * j + 29 * k) % 17) / 16.0 - 0.5;
  for (int s = 0; s < steps; ++s) {
    for (long k = 0; k < n[2]; ++k)
      for (long j = 0; j < n[1]; ++j)
        for (long i = 0; i < n[0]; ++i) {
          const double c = at(u, i, j, k);
          const double sum = at(u, i - 1, j, k) + at(u, i + 1, j, k) + at(u, i, j - 1, k) +
                             at(u, i, j + 1, k) + at(u, i, j, k - 1) + at(u, i, j, k + 1);
          v[i + n[0] * (j + n[1] * k)] = c + 0.125 * (sum - 6.0 * c);
        }
    double* t = u;
    u = v;
    v = t;
  }
  double sum = 0, sq = 0;
  for (long p = 0; p < total; ++p) {
    sum += u[p];
    sq += u[p] * u[p];
  }
  printf("checksum sum %.12e l2 %.12e\n", sum, sqrt(sq));
  free(u);
  free(v);
  return 0;
}
