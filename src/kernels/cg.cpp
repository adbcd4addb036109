// Unpreconditioned conjugate gradient for A u = f (Dirichlet only), the
// iterates of the frozen reference (ref::cg, below) in three sweeps per
// iteration:
//   1. q = A p through the scheme (the only halo exchange: p's), p.q summed
//      inside the sweep; matrix-free, q is not stored at all: p.(A p) is
//      summed as 6 p.p - 2 p.(forward neighbours), four loads per point
//      instead of seven (stencil_dot_box);
//   2. r -= alpha q, r.r summed in the same pass (matrix-free: A p
//      recomputed from p, whose halo is still valid, by the same operations);
//   3. x += alpha p and p = r + beta p in one pass: x's update waits for the
//      sweep that reads p anyway.
// Per point that is 10 arrays streamed with a stored matrix, against 11 for
// separate x/r and p updates (and PETSc KSPCG's 14-15: MatMult, VecDot,
// 2 VecAXPY, VecNorm, VecAYPX), and 9 matrix-free. Every vector value is
// computed by the same operations in the same order as before the fusion;
// matrix-free p.(A p) is summed in another form (the same in exact
// arithmetic), so there the iterates differ by round-off. The two
// reductions per iteration stay two
// MPI_Allreduce calls: beta needs r.r after r's update, which needs alpha,
// which needs p.q; merging them (Chronopoulos-Gear, pipelined CG) changes
// the recurrence, not just the order of passes. The reductions are the
// master's Comm; the vector updates are booked as boundary (non-overlappable)
// computation.
#include <cmath>

#include "box_kernels.hpp"
#include "kernel_util.hpp"
#include "reference.hpp"

namespace hympi {

// ---- The box loops of the vector steps (q = A p is stencil.cpp's operator) ----

double axpy_pair_box(Field& x, Field& r, const Field& p, const Field& q, double alpha,
                     const Box& box) {
  double rr = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = x.index(box.lo[0], j, k);
      double* __restrict xs = x.data() + base;
      double* __restrict rs = r.data() + base;
      const double* __restrict ps = p.data() + base;
      const double* __restrict qs = q.data() + base;
#pragma omp simd reduction(+ : rr)
      for (int i = 0; i < box.extent(0); ++i) {
        xs[i] += alpha * ps[i];
        rs[i] -= alpha * qs[i];
        rr += rs[i] * rs[i];
      }
    }
  return rr;
}

void xpay_box(Field& p, const Field& r, double beta, const Box& box) {
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = p.index(box.lo[0], j, k);
      double* __restrict ps = p.data() + base;
      const double* __restrict rs = r.data() + base;
#pragma omp simd
      for (int i = 0; i < box.extent(0); ++i) ps[i] = rs[i] + beta * ps[i];
    }
}

double r_update_box(Field& r, const Field& q, double alpha, const Box& box) {
  double rr = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = r.index(box.lo[0], j, k);
      double* __restrict rs = r.data() + base;
      const double* __restrict qs = q.data() + base;
#pragma omp simd reduction(+ : rr)
      for (int i = 0; i < box.extent(0); ++i) {
        rs[i] -= alpha * qs[i];
        rr += rs[i] * rs[i];
      }
    }
  return rr;
}

void xp_update_box(Field& x, Field& p, const Field& r, double alpha, double beta, const Box& box) {
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = x.index(box.lo[0], j, k);
      double* __restrict xs = x.data() + base;
      double* __restrict ps = p.data() + base;
      const double* __restrict rs = r.data() + base;
#pragma omp simd
      for (int i = 0; i < box.extent(0); ++i) {
        xs[i] += alpha * ps[i];
        ps[i] = rs[i] + beta * ps[i];
      }
    }
}

// cg's matrix-free sweeps prefetch the row kPlanesAhead planes above the
// one they compute: a sweep of the 7-point stencil streams one new plane
// from memory while its other reads hit cache, and on the 2-core VM the
// hardware prefetcher alone kept the p.(A p) sweep at 10 GB/s (1 rank,
// 128^3). Issued only where that plane exists (interior or halo), so the
// address stays inside the field. Written out in each loop: through a
// small helper function the p.(A p) sweep measured 0.51-0.54 s against
// 0.38-0.42 (cg 128^3, 319 iterations); in jacobi's and spmv's sweeps the
// prefetch gained nothing.
namespace {
constexpr int kPlanesAhead = 2;
}  // namespace

// p.(A p) = sum_i 6 p_i^2 - sum_i sum_nb p_i p_nb, and the second sum counts
// every coupling twice, once from each end: so it is 2 sum_i p_i (p_i+x +
// p_i+y + p_i+z), the forward neighbours only. A coupling across a box or
// rank face is counted by the box below it (which reads the other's points
// or its + halo, exchanged); one into a Dirichlet boundary reads a halo of
// 0. Four loads per point instead of seven: this sweep was core-bound, at
// 1.1-1.3 G points/s from memory while reading one array. The same value
// as p . (A p) in exact arithmetic, not to the last bit (the terms cancel
// differently), so cg's iterates change by round-off only.
double stencil_dot_box(const Field& p, const Box& box) {
  if (box.empty()) return 0.0;
  const std::ptrdiff_t sj = p.stride_j(), sk = p.stride_k();
  const int n = box.extent(0);
  double dot = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k) {
    const bool ahead = k + kPlanesAhead < p.size()[2] + p.halo();
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const double* __restrict c = p.data() + p.index(box.lo[0], j, k);
      if (ahead)
        for (int q = 0; q < n; q += 8) __builtin_prefetch(c + q + kPlanesAhead * sk, 0, 3);
#pragma omp simd reduction(+ : dot)
      for (int i = 0; i < n; ++i) dot += c[i] * (6.0 * c[i] - 2.0 * (c[i + 1] + c[i + sj] + c[i + sk]));
    }
  }
  return dot;
}

