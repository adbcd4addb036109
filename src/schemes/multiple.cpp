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
                            MPI_THREAD_MULTIPLE, true, true, 2, false, ""};
  return i;
}

class Multiple final : public Scheme {
 public:
  explicit Multiple(const SchemeParams& p) : reserved_(p.reserved > 0 ? p.reserved : 1) {}
  const SchemeInfo& info() const override { return entry_info(); }
  int reserved_threads() const override { return reserved_; }
  void sweep(ExchangePlan& plan, const FieldList& fields, const SweepRegions& regions,
             const BoxFn& compute, Timers& timers) override {
    const int m = reserved_;
    detail::reserved_sweep(regions, compute, timers, m, [&](int t) {
      // Message i belongs to reserved thread i mod m.
      auto mine = [&](std::size_t i, const FaceMessage&) { return static_cast<int>(i % m) == t; };
      detail::start_owned(plan, fields, timers[t], mine);
      detail::finish_owned(plan, fields, timers[t], mine);
      // A reduction in flight (pipelined cg): reserved thread 0 tests it.
      if (t == 0) plan.complete_background(&timers[0]);
    });
  }

 private:
  int reserved_;
};

std::unique_ptr<Scheme> make(const SchemeParams& p) { return std::make_unique<Multiple>(p); }

}  // namespace

SchemeEntry multiple_entry() { return {entry_info(), &make}; }

}  // namespace hympi
