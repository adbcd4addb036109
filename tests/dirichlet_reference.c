/* The serial reference of examples/dirichlet.c: the same explicit heat
 * equation on the whole grid, plain loops, no MPI and no hympi; a neighbour
 * beyond a face of a non-periodic axis holds that face's boundary value.
 *   usage: dirichlet_reference NX NY NZ STEPS PERIODIC_AXES(- or a subset of xyz) V0,V1,V2,V3,V4,V5
 * Prints "checksum sum S l2 L" and "fingerprint F" as the example does; the
 * fingerprint must match to the last bit (the same arithmetic in the same
 * order at every point). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dirichlet_problem.h"

static int n[3], periodic[3];
static double boundary[6];

/* The value at (i, j, k): wrapped along a periodic axis, the face's value
 * beyond a Dirichlet one (a star stencil is beyond at most one face). */
static double at(const double* a, long i, long j, long k) {
  long p[3] = {i, j, k};
  for (int d = 0; d < 3; ++d) {
    if (p[d] >= 0 && p[d] < n[d]) continue;
    if (!periodic[d]) return boundary[2 * d + (p[d] < 0 ? 0 : 1)];
    p[d] = (p[d] + n[d]) % n[d];
  }
  return a[p[0] + (long)n[0] * (p[1] + (long)n[1] * p[2])];
}

int main(int argc, char** argv) {
  if (argc != 7 || sscanf(argv[6], "%lf,%lf,%lf,%lf,%lf,%lf", &boundary[0], &boundary[1], &boundary[2],
                          &boundary[3], &boundary[4], &boundary[5]) != 6) {
    fprintf(stderr, "usage: dirichlet_reference NX NY NZ STEPS PERIODIC_AXES V0,V1,V2,V3,V4,V5\n");
    return 2;
  }
  for (int d = 0; d < 3; ++d) {
    n[d] = atoi(argv[1 + d]);
    periodic[d] = strchr(argv[5], "xyz"[d]) != NULL;
  }
  const int steps = atoi(argv[4]);
  const long total = (long)n[0] * n[1] * n[2];
  double* u = malloc(total * sizeof(double));
  double* v = malloc(total * sizeof(double));
  if (!u || !v) return 1;
  for (long k = 0; k < n[2]; ++k)
    for (long j = 0; j < n[1]; ++j)
      for (long i = 0; i < n[0]; ++i) u[i + n[0] * (j + n[1] * k)] = initial_value(i, j, k);
  for (int s = 0; s < steps; ++s) {
    for (long k = 0; k < n[2]; ++k)
      for (long j = 0; j < n[1]; ++j)
        for (long i = 0; i < n[0]; ++i) {
          const double c = at(u, i, j, k);
          /* The example's order of the six terms, for the same rounding. */
          const double sum = at(u, i - 1, j, k) + at(u, i + 1, j, k) + at(u, i, j - 1, k) +
                             at(u, i, j + 1, k) + at(u, i, j, k - 1) + at(u, i, j, k + 1);
          v[i + n[0] * (j + n[1] * k)] = c + 0.125 * (sum - 6.0 * c);
        }
    double* t = u;
    u = v;
    v = t;
  }
  double sum = 0, sq = 0;
  uint64_t print = 0;
  for (long p = 0; p < total; ++p) {
    sum += u[p];
    sq += u[p] * u[p];
    print += point_hash(p, u[p]);
  }
  printf("checksum sum %.17g l2 %.17g\nfingerprint %016llx\n", sum, sqrt(sq), (unsigned long long)print);
  free(u);
  free(v);
  return 0;
}
