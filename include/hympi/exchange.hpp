// The halo-exchange plan: neighbours, face boxes, buffers and requests, with
// begin/end split into per-face steps so that a scheme can give faces to
// different threads and interleave them with computation.
#pragma once

#include <mpi.h>

#include <array>
#include <vector>

#include "hympi/box.hpp"
#include "hympi/decomposition.hpp"
#include "hympi/field.hpp"
#include "hympi/timing.hpp"
#include "hympi/topology.hpp"

namespace hympi {

// Most pieces a face is split into (tags are dir * kMaxPieces + piece, far
// below the MPI guarantee of 32767 with the 26 directions of a plan with
// edges and corners).
constexpr int kMaxPieces = 1024;
// Directions of a plan with edges and corners: the 6 faces (0..5, as in
// decomposition.hpp), then the 12 edges and 8 corners (6..25).
constexpr int kAllDirections = 26;
// The offset (dx, dy, dz) of direction dir, and the direction of an offset.
std::array<int, 3> direction_offset(int dir);
int offset_direction(const std::array<int, 3>& offset);

// The fields whose halos one exchange brings up to date, all of one layout:
// one message per face (or face piece) carries all of them, field after field.
using FieldList = std::vector<Field*>;

// One message each way across one face, or across one piece of a face (or,
// in a plan with edges and corners, across one of those).
struct FaceMessage {
  int dir = 0;
  std::array<int, 3> offset{0, 0, 0};  // direction_offset(dir)
  int piece = 0;              // piece along k of a face or edge with offset[2] == 0 (multiple-own)
  int neighbour = MPI_PROC_NULL;
  bool intra_node = false;
  bool zero_copy = false;     // moved through shared memory, not sent (ExchangePlan::set_zero_copy)
  Box send_box;               // local interior points sent (per field)
  Box recv_box;               // halo points received (local coords, -halo..-1 or n..)
  int send_tag = 0, recv_tag = 0;
  std::vector<double> send_buf, recv_buf;
  MPI_Request send_req = MPI_REQUEST_NULL;
  MPI_Request recv_req = MPI_REQUEST_NULL;
};

class ExchangePlan {
 public:
  // `pieces` > 1 splits each x and y face along k into pieces with the same
  // uneven split that split_box(domain.box(), pieces) uses, so that the thread
  // owning slab p of the box also owns piece p of those faces. Faces are
  // `halo` points thick (each local extent along an axis with a neighbour
  // must be >= halo). With `corners`, the plan also brings the halo's edges
  // and corners (12 + 8 more messages, from LocalDomain::around; the edges
  // along z split into pieces like the x and y faces): what a halo read by
  // several sweeps in a row needs (temporal blocking). `min_piece` (0: halo)
  // is the fewest k planes of a piece: the stencil's radius, so that only the
  // first and last slab read the z halo. The buffers hold one field until
  // set_field_count.
  ExchangePlan(MPI_Comm comm, const LocalDomain& domain, const NodeMap& nodes, int pieces = 1,
               int halo = 1, bool corners = false, int min_piece = 0);
  ~ExchangePlan();
  ExchangePlan(const ExchangePlan&) = delete;
  ExchangePlan& operator=(const ExchangePlan&) = delete;

  std::vector<FaceMessage>& messages() { return messages_; }
  const std::vector<FaceMessage>& messages() const { return messages_; }
  int pieces() const { return pieces_; }
  int halo() const { return halo_; }
  bool corners() const { return corners_; }
  // Size the buffers for `count` fields per message (master thread, no
  // exchange in flight). Cheap when the count is unchanged.
  void set_field_count(int count);
  int field_count() const { return fields_; }

  // Per-message steps. Thread-safe for distinct messages when the MPI library
  // provides MPI_THREAD_MULTIPLE (or when one thread calls them all).
  // pack/unpack move every field of the list (as many as set_field_count);
  // the one-field forms suit a plan of one field.
  void post_recv(FaceMessage& m);
  static void pack(FaceMessage& m, const FieldList& fields);
  static void pack(FaceMessage& m, const Field& f);
  void send(FaceMessage& m);
  void wait_recv(FaceMessage& m);
  static void unpack(const FaceMessage& m, const FieldList& fields);
  static void unpack(const FaceMessage& m, Field& f);
  // The same moves between `box` of every field and a caller's buffer (as
  // many doubles as box.points() * fields.size()): shared-window packs into
  // and unpacks from a shared-memory window instead of the message buffers.
  static void pack_box(const Box& box, const FieldList& fields, double* out);
  static void unpack_box(const Box& box, const FieldList& fields, const double* in);
  void wait_send(FaceMessage& m);
  // Non-blocking completion test of every outstanding request (adaptive).
  bool test_all();

  // A non-blocking collective in flight beside the exchange (pipelined cg's
  // MPI_Iallreduce, Domain::begin_sum), or nullptr. Open MPI and MPICH move
  // a non-blocking collective only inside MPI calls (no progress thread by
  // default), so the thread that communicates for a sweep tests it
  // (progress_background) while the others compute. Master thread, no
  // sweep running.
  void set_background(MPI_Request* request) { background_ = request; }
  // MPI_Test on the background request (Comm on `times`); true when there
  // is none or it has completed. One thread at a time, and under
  // MPI_THREAD_FUNNELED the master only.
  bool progress_background(ThreadTimes* times = nullptr);
  // progress_background until the request completes: what a thread held
  // back for communication does once its exchange is done, while the
  // others still compute (funneled, multiple, shared-window).
  void complete_background(ThreadTimes* times = nullptr);

  // Whole-plan begin/end by one thread (masteronly, funneled, adaptive).
  // With `times`, packing and unpacking are booked as Pack/Unpack and the
  // MPI calls as Comm on that thread's account.
  void begin(const FieldList& fields, ThreadTimes* times = nullptr);
  void end(const FieldList& fields, ThreadTimes* times = nullptr);

  // Bytes and messages this rank sends per exchange, split intra/inter node.
  long long bytes_intra() const { return bytes_[0]; }
  long long bytes_inter() const { return bytes_[1]; }
  long long messages_intra() const { return count_[0]; }
  long long messages_inter() const { return count_[1]; }
  // Intra-node bytes a scheme moves without a message (shared-window: read
  // straight from the neighbour's memory); counted in bytes_intra() too, and
  // their faces no longer count in messages_intra().
  long long bytes_zero_copy() const { return zero_copy_bytes_; }
  void set_zero_copy(FaceMessage& m, bool zero_copy);

  // The communicator (the caller's; schemes derive their own from it) and
  // this rank's node in the NodeMap the plan was made with.
  MPI_Comm comm() const { return comm_; }
  int node_id() const { return node_id_; }

 private:
  MPI_Comm comm_;
  int pieces_;
  int halo_;
  bool corners_ = false;
  int fields_ = 1;
  int node_id_ = 0;
  long long zero_copy_bytes_ = 0;
  std::vector<FaceMessage> messages_;
  std::vector<MPI_Request> all_requests_;
  MPI_Request* background_ = nullptr;
  long long bytes_[2] = {0, 0};
  long long count_[2] = {0, 0};
  void count_traffic();
};

}  // namespace hympi
