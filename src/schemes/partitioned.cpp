// partitioned (beyond the papers: MPI-4.0 partitioned communication): one
// MPI_Psend_init / MPI_Precv_init pair per face with one partition per
// thread. Every thread packs its part of every face and marks it ready
// (MPI_Pready) at once, computes its share of the interior, then polls its
// parts of the incoming faces with MPI_Parrived and unpacks each as it
// lands; after a barrier all compute the boundary. No thread is held back
// from computing, and no thread waits for another to hand its data to MPI:
// the fine-grained overlap of multiple-own without one message per thread.
//
// "Ready as it is computed": the values a sweep exchanges are its inputs
// (written by the sweeps before), so a part is ready as soon as it is packed;
// the partitions are the threads' parts of each face, split along k (then
// j) like split_box_part, the same on both sides of a face (both see the same
// face extents). MPI partitions are all of one size: a part smaller than the
// largest is padded (the padding is never read).
//
// Needs MPI_THREAD_MULTIPLE: MPI_Pready and MPI_Parrived are called by every
// thread. The requests are made at the first sweep (again when the plan, its
// field count or the thread count changes) and started by the master before
// the parallel region; the master completes them after it.
#include <algorithm>

#include "hympi/error.hpp"
#include "scheme_util.hpp"

namespace hympi {
namespace {

#ifdef HYMPI_HAVE_PARTITIONED
const char* const kUnavailable = "";
#else
const char* const kUnavailable =
    "not available with this MPI library (needs MPI 4.0 partitioned communication)";
#endif

const SchemeInfo& entry_info() {
  static const SchemeInfo i{"partitioned", "3 (MPI-4)",
                            "MPI-4 partitioned messages, one partition per thread: each thread "
                            "packs and MPI_Preadys its part of every face, computes its interior "
                            "share, then unpacks its parts as MPI_Parrived reports them",
                            MPI_THREAD_MULTIPLE, true, false, 1, false, kUnavailable};
  return i;
}

#ifdef HYMPI_HAVE_PARTITIONED

class Partitioned final : public Scheme {
 public:
  explicit Partitioned(const SchemeParams&) {}
  ~Partitioned() override { release(); }
  const SchemeInfo& info() const override { return entry_info(); }

  void sweep(ExchangePlan& plan, const FieldList& fields, const SweepRegions& regions,
             const BoxFn& compute, Timers& timers) override {
    const int n = static_cast<int>(timers.size());
    if (&plan != plan_ || plan.field_count() != field_count_ || n != parts_) setup(plan, n);
    {
      PhaseTimer c(timers[0], Phase::Comm);
      if (!recv_reqs_.empty()) {
        HYMPI_CHECK_MPI(MPI_Startall(static_cast<int>(recv_reqs_.size()), recv_reqs_.data()));
        HYMPI_CHECK_MPI(MPI_Startall(static_cast<int>(send_reqs_.size()), send_reqs_.data()));
      }
    }
    const auto& msgs = plan.messages();
    // Messages whose partition t each thread has marked ready.
    std::vector<std::size_t> readied(static_cast<std::size_t>(n), 0);
    auto pack_part = [&](int t, std::size_t i) {
      ExchangePlan::pack_box(split_box_part(msgs[i].send_box, n, t), fields,
                             faces_[i].send.data() + t * faces_[i].count);
    };
    try {
      detail::on_threads(
        n, true,
        [&](int t) {
          ThreadTimes& tm = timers[t];
          for (std::size_t i = 0; i < msgs.size(); ++i) {
            {
              PhaseTimer p(tm, Phase::Pack);
              pack_part(t, i);
            }
            PhaseTimer c(tm, Phase::Comm);
            HYMPI_CHECK_MPI(MPI_Pready(t, send_reqs_[i]));
            readied[t] = i + 1;
          }
          // A reduction in flight (pipelined cg): thread 0 tests it before
          // and after its interior share and while it polls its parts.
          if (t == 0) plan.progress_background(&tm);
          {
            PhaseTimer pt(tm, Phase::ComputeInterior);
            compute(split_box_part(regions.interior, n, t), t);
          }
          bool reduced = t != 0;
          // This thread's part of every incoming face, unpacked as it lands.
          std::vector<char> done(msgs.size(), 0);
          for (std::size_t left = msgs.size(); left > 0;)
            for (std::size_t i = 0; i < msgs.size(); ++i) {
              if (!reduced) reduced = plan.progress_background(&tm);
              if (done[i]) continue;
              int arrived = 0;
              {
                PhaseTimer c(tm, Phase::Comm);
                HYMPI_CHECK_MPI(MPI_Parrived(recv_reqs_[i], t, &arrived));
              }
              if (!arrived) continue;
              PhaseTimer u(tm, Phase::Unpack);
              ExchangePlan::unpack_box(split_box_part(msgs[i].recv_box, n, t), fields,
                                       faces_[i].recv.data() + t * faces_[i].count);
              done[i] = 1;
              --left;
            }
        },
        [&](int t) { detail::compute_boundary_part(regions, compute, n, t, t, timers[t]); });
    } catch (const MpiError&) {
      throw;  // the requests' state is unknown: nothing to recover
    } catch (...) {
      // A thread failed before marking its partitions ready (OpenMP gave
      // fewer threads than the scheme needs): pack and mark the rest now, so
      // that the neighbours receive this sweep's faces and every request
      // completes and can be started again by the next sweep. The failure
      // is the one reported, even if completing fails too.
      for (int t = 0; t < n; ++t)
        for (std::size_t i = readied[t]; i < msgs.size(); ++i) {
          pack_part(t, i);
          MPI_Pready(t, send_reqs_[i]);
        }
      try {
        complete(timers[0]);
      } catch (const MpiError&) {
      }
      throw;
    }
    complete(timers[0]);
  }

