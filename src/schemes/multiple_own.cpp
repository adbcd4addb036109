// multiple-own (seed 001 class 3B1): the local box is cut into one slab per
// thread along k; each thread exchanges the halo pieces of its own slab (the
// plan splits x and y faces the same way), computes its slab's interior while
// its messages travel, then its slab's boundary. No thread waits for another
// within a sweep: a slab's boundary reads only the halo pieces its own thread
// received.
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
    detail::ErrorSlot errors;
#pragma omp parallel num_threads(n)
    {
      const int t = omp_get_thread_num();
      ThreadTimes& tm = timers[t];
      errors.run([&] {
        detail::require_threads(n);
        if (t >= slabs) return;
        Box slab = regions.local;
        Range r = split_range(regions.local.extent(2), slabs, t);
        slab.lo[2] = regions.local.lo[2] + r.offset;
        slab.hi[2] = slab.lo[2] + r.size;
        // Own messages: x/y face pieces with this slab's index, and the z
        // faces of the slabs that touch them.
        auto own = [&](std::size_t, const FaceMessage& m) {
          if (dir_axis(m.dir) != 2) return m.piece == t;
          return dir_side(m.dir) == 0 ? t == 0 : t == slabs - 1;
        };
        detail::start_owned(plan, fields, tm, own);
        {
          PhaseTimer pt(tm, Phase::ComputeInterior);
          compute(intersect(regions.interior, slab), t);
        }
        detail::finish_owned(plan, fields, tm, own);
        PhaseTimer pb(tm, Phase::ComputeBoundary);
        for (const Box& b : regions.boundary) compute(intersect(b, slab), t);
      });
    }
    errors.rethrow();
  }

 private:
  int threads_;
};

std::unique_ptr<Scheme> make(const SchemeParams& p) { return std::make_unique<MultipleOwn>(p); }

}  // namespace

SchemeEntry multiple_own_entry() { return {entry_info(), &make}; }

}  // namespace hympi
