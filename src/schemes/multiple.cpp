// multiple (seed 001 class 3B2): m reserved threads share the messages to
// the neighbours (message i goes to thread i mod m) while threads m..n-1
// compute the interior; then all compute the boundary.
#include "scheme_util.hpp"

namespace hympi {
namespace {

const SchemeInfo& entry_info() {
  static const SchemeInfo i{"multiple", "3B2",
                            "m reserved threads (--reserved m) share the neighbours' messages "
                            "while n-m threads compute the interior",
                            MPI_THREAD_MULTIPLE, true, true, 2};
  return i;
}

class Multiple final : public Scheme {
 public:
  explicit Multiple(const SchemeParams& p) : reserved_(p.reserved > 0 ? p.reserved : 1) {}
  const SchemeInfo& info() const override { return entry_info(); }
  int reserved_threads() const override { return reserved_; }
  void sweep(ExchangePlan& plan, Field& field, const SweepRegions& regions, const BoxFn& compute,
             Timers& timers) override {
    const int n = static_cast<int>(timers.size());
    const int m = reserved_;
    detail::ErrorSlot errors;
#pragma omp parallel num_threads(n)
    {
      const int t = omp_get_thread_num();
      ThreadTimes& tm = timers[t];
      errors.run([&] {
        detail::require_threads(n);
        if (t < m) {
          // Message i belongs to reserved thread i mod m.
          auto mine = [&](std::size_t i, const FaceMessage&) { return static_cast<int>(i % m) == t; };
          detail::start_owned(plan, field, tm, mine);
          detail::finish_owned(plan, field, tm, mine);
        } else {
          PhaseTimer pt(tm, Phase::ComputeInterior);
          compute(split_box_part(regions.interior, n - m, t - m), t);
        }
      });
#pragma omp barrier
      errors.run([&] { detail::compute_boundary_part(regions, compute, n, t, t, tm); });
    }
    errors.rethrow();
  }

 private:
  int reserved_;
};

std::unique_ptr<Scheme> make(const SchemeParams& p) { return std::make_unique<Multiple>(p); }

}  // namespace

SchemeEntry multiple_entry() { return {entry_info(), &make}; }

}  // namespace hympi
