// Unpreconditioned conjugate gradient for A u = f (Dirichlet only). The only
// halo exchange is for p before q = A p; p.q is summed inside the sweep, per
// thread, then over ranks. Vector updates cannot overlap the exchange: they
// are booked as boundary (non-overlappable) computation; the reductions as
// the master's Comm.
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
      : domain(d), x(d.make_field()), r(d.make_field()), p(d.make_field()), q(d.make_field()) {
    detail::fill_value(r, kRhs);
    detail::fill_value(p, kRhs);
  }
  // q = A p through the scheme (exchanging p's halo); returns the global p.q.
  double apply_a(const StoredMatrix& m) {
    return domain.sweep_sum({&p}, [&](const Box& box, int) {
      return operator_apply_box(m, p, q, box, 1.0);
    });
  }
  Domain& domain;
  Field x, r, p, q;
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
      // Arrays streamed: apply A (2) + x, r update (5) + p update (3).
      k.bytes_per_point = (2 + 5 + 3) * sizeof(double);
      k.bytes_per_point_crs = k.bytes_per_point + kCrsMatrixBytesPerPoint;
      k.bytes_per_point_sell = k.bytes_per_point + kSellMatrixBytesPerPoint;
      k.fields = 4;
      k.converges = true;
      k.periodic = PeriodicRule::Forbidden;
      k.periodic_why = "the operator is singular and f = 1 is not in its range";
      return k;
    }();
    return i;
  }

  KernelOutcome run(const KernelRun& run) const override {
    Domain& domain = run.domain;
    CgState s(domain);
    domain.start_clock();
    double rr = domain.for_each_sum([&](const Box& b, int) { return dot_box(s.r, s.r, b); });
    const double rr0 = rr;
    double rel = rr0 > 0 ? 1.0 : 0.0;
    int it = 0;
    while (it < run.cfg.max_iters && rel >= run.cfg.tol) {
      const double alpha = rr / s.apply_a(run.matrix);
      const double rr_new = domain.for_each_sum(
          [&](const Box& b, int) { return axpy_pair_box(s.x, s.r, s.p, s.q, alpha, b); });
      ++it;
      rel = std::sqrt(rr_new / rr0);
      const double beta = rr_new / rr;
      domain.for_each([&](const Box& b, int) { xpay_box(s.p, s.r, beta, b); });
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
