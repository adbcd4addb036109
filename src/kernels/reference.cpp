// Frozen serial references on the whole global grid: plain loops over global
// indices with explicit boundary handling. Tests compare every scheme, rank
// count and thread count against these. Do not optimise. One function per
// kernel, each reached through its kernel's registry entry.
#include <cmath>

#include "reference.hpp"

namespace hympi {

namespace {

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

std::vector<double> initial(const Grid& g) {
  std::vector<double> u(g.points());
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i) u[g.idx(i, j, k)] = initial_value(i, j, k);
  return u;
}

void apply_a(const Grid& g, const std::vector<double>& x, std::vector<double>& y, double scale) {
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j)
      for (int i = 0; i < g.n[0]; ++i)
        y[g.idx(i, j, k)] = (6.0 * x[g.idx(i, j, k)] - g.neighbour_sum(x, i, j, k)) * scale;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

ReferenceResult finished(std::vector<double> field, int iterations, double residual = 0.0) {
  ReferenceResult res;
  res.field = std::move(field);
  res.iterations = iterations;
  res.residual = residual;
  return res;
}

}  // namespace

ReferenceResult reference_jacobi(const ReferenceProblem& p) {
  const Grid g{p.global, p.periodic};
  const int iters = p.iters;
  std::vector<double> u = initial(g), v(g.points());
  for (int t = 0; t < iters; ++t) {
    for (int k = 0; k < g.n[2]; ++k)
      for (int j = 0; j < g.n[1]; ++j)
        for (int i = 0; i < g.n[0]; ++i)
          v[g.idx(i, j, k)] = (g.neighbour_sum(u, i, j, k) + kRhs) * kSixth;
    u.swap(v);
  }
  return finished(std::move(u), iters);
}

ReferenceResult reference_rbgs(const ReferenceProblem& p) {
  const Grid g{p.global, p.periodic};
  const int iters = p.iters;
  std::vector<double> u = initial(g);
  for (int t = 0; t < iters; ++t)
    for (int colour = 0; colour < 2; ++colour)
      for (int k = 0; k < g.n[2]; ++k)
        for (int j = 0; j < g.n[1]; ++j)
          for (int i = 0; i < g.n[0]; ++i)
            if (((i + j + k) & 1) == colour)
              u[g.idx(i, j, k)] = (g.neighbour_sum(u, i, j, k) + kRhs) * kSixth;
  return finished(std::move(u), iters);
}

ReferenceResult reference_spmv(const ReferenceProblem& p) {
  const Grid g{p.global, p.periodic};
  const int iters = p.iters;
  std::vector<double> x = initial(g), y(g.points());
  for (int t = 0; t < iters; ++t) {
    apply_a(g, x, y, kSpmvScale);
    x.swap(y);
  }
  return finished(std::move(x), iters);
}

ReferenceResult reference_cg(const ReferenceProblem& prob) {
  const Grid g{prob.global, prob.periodic};
  const double tol = prob.tol;
  const int max_iters = prob.max_iters;
  std::vector<double> x(g.points(), 0.0), r(g.points(), kRhs), p = r, q(g.points());
  double rr = dot(r, r);
  const double rr0 = rr;
  int it = 0;
  double rel = 1.0;
  while (it < max_iters && rel >= tol) {
    apply_a(g, p, q, 1.0);
    const double alpha = rr / dot(p, q);
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    const double rr_new = dot(r, r);
    ++it;
    rel = std::sqrt(rr_new / rr0);
    const double beta = rr_new / rr;
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = r[i] + beta * p[i];
    rr = rr_new;
  }
  return finished(std::move(x), it, rel);
}

}  // namespace hympi
