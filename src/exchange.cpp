#include "hympi/exchange.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>

#include "hympi/error.hpp"

namespace hympi {

std::array<int, 3> direction_offset(int dir) {
  if (dir < 0 || dir >= kAllDirections)
    throw std::invalid_argument("direction_offset: no direction " + std::to_string(dir));
  if (dir < kDirections) {
    std::array<int, 3> o{0, 0, 0};
    o[dir_axis(dir)] = dir_side(dir) == 0 ? -1 : 1;
    return o;
  }
  // Edges and corners in z, y, x order (x fastest), skipping the faces and 0.
  int index = kDirections;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if ((dx != 0) + (dy != 0) + (dz != 0) < 2) continue;
        if (index++ == dir) return {dx, dy, dz};
      }
  return {0, 0, 0};  // not reached
}

int offset_direction(const std::array<int, 3>& o) {
  for (int dir = 0; dir < kAllDirections; ++dir)
    if (direction_offset(dir) == o) return dir;
  throw std::invalid_argument("offset_direction: not a neighbour offset");
}

ExchangePlan::ExchangePlan(MPI_Comm comm, const LocalDomain& domain, const NodeMap& nodes,
                           int pieces, int halo, bool corners, int min_piece)
    // A piece is at least `min_piece` (the stencil's radius; `halo` unless
    // given) planes thick: then the thread owning the first (last) slab of
    // the box is the only one that reads the low (high) z halo, which is what
    // multiple-own's ownership of the z faces assumes.
    : comm_(comm),
      pieces_(std::max(1, std::min({pieces, domain.size[2] / std::max(1, min_piece > 0 ? min_piece : halo),
                                    kMaxPieces}))),
      halo_(halo),
      corners_(corners),
      node_id_(nodes.node_id) {
  if (halo < 1) throw std::invalid_argument("ExchangePlan: halo must be >= 1");
  for (int dir = 0; dir < kDirections; ++dir)
    if (domain.has_neighbour(dir) && domain.size[dir_axis(dir)] < halo)
      throw std::invalid_argument("ExchangePlan: a local extent is smaller than the halo width");
  // Faces and edges along z (offset[2] == 0) are split along k; the others
  // are whole. Every rank along the x and y axes has the same k extent, so
  // pieces match across them.
  const int directions = corners ? kAllDirections : kDirections;
  for (int dir = 0; dir < directions; ++dir) {
    const std::array<int, 3> o = direction_offset(dir);
    const int neighbour = dir < kDirections ? domain.neighbour[dir] : domain.around[offset_index(o)];
    if (neighbour == MPI_PROC_NULL) continue;
    const int face_pieces = o[2] == 0 ? pieces_ : 1;
    for (int p = 0; p < face_pieces; ++p) {
      FaceMessage m;
      m.dir = dir;
      m.offset = o;
      m.piece = p;
      m.neighbour = neighbour;
      m.intra_node = nodes.node_of_rank[m.neighbour] == nodes.node_id;
      Box face = domain.box();
      if (face_pieces > 1) {
        Range r = split_range(domain.size[2], face_pieces, p);
        face.lo[2] = r.offset;
        face.hi[2] = r.offset + r.size;
      }
      m.send_box = face;
      m.recv_box = face;
      for (int a = 0; a < 3; ++a) {
        if (o[a] < 0) {
          m.send_box.hi[a] = halo;
          m.recv_box.lo[a] = -halo;
          m.recv_box.hi[a] = 0;
        } else if (o[a] > 0) {
          m.send_box.lo[a] = domain.size[a] - halo;
          m.recv_box.lo[a] = domain.size[a];
          m.recv_box.hi[a] = domain.size[a] + halo;
        }
      }
      // Tag = the sender's direction and piece: unambiguous even when both
      // neighbours along an axis are the same rank (or this rank itself).
      // The stride is a constant: the number of pieces depends on the local
      // k extent, which differs between z neighbours after an uneven split.
      m.send_tag = dir * kMaxPieces + p;
      m.recv_tag = offset_direction({-o[0], -o[1], -o[2]}) * kMaxPieces + p;
      messages_.push_back(std::move(m));
    }
  }
  all_requests_.assign(2 * messages_.size(), MPI_REQUEST_NULL);
  fields_ = 0;
  set_field_count(1);
}

void ExchangePlan::set_field_count(int count) {
  if (count < 1) throw std::invalid_argument("ExchangePlan: at least one field per exchange");
  if (count == fields_) return;
  fields_ = count;
  for (auto& m : messages_) {
    m.send_buf.resize(static_cast<std::size_t>(m.send_box.points()) * count);
    m.recv_buf.resize(static_cast<std::size_t>(m.recv_box.points()) * count);
  }
  count_traffic();
}

void ExchangePlan::count_traffic() {
  bytes_[0] = bytes_[1] = count_[0] = count_[1] = zero_copy_bytes_ = 0;
  for (const auto& m : messages_) {
    const int kind = m.intra_node ? 0 : 1;
    const auto bytes = static_cast<long long>(m.send_buf.size() * sizeof(double));
    bytes_[kind] += bytes;
    if (m.zero_copy)
      zero_copy_bytes_ += bytes;
    else
      count_[kind] += 1;
  }
}

void ExchangePlan::set_zero_copy(FaceMessage& m, bool zero_copy) {
  if (!m.intra_node && zero_copy)
    throw std::invalid_argument("ExchangePlan: only an intra-node face can be zero-copy");
  m.zero_copy = zero_copy;
  count_traffic();
}

