// funneled (seed 001 class 3A, Kaiser & Baden's empty region): inside one
// parallel region thread 0 does the whole exchange and has no interior work,
// while threads 1..n-1 compute the interior; then all compute the boundary.
#include "scheme_util.hpp"

namespace hympi {
namespace {

const SchemeInfo& entry_info() {
  static const SchemeInfo i{"funneled", "3A",
                            "thread 0 exchanges inside the parallel region while threads 1..n-1 "
                            "compute the interior (fixed reservation of one thread)",
                            MPI_THREAD_FUNNELED, true, false, 2};
  return i;
}

class Funneled final : public Scheme {
 public:
  explicit Funneled(const SchemeParams&) {}
  const SchemeInfo& info() const override { return entry_info(); }
  int reserved_threads() const override { return 1; }
  void sweep(ExchangePlan& plan, Field& field, const SweepRegions& regions, const BoxFn& compute,
             Timers& timers) override {
    const int n = static_cast<int>(timers.size());
    detail::ErrorSlot errors;
#pragma omp parallel num_threads(n)
    {
      const int t = omp_get_thread_num();
      errors.run([&] {
        detail::require_threads(n);
        if (t == 0) {
          plan.begin(field, &timers[0]);
          plan.end(field, &timers[0]);
        } else {
          PhaseTimer pt(timers[t], Phase::ComputeInterior);
          compute(split_box_part(regions.interior, n - 1, t - 1), t);
        }
      });
#pragma omp barrier
      errors.run([&] { detail::compute_boundary_part(regions, compute, n, t, t, timers[t]); });
    }
    errors.rethrow();
  }
};

std::unique_ptr<Scheme> make(const SchemeParams& p) { return std::make_unique<Funneled>(p); }

}  // namespace

SchemeEntry funneled_entry() { return {entry_info(), &make}; }

}  // namespace hympi
