// pack (seed 000 sec. 7.1): the halo exchange of one 3-D field of doubles,
// n^3 points per rank plus a halo of 1, on a periodic 3-D process grid
// (MPI_Dims_create), the six faces only. Two ways:
//  - "pack": the threads copy each face into a contiguous buffer
//    (omp parallel for), Irecv/Isend/Waitall on the buffers, the threads copy
//    the received faces into the halo; over thread counts 1..--threads;
//  - "datatype": MPI_Type_create_subarray for each face, Irecv/Isend/Waitall
//    straight from and into the field (MPI packs; threads play no part).
// Every exchange is checked: the interior holds a function of the global
// coordinates, and every halo point must equal that function at the periodic
// neighbour's point ("halos_ok").
#include <omp.h>

#include <array>
#include <memory>
#include <iomanip>
#include <ostream>

#include "bench.hpp"
#include "hympi/error.hpp"

namespace hympi::bench {
namespace {

struct Layout {
  int n;  // interior points per axis; the field has (n+2)^3 points
  long long idx(int i, int j, int k) const {
    return i + static_cast<long long>(n + 2) * (j + static_cast<long long>(n + 2) * k);
  }
};

// Point (a, b) of the face of axis d at coordinate v (a, b: the other two
// axes in order, 1-based interior).
std::array<int, 3> face_point(int d, int v, int a, int b) {
  std::array<int, 3> p{};
  p[d] = v;
  int o = 0;
  for (int e = 0; e < 3; ++e)
    if (e != d) p[e] = (o++ == 0 ? a : b);
  return p;
}

double value_at(const std::array<long long, 3>& g) {
  return static_cast<double>(g[0]) + 1e3 * static_cast<double>(g[1]) + 1e6 * static_cast<double>(g[2]);
}

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

std::vector<nlohmann::json> run_pack(BenchContext& ctx) {
  int dims[3] = {0, 0, 0};
  HYMPI_CHECK_MPI(MPI_Dims_create(ctx.size, 3, dims));
  const std::array<int, 3> c = {ctx.rank % dims[0], (ctx.rank / dims[0]) % dims[1],
                                ctx.rank / (dims[0] * dims[1])};
  auto rank_of = [&](std::array<int, 3> q) { return q[0] + dims[0] * (q[1] + dims[1] * q[2]); };
  std::array<int, 3> plus{}, minus{};
  for (int d = 0; d < 3; ++d) {
    auto p = c, m = c;
    p[d] = (p[d] + 1) % dims[d];
    m[d] = (m[d] + dims[d] - 1) % dims[d];
    plus[d] = rank_of(p);
    minus[d] = rank_of(m);
  }
  std::vector<int> faces = ctx.opt.faces;
  if (faces.empty()) faces = {16, 32, 64};
  Traffic sent;
  std::vector<nlohmann::json> records;
  std::ostream* out = ctx.out;
  if (out)
    *out << "# process grid " << dims[0] << "x" << dims[1] << "x" << dims[2]
         << " (periodic), n^3 doubles per rank, 6 faces of n^2 doubles each way\n"
         << std::right << std::setw(6) << "# n" << std::setw(10) << "method" << std::setw(9)
         << "threads" << std::setw(14) << "time s" << std::setw(12) << "MB/s" << std::setw(10)
         << "halos" << "\n";
  bool all_ok = true;
  for (int n : faces) {
    const Layout lay{n};
    std::vector<double> f(static_cast<std::size_t>(lay.idx(0, 0, n + 2)), 0.0);
    for (int k = 1; k <= n; ++k)
      for (int j = 1; j <= n; ++j)
        for (int i = 1; i <= n; ++i)
          f[lay.idx(i, j, k)] = value_at({static_cast<long long>(c[0]) * n + i - 1,
                                          static_cast<long long>(c[1]) * n + j - 1,
                                          static_cast<long long>(c[2]) * n + k - 1});
    auto clear_halos = [&] {
      for (int d = 0; d < 3; ++d)
        for (int v : {0, n + 1})
          for (int b = 1; b <= n; ++b)
            for (int a = 1; a <= n; ++a) {
              const auto p = face_point(d, v, a, b);
              f[lay.idx(p[0], p[1], p[2])] = -1;
            }
    };
    auto halos_ok = [&] {
      int ok = 1;
      for (int d = 0; d < 3; ++d)
        for (int v : {0, n + 1})
          for (int b = 1; b <= n; ++b)
            for (int a = 1; a <= n; ++a) {
              const auto p = face_point(d, v, a, b);
              std::array<long long, 3> g{};
              for (int e = 0; e < 3; ++e) {
                const long long N = static_cast<long long>(dims[e]) * n;
                g[e] = ((static_cast<long long>(c[e]) * n + p[e] - 1) % N + N) % N;
              }
              if (f[lay.idx(p[0], p[1], p[2])] != value_at(g)) ok = 0;
            }
      int all = 0;
      HYMPI_CHECK_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, ctx.comm));
      return all == 1;
    };
    const int face = n * n;
    const long long face_bytes = static_cast<long long>(face) * sizeof(double);
    // Direction q = 2d + s: s = 0 sends the low face to minus (tag q) and
    // fills the high halo from plus; s = 1 the other way round.
    std::vector<std::vector<double>> sbuf(6, std::vector<double>(face)), rbuf = sbuf;
    auto copy_face = [&](int d, int v, double* buf, bool to_field, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int b = 1; b <= n; ++b)
        for (int a = 1; a <= n; ++a) {
          const auto p = face_point(d, v, a, b);
          double& x = f[lay.idx(p[0], p[1], p[2])];
          double& y = buf[(b - 1) * n + (a - 1)];
          if (to_field)
            x = y;
          else
            y = x;
        }
    };
    auto measure = [&](const std::string& method, int threads, const std::function<void()>& body) {
      clear_halos();
      const Timing t = time_exchange(ctx.comm, ctx.opt.repeat, loop_count(6 * face_bytes), sent, body);
      const bool ok = halos_ok();
      all_ok = all_ok && ok;
      const double bw = static_cast<double>(t.bytes_moved) / t.stats.median / 1e6;
      records.push_back({{"kind", "point"},
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
      if (out)
        *out << std::right << std::setw(6) << n << std::setw(10) << method << std::setw(9) << threads
             << std::scientific << std::setprecision(3) << std::setw(14) << t.stats.median
             << std::fixed << std::setprecision(2) << std::setw(12) << bw << std::setw(10)
             << (ok ? "ok" : "WRONG") << "\n"
             << std::defaultfloat;
    };
    for (int threads = 1; threads <= ctx.threads; ++threads) {
      measure("pack", threads, [&] {
        MPI_Request req[12];
        for (int d = 0; d < 3; ++d)
          for (int s = 0; s < 2; ++s) {
            const int q = 2 * d + s;
            HYMPI_CHECK_MPI(MPI_Irecv(rbuf[q].data(), face, MPI_DOUBLE, s == 0 ? plus[d] : minus[d],
                                      q, ctx.comm, &req[q]));
          }
        for (int d = 0; d < 3; ++d)
          for (int s = 0; s < 2; ++s) {
            const int q = 2 * d + s;
            copy_face(d, s == 0 ? 1 : n, sbuf[q].data(), false, threads);
            HYMPI_CHECK_MPI(MPI_Isend(sbuf[q].data(), face, MPI_DOUBLE, s == 0 ? minus[d] : plus[d],
                                      q, ctx.comm, &req[6 + q]));
            sent.add(face_bytes);
          }
        HYMPI_CHECK_MPI(MPI_Waitall(12, req, MPI_STATUSES_IGNORE));
        for (int d = 0; d < 3; ++d)
          for (int s = 0; s < 2; ++s) copy_face(d, s == 0 ? n + 1 : 0, rbuf[2 * d + s].data(), true, threads);
      });
    }
    std::vector<std::unique_ptr<SubarrayType>> send_t, recv_t;
    for (int d = 0; d < 3; ++d)
      for (int s = 0; s < 2; ++s) {
        send_t.push_back(std::make_unique<SubarrayType>(n, d, s == 0 ? 1 : n));
        recv_t.push_back(std::make_unique<SubarrayType>(n, d, s == 0 ? n + 1 : 0));
      }
    measure("datatype", 1, [&] {
      MPI_Request req[12];
      for (int q = 0; q < 6; ++q)
        HYMPI_CHECK_MPI(MPI_Irecv(f.data(), 1, recv_t[q]->get(), q % 2 == 0 ? plus[q / 2] : minus[q / 2],
                                  q, ctx.comm, &req[q]));
      for (int q = 0; q < 6; ++q) {
        HYMPI_CHECK_MPI(MPI_Isend(f.data(), 1, send_t[q]->get(), q % 2 == 0 ? minus[q / 2] : plus[q / 2],
                                  q, ctx.comm, &req[6 + q]));
        sent.add(face_bytes);
      }
      HYMPI_CHECK_MPI(MPI_Waitall(12, req, MPI_STATUSES_IGNORE));
    });
  }
  records.push_back({{"kind", "summary"}, {"halos_ok", all_ok}, {"proc_grid", dims}});
  if (out) *out << "# halos " << (all_ok ? "all correct" : "WRONG") << "\n";
  return records;
}

}  // namespace

Benchmark pack_benchmark() {
  Benchmark b;
  b.name = "pack";
  b.description = "halo exchange: thread-parallel packing vs MPI subarray datatypes";
  b.help =
      "  --faces LIST          face edge lengths n (n x n faces), comma-separated (default 16,32,64)\n"
      "  --threads N           packing threads 1..N\n";
  b.min_ranks = 1;
  b.run = run_pack;
  return b;
}

}  // namespace hympi::bench
