// pack (seed 000 sec. 7.1): the halo exchange of one 3-D field of doubles,
// n^3 points per rank plus a halo of 1, on a periodic 3-D process grid
// (MPI_Dims_create, ranks in order), the six faces only. Two ways:
//  - "pack": the library's ExchangePlan; the threads pack the six faces into
//    contiguous buffers (sharing the rows of all faces), Irecv/Isend/Wait
//    on the buffers, the threads unpack the received faces into the halo;
//    over thread counts 1..--threads;
//  - "datatype": MPI_Type_create_subarray for each face, Irecv/Isend/Waitall
//    straight from and into the field (MPI packs; threads play no part);
//  - "library": the exchange every scheme uses, ExchangePlan::begin/end
//    (per face: pack, Isend; then Waitall and unpack every face), one thread;
//  - "sendrecv": the exchange a plain MPI code writes, the reference the
//    library's is held to (issue 8): per direction, pack the face into a
//    buffer, MPI_Sendrecv with the two neighbours along its axis, unpack; one
//    direction after the other, one thread.
// Every exchange is checked: the interior holds a function of the global
// coordinates, and every halo point must equal that function at the periodic
// neighbour's point ("halos_ok"); a wrong halo fails the run.
#include <omp.h>

#include <algorithm>

#include <array>
#include <iomanip>
#include <memory>
#include <ostream>

#include "bench.hpp"
#include "hympi/error.hpp"
#include "hympi/exchange.hpp"

namespace hympi::bench {
namespace {

double value_at(const std::array<long long, 3>& g) {
  return static_cast<double>(g[0]) + 1e3 * static_cast<double>(g[1]) + 1e6 * static_cast<double>(g[2]);
}

template <typename Fn>
void for_points(const Box& b, Fn&& fn) {
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i) fn(std::array<int, 3>{i, j, k});
}

// The global index of local point p, wrapped around the periodic grid.
std::array<long long, 3> global_of(const LocalDomain& d, const std::array<int, 3>& p) {
  std::array<long long, 3> g{};
  for (int e = 0; e < 3; ++e) {
    const long long N = d.global[e];
    g[e] = ((static_cast<long long>(d.offset[e]) + p[e]) % N + N) % N;
  }
  return g;
}

// A fresh field: the interior holds value_at, every halo point -1.
void reset_field(Field& f, const LocalDomain& d) {
  const auto& n = f.size();
  std::fill(f.data(), f.data() + f.index(n[0], n[1], n[2]) + 1, -1.0);
  for_points(f.interior(), [&](const std::array<int, 3>& p) { f.at(p[0], p[1], p[2]) = value_at(global_of(d, p)); });
}

// Collective: every halo face of every rank holds its periodic neighbour's values.
bool halos_ok(const Field& f, const LocalDomain& d, const ExchangePlan& plan, MPI_Comm comm) {
  int ok = 1;
  for (const auto& m : plan.messages())
    for_points(m.recv_box, [&](const std::array<int, 3>& p) {
      if (f.at(p[0], p[1], p[2]) != value_at(global_of(d, p))) ok = 0;
    });
  int all = 0;
  HYMPI_CHECK_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm));
  return all == 1;
}

// Copies every row of every face between the field and the messages'
// buffers with `threads` threads sharing the rows of all faces (not one face
// per thread: the paper's thread-parallel packing scales past six threads).
// The buffer layout is ExchangePlan::pack's: rows of i, j fastest, then k.
template <typename Copy>
void copy_rows(std::vector<FaceMessage>& msgs, bool send_side, int threads, Copy&& copy) {
  std::vector<long long> first{0};  // first row of each message in one numbering
  for (const auto& m : msgs) {
    const Box& b = send_side ? m.send_box : m.recv_box;
    first.push_back(first.back() + 1LL * b.extent(1) * b.extent(2));
  }
  const long long rows = first.back();
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long long r = 0; r < rows; ++r) {
    const std::size_t i = static_cast<std::size_t>(
        std::upper_bound(first.begin(), first.end(), r) - first.begin() - 1);
    FaceMessage& m = msgs[i];
    const Box& b = send_side ? m.send_box : m.recv_box;
    const long long local = r - first[i];
    const int j = b.lo[1] + static_cast<int>(local % b.extent(1));
    const int k = b.lo[2] + static_cast<int>(local / b.extent(1));
    copy(m, b, j, k, static_cast<std::size_t>(local) * static_cast<std::size_t>(b.extent(0)));
  }
}

