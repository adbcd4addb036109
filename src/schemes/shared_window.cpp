// shared-window (beyond the papers: MPI-3 shared memory, the living form of
// seed 001's class 4): the ranks of one node read each other's halo faces
// straight from shared memory; only faces that cross a node boundary travel
// as messages. Inside one parallel region thread 0 exchanges (messages in
// flight, shared faces copied) while threads 1..n-1 compute the interior,
// as funneled does; then all compute the boundary. With one thread: exchange,
// then compute (no overlap).
//
// Design: each rank publishes its packed boundary faces in its slice of one
// MPI_Win_allocate_shared window per node; the neighbour copies them from
// there straight into its halo (no message, no MPI copy: the intra-node bytes
// are counted as zero-copy, ExchangePlan::bytes_zero_copy). The fields
// themselves stay where Field allocated them: putting them in the window
// would need an allocation hook through Field and Domain (and wrap_field's
// user memory could never be in it), and in-place kernels (rbgs) update
// their boundary while a neighbour would be reading it; a published copy has
// neither problem, for one pack per face.
//
// Memory model (MPI-4.0 sec. 12.7, the "MPI + MPI" pattern): the window is in
// a passive-target epoch for its whole life (MPI_Win_lock_all with
// MPI_MODE_NOCHECK), and each sweep runs, on thread 0 of every rank of the
// node:
//   1. pack this sweep's faces into buffer (sweep % 2) of its own slice;
//   2. MPI_Win_sync   -- the stores are complete in the window (release);
//   3. MPI_Barrier over the node communicator -- every rank has done 1-2;
//   4. MPI_Win_sync   -- later loads see the other ranks' stores (acquire);
//   5. copy each neighbour's face from its slice into the halo.
// A reader thus never reads a face before it is written (3 orders 1 before
// 5 across processes). The owner must not overwrite a face before it is
// read: faces are double-buffered, so buffer b, read in sweep s, is written
// again in sweep s + 2, after the owner passed the barrier of sweep s + 1,
// which every reader reaches only after its reads of sweep s (and after the
// Win_sync of step 2 of sweep s + 1, which orders those loads before it).
// One barrier per sweep over the node, none over the whole communicator.
//
// The node: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) split again by the
// plan's node id, so that virtual nodes (--ranks-per-node) on one machine
// exercise both kinds of faces. A face the NodeMap calls intra-node whose
// neighbour does not share memory (a virtual node spanning real nodes) goes
// as a message.
//
// Collective over the plan's communicator: the window is made at the first
// sweep (and again for another plan, or for more fields per exchange than it
// holds) and freed by the destructor, both collective over the node (Domain
// destruction is).
#include <cstdint>
#include <cstring>

#include "hympi/error.hpp"
#include "scheme_util.hpp"

namespace hympi {
namespace {

const SchemeInfo& entry_info() {
  static const SchemeInfo i{"shared-window", "4 (MPI-3)",
                            "intra-node faces read from the neighbour's slice of an "
                            "MPI_Win_allocate_shared window, inter-node faces sent by thread 0 "
                            "while threads 1..n-1 compute the interior",
                            MPI_THREAD_FUNNELED, true, false, 1, true, ""};
  return i;
}

// The face table at the start of every slice: count, then (tag, offset)
// pairs, offsets in doubles from the start of a face buffer.
using Header = std::int64_t;

class SharedWindow final : public Scheme {
 public:
  explicit SharedWindow(const SchemeParams& p) : threads_(p.threads) {}
  ~SharedWindow() override { release(); }
  const SchemeInfo& info() const override { return entry_info(); }
  int reserved_threads() const override { return threads_ > 1 ? 1 : 0; }

  void sweep(ExchangePlan& plan, const FieldList& fields, const SweepRegions& regions,
             const BoxFn& compute, Timers& timers) override {
    // A plan that alternates between fewer and more fields (cg's vectors)
    // keeps its window: it is remade only to hold more fields than before.
    if (&plan != plan_ || plan.field_count() > field_count_) setup(plan);
    const int parity = static_cast<int>(sweeps_++ % 2);
    // A reduction in flight (pipelined cg): thread 0 tests it after its
    // exchange until it completes, while threads 1..n-1 compute (with one
    // thread: one test, then the kernel's wait).
    auto communicate = [&](int) { exchange(plan, fields, parity, timers[0]); };
    if (timers.size() > 1) {
      detail::reserved_sweep(regions, compute, timers, 1, [&](int t) {
        communicate(t);
        plan.complete_background(&timers[0]);
      });
      return;
    }
    communicate(0);
    plan.progress_background(&timers[0]);
    detail::compute_all_threads(regions, compute, timers);
  }

