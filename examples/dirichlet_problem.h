/* The problem of examples/dirichlet.c, shared with its serial reference
 * (tests/dirichlet_reference.c): the initial field and the fingerprint of a
 * solution. */
#ifndef HYMPI_DIRICHLET_PROBLEM_H
#define HYMPI_DIRICHLET_PROBLEM_H

#include <stdint.h>
#include <string.h>

/* The initial value at global point (i, j, k) (heat.c's). */
static inline double initial_value(long long i, long long j, long long k) {
  return (double)((7 * i + 13 * j + 29 * k) % 17) / 16.0 - 0.5;
}

/* splitmix64's finaliser: every input bit changes about half the output's. */
static inline uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* A point's share of the fingerprint: its global linear index and the bits
 * of its value, hashed. The fingerprint is the sum of the shares modulo
 * 2^64: integer addition, so the same in any order and over any
 * decomposition, and a change of any bit of any point changes it. */
static inline uint64_t point_hash(long long global_index, double value) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  return mix64(bits ^ mix64((uint64_t)global_index));
}

#endif