// One exchange through the plan, packing and unpacking with `threads`
// threads. Counts the sends into `sent`.
void exchange_packed(ExchangePlan& plan, Field& f, int threads, Traffic& sent) {
  auto& msgs = plan.messages();
  for (auto& m : msgs) plan.post_recv(m);
  copy_rows(msgs, true, threads, [&](FaceMessage& m, const Box& b, int j, int k, std::size_t at) {
    const double* row = f.data() + f.index(b.lo[0], j, k);
    std::copy(row, row + b.extent(0), m.send_buf.data() + at);
  });
  for (auto& m : msgs) {
    plan.send(m);
    sent.add(static_cast<long long>(m.send_buf.size() * sizeof(double)));
  }
  for (auto& m : msgs) plan.wait_recv(m);
  copy_rows(msgs, false, threads, [&](FaceMessage& m, const Box& b, int j, int k, std::size_t at) {
    const double* in = m.recv_buf.data() + at;
    std::copy(in, in + b.extent(0), f.data() + f.index(b.lo[0], j, k));
  });
  for (auto& m : msgs) plan.wait_send(m);
}

// The textbook exchange: for each direction, the face toward it goes to that
// neighbour while the halo on the other side arrives from the opposite one,
// in one MPI_Sendrecv (tags as the plan's, so the pairs match).
void exchange_sendrecv(ExchangePlan& plan, Field& f, MPI_Comm comm, Traffic& sent) {
  std::array<FaceMessage*, kDirections> by_dir{};
  for (auto& m : plan.messages()) by_dir[static_cast<std::size_t>(m.dir)] = &m;
  for (int dir = 0; dir < kDirections; ++dir) {
    FaceMessage* out = by_dir[static_cast<std::size_t>(dir)];
    FaceMessage* in = by_dir[static_cast<std::size_t>(opposite(dir))];
    if (out == nullptr || in == nullptr) continue;  // the pack grid is periodic: never
    ExchangePlan::pack(*out, f);
    HYMPI_CHECK_MPI(MPI_Sendrecv(out->send_buf.data(), static_cast<int>(out->send_buf.size()), MPI_DOUBLE,
                                 out->neighbour, out->send_tag, in->recv_buf.data(),
                                 static_cast<int>(in->recv_buf.size()), MPI_DOUBLE, in->neighbour,
                                 in->recv_tag, comm, MPI_STATUS_IGNORE));
    sent.add(static_cast<long long>(out->send_buf.size() * sizeof(double)));
    ExchangePlan::unpack(*in, f);
  }
}

// One face of the field (with its halo) as an MPI datatype: the plane at
// 1-based coordinate v of axis d.
class SubarrayType {
 public:
  SubarrayType(int n, int d, int v) {
    int sizes[3] = {n + 2, n + 2, n + 2}, sub[3] = {n, n, n}, start[3] = {1, 1, 1};
    sub[2 - d] = 1;  // C order: index 0 is k (slowest), 2 is i
    start[2 - d] = v;
    HYMPI_CHECK_MPI(MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t_));
    HYMPI_CHECK_MPI(MPI_Type_commit(&t_));
  }
  ~SubarrayType() { MPI_Type_free(&t_); }
  SubarrayType(const SubarrayType&) = delete;
  SubarrayType& operator=(const SubarrayType&) = delete;
  MPI_Datatype get() const { return t_; }

 private:
  MPI_Datatype t_ = MPI_DATATYPE_NULL;
};

// The datatype way: per direction, the interior face sent and the halo face
// received, straight from and into the field; tags as the plan's.
class DatatypeExchange {
 public:
  DatatypeExchange(const LocalDomain& d, int n) : d_(d) {
    for (int dir = 0; dir < kDirections; ++dir) {
      const bool low = dir_side(dir) == 0;
      send_.push_back(std::make_unique<SubarrayType>(n, dir_axis(dir), low ? 1 : n));
      recv_.push_back(std::make_unique<SubarrayType>(n, dir_axis(dir), low ? 0 : n + 1));
    }
    face_bytes_ = static_cast<long long>(n) * n * static_cast<long long>(sizeof(double));
  }
  void run(Field& f, MPI_Comm comm, Traffic& sent) {
    MPI_Request req[2 * kDirections];
    for (int dir = 0; dir < kDirections; ++dir)
      HYMPI_CHECK_MPI(MPI_Irecv(f.data(), 1, recv_[dir]->get(), d_.neighbour[dir], opposite(dir),
                                comm, &req[dir]));
    for (int dir = 0; dir < kDirections; ++dir) {
      HYMPI_CHECK_MPI(MPI_Isend(f.data(), 1, send_[dir]->get(), d_.neighbour[dir], dir, comm,
                                &req[kDirections + dir]));
      sent.add(face_bytes_);
    }
    HYMPI_CHECK_MPI(MPI_Waitall(2 * kDirections, req, MPI_STATUSES_IGNORE));
  }

