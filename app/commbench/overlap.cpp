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
#include <algorithm>
#include <iomanip>
#include <ostream>

#include "bench.hpp"
#include "hympi/scheme.hpp"
#include "parse.hpp"

namespace hympi::bench {
namespace {

// The schemes compared with the pure-MPI baseline: those that overlap by
// holding threads back from the interior for communication (they overlap
// and need at least two threads: one communicates, the others compute), in
// registry order; a scheme that takes --reserved runs with m = 1 .. n-1.
bool compared(const SchemeInfo& s) { return s.overlap && s.min_threads >= 2; }

struct Run {
  const SchemeEntry* scheme;
  int reserved;  // 0: the scheme's own
};
std::vector<Run> compared_runs(int threads) {
  std::vector<Run> runs;
  for (const auto& e : scheme_registry()) {
    if (!compared(e.info)) continue;
    if (!e.info.takes_reserved) runs.push_back({&e, 0});
    for (int m = 1; e.info.takes_reserved && m < threads; ++m) runs.push_back({&e, m});
  }
  return runs;
}

std::string compared_names(const std::string& sep) {
  std::string s;
  for (const auto& e : scheme_registry())
    if (compared(e.info)) s += (s.empty() ? "" : sep) + e.info.name;
  return s;
}

int compared_thread_level() {
  int level = pure_mpi_scheme().info.thread_level;
  for (const auto& e : scheme_registry())
    if (compared(e.info)) level = std::max(level, e.info.thread_level);
  return level;
}

// The run at one local depth: spmv, periodic, split along k only.
SolveConfig overlap_config(const BenchContext& ctx, int nk) {
  const int plane = static_cast<int>(ctx.opt.args.get("--plane"));
  SolveConfig c;
  c.kernel = KernelKind::Spmv;
  c.grid = {plane, plane, nk * ctx.size};
  c.periodic = true;
  c.iters = static_cast<int>(ctx.opt.args.get("--iters"));
  c.threads = ctx.threads;
  c.repeat = ctx.opt.repeat;
  c.ranks_per_node = ctx.ranks_per_node;
  c.rank_order = ctx.rank_order;
  c.proc_grid = {1, 1, ctx.size};
  c.scheme = &pure_mpi_scheme();
  return c;
}

BenchResult run_overlap(BenchContext& ctx) {
  const int plane = static_cast<int>(ctx.opt.args.get("--plane"));
  const int iters = static_cast<int>(ctx.opt.args.get("--iters"));
  const int n = ctx.threads;
  std::vector<nlohmann::json> records;
  std::ostream* out = ctx.out;
  if (out)
    *out << "# spmv, periodic, grid " << plane << "x" << plane << "x(nk_loc*" << ctx.size
         << "), proc grid 1x1x" << ctx.size << ", " << iters
         << " iterations; epsilon = T_" << pure_mpi_scheme().info.name << " / T_scheme (median)\n"
         << std::right << std::setw(8) << "# nk_loc" << std::setw(12) << "scheme" << std::setw(4)
         << "m" << std::setw(14) << "time s" << std::setw(10) << "epsilon" << std::setw(9)
         << "f_comm" << std::setw(9) << "f_non" << std::setw(9) << "f_ovl" << "\n";
  for (int nk : ctx.opt.args.int_list("--nk-loc")) {
    const SolveConfig c = overlap_config(ctx, nk);
    const SolveResult mo = solve(ctx.comm, c);
    const double T = mo.time_s.median;
    const double per = T / (static_cast<double>(iters) * plane * plane);
    nlohmann::json model = {{"f_comm", mo.f_comm},
                            {"f_comp_non", mo.f_comp_non},
                            {"f_comp_overlap", mo.f_comp_overlap},
                            {"x_comm", mo.f_comm * per},
                            {"x_non", mo.f_comp_non * per / nk},
                            {"x_overlap", mo.f_comp_overlap * per / nk}};
    auto record = [&](const SolveResult& r, const Stats& eps) {
      nlohmann::json j = {{"kind", "point"},
                          {"nk_loc", nk},
                          {"plane", plane},
                          {"grid", r.config.grid},
                          {"proc_grid", r.grid.dims},
                          {"iters", iters},
                          {"scheme", r.config.scheme->info.name},
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
        *out << std::right << std::setw(8) << nk << std::setw(12) << r.config.scheme->info.name << std::setw(4)
             << r.reserved_used << std::scientific << std::setprecision(3) << std::setw(14)
             << r.time_s.median << std::fixed << std::setprecision(3) << std::setw(10) << eps.median
             << std::setw(9) << mo.f_comm << std::setw(9) << mo.f_comp_non << std::setw(9)
             << mo.f_comp_overlap << "\n"
             << std::defaultfloat;
    };
    record(mo, Stats{1, 1, 1});
    for (const auto& run : compared_runs(n)) {
      SolveConfig s = c;
      s.scheme = run.scheme;
      s.reserved = run.reserved;
      const SolveResult r = solve(ctx.comm, s);
      record(r, Stats{T / r.time_s.max, T / r.time_s.median, T / r.time_s.min});
    }
  }
  return {records};
}

std::vector<std::string> check_overlap(const BenchArgs& args, const RunShape& shape) {
  std::vector<std::string> e;
  if (shape.threads < 2)
    e.push_back("benchmark 'overlap' needs --threads >= 2 (" + compared_names(", ") + ")");
  const int plane = static_cast<int>(args.get("--plane"));
  for (int nk : args.int_list("--nk-loc")) {
    SolveConfig c;
    c.kernel = KernelKind::Spmv;
    c.grid = {plane, plane, nk * shape.ranks};
    c.periodic = true;
    c.threads = std::max(shape.threads, 2);
    c.proc_grid = {1, 1, shape.ranks};
    c.ranks_per_node = shape.ranks_per_node;
    for (auto& m : validate_config(c, shape.ranks, shape.real_nodes, shape.node_memory_bytes))
      e.push_back("overlap at --nk-loc " + std::to_string(nk) + ": " + cli::plain_parameters(m));
  }
  return e;
}

}  // namespace

Benchmark overlap_benchmark() {
  Benchmark b;
  b.name = "overlap";
  b.description = "overlap gain epsilon of " + compared_names("/") + " over " +
                  pure_mpi_scheme().info.name + " (spmv, 1x1xP)";
  b.options = {int_option("--plane", "N", "NX = NY", "24", 1, 1 << 20),
               int_list_option("--nk-loc", "local depths, comma-separated", "1,2,4,8,16", 1, 1 << 20),
               int_option("--iters", "T", "spmv iterations per run", "10", 1, 1LL << 30)};
  b.uses_threads = true;
  b.notes = "  --threads N           threads per rank, n >= 2 (multiple runs m = 1..n-1)\n";
  b.min_ranks = 1;
  b.thread_level = compared_thread_level();
  b.check = check_overlap;
  b.run = run_overlap;
  return b;
}

}  // namespace hympi::bench
