// multiple-own (seed 001 class 3B1): the local box is cut into one slab per
// thread along k; each thread exchanges the halo pieces of its own slab (the
// plan splits x and y faces the same way), computes its slab's interior while
// its messages travel, then its slab's boundary. With a star stencil no
// thread waits for another within a sweep: a slab's boundary reads only the
// halo pieces its own thread received. A box stencil (and the grown first
// sweep of a temporal block) also reads the pieces of the slabs beside it:
// then the threads meet at a barrier between the exchange and the boundary.
#include "scheme_util.hpp"

namespace hympi {
namespace {

const SchemeInfo& entry_info() {
  static const SchemeInfo i{"multiple-own", "3B1",
                            "every thread exchanges the halo faces of its own sub-block and "
                            "overlaps them with its sub-block's interior",
                            MPI_THREAD_MULTIPLE, true, false, 1, false, ""};
  return i;
}

class MultipleOwn final : public Scheme {
 public:
  explicit MultipleOwn(const SchemeParams& p) : threads_(p.threads) {}
  const SchemeInfo& info() const override { return entry_info(); }
  int face_pieces() const override { return threads_; }
  void sweep(ExchangePlan& plan, const FieldList& fields, const SweepRegions& regions,
             const BoxFn& compute, Timers& timers) override {
    const int n = static_cast<int>(timers.size());
    const int slabs = plan.pieces();  // min(threads, local k planes)
    // A sweep over a region grown into the halo (temporal blocking) reads
    // halo points of the next slab's pieces (k - 1 and k + 1 at the slab's
    // edge): every thread's receives must be complete before any boundary.
    // A caller that leaves `core` empty means the own box.
    const Box core = regions.core.empty() ? regions.local : regions.core;
    const bool grown = !(regions.local == core);
    // A box stencil reads the same: at a slab's first and last plane, the
    // halo's face and edge pieces of the slabs beside it (k - 1, k + 1).
    const bool shared_pieces = grown || regions.reads_edges;
    // The slab of the own box with thread t's pieces; the first and last
    // slabs reach into a grown region's z halo.
    auto slab_of = [&](int t) {
      Box slab = regions.local;
      const Range r = split_range(core.extent(2), slabs, std::min(t, slabs - 1));
      slab.lo[2] = t == 0 ? regions.local.lo[2] : core.lo[2] + r.offset;
      slab.hi[2] = t == slabs - 1 ? regions.local.hi[2] : core.lo[2] + r.offset + r.size;
      return slab;
    };
    detail::on_threads(
        n, shared_pieces,
        [&](int t) {
          if (t >= slabs) return;
          // Own messages: face and edge pieces along z with this slab's index,
          // and the messages across the z sides by the slabs that touch them.
          auto own = [&](std::size_t, const FaceMessage& m) {
            if (m.offset[2] == 0) return m.piece == t;
            return m.offset[2] < 0 ? t == 0 : t == slabs - 1;
          };
          detail::start_owned(plan, fields, timers[t], own);
          // A reduction in flight (pipelined cg): thread 0 tests it around
          // its interior; every thread computes, none is free to poll.
          if (t == 0) plan.progress_background(&timers[0]);
          {
            PhaseTimer pt(timers[t], Phase::ComputeInterior);
            compute(intersect(regions.interior, slab_of(t)), t);
          }
          detail::finish_owned(plan, fields, timers[t], own);
          if (t == 0) plan.progress_background(&timers[0]);
        },
        [&](int t) {
          if (t >= slabs) return;
          PhaseTimer pb(timers[t], Phase::ComputeBoundary);
          const Box slab = slab_of(t);
          for (const Box& b : regions.boundary) compute(intersect(b, slab), t);
        });
  }

 private:
  int threads_;
};

std::unique_ptr<Scheme> make(const SchemeParams& p) { return std::make_unique<MultipleOwn>(p); }

}  // namespace

SchemeEntry multiple_own_entry() { return {entry_info(), &make}; }

}  // namespace hympi
