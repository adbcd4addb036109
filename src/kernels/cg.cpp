// Unpreconditioned conjugate gradient for A u = f (Dirichlet only). The only
// halo exchange is for p before q = A p; p.q is summed inside the sweep, per
// thread, then over ranks. Vector updates cannot overlap the exchange: they
// are booked as boundary (non-overlappable) computation; the reductions as
// the master's Comm.
#include <omp.h>

#include <cmath>
#include <vector>

#include "kernel_util.hpp"
#include "reference.hpp"

namespace hympi {

namespace {

// One repetition's vectors and per-thread partial sums.
struct CgState {
  CgState(const KernelRun& run, Timers& timers)
      : run_(run), timers_(timers), x(run.domain.size), r(run.domain.size), p(run.domain.size),
        q(run.domain.size), part_(run.threads) {
    detail::fill_value(r, kRhs);
    detail::fill_value(p, kRhs);
  }

  // Sum over threads of body(part of the local box), in its own parallel
  // region; booked as boundary computation.
  template <typename Body>
  double parallel_sum(Body&& body) {
    const int nt = run_.threads;
    const Box local = run_.domain.box();
    for (auto& v : part_) v.value = 0;
#pragma omp parallel num_threads(nt)
    {
      const int t = omp_get_thread_num();
      PhaseTimer pt(timers_[t], Phase::ComputeBoundary);
      part_[t].value = body(split_box_part(local, nt, t));
    }
    double sum = 0;
    for (auto& v : part_) sum += v.value;
    return sum;
  }

  // Collective: sum over ranks, booked as the master's communication.
  double reduce(double v) {
    PhaseTimer c(timers_[0], Phase::Comm);
    return detail::allreduce_sum(v, run_.comm);
  }

  // q = A p through the scheme (exchanging p's halo); returns the local p.q.
  double apply_a() {
    for (auto& v : part_) v.value = 0;
    const CrsMatrix* crs = run_.crs;
    run_.scheme.sweep(
        run_.plan, p, run_.regions,
        [&](const Box& box, int t) { part_[t].value += operator_apply_box(crs, p, q, box, 1.0); },
        timers_);
    double pq_local = 0;
    for (auto& v : part_) pq_local += v.value;
    return pq_local;
  }

  const KernelRun& run_;
  Timers& timers_;
  Field x, r, p, q;
  std::vector<detail::Partial> part_;
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
      k.fields = 4;
      k.converges = true;
      k.periodic = PeriodicRule::Forbidden;
      k.periodic_why = "the operator is singular and f = 1 is not in its range";
      return k;
    }();
    return i;
  }

  KernelOutcome run(const KernelRun& run, Timers& timers, LoopClock& clock) const override {
    CgState s(run, timers);
    clock.start();
    double rr = s.reduce(s.parallel_sum([&](const Box& b) { return dot_box(s.r, s.r, b); }));
    const double rr0 = rr;
    double rel = rr0 > 0 ? 1.0 : 0.0;
    int it = 0;
    while (it < run.cfg.max_iters && rel >= run.cfg.tol) {
      const double alpha = rr / s.reduce(s.apply_a());
      const double rr_new = s.reduce(
          s.parallel_sum([&](const Box& b) { return axpy_pair_box(s.x, s.r, s.p, s.q, alpha, b); }));
      ++it;
      rel = std::sqrt(rr_new / rr0);
      const double beta = rr_new / rr;
      s.parallel_sum([&](const Box& b) {
        xpay_box(s.p, s.r, beta, b);
        return 0.0;
      });
      rr = rr_new;
    }
    clock.stop();
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
