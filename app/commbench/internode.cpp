// internode (seed 001 sec. 3.1, Table 1, Fig. 2-3): the nodes form a ring;
// for k = 1 .. c (c = ranks of the smallest node), ranks 0 .. k-1 of every
// node each send S bytes to the rank of the same index on the next node and
// receive S from the previous node, all at once (Irecv/Isend/Waitall). The
// bandwidth per node = bytes of all these messages (each counted once) /
// time / nodes. The share reached with k = 1 of the best over k is what a
// masteronly code (one communicating thread per node) can get.
#include <algorithm>
#include <iomanip>
#include <ostream>

#include "bench.hpp"
#include "hympi/error.hpp"

namespace hympi::bench {
namespace {

BenchResult run_internode(BenchContext& ctx) {
  const NodeRing ring = node_ring(ctx);
  const int N = ring.nodes, c = ring.c, me = ring.me;
  const int to = ring.next()[std::min(me, c - 1)];
  const int from = ring.prev()[std::min(me, c - 1)];
  const std::vector<long long>& sizes = ctx.opt.args.list("--sizes");
  const long long smax = *std::max_element(sizes.begin(), sizes.end());
  std::vector<char> sbuf(smax, 1), rbuf(smax, 0);
  Traffic sent;
  std::vector<nlohmann::json> records;
  std::ostream* out = ctx.out;
  if (out)
    *out << "# " << N << " nodes in a ring, k = 1.." << c
         << " ranks per node each send S to the same rank of the next node;\n"
            "# MB/s per node = bytes of all inter-node messages / time / nodes\n"
         << std::left << std::setw(12) << "# bytes S" << std::right << std::setw(5) << "k"
         << std::setw(14) << "time s" << std::setw(16) << "MB/s per node" << std::setw(12)
         << "of max" << "\n";
  for (long long S : sizes) {
    const int n = static_cast<int>(S);
    std::vector<double> bw(c + 1, 0.0);
    std::vector<Timing> timing(c + 1);
    for (int k = 1; k <= c; ++k) {
      const bool active = me < k;
      timing[k] = time_exchange(ctx.comm, ctx.opt.repeat, loop_count(S), sent, [&] {
        if (!active) return;
        MPI_Request req[2];
        HYMPI_CHECK_MPI(MPI_Irecv(rbuf.data(), n, MPI_BYTE, from, 11, ctx.comm, &req[0]));
        HYMPI_CHECK_MPI(MPI_Isend(sbuf.data(), n, MPI_BYTE, to, 11, ctx.comm, &req[1]));
        sent.add(S);
        HYMPI_CHECK_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
      });
      bw[k] = static_cast<double>(timing[k].bytes_moved) / timing[k].stats.median / N / 1e6;
    }
    const double best = *std::max_element(bw.begin(), bw.end());
    for (int k = 1; k <= c; ++k) {
      records.push_back({{"kind", "point"},
                         {"bytes", S},
                         {"k", k},
                         {"nodes", N},
                         {"bytes_moved", timing[k].bytes_moved},
                         {"messages", timing[k].messages},
                         {"time_s", stats_json(timing[k].stats)},
                         {"bandwidth_per_node_MBps", bw[k]},
                         {"share_of_max", bw[k] / best}});
      if (out)
        *out << std::left << std::setw(12) << S << std::right << std::setw(5) << k << std::scientific
             << std::setprecision(3) << std::setw(14) << timing[k].stats.median << std::fixed
             << std::setprecision(2) << std::setw(16) << bw[k] << std::setw(11)
             << 100 * bw[k] / best << "%\n"
             << std::defaultfloat;
    }
    records.push_back({{"kind", "summary"},
                       {"bytes", S},
                       {"nodes", N},
                       {"ranks_per_node", c},
                       {"max_bandwidth_per_node_MBps", best},
                       {"k_of_max", static_cast<int>(std::max_element(bw.begin(), bw.end()) - bw.begin())},
                       {"masteronly_share", bw[1] / best}});
    if (out)
      *out << std::fixed << std::setprecision(1) << "# S = " << S << ": masteronly can reach "
           << 100 * bw[1] / best << " % of the node's bandwidth (" << std::setprecision(2) << bw[1]
           << " of " << best << " MB/s)\n"
           << std::defaultfloat;
  }
  return {records};
}

}  // namespace

Benchmark internode_benchmark() {
  Benchmark b = sizes_benchmark("internode",
                                "inter-node bandwidth per node with k = 1..c communicating ranks per node",
                                "message sizes, comma-separated", "2MB,16MB", run_internode);
  b.check = [](const BenchArgs& args, const RunShape& shape) {  // a send and a receive buffer of S
    return check_sizes_memory(args, shape, [](double S, int) { return 2.0 * S; },
                              [](double S, int) { return S; });
  };
  return b;
}

}  // namespace hympi::bench
