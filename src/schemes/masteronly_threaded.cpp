// masteronly-threaded (seed 001 class 2b, "multiple/masteronly", sec. 5):
// communication still happens outside the compute regions, but all threads
// take part in it: each packs, sends, receives and unpacks its share of the
// messages (needs MPI_THREAD_MULTIPLE). No overlap.
#include "scheme_util.hpp"

namespace hympi {
namespace {

const SchemeInfo& entry_info() {
  static const SchemeInfo i{"masteronly-threaded", "2b",
                            "communication phase outside the compute regions, shared by all "
                            "threads: each packs, sends and unpacks its share of the messages",
                            MPI_THREAD_MULTIPLE, false, false, 1, false, ""};
  return i;
}

class MasteronlyThreaded final : public Scheme {
 public:
  explicit MasteronlyThreaded(const SchemeParams&) {}
  const SchemeInfo& info() const override { return entry_info(); }
  void sweep(ExchangePlan& plan, const FieldList& fields, const SweepRegions& regions,
             const BoxFn& compute, Timers& timers) override {
    const int n = static_cast<int>(timers.size());
    detail::on_threads(n, [&](int t) {
      // Message i belongs to thread i mod n.
      auto mine = [&](std::size_t i, const FaceMessage&) { return static_cast<int>(i % n) == t; };
      detail::start_owned(plan, fields, timers[t], mine);
      detail::finish_owned(plan, fields, timers[t], mine);
    });
    // A reduction in flight (pipelined cg): as masteronly, one test by the
    // master, then the kernel's wait after the sweep.
    plan.progress_background(&timers[0]);
    detail::compute_all_threads(regions, compute, timers);
  }
};

std::unique_ptr<Scheme> make(const SchemeParams& p) {
  return std::make_unique<MasteronlyThreaded>(p);
}

}  // namespace

SchemeEntry masteronly_threaded_entry() { return {entry_info(), &make}; }

}  // namespace hympi
