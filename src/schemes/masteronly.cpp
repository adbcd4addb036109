// masteronly (seed 001 class 2a): the master thread communicates outside
// parallel regions and packs alone; all threads compute. With one thread
// this is pure MPI (class 1).
#include "scheme_util.hpp"

namespace hympi {
namespace {

const SchemeInfo& entry_info() {
  static const SchemeInfo i{"masteronly", "2a",
                            "MPI by the master thread outside parallel regions; master packs "
                            "alone; all threads compute (pure MPI with --threads 1)",
                            MPI_THREAD_FUNNELED, false, false, 1, false, ""};
  return i;
}

class Masteronly final : public Scheme {
 public:
  explicit Masteronly(const SchemeParams&) {}
  const SchemeInfo& info() const override { return entry_info(); }
  void sweep(ExchangePlan& plan, const FieldList& fields, const SweepRegions& regions,
             const BoxFn& compute, Timers& timers) override {
    plan.begin(fields, &timers[0]);
    plan.end(fields, &timers[0]);
    // A reduction in flight (pipelined cg) moves inside the exchange's MPI
    // calls and this one test; no thread is free to test it during the
    // computation, so the kernel's wait after the sweep completes it.
    plan.progress_background(&timers[0]);
    detail::compute_all_threads(regions, compute, timers);
  }
};

std::unique_ptr<Scheme> make(const SchemeParams& p) { return std::make_unique<Masteronly>(p); }

}  // namespace

SchemeEntry masteronly_entry() { return {entry_info(), &make}; }

}  // namespace hympi
