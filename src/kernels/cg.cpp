// Unpreconditioned conjugate gradient for A u = f (Dirichlet only), the
// iterates of the frozen reference (reference_cg) in three sweeps per
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

#include "kernel_util.hpp"
#include "reference.hpp"

namespace hympi {

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

  ReferenceResult reference(const ReferenceProblem& p) const override { return reference_cg(p); }
};

}  // namespace

const Kernel& cg_kernel() {
  static const Cg k;
  return k;
}

}  // namespace hympi
