// beff: the effective bandwidth of Rabenseifner & Koniges (docs/bench.md). Patterns:
//  - ring patterns "ring-K": the ranks split into rings of K consecutive ranks
//    (K = 2, 4, 8, ... below the rank count, and K = all ranks; the last ring
//    takes the ranks left over); each rank sends L bytes to its left and its
//    right neighbour and receives L from each;
//  - random patterns "random-I" (I = 0, 1, 2): one ring over a random
//    permutation of all ranks (mt19937 seeded with I, the same on every rank).
// Methods Sendrecv, Alltoallv and Irecv/Isend/Waitall. A point's bandwidth is
// the bytes all ranks sent / the best repetition's time (max over ranks).
// Per pattern and length the best method counts; the pattern's value is the
// arithmetic mean over the 21 lengths; b_eff is the geometric mean of the
// geometric means of the ring and of the random patterns.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <random>

#include "bench.hpp"
#include "hympi/error.hpp"

namespace hympi::bench {
namespace {

struct Pattern {
  std::string name;
  bool random = false;
  std::vector<int> order;  // ranks in ring order, split into rings of ring_size
  int ring_size = 0;
};

std::vector<Pattern> beff_patterns(int P) {
  std::vector<Pattern> pats;
  std::vector<int> seq(P);
  for (int r = 0; r < P; ++r) seq[r] = r;
  for (int k = 2; k < P; k *= 2) pats.push_back({"ring-" + std::to_string(k), false, seq, k});
  pats.push_back({"ring-" + std::to_string(P), false, seq, P});
  for (int i = 0; i < 3; ++i) {
    std::mt19937 gen(static_cast<unsigned>(i));
    std::vector<int> perm = seq;
    for (int j = P - 1; j > 0; --j) {  // Fisher-Yates with the specified engine
      const int k = static_cast<int>(gen() % static_cast<unsigned>(j + 1));
      std::swap(perm[j], perm[k]);
    }
    pats.push_back({"random-" + std::to_string(i), true, perm, P});
  }
  return pats;
}

// This rank's (send to, receive from) pairs: right then left.
std::vector<Pair> ring_pairs(const Pattern& p, int rank) {
  const int P = static_cast<int>(p.order.size());
  const int pos = static_cast<int>(std::find(p.order.begin(), p.order.end(), rank) - p.order.begin());
  const int rings = std::max(1, P / p.ring_size);
  const int ring = std::min(pos / p.ring_size, rings - 1);
  const int start = ring * p.ring_size;
  const int len = ring == rings - 1 ? P - start : p.ring_size;
  const int right = p.order[start + (pos - start + 1) % len];
  const int left = p.order[start + (pos - start + len - 1) % len];
  return {{right, left}, {left, right}};
}

// What the patterns measured: b_eff's averages and the value at Lmax.
struct PatternResult {
  BeffAverages avg;
  double at_lmax = 0;
};

// The ring and random patterns at every length, the three methods each
// (their records appended to `records`, the table printed on rank 0).
PatternResult run_patterns(BenchContext& ctx, const std::vector<long long>& lengths,
                           const std::vector<Pattern>& patterns, std::vector<char>& sbuf,
                           std::vector<char>& rbuf, Traffic& sent, std::vector<nlohmann::json>& records) {
  std::vector<std::vector<double>> ring_bw, random_bw;
  std::vector<double> ring_lmax, random_lmax;
  std::ostream* out = ctx.out;
  if (out)
    *out << "# patterns: ring-K = rings of K consecutive ranks, random-I = one ring over a random\n"
            "# permutation; each rank sends L to both ring neighbours. MB/s = bytes sent by all\n"
            "# ranks / time of the best repetition\n"
         << std::left << std::setw(10) << "# pattern" << std::right << std::setw(10) << "bytes"
         << std::setw(14) << "sendrecv" << std::setw(14) << "alltoallv" << std::setw(14)
         << "nonblocking" << std::setw(14) << "best MB/s" << "\n";
  for (const auto& p : patterns) {
    const auto pairs = ring_pairs(p, ctx.rank);
    std::vector<double> per_length;
    for (long long L : lengths) {
      const MethodBandwidths mb =
          time_methods(ctx, pairs, L, sbuf, rbuf, sent,
                       {{"pattern", p.name}, {"pattern_kind", p.random ? "random" : "ring"}}, records);
      const std::vector<double>& bw_of_method = mb.per_method;
      const double best = mb.best;
      per_length.push_back(best);
      if (out)
        *out << std::left << std::setw(10) << p.name << std::right << std::setw(10) << L << std::fixed
             << std::setprecision(2) << std::setw(14) << bw_of_method[0] << std::setw(14)
             << bw_of_method[1] << std::setw(14) << bw_of_method[2] << std::setw(14) << best << "\n"
             << std::defaultfloat;
    }
    (p.random ? random_lmax : ring_lmax).push_back(per_length.back());
    (p.random ? random_bw : ring_bw).push_back(per_length);
  }
  return {beff_average(ring_bw, random_bw),
          geometric_mean({geometric_mean(ring_lmax), geometric_mean(random_lmax)})};
}

// What the ping-pong measured: the bandwidth at Lmax and the partner rank.
struct PingPongResult {
  double at_lmax = 0;
  int partner = 1;
};

PingPongResult run_pingpong(BenchContext& ctx, const std::vector<long long>& lengths, long long lmax,
                            std::vector<char>& sbuf, std::vector<char>& rbuf, Traffic& sent,
                            std::vector<nlohmann::json>& records) {
  std::ostream* out = ctx.out;
  // Ping-pong between rank 0 and the first rank on another node (rank 1 on
  // one node): one-way time = round trip / 2.
  int partner = 1;
  for (int r = 1; r < ctx.size; ++r)
    if (ctx.nodes.node_of_rank[r] != ctx.nodes.node_of_rank[0]) {
      partner = r;
      break;
    }
  if (out)
    *out << "# ping-pong rank 0 <-> rank " << partner << " ("
         << (ctx.nodes.node_of_rank[partner] != ctx.nodes.node_of_rank[0] ? "inter" : "intra")
         << "-node); one-way time = round trip / 2 (median); MB/s of the best repetition\n"
         << std::left << std::setw(10) << "# bytes" << std::right << std::setw(16) << "one-way s"
         << std::setw(14) << "MB/s" << "\n";
  double pingpong_lmax = 0;
  const long long window_ms = ctx.opt.args.get("--pingpong-ms");
  // One buffer: each side receives into the array it sends from, so a
  // message's data stays in cache for the reply (NetPIPE without -I keeps
  // its buffers warm the same way); two (default): a halo exchange's case.
  char* const recv_into = ctx.opt.args.get("--pingpong-buffers") == 1 ? sbuf.data() : rbuf.data();
  for (long long L : lengths) {
    const int n = static_cast<int>(L);
    const auto round_trip = [&] {
      if (ctx.rank == 0) {
        HYMPI_CHECK_MPI(MPI_Send(sbuf.data(), n, MPI_BYTE, partner, 9, ctx.comm));
        sent.add(L);
        HYMPI_CHECK_MPI(MPI_Recv(recv_into, n, MPI_BYTE, partner, 9, ctx.comm, MPI_STATUS_IGNORE));
      } else if (ctx.rank == partner) {
        HYMPI_CHECK_MPI(MPI_Recv(recv_into, n, MPI_BYTE, 0, 9, ctx.comm, MPI_STATUS_IGNORE));
        HYMPI_CHECK_MPI(MPI_Send(sbuf.data(), n, MPI_BYTE, 0, 9, ctx.comm));
        sent.add(L);
      }
    };
    // At least 4 round trips per repetition, as NetPIPE averages several;
    // with --pingpong-ms, as many as fill that window (NetPIPE's trials
    // fill about 250 ms), from rank 0's time of two calibration trips.
    int trips = std::max(4, loop_count(L));
    if (window_ms > 0) {
      HYMPI_CHECK_MPI(MPI_Barrier(ctx.comm));
      const double t0 = MPI_Wtime();
      round_trip();
      round_trip();
      double per_trip = (MPI_Wtime() - t0) / 2;
      HYMPI_CHECK_MPI(MPI_Bcast(&per_trip, 1, MPI_DOUBLE, 0, ctx.comm));
      const double wanted = std::ceil(1e-3 * static_cast<double>(window_ms) / std::max(per_trip, 1e-9));
      trips = static_cast<int>(std::clamp(wanted, static_cast<double>(trips), 1e7));
    }
    Timing t = time_exchange(ctx.comm, ctx.opt.repeat, trips, sent, round_trip);
    const Stats one_way{t.stats.min / 2, t.stats.median / 2, t.stats.max / 2};
    // Best repetition, as for the patterns (and as NetPIPE reports).
    const double bw = static_cast<double>(L) / one_way.min / 1e6;
    if (L == lmax) pingpong_lmax = bw;
    records.push_back({{"kind", "pingpong"},
                       {"partner", partner},
                       {"bytes", L},
                       {"bytes_moved", t.bytes_moved},
                       {"messages", t.messages},
                       {"time_s", stats_json(one_way)},
                       {"round_trips_per_repetition", trips},
                       {"buffers", ctx.opt.args.get("--pingpong-buffers")},
                       {"bandwidth_MBps", bw}});
    if (out)
      *out << std::left << std::setw(10) << L << std::right << std::setw(16) << std::scientific
           << std::setprecision(3) << one_way.median << std::fixed << std::setprecision(2)
           << std::setw(14) << bw << "\n"
           << std::defaultfloat;
  }

  return {pingpong_lmax, partner};
}

BenchResult run_beff(BenchContext& ctx) {
  const long long lmax = ctx.opt.args.get("--lmax");
  const auto lengths = beff_lengths(lmax);
  const auto patterns = beff_patterns(ctx.size);
  std::vector<char> sbuf(2 * lmax, 1), rbuf(2 * lmax, 0);
  Traffic sent;
  std::vector<nlohmann::json> records;
  const PatternResult pat = run_patterns(ctx, lengths, patterns, sbuf, rbuf, sent, records);
  const PingPongResult pp = run_pingpong(ctx, lengths, lmax, sbuf, rbuf, sent, records);
  const BeffAverages& avg = pat.avg;
  const double at_lmax = pat.at_lmax, pingpong_lmax = pp.at_lmax;
  const int partner = pp.partner;
  std::ostream* out = ctx.out;
  nlohmann::json per_pattern = nlohmann::json::object();
  for (std::size_t i = 0; i < patterns.size(); ++i) per_pattern[patterns[i].name] = avg.per_pattern[i];
  nlohmann::json summary = lmax_summary(at_lmax, ctx.size, lmax, lengths);
  summary.update({{"b_eff_MBps", avg.b_eff},
                  {"b_eff_per_process_MBps", avg.b_eff / ctx.size},
                  {"ring_MBps", avg.ring},
                  {"random_MBps", avg.random},
                  {"pattern_average_MBps", per_pattern},
                  {"pingpong_lmax_MBps", pingpong_lmax},
                  {"pingpong_partner", partner}});
  records.push_back(summary);
  if (out)
    *out << std::fixed << std::setprecision(2) << "# b_eff             " << avg.b_eff << " MB/s  ("
         << avg.b_eff / ctx.size << " per process; ring " << avg.ring << ", random " << avg.random
         << ")\n# b_eff at Lmax     " << at_lmax << " MB/s  (" << at_lmax / ctx.size
         << " per process), Lmax = " << lmax << " bytes\n# ping-pong at Lmax "
         << pingpong_lmax << " MB/s\n"
         << std::defaultfloat;
  return {records};
}

}  // namespace

Benchmark beff_benchmark() {
  Benchmark b = lmax_benchmark(
      "beff", "effective bandwidth b_eff (Rabenseifner & Koniges): ring and random patterns", run_beff);
  b.options.push_back(int_option("--pingpong-ms", "MS",
                                 "ping-pong: time as many round trips per repetition as fill MS "
                                 "ms, like NetPIPE's trials (0: at least 4)",
                                 "0", 0, 60000));
  b.options.push_back(int_option("--pingpong-buffers", "N",
                                 "ping-pong: 2 = receive into a second array, as a halo "
                                 "exchange must; 1 = into the array sent from (warm in cache)",
                                 "2", 1, 2));
  return b;
}

}  // namespace hympi::bench
