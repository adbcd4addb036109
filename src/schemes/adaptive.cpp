// adaptive (seed 001 class 3, (II) adaptive): thread 0 starts the exchange,
// then takes interior tiles from the same queue as every other thread and
// polls the messages with MPI_Testall between tiles; whoever finishes first
// takes more tiles. No fixed reservation: full load balancing.
#include <algorithm>
#include <atomic>

#include "scheme_util.hpp"

namespace hympi {
namespace {

const SchemeInfo& entry_info() {
  static const SchemeInfo i{"adaptive", "3 (II)",
                            "thread 0 starts the exchange and polls it (MPI_Testall) between "
                            "interior tiles taken from the queue shared with all threads",
                            MPI_THREAD_FUNNELED, true, false, 2, false, ""};
  return i;
}

class Adaptive final : public Scheme {
 public:
  explicit Adaptive(const SchemeParams&) {}
  const SchemeInfo& info() const override { return entry_info(); }
  void sweep(ExchangePlan& plan, const FieldList& fields, const SweepRegions& regions,
             const BoxFn& compute, Timers& timers) override {
    const int n = static_cast<int>(timers.size());
    // Enough tiles that thread 0 polls often and the queue balances the load,
    // but not so many that taking a tile costs more than computing it.
    const int tiles = std::clamp(regions.interior.extent(2), 4 * n, 32 * n);
    std::atomic<int> next{0};
    detail::on_threads(
        n, true,
        [&](int t) {
          ThreadTimes& tm = timers[t];
          bool exchanged = t != 0;
          if (t == 0) plan.begin(fields, &tm);
          // A reduction in flight (pipelined cg): thread 0 tests it between
          // tiles as it tests the exchange.
          bool reduced = t != 0;
          for (;;) {
            if (!reduced) reduced = plan.progress_background(&tm);
            if (!exchanged) {
              bool done;
              {
                PhaseTimer c(tm, Phase::Comm);
                done = plan.test_all();
              }
              if (done) {
                plan.end(fields, &tm);  // requests already complete: unpacks
                exchanged = true;
              }
            }
            const int tile = next.fetch_add(1, std::memory_order_relaxed);
            if (tile >= tiles) break;
            PhaseTimer pt(tm, Phase::ComputeInterior);
            compute(split_box_part(regions.interior, tiles, tile), t);
          }
          if (!exchanged) plan.end(fields, &tm);
          if (!reduced) plan.progress_background(&tm);
        },
        [&](int t) { detail::compute_boundary_part(regions, compute, n, t, t, timers[t]); });
  }
};

std::unique_ptr<Scheme> make(const SchemeParams& p) { return std::make_unique<Adaptive>(p); }

}  // namespace

SchemeEntry adaptive_entry() { return {entry_info(), &make}; }

}  // namespace hympi