ExchangePlan::~ExchangePlan() {
  // An exception between begin and end can leave requests behind: cancel
  // receives and free what remains so that no request leaks.
  for (auto& m : messages_) {
    if (m.recv_req != MPI_REQUEST_NULL) {
      MPI_Cancel(&m.recv_req);
      MPI_Request_free(&m.recv_req);
    }
    if (m.send_req != MPI_REQUEST_NULL) MPI_Request_free(&m.send_req);
  }
}

void ExchangePlan::post_recv(FaceMessage& m) {
  HYMPI_CHECK_MPI(MPI_Irecv(m.recv_buf.data(), static_cast<int>(m.recv_buf.size()), MPI_DOUBLE,
                            m.neighbour, m.recv_tag, comm_, &m.recv_req));
}

namespace {
template <typename Fn>
void for_rows(const Box& b, Fn&& fn) {
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j) fn(j, k);
}

// The buffer holds the face of each field in turn, rows of i, j then k.
double* pack_field(const Box& box, const Field& f, double* out) {
  const int n = box.extent(0);
  for_rows(box, [&](int j, int k) {
    const double* row = f.data() + f.index(box.lo[0], j, k);
    std::copy(row, row + n, out);
    out += n;
  });
  return out;
}

const double* unpack_field(const Box& box, Field& f, const double* in) {
  const int n = box.extent(0);
  for_rows(box, [&](int j, int k) {
    std::copy(in, in + n, f.data() + f.index(box.lo[0], j, k));
    in += n;
  });
  return in;
}
}  // namespace

void ExchangePlan::pack(FaceMessage& m, const FieldList& fields) {
  double* out = m.send_buf.data();
  for (const Field* f : fields) out = pack_field(m.send_box, *f, out);
}

void ExchangePlan::pack_box(const Box& box, const FieldList& fields, double* out) {
  for (const Field* f : fields) out = pack_field(box, *f, out);
}

void ExchangePlan::unpack_box(const Box& box, const FieldList& fields, const double* in) {
  for (Field* f : fields) in = unpack_field(box, *f, in);
}

void ExchangePlan::pack(FaceMessage& m, const Field& f) { pack_field(m.send_box, f, m.send_buf.data()); }

void ExchangePlan::send(FaceMessage& m) {
  HYMPI_CHECK_MPI(MPI_Isend(m.send_buf.data(), static_cast<int>(m.send_buf.size()), MPI_DOUBLE,
                            m.neighbour, m.send_tag, comm_, &m.send_req));
}

void ExchangePlan::wait_recv(FaceMessage& m) {
  HYMPI_CHECK_MPI(MPI_Wait(&m.recv_req, MPI_STATUS_IGNORE));
}

void ExchangePlan::unpack(const FaceMessage& m, const FieldList& fields) {
  const double* in = m.recv_buf.data();
  for (Field* f : fields) in = unpack_field(m.recv_box, *f, in);
}

void ExchangePlan::unpack(const FaceMessage& m, Field& f) {
  unpack_field(m.recv_box, f, m.recv_buf.data());
}

void ExchangePlan::wait_send(FaceMessage& m) {
  HYMPI_CHECK_MPI(MPI_Wait(&m.send_req, MPI_STATUS_IGNORE));
}

namespace {
// Times a step on a thread's account when one is given.
template <typename Fn>
void timed(ThreadTimes* times, Phase phase, Fn&& fn) {
  if (!times) return fn();
  PhaseTimer t(*times, phase);
  fn();
}
}  // namespace

void ExchangePlan::begin(const FieldList& f, ThreadTimes* times) {
  timed(times, Phase::Comm, [&] {
    for (auto& m : messages_) post_recv(m);
  });
  for (auto& m : messages_) {
    timed(times, Phase::Pack, [&] { pack(m, f); });
    timed(times, Phase::Comm, [&] { send(m); });
  }
  const std::size_t n = messages_.size();
  for (std::size_t i = 0; i < n; ++i) {
    all_requests_[i] = messages_[i].recv_req;
    all_requests_[n + i] = messages_[i].send_req;
  }
}

bool ExchangePlan::test_all() {
  int done = 0;
  HYMPI_CHECK_MPI(MPI_Testall(static_cast<int>(all_requests_.size()), all_requests_.data(), &done,
                              MPI_STATUSES_IGNORE));
  if (done)
    for (auto& m : messages_) m.recv_req = m.send_req = MPI_REQUEST_NULL;
  return done != 0;
}

void ExchangePlan::end(const FieldList& f, ThreadTimes* times) {
  timed(times, Phase::Comm, [&] {
    HYMPI_CHECK_MPI(MPI_Waitall(static_cast<int>(all_requests_.size()), all_requests_.data(),
                                MPI_STATUSES_IGNORE));
  });
  for (auto& m : messages_) m.recv_req = m.send_req = MPI_REQUEST_NULL;
  timed(times, Phase::Unpack, [&] {
    for (auto& m : messages_) unpack(m, f);
  });
}

bool ExchangePlan::progress_background(ThreadTimes* times) {
  if (!background_ || *background_ == MPI_REQUEST_NULL) return true;
  int done = 0;
  timed(times, Phase::Comm, [&] { HYMPI_CHECK_MPI(MPI_Test(background_, &done, MPI_STATUS_IGNORE)); });
  return done != 0;
}

void ExchangePlan::complete_background(ThreadTimes* times) {
  // Yields between tests: on an oversubscribed node the computing threads
  // get the core; on a core of its own the yield costs about a microsecond.
  while (!progress_background(times)) std::this_thread::yield();
}

}  // namespace hympi
