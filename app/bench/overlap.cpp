// overlap (seed 000 sec. 7.2.2, Fig. 6-7): the spmv kernel (periodic, split
// along k only: proc grid 1x1xP) on NX = NY = --plane, nk_loc planes per
// rank, for each --nk-loc: masteronly, funneled, multiple with m = 1..n-1,
// adaptive; epsilon = T_masteronly / T_scheme (median masteronly time over
// the scheme's max / median / min). From the masteronly run, the fractions
// f_comm, f_comp_non, f_comp_overlap of its critical path and the costs
// eq. (14) uses, per iteration and per point of one NX x NY plane:
//   x_comm    = f_comm         T_mo / (iters NX NY)           (halo planes: nk-independent)
//   x_non     = f_comp_non     T_mo / (iters NX NY nk_loc)
//   x_overlap = f_comp_overlap T_mo / (iters NX NY nk_loc)
// so that T_mo / iters = NX NY (x_comm + (x_non + x_overlap) nk_loc), and
// eq. (14) reads a = x_comm / x_overlap, b = x_non / x_overlap.
#include <iomanip>
#include <ostream>

#include "bench.hpp"

namespace hympi::bench {
namespace {

std::vector<nlohmann::json> run_overlap(BenchContext& ctx) {
  const BenchOptions& o = ctx.opt;
  std::vector<int> depths = o.nk_loc;
  if (depths.empty()) depths = {1, 2, 4, 8, 16};
  const int n = ctx.threads;
  std::vector<std::pair<std::string, int>> runs = {{"funneled", 1}};
  for (int m = 1; m < n; ++m) runs.push_back({"multiple", m});
  runs.push_back({"adaptive", 0});
  std::vector<nlohmann::json> records;
  std::ostream* out = ctx.out;
  if (out)
    *out << "# spmv, periodic, grid " << o.plane << "x" << o.plane << "x(nk_loc*" << ctx.size
         << "), proc grid 1x1x" << ctx.size << ", " << o.iters
         << " iterations; epsilon = T_masteronly / T_scheme (median)\n"
         << std::right << std::setw(8) << "# nk_loc" << std::setw(12) << "scheme" << std::setw(4)
         << "m" << std::setw(14) << "time s" << std::setw(10) << "epsilon" << std::setw(9)
         << "f_comm" << std::setw(9) << "f_non" << std::setw(9) << "f_ovl" << "\n";
  for (int nk : depths) {
    SolveConfig c;
    c.kernel = KernelKind::Spmv;
    c.grid = {o.plane, o.plane, nk * ctx.size};
    c.periodic = true;
    c.iters = o.iters;
    c.threads = n;
    c.repeat = o.repeat;
    c.ranks_per_node = ctx.ranks_per_node;
    c.rank_order = ctx.rank_order;
    c.proc_grid = {1, 1, ctx.size};
    c.scheme = "masteronly";
    const SolveResult mo = solve(ctx.comm, c);
    const double T = mo.time_s.median;
    const double per = T / (static_cast<double>(o.iters) * o.plane * o.plane);
    nlohmann::json model = {{"f_comm", mo.f_comm},
                            {"f_comp_non", mo.f_comp_non},
                            {"f_comp_overlap", mo.f_comp_overlap},
                            {"x_comm", mo.f_comm * per},
                            {"x_non", mo.f_comp_non * per / nk},
                            {"x_overlap", mo.f_comp_overlap * per / nk}};
    auto record = [&](const SolveResult& r, const Stats& eps) {
      nlohmann::json j = {{"kind", "point"},
                          {"nk_loc", nk},
                          {"plane", o.plane},
                          {"grid", r.config.grid},
                          {"proc_grid", r.grid.dims},
                          {"iters", o.iters},
                          {"scheme", r.config.scheme},
                          {"reserved", r.reserved_used},
                          {"threads", n},
                          {"time_s", stats_json(r.time_s)},
                          {"epsilon", stats_json(eps)},
                          {"bytes_per_exchange",
                           {{"intra_node", r.bytes_intra}, {"inter_node", r.bytes_inter}}},
                          {"checksum", r.checksum}};
      j.update(model);
      records.push_back(j);
      if (out)
        *out << std::right << std::setw(8) << nk << std::setw(12) << r.config.scheme << std::setw(4)
             << r.reserved_used << std::scientific << std::setprecision(3) << std::setw(14)
             << r.time_s.median << std::fixed << std::setprecision(3) << std::setw(10) << eps.median
             << std::setw(9) << mo.f_comm << std::setw(9) << mo.f_comp_non << std::setw(9)
             << mo.f_comp_overlap << "\n"
             << std::defaultfloat;
    };
    record(mo, Stats{1, 1, 1});
    for (const auto& [scheme, m] : runs) {
      SolveConfig s = c;
      s.scheme = scheme;
      s.reserved = scheme == "multiple" ? m : 0;
      const SolveResult r = solve(ctx.comm, s);
      record(r, Stats{T / r.time_s.max, T / r.time_s.median, T / r.time_s.min});
    }
  }
  return records;
}

}  // namespace

Benchmark overlap_benchmark() {
  Benchmark b;
  b.name = "overlap";
  b.description = "overlap gain epsilon of funneled/multiple/adaptive over masteronly (spmv, 1x1xP)";
  b.help =
      "  --plane N             NX = NY (default 24)\n"
      "  --nk-loc LIST         local depths, comma-separated (default 1,2,4,8,16)\n"
      "  --iters T             spmv iterations per run (default 10)\n"
      "  --threads N           threads per rank, n >= 2 (multiple runs m = 1..n-1)\n";
  b.min_ranks = 1;
  b.thread_level = MPI_THREAD_MULTIPLE;
  b.run = run_overlap;
  return b;
}

}  // namespace hympi::bench