 private:
  // Every partition has arrived; this completes the requests (the sends
  // too) so that they can be started again.
  void complete(ThreadTimes& times) {
    PhaseTimer c(times, Phase::Comm);
    if (recv_reqs_.empty()) return;
    HYMPI_CHECK_MPI(
        MPI_Waitall(static_cast<int>(recv_reqs_.size()), recv_reqs_.data(), MPI_STATUSES_IGNORE));
    HYMPI_CHECK_MPI(
        MPI_Waitall(static_cast<int>(send_reqs_.size()), send_reqs_.data(), MPI_STATUSES_IGNORE));
  }

  struct Face {
    std::size_t count = 0;  // doubles per partition
    std::vector<double> send, recv;
  };

  void setup(ExchangePlan& plan, int parts) {
    release();
    plan_ = &plan;
    field_count_ = plan.field_count();
    parts_ = parts;
    const auto& msgs = plan.messages();
    faces_.resize(msgs.size());
    send_reqs_.assign(msgs.size(), MPI_REQUEST_NULL);
    recv_reqs_.assign(msgs.size(), MPI_REQUEST_NULL);
    for (std::size_t i = 0; i < msgs.size(); ++i) {
      const FaceMessage& m = msgs[i];
      long long largest = 1;
      for (int p = 0; p < parts; ++p)
        largest = std::max({largest, split_box_part(m.send_box, parts, p).points(),
                            split_box_part(m.recv_box, parts, p).points()});
      Face& f = faces_[i];
      f.count = static_cast<std::size_t>(largest) * static_cast<std::size_t>(field_count_);
      f.send.assign(f.count * parts, 0.0);
      f.recv.assign(f.count * parts, 0.0);
      HYMPI_CHECK_MPI(MPI_Precv_init(f.recv.data(), parts, static_cast<MPI_Count>(f.count),
                                     MPI_DOUBLE, m.neighbour, m.recv_tag, plan.comm(),
                                     MPI_INFO_NULL, &recv_reqs_[i]));
      HYMPI_CHECK_MPI(MPI_Psend_init(f.send.data(), parts, static_cast<MPI_Count>(f.count),
                                     MPI_DOUBLE, m.neighbour, m.send_tag, plan.comm(),
                                     MPI_INFO_NULL, &send_reqs_[i]));
    }
  }

  // The requests are inactive between sweeps: freeing them is local.
  void release() {
    for (auto& r : send_reqs_)
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    for (auto& r : recv_reqs_)
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    send_reqs_.clear();
    recv_reqs_.clear();
    faces_.clear();
    plan_ = nullptr;
  }

  const ExchangePlan* plan_ = nullptr;
  int field_count_ = 0;
  int parts_ = 0;
  std::vector<Face> faces_;
  std::vector<MPI_Request> send_reqs_, recv_reqs_;
};

std::unique_ptr<Scheme> make(const SchemeParams& p) { return std::make_unique<Partitioned>(p); }

#else

// Never reached through validate_domain, which refuses the scheme first.
std::unique_ptr<Scheme> make(const SchemeParams&) {
  throw UsageError(std::string("scheme 'partitioned' is ") + kUnavailable);
}

#endif

}  // namespace

SchemeEntry partitioned_entry() { return {entry_info(), &make}; }

}  // namespace hympi
