// cyclic3d: every rank exchanges L bytes with each of its 6 neighbours on a
// periodic 3-D process grid (the node-aware grid of choose_grid, as a cube
// problem would get), the 21 b_eff lengths, the three b_eff methods; the best
// method and repetition per length; reported as the arithmetic mean over the
// lengths and at Lmax (seed 003 Table 1, "3-d-cyclic").
#include <algorithm>
#include <iomanip>
#include <ostream>

#include "bench.hpp"

namespace hympi::bench {
namespace {

// The grid a periodic cube gets from the library's choice (as the solver's).
GridChoice cyclic_grid(const NodeMap& nodes, int ranks) {
  const std::array<int, 3> cube{1 << 12, 1 << 12, 1 << 12};
  return choose_grid_for_nodes(cube, nodes, ranks, {true, true, true}, {0, 0, 0});
}

BenchResult run_cyclic3d(BenchContext& ctx) {
  const long long lmax = ctx.opt.args.get("--lmax");
  const GridChoice choice = cyclic_grid(ctx.nodes, ctx.size);
  const ProcessGrid grid = make_process_grid(ctx.comm, ctx.nodes, choice);
  std::vector<Pair> pairs;
  for (int d = 0; d < 3; ++d) {
    auto plus = grid.coords, minus = grid.coords;
    plus[d] = (plus[d] + 1) % choice.dims[d];
    minus[d] = (minus[d] + choice.dims[d] - 1) % choice.dims[d];
    pairs.push_back({grid.rank_of(plus), grid.rank_of(minus)});
    pairs.push_back({grid.rank_of(minus), grid.rank_of(plus)});
  }
  const auto lengths = beff_lengths(lmax);
  std::vector<char> sbuf(6 * lmax, 1), rbuf(6 * lmax, 0);
  Traffic sent;
  std::vector<nlohmann::json> records;
  std::vector<double> best_of_length;
  std::ostream* out = ctx.out;
  if (out)
    *out << "# process grid " << choice.dims[0] << "x" << choice.dims[1] << "x" << choice.dims[2]
         << " (periodic); each rank sends L to each of its 6 neighbours\n"
         << std::left << std::setw(10) << "# bytes" << std::right << std::setw(14) << "sendrecv"
         << std::setw(14) << "alltoallv" << std::setw(14) << "nonblocking" << std::setw(14)
         << "best MB/s" << "\n";
  for (long long L : lengths) {
    const MethodBandwidths mb = time_methods(
        ctx, pairs, L, sbuf, rbuf, sent, {{"pattern", "cyclic3d"}, {"proc_grid", choice.dims}}, records);
    const std::vector<double>& bws = mb.per_method;
    const double best = mb.best;
    best_of_length.push_back(best);
    if (out)
      *out << std::left << std::setw(10) << L << std::right << std::fixed << std::setprecision(2)
           << std::setw(14) << bws[0] << std::setw(14) << bws[1] << std::setw(14) << bws[2]
           << std::setw(14) << best << "\n"
           << std::defaultfloat;
  }
  const double avg = arithmetic_mean(best_of_length), at_lmax = best_of_length.back();
  nlohmann::json summary = lmax_summary(at_lmax, ctx.size, lmax, lengths);
  summary.update({{"proc_grid", choice.dims},
                  {"average_MBps", avg},
                  {"average_per_process_MBps", avg / ctx.size}});
  records.push_back(summary);
  if (out)
    *out << std::fixed << std::setprecision(2) << "# cyclic3d average " << avg << " MB/s ("
         << avg / ctx.size << " per process)\n# cyclic3d at Lmax  " << at_lmax << " MB/s ("
         << at_lmax / ctx.size << " per process), Lmax = " << lmax << " bytes\n"
         << std::defaultfloat;
  return {records};
}

}  // namespace

Benchmark cyclic3d_benchmark() {
  return lmax_benchmark("cyclic3d", "3-D cyclic pattern: 6 neighbours on a periodic 3-D process grid",
                        run_cyclic3d);
}

}  // namespace hympi::bench