double stencil_r_update_box(Field& r, const Field& p, double alpha, const Box& box) {
  if (box.empty()) return 0.0;
  const std::ptrdiff_t sj = p.stride_j(), sk = p.stride_k();
  const int n = box.extent(0);
  double rr = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k) {
    const bool ahead = k + kPlanesAhead < p.size()[2] + p.halo();
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = p.index(box.lo[0], j, k);
      const double* __restrict c = p.data() + base;
      double* __restrict rs = r.data() + base;
      if (ahead)
        for (int q = 0; q < n; q += 8) __builtin_prefetch(c + q + kPlanesAhead * sk, 0, 3);
#pragma omp simd reduction(+ : rr)
      for (int i = 0; i < n; ++i) {
        const double q =
            (6.0 * c[i] - (c[i - 1] + c[i + 1] + c[i - sj] + c[i + sj] + c[i - sk] + c[i + sk])) * 1.0;
        rs[i] -= alpha * q;
        rr += rs[i] * rs[i];
      }
    }
  }
  return rr;
}

double dot_box(const Field& a, const Field& b, const Box& box) {
  double s = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = a.index(box.lo[0], j, k);
      const double* __restrict as = a.data() + base;
      const double* __restrict bs = b.data() + base;
#pragma omp simd reduction(+ : s)
      for (int i = 0; i < box.extent(0); ++i) s += as[i] * bs[i];
    }
  return s;
}

// ---- The frozen serial reference (reference.hpp): the whole global grid,
// plain loops. Do not optimise. ----

namespace ref {

ReferenceResult cg(const ReferenceProblem& prob) {
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

}  // namespace ref

// ---- The kernel: its facts, its iteration loop, its reference ----

namespace {

// One repetition's vectors. Sums over threads and ranks go through the
// Domain: the vector updates as non-overlappable computation, the reductions
// as the master's communication.
struct CgState {
  explicit CgState(Domain& d)
      : domain(d), x(d.make_field()), r(d.make_field()), p(d.make_field()) {
    detail::fill_value(r, kRhs);
    detail::fill_value(p, kRhs);
  }
  // Sweep 1: q = A p through the scheme (exchanging p's halo); returns the
  // global p.q. Matrix-free: p.(A p) only.
  double apply_a(const StoredMatrix& m, bool stored) {
    if (!stored)
      return domain.sweep_sum({&p}, [&](const Box& box, int) { return stencil_dot_box(p, box); });
    return domain.sweep_sum({&p}, [&](const Box& box, int) {
      return operator_apply_box(m, p, q, box, 1.0);
    });
  }
  // Sweep 2: r -= alpha q; returns the global r.r.
  double update_r(double alpha, bool stored) {
    if (!stored)
      return domain.for_each_sum(
          [&](const Box& b, int) { return stencil_r_update_box(r, p, alpha, b); });
    return domain.for_each_sum([&](const Box& b, int) { return r_update_box(r, q, alpha, b); });
  }
  Domain& domain;
  Field x, r, p, q;  // q only with a stored matrix
};

class Cg final : public Kernel {
 public:
  const KernelInfo& info() const override {
    static const KernelInfo i = [] {
      KernelInfo k;
      k.kind = KernelKind::Cg;
      k.name = "cg";
      k.description = "unpreconditioned conjugate gradient for A u = f (Dirichlet only)";
      k.flops_per_point = 8.0 + 6.0 + 2.0;  // apply A, x and r update, p update
      // Arrays streamed matrix-free: p.(A p) (1), r update (3), x and p
      // update (5); A p is computed twice and never stored. With a stored
      // matrix q is written once and read once more (+2) besides the matrix.
      k.bytes_per_point = (1 + 3 + 5) * sizeof(double);
      k.bytes_per_point_crs = k.bytes_per_point + 2 * sizeof(double) + kCrsMatrixBytesPerPoint;
      k.bytes_per_point_sell = k.bytes_per_point + 2 * sizeof(double) + kSellMatrixBytesPerPoint;
      k.fields = 4;  // x, r, p and (stored matrix) q; matrix-free needs 3
      k.converges = true;
      k.periodic = PeriodicRule::Forbidden;
      k.periodic_why = "the operator is singular and f = 1 is not in its range";
      return k;
    }();
    return i;
  }

  KernelOutcome run(const KernelRun& run) const override {
    Domain& domain = run.domain;
    const bool stored = run.matrix.crs || run.matrix.sell;
    CgState s(domain);
    if (stored) s.q = domain.make_field();
    domain.start_clock();
    double rr = domain.for_each_sum([&](const Box& b, int) { return dot_box(s.r, s.r, b); });
    const double rr0 = rr;
    double rel = rr0 > 0 ? 1.0 : 0.0;
    int it = 0;
    while (it < run.cfg.max_iters && rel >= run.cfg.tol) {
      const double alpha = rr / s.apply_a(run.matrix, stored);
      const double rr_new = s.update_r(alpha, stored);
      ++it;
      rel = std::sqrt(rr_new / rr0);
      const double beta = rr_new / rr;
      domain.for_each([&](const Box& b, int) { xp_update_box(s.x, s.p, s.r, alpha, beta, b); });
      rr = rr_new;
    }
    domain.stop_clock();
    return {std::move(s.x), it, rel};
  }

  ReferenceResult reference(const ReferenceProblem& p) const override { return ref::cg(p); }
};

}  // namespace

const Kernel& cg_kernel() {
  static const Cg k;
  return k;
}

}  // namespace hympi
