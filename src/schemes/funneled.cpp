// funneled (seed 001 class 3A, Kaiser & Baden's empty region): inside one
// parallel region thread 0 does the whole exchange and has no interior work,
// while threads 1..n-1 compute the interior; then all compute the boundary.
// A non-blocking reduction in flight (ExchangePlan::set_background) is
// thread 0's too: it tests it after the exchange until it completes.
#include "scheme_util.hpp"

namespace hympi {
namespace {

const SchemeInfo& entry_info() {
  static const SchemeInfo i{"funneled", "3A",
                            "thread 0 exchanges inside the parallel region while threads 1..n-1 "
                            "compute the interior (fixed reservation of one thread)",
                            MPI_THREAD_FUNNELED, true, false, 2, false, ""};
  return i;
}

class Funneled final : public Scheme {
 public:
  explicit Funneled(const SchemeParams&) {}
  const SchemeInfo& info() const override { return entry_info(); }
  int reserved_threads() const override { return 1; }
  void sweep(ExchangePlan& plan, const FieldList& fields, const SweepRegions& regions,
             const BoxFn& compute, Timers& timers) override {
    detail::reserved_sweep(regions, compute, timers, 1, [&](int) {
      plan.begin(fields, &timers[0]);
      plan.end(fields, &timers[0]);
      // Then a reduction in flight (pipelined cg) while 1..n-1 compute.
      plan.complete_background(&timers[0]);
    });
  }
};

std::unique_ptr<Scheme> make(const SchemeParams& p) { return std::make_unique<Funneled>(p); }

}  // namespace

SchemeEntry funneled_entry() { return {entry_info(), &make}; }

}  // namespace hympi
