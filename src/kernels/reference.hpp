// The plain grid helpers shared by the frozen serial references of the
// built-in kernels. Each reference is in its kernel's file (namespace ref:
// ref::jacobi in jacobi.cpp, ...), reached only through its kernel's
// registry entry (Kernel::reference). Plain loops over global indices with
// explicit boundary handling; tests compare every scheme, rank count and
// thread count against them. Do not optimise. Private to the library.
#pragma once

#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "hympi/kernels.hpp"

namespace hympi {
namespace ref {

constexpr double kSixth = 1.0 / 6.0;

struct Grid {
  std::array<int, 3> n;
  bool periodic;
  long long idx(long long i, long long j, long long k) const { return i + n[0] * (j + n[1] * k); }
  // Value at (i, j, k), which may be one step outside the grid.
  double get(const std::vector<double>& v, long long i, long long j, long long k) const {
    long long c[3] = {i, j, k};
    for (int d = 0; d < 3; ++d) {
      if (c[d] >= 0 && c[d] < n[d]) continue;
      if (!periodic) return 0.0;
      c[d] = (c[d] + n[d]) % n[d];
    }
    return v[idx(c[0], c[1], c[2])];
  }
  double neighbour_sum(const std::vector<double>& v, long long i, long long j, long long k) const {
    return get(v, i - 1, j, k) + get(v, i + 1, j, k) + get(v, i, j - 1, k) + get(v, i, j + 1, k) +
           get(v, i, j, k - 1) + get(v, i, j, k + 1);
  }
  long long points() const { return 1LL * n[0] * n[1] * n[2]; }
};

inline std::vector<double> initial(const Grid& g) {
  std::vector<double> u(g.points());
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) u[g.idx(i, j, k)] = initial_value(i, j, k);
  return u;
}

inline void apply_a(const Grid& g, const std::vector<double>& x, std::vector<double>& y, double scale) {
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i)
        y[g.idx(i, j, k)] = (6.0 * x[g.idx(i, j, k)] - g.neighbour_sum(x, i, j, k)) * scale;
}

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

inline ReferenceResult finished(std::vector<double> field, int iterations, double residual = 0.0) {
  ReferenceResult res;
  res.field = std::move(field);
  res.iterations = iterations;
  res.residual = residual;
  return res;
}

}  // namespace ref
}  // namespace hympi
