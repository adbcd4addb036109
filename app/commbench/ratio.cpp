// ratio (seed 000 sec. 6, Fig. 2-4): the orthogonal pattern. Pure MPI: every
// rank sends L bytes to the rank of the same index on the next node
// (inter-node, nodes in a ring) and L to the next rank of its own node
// (intra-node ring over the node's c ranks). Hybrid masteronly: the first
// rank of each node stands for the node's master thread and sends the
// aggregate of its c threads' inter-node data, c L bytes, to the next node's
// first rank; the intra-node data needs no message. Reported: T_hybrid /
// T_pure over L (the pure-MPI message size, the paper's x axis).
#include <algorithm>
#include <iomanip>
#include <ostream>

#include "bench.hpp"
#include "hympi/error.hpp"

namespace hympi::bench {
namespace {

BenchResult run_ratio(BenchContext& ctx) {
  const NodeRing ring = node_ring(ctx);
  const int N = ring.nodes, c = ring.c, me = ring.me;
  const auto& mine = ring.mine();
  const bool in_pattern = me < c;  // uneven nodes: the extra ranks stay idle
  const std::vector<long long>& sizes = ctx.opt.args.list("--sizes");
  const long long smax = *std::max_element(sizes.begin(), sizes.end());
  std::vector<char> sbuf(2 * c * smax, 1), rbuf(2 * c * smax, 0);
  Traffic sent;
  std::vector<nlohmann::json> records;
  std::ostream* out = ctx.out;
  if (out)
    *out << "# " << N << " nodes x " << c
         << " ranks; pure MPI: every rank sends L inter-node and L intra-node;\n"
            "# hybrid masteronly: one rank per node sends c*L inter-node\n"
         << std::left << std::setw(12) << "# bytes L" << std::right << std::setw(14) << "T_pure s"
         << std::setw(14) << "T_hybrid s" << std::setw(12) << "ratio" << "\n";
  for (long long L : sizes) {
    std::vector<MPI_Request> req;
    auto post = [&](char* rb, char* sb, long long bytes, int to, int from) {
      const int n = static_cast<int>(bytes);
      req.emplace_back();
      HYMPI_CHECK_MPI(MPI_Irecv(rb, n, MPI_BYTE, from, 13, ctx.comm, &req.back()));
      req.emplace_back();
      HYMPI_CHECK_MPI(MPI_Isend(sb, n, MPI_BYTE, to, 13, ctx.comm, &req.back()));
      sent.add(bytes);
    };
    auto wait = [&] {
      HYMPI_CHECK_MPI(MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE));
      req.clear();
    };
    const Timing pure = time_exchange(ctx.comm, ctx.opt.repeat, loop_count(L), sent, [&] {
      if (!in_pattern) return;
      post(rbuf.data(), sbuf.data(), L, ring.next()[me], ring.prev()[me]);
      if (c > 1) post(rbuf.data() + L, sbuf.data() + L, L, mine[(me + 1) % c], mine[(me + c - 1) % c]);
      wait();
    });
    const Timing hybrid = time_exchange(ctx.comm, ctx.opt.repeat, loop_count(c * L), sent, [&] {
      if (me != 0) return;
      post(rbuf.data(), sbuf.data(), c * L, ring.next()[0], ring.prev()[0]);
      wait();
    });
    const double ratio = hybrid.stats.median / pure.stats.median;
    records.push_back({{"kind", "point"},
                       {"bytes", L},
                       {"hybrid_bytes", c * L},
                       {"nodes", N},
                       {"ranks_per_node", c},
                       {"pure",
                        {{"time_s", stats_json(pure.stats)},
                         {"bytes_moved", pure.bytes_moved},
                         {"messages", pure.messages}}},
                       {"hybrid",
                        {{"time_s", stats_json(hybrid.stats)},
                         {"bytes_moved", hybrid.bytes_moved},
                         {"messages", hybrid.messages}}},
                       {"ratio", ratio}});
    if (out)
      *out << std::left << std::setw(12) << L << std::right << std::scientific << std::setprecision(3)
           << std::setw(14) << pure.stats.median << std::setw(14) << hybrid.stats.median << std::fixed
           << std::setprecision(3) << std::setw(12) << ratio << "\n"
           << std::defaultfloat;
  }
  return {records};
}

}  // namespace

Benchmark ratio_benchmark() {
  Benchmark b = sizes_benchmark("ratio", "T_hybrid / T_pure: masteronly aggregate vs pure MPI, orthogonal pattern",
                                "pure-MPI message sizes, comma-separated", "1kB,10kB,100kB,1MB", run_ratio);
  // Send and receive buffers of 2 c L each; the master's message is c L.
  b.check = [](const BenchArgs& args, const RunShape& shape) {
    return check_sizes_memory(args, shape, [](double L, int c) { return 4.0 * c * L; },
                              [](double L, int c) { return 2.0 * c * L; });
  };
  return b;
}

}  // namespace hympi::bench