 private:
  const LocalDomain& d_;
  std::vector<std::unique_ptr<SubarrayType>> send_, recv_;
  long long face_bytes_ = 0;
};

// The periodic grid of MPI_Dims_create, ranks in order (x fastest).
ProcessGrid pack_grid(const BenchContext& ctx) {
  int dims[3] = {0, 0, 0};
  HYMPI_CHECK_MPI(MPI_Dims_create(ctx.size, 3, dims));
  GridChoice choice;
  choice.dims = {dims[0], dims[1], dims[2]};
  choice.node_aware = false;
  return make_process_grid(ctx.comm, ctx.nodes, choice);
}

void print_header(std::ostream& out, const std::array<int, 3>& dims) {
  out << "# process grid " << dims[0] << "x" << dims[1] << "x" << dims[2]
      << " (periodic), n^3 doubles per rank, 6 faces of n^2 doubles each way\n"
      << std::right << std::setw(6) << "# n" << std::setw(10) << "method" << std::setw(9) << "threads"
      << std::setw(14) << "time s" << std::setw(12) << "MB/s" << std::setw(10) << "halos" << "\n";
}

// All measurements of one face size n, appended to `res`.
void run_face(BenchContext& ctx, const ProcessGrid& grid, int n, BenchResult& res) {
  const auto& dims = grid.choice.dims;
  const LocalDomain d = decompose({dims[0] * n, dims[1] * n, dims[2] * n}, {true, true, true}, grid);
  ExchangePlan plan(ctx.comm, d, ctx.nodes);
  Field f({n, n, n});
  DatatypeExchange typed(d, n);
  const long long face_bytes = static_cast<long long>(n) * n * static_cast<long long>(sizeof(double));
  Traffic sent;
  auto measure = [&](const std::string& method, int threads, const std::function<void()>& body) {
    reset_field(f, d);
    const Timing t = time_exchange(ctx.comm, ctx.opt.repeat, loop_count(6 * face_bytes), sent, body);
    const bool ok = halos_ok(f, d, plan, ctx.comm);
    res.ok = res.ok && ok;
    const double bw = static_cast<double>(t.bytes_moved) / t.stats.median / 1e6;
    res.records.push_back({{"kind", "point"},
                           {"n", n},
                           {"face_bytes", face_bytes},
                           {"method", method},
                           {"threads", threads},
                           {"proc_grid", dims},
                           {"bytes_moved", t.bytes_moved},
                           {"messages", t.messages},
                           {"time_s", stats_json(t.stats)},
                           {"bandwidth_MBps", bw},
                           {"halos_ok", ok}});
    if (ctx.out)
      *ctx.out << std::right << std::setw(6) << n << std::setw(10) << method << std::setw(9) << threads
               << std::scientific << std::setprecision(3) << std::setw(14) << t.stats.median
               << std::fixed << std::setprecision(2) << std::setw(12) << bw << std::setw(10)
               << (ok ? "ok" : "WRONG") << "\n"
               << std::defaultfloat;
  };
  for (int threads = 1; threads <= ctx.threads; ++threads)
    measure("pack", threads, [&] { exchange_packed(plan, f, threads, sent); });
  measure("datatype", 1, [&] { typed.run(f, ctx.comm, sent); });
  const FieldList fields{&f};
  measure("library", 1, [&] {
    plan.begin(fields);
    plan.end(fields);
    for (const auto& m : plan.messages()) sent.add(static_cast<long long>(m.send_buf.size() * sizeof(double)));
  });
  measure("sendrecv", 1, [&] { exchange_sendrecv(plan, f, ctx.comm, sent); });
}

BenchResult run_pack(BenchContext& ctx) {
  const ProcessGrid grid = pack_grid(ctx);
  BenchResult res;
  if (ctx.out) print_header(*ctx.out, grid.choice.dims);
  for (int n : ctx.opt.args.int_list("--faces")) run_face(ctx, grid, n, res);
  res.records.push_back({{"kind", "summary"}, {"halos_ok", res.ok}, {"proc_grid", grid.choice.dims}});
  if (ctx.out) *ctx.out << "# halos " << (res.ok ? "all correct" : "WRONG") << "\n";
  return res;
}

}  // namespace

Benchmark pack_benchmark() {
  Benchmark b;
  b.name = "pack";
  b.description = "halo exchange: thread-parallel packing, the library's, MPI subarray datatypes, plain MPI_Sendrecv";
  b.options = {int_list_option("--faces", "face edge lengths n (n x n faces), comma-separated", "16,32,64", 1, 4096)};
  b.uses_threads = true;
  b.notes = "  --threads N           packing threads 1..N\n";
  b.min_ranks = 1;
  b.run = run_pack;
  return b;
}

}  // namespace hympi::bench