 private:
  struct Face {
    std::size_t message;  // index in plan.messages()
    std::size_t send_at;  // my face buffer offset (doubles)
    const double* recv[2] = {nullptr, nullptr};  // the neighbour's face, per buffer
  };

  static std::size_t header_bytes(std::size_t faces) {
    return ((1 + 2 * faces) * sizeof(Header) + 63) / 64 * 64;
  }

  // Collective over the plan's communicator (then over the node).
  void setup(ExchangePlan& plan) {
    release();
    plan_ = &plan;
    field_count_ = plan.field_count();
    sweeps_ = 0;
    MPI_Comm comm = plan.comm();
    int rank = 0;
    HYMPI_CHECK_MPI(MPI_Comm_rank(comm, &rank));
    MPI_Comm shared = MPI_COMM_NULL;
    HYMPI_CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
    const int split = MPI_Comm_split(shared, plan.node_id(), rank, &node_);
    MPI_Comm_free(&shared);
    HYMPI_CHECK_MPI(split);
    HYMPI_CHECK_MPI(MPI_Comm_size(node_, &node_size_));

    // Which faces go through the window: intra-node ones whose neighbour is
    // in the node communicator.
    auto& msgs = plan.messages();
    std::vector<int> neighbours(msgs.size()), node_ranks(msgs.size(), MPI_UNDEFINED);
    for (std::size_t i = 0; i < msgs.size(); ++i) neighbours[i] = msgs[i].neighbour;
    MPI_Group comm_group = MPI_GROUP_NULL, node_group = MPI_GROUP_NULL;
    HYMPI_CHECK_MPI(MPI_Comm_group(comm, &comm_group));
    HYMPI_CHECK_MPI(MPI_Comm_group(node_, &node_group));
    const int translated = msgs.empty() ? MPI_SUCCESS
                                        : MPI_Group_translate_ranks(
                                              comm_group, static_cast<int>(msgs.size()),
                                              neighbours.data(), node_group, node_ranks.data());
    MPI_Group_free(&comm_group);
    MPI_Group_free(&node_group);
    HYMPI_CHECK_MPI(translated);

    std::size_t data = 0;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
      const bool shared_face = msgs[i].intra_node && node_ranks[i] != MPI_UNDEFINED;
      plan.set_zero_copy(msgs[i], shared_face);
      if (!shared_face) {
        message_faces_.push_back(i);
        continue;
      }
      faces_.push_back({i, data});
      data += static_cast<std::size_t>(msgs[i].send_box.points()) * field_count_;
    }
    // The header rounded up to whole cache lines, then two face buffers.
    const std::size_t header = header_bytes(faces_.size());
    buffer_doubles_ = (data + 7) / 8 * 8;
    const auto bytes =
        static_cast<MPI_Aint>(header + 2 * buffer_doubles_ * sizeof(double));
    void* base = nullptr;
    HYMPI_CHECK_MPI(MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node_, &base, &win_));
    HYMPI_CHECK_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));
    locked_ = true;
    auto* table = static_cast<Header*>(base);
    table[0] = static_cast<Header>(faces_.size());
    for (std::size_t f = 0; f < faces_.size(); ++f) {
      table[1 + 2 * f] = msgs[faces_[f].message].send_tag;
      table[2 + 2 * f] = static_cast<Header>(faces_[f].send_at);
    }
    mine_ = reinterpret_cast<double*>(static_cast<char*>(base) + header);
    HYMPI_CHECK_MPI(MPI_Win_sync(win_));
    HYMPI_CHECK_MPI(MPI_Barrier(node_));
    HYMPI_CHECK_MPI(MPI_Win_sync(win_));
    // Find each neighbour's face for us: its send tag is our receive tag.
    for (Face& f : faces_) {
      const FaceMessage& m = msgs[f.message];
      MPI_Aint size = 0;
      int unit = 0;
      void* theirs = nullptr;
      HYMPI_CHECK_MPI(MPI_Win_shared_query(win_, node_ranks[f.message], &size, &unit, &theirs));
      const auto* t = static_cast<const Header*>(theirs);
      const auto their_faces = static_cast<std::size_t>(t[0]);
      const std::size_t their_header = header_bytes(their_faces);
      // The neighbour's buffer length: the rest of its slice, halved.
      const std::size_t their_buffer =
          (static_cast<std::size_t>(size) - their_header) / (2 * sizeof(double));
      const double* their_data =
          reinterpret_cast<const double*>(static_cast<const char*>(theirs) + their_header);
      bool found = false;
      for (std::size_t e = 0; e < their_faces && !found; ++e)
        if (t[1 + 2 * e] == m.recv_tag) {
          const auto at = static_cast<std::size_t>(t[2 + 2 * e]);
          f.recv[0] = their_data + at;
          f.recv[1] = their_data + their_buffer + at;
          found = true;
        }
      if (!found)
        throw std::logic_error("shared-window: the neighbour publishes no face with tag " +
                               std::to_string(m.recv_tag));
    }
  }

  // Thread 0: the whole exchange (see the memory-model note at the top).
  void exchange(ExchangePlan& plan, const FieldList& fields, int parity, ThreadTimes& tm) {
    auto& msgs = plan.messages();
    {
      PhaseTimer c(tm, Phase::Comm);
      for (std::size_t i : message_faces_) plan.post_recv(msgs[i]);
    }
    for (std::size_t i : message_faces_) {
      {
        PhaseTimer p(tm, Phase::Pack);
        ExchangePlan::pack(msgs[i], fields);
      }
      PhaseTimer c(tm, Phase::Comm);
      plan.send(msgs[i]);
    }
    if (node_size_ > 1) {  // every rank of the node takes part in the barrier
      {
        PhaseTimer p(tm, Phase::Pack);
        double* out = mine_ + parity * buffer_doubles_;
        for (const Face& f : faces_)
          ExchangePlan::pack_box(msgs[f.message].send_box, fields, out + f.send_at);
      }
      {
        PhaseTimer c(tm, Phase::Comm);
        HYMPI_CHECK_MPI(MPI_Win_sync(win_));
        HYMPI_CHECK_MPI(MPI_Barrier(node_));
        HYMPI_CHECK_MPI(MPI_Win_sync(win_));
      }
      PhaseTimer u(tm, Phase::Unpack);
      for (const Face& f : faces_)
        ExchangePlan::unpack_box(msgs[f.message].recv_box, fields, f.recv[parity]);
    }
    for (std::size_t i : message_faces_) {
      {
        PhaseTimer c(tm, Phase::Comm);
        plan.wait_recv(msgs[i]);
      }
      PhaseTimer u(tm, Phase::Unpack);
      ExchangePlan::unpack(msgs[i], fields);
    }
    PhaseTimer c(tm, Phase::Comm);
    for (std::size_t i : message_faces_) plan.wait_send(msgs[i]);
  }

  // Collective over the node (Win_free synchronises). Errors are not
  // thrown: it runs in the destructor.
  void release() {
    if (locked_) MPI_Win_unlock_all(win_);
    locked_ = false;
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
    if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
    plan_ = nullptr;
    faces_.clear();
    message_faces_.clear();
  }

  int threads_;
  const ExchangePlan* plan_ = nullptr;
  int field_count_ = 0;
  long long sweeps_ = 0;
  MPI_Comm node_ = MPI_COMM_NULL;
  int node_size_ = 1;
  MPI_Win win_ = MPI_WIN_NULL;
  bool locked_ = false;
  double* mine_ = nullptr;
  std::size_t buffer_doubles_ = 0;
  std::vector<Face> faces_;
  std::vector<std::size_t> message_faces_;
};

std::unique_ptr<Scheme> make(const SchemeParams& p) { return std::make_unique<SharedWindow>(p); }

}  // namespace

SchemeEntry shared_window_entry() { return {entry_info(), &make}; }

}  // namespace hympi
