#include "option_table.hpp"

#include <array>
#include <map>
#include <utility>

#include "hympi/kernels.hpp"
#include "hympi/scheme.hpp"

namespace hympi::cli {

namespace {

constexpr long long kBig = 1LL << 30;
constexpr long long kMaxThreads = 1024;
constexpr std::size_t kHelpColumn = 24;

// A row that takes a value, and one that takes none.
OptionRow value_row(const std::string& flag, const std::string& metavar, const std::string& parameter,
                    const std::string& help, std::function<void(const std::string&)> set) {
  OptionRow r;
  r.flag = flag;
  r.metavar = metavar;
  r.parameter = parameter;
  r.help = help;
  r.set = std::move(set);
  return r;
}
OptionRow flag_row(const std::string& flag, const std::string& parameter, const std::string& help,
                   std::function<void()> on) {
  OptionRow r;
  r.flag = flag;
  r.parameter = parameter;
  r.help = help;
  r.on = std::move(on);
  return r;
}

// `out` = v when v is an integer in lo..hi; else the message that says which
// (not an integer / out of range) and the accepted range with its unit.
void int_opt(std::vector<std::string>& e, const std::string& name, long long lo, long long hi,
             const std::string& unit, const std::string& v, int& out) {
  long long x = 0;
  if (!parse_int(v, lo, hi, x))
    e.push_back(int_range_message(name, v, lo, hi, unit));
  else
    out = static_cast<int>(x);
}

// A row whose value is an integer in lo..hi (`unit` names what it counts).
OptionRow int_row(Options& o, const std::string& flag, const std::string& metavar,
                  const std::string& parameter, long long lo, long long hi,
                  const std::string& unit, int& out, const std::string& help) {
  auto& e = o.errors;
  return value_row(flag, metavar, parameter, help, [&e, flag, lo, hi, unit, &out](const std::string& v) {
    int_opt(e, flag, lo, hi, unit, v, out);
  });
}

// A grid option: NXxNYxNZ or N^3 (a process grid: PXxPYxPZ or P^3).
std::function<void(const std::string&)> grid_opt(std::vector<std::string>& e, const std::string& name,
                                                 std::array<int, 3>& out, bool* seen = nullptr,
                                                 GridKind kind = GridKind::Points) {
  return [&e, name, &out, seen, kind](const std::string& v) {
    if (seen) *seen = true;
    std::string why;
    std::array<int, 3> g{};
    if (!parse_grid(v, g, why, kind))
      e.push_back(name + " '" + v + "': " + why);
    else
      out = g;
  };
}

// The options every command has: threads, virtual nodes, --help.
OptionRow threads_row(Options& o, const std::string& help) {
  return int_row(o, "--threads", "N", "threads", 1, kMaxThreads, "threads", o.solve.threads, help);
}
OptionRow ranks_per_node_row(Options& o, const std::string& help) {
  return int_row(o, "--ranks-per-node", "R", "ranks_per_node", 1, kBig, "ranks",
                 o.solve.ranks_per_node, help);
}
OptionRow rank_order_row(Options& o, const std::string& help) {
  return value_row("--rank-order", "O", "rank_order", help, [&o](const std::string& v) {
            if (v == "sequential")
              o.solve.rank_order = RankOrder::Sequential;
            else if (v == "round-robin")
              o.solve.rank_order = RankOrder::RoundRobin;
            else
              o.errors.push_back("--rank-order '" + v + "': expected sequential or round-robin");
          });
}
OptionRow help_row(Options& o) {
  return flag_row("--help", "", "this text", [&o] { o.help = true; });
}
// --json PATH of solve and bench (info's takes an optional path).
OptionRow json_row(Options& o, const std::string& help) {
  return value_row("--json", "PATH", "", help, [&o](const std::string& v) {
    if (v.empty()) o.errors.push_back("--json '': empty path (- writes to stdout)");
    o.json_path = v;
  });
}

// The rows as the help lists them: "  --flag WORD" to the help column, then
// the help, its further lines indented to that column.
std::string help_lines(const std::vector<OptionRow>& rows) {
  std::string out;
  for (const auto& r : rows) {
    if (!r.in_help) continue;
    std::string head = "  " + r.flag + (r.metavar.empty() ? "" : " " + r.metavar);
    head += std::string(head.size() + 2 <= kHelpColumn ? kHelpColumn - head.size() : 2, ' ');
    std::string help;
    for (const char c : r.help) help += c == '\n' ? "\n" + std::string(kHelpColumn, ' ') : std::string(1, c);
    out += head + help + "\n";
  }
  return out;
}

// The problem: kernel, grid, iterations, boundaries, format, cg's limits.
void add_solve_problem(std::vector<OptionRow>& rows, Options& o, SolveSeen& seen) {
  auto& e = o.errors;
  auto& s = o.solve;
  rows.push_back(value_row("--kernel", "K", "kernel", names_of_kernels(), [&](const std::string& v) {
                    seen.kernel = true;
                    const KernelInfo* k = find_kernel(v);
                    if (!k)
                      e.push_back("unknown kernel '" + v + "' (valid: " + names_of_kernels() + ")");
                    else
                      s.kernel = k->kind;
                    seen.kernel_known = k != nullptr;
                  }));
  rows.push_back(value_row("--grid", "G", "grid", "global grid NXxNYxNZ, or N^3 for a cube",
                  grid_opt(e, "--grid", s.grid, &seen.grid)));
  rows.push_back(int_row(o, "--iters", "T", "iters", 0, kBig, "iterations", s.iters,
                         "iterations of jacobi/rbgs/spmv (default 10)"));
  rows.push_back(int_row(o, "--halo-depth", "H", "halo_depth", 1, 64, "layers", s.halo_depth,
                         "temporal blocking (jacobi, rbgs, spmv stencil): halos H\n"
                         "deep, one exchange per H sweeps (an iteration is one sweep,\n"
                         "rbgs's two: one per colour), the H sweeps in between as a\n"
                         "wavefront over k planes (default 1; 1..64)"));
  rows.push_back(value_row("--stores", "S", "stores",
                  "auto | cached | streaming: how jacobi and spmv stencil at\n"
                  "halo depth 1 write their output (streaming: non-temporal\n"
                  "stores, no write-allocate read; auto: streaming where a\n"
                  "thread's share of the input and output arrays exceeds\n"
                  "a core's L2; default auto)",
                  [&](const std::string& v) {
                    if (v == "auto")
                      s.stores = StoresChoice::Auto;
                    else if (v == "cached")
                      s.stores = StoresChoice::Cached;
                    else if (v == "streaming")
                      s.stores = StoresChoice::Streaming;
                    else
                      e.push_back("--stores '" + v + "': expected auto, cached or streaming");
                  }));
  rows.push_back(flag_row("--periodic", "periodic", "periodic boundaries (default Dirichlet 0)",
                          [&s] { s.periodic = true; }));
}

// The matrix format (listed with the run's options).
void add_solve_format(std::vector<OptionRow>& rows, Options& o) {
  auto& e = o.errors;
  auto& s = o.solve;
  rows.push_back(value_row("--format", "F", "format",
                  "stencil | crs | sell: matrix-free, or a stored matrix in CRS\n"
                  "or SELL-8-1 with 16-bit column offsets (spmv, cg)",
                  [&](const std::string& v) {
                    if (v == "stencil")
                      s.format = MatrixFormat::Stencil;
                    else if (v == "crs")
                      s.format = MatrixFormat::Crs;
                    else if (v == "sell")
                      s.format = MatrixFormat::Sell;
                    else
                      e.push_back("--format '" + v + "': expected stencil, crs or sell");
                  }));
}

void add_solve_limits(std::vector<OptionRow>& rows, Options& o) {
  auto& e = o.errors;
  auto& s = o.solve;
  rows.push_back(value_row("--tol", "X", "tol", "cg: relative residual to reach (default 1e-8)",
                  [&](const std::string& v) {
                    double x = 0;
                    if (!parse_double(v, x))
                      e.push_back("--tol '" + v + "': expected a number, 1e-15 <= tol < 1 (relative residual)");
                    else if (!(x >= kMinTol && x < 1))
                      e.push_back("--tol " + v + " is out of range: accepted 1e-15 <= tol < 1 (relative residual" +
                                  std::string(x > 0 && x < kMinTol ? "; below 1e-15 only the recurrence's residual "
                                                                     "falls further, by underflow, not the true one)"
                                                                   : ")"));
                    else
                      s.tol = x;
                  }));
  rows.push_back(int_row(o, "--max-iters", "N", "max_iters", 1, kBig, "iterations", s.max_iters,
                         "cg: iteration limit (default 10000)"));
}

// How it runs and what it writes: scheme, threads, process grid, output.
void add_solve_run(std::vector<OptionRow>& rows, Options& o) {
  auto& s = o.solve;
  // Resolved here, once; an unknown name is reported with the other
  // problems of the config (main's command_errors), not as a parse error.
  rows.push_back(value_row("--scheme", "S", "scheme",
                  scheme_names() + " (default " + SolveConfig{}.scheme->info.name + ")",
                  [&](const std::string& v) {
                    s.scheme = find_scheme(v);
                    o.unknown_scheme = s.scheme ? "" : v;
                  }));
  rows.push_back(threads_row(o, "OpenMP threads per rank (default $OMP_NUM_THREADS or 1)"));
  rows.push_back(int_row(o, "--reserved", "M", "reserved", 1, kMaxThreads - 1, "threads", s.reserved,
                         "communication threads of 'multiple' (1 <= M < N, default 1)"));
  add_solve_format(rows, o);
  rows.push_back(ranks_per_node_row(o, "virtual nodes of R ranks (default: real nodes)"));
  rows.push_back(rank_order_row(o, "sequential | round-robin: ranks onto virtual nodes"));
  rows.push_back(value_row("--proc-grid", "PXxPYxPZ", "proc_grid", "process grid (default: node-aware choice)",
                  grid_opt(o.errors, "--proc-grid", s.proc_grid, nullptr, GridKind::Processes)));
}

// What it writes, and how MPI starts.
void add_solve_output(std::vector<OptionRow>& rows, Options& o) {
  auto& e = o.errors;
  rows.push_back(int_row(o, "--repeat", "R", "repeat", 1, 100000, "repetitions", o.solve.repeat,
                         "repetitions; time is min/median/max (default 1)"));
  rows.push_back(value_row("--thread-level", "L", "",
                  "ask MPI for single|funneled|serialized|multiple instead\n"
                  "of the level the scheme needs (refused if too low)",
                  [&](const std::string& v) {
                    if (thread_level_from_name(v) < 0)
                      e.push_back("--thread-level '" + v + "': expected single, funneled, serialized or multiple");
                    else
                      o.thread_level = v;
                  }));
  rows.push_back(json_row(o, "write the JSON result document (rank 0)"));
  rows.push_back(value_row("--trace", "PATH", "trace",
                  "write every thread's timeline of the median repetition\n"
                  "as Chrome Trace Event JSON (Perfetto, chrome://tracing)",
                  [&](const std::string& v) {
                    if (v.empty()) e.push_back("--trace '': empty path (- writes to stdout)");
                    o.trace_path = v;
                    o.solve.trace = true;
                  }));
  rows.push_back(help_row(o));
}

}  // namespace

std::string names_of_kernels() {
  std::string s;
  for (const auto& k : kernel_registry()) s += (s.empty() ? "" : ", ") + k.name;
  return s;
}

std::vector<OptionRow> solve_options(Options& o, SolveSeen& seen) {
  std::vector<OptionRow> rows;
  add_solve_problem(rows, o, seen);
  add_solve_run(rows, o);
  add_solve_limits(rows, o);
  add_solve_output(rows, o);
  return rows;
}

std::vector<OptionRow> info_options(Options& o) {
  // --json's optional path is read by the parser itself (options.cpp, scan).
  OptionRow json = value_row("--json", "[PATH]", "", "JSON instead of text: to PATH, or to stdout", {});
  json.optional_value = true;
  return {json, threads_row(o, "threads per rank to report (default $OMP_NUM_THREADS or 1)"),
          ranks_per_node_row(o, "virtual nodes of R ranks"), rank_order_row(o, "sequential | round-robin"),
          help_row(o)};
}

std::vector<OptionRow> bench_options(Options& o, bool list_threads) {
  std::vector<OptionRow> rows = {
      int_row(o, "--repeat", "R", "", 1, 100000, "repetitions", o.bench.repeat,
              "timed repetitions after one warm-up (default 3)"),
      threads_row(o, "threads per rank (pack and overlap only)"),
      ranks_per_node_row(o, "virtual nodes of R ranks (default: real nodes)"),
      rank_order_row(o, "sequential | round-robin: ranks onto virtual nodes"),
      json_row(o, "write the JSON result document (rank 0; - for stdout)"),
      help_row(o)};
  rows[1].in_help = list_threads;
  if (const bench::Benchmark* b = bench::find_benchmark(o.bench.name)) {
    o.bench.args = bench::default_args(*b);  // its own options start from its defaults
    for (const auto& opt : b->options) {
      OptionRow r = value_row(opt.name, "VALUE", "", "", [&o, &opt](const std::string& v) {
        const std::string why = opt.parse(v, o.bench.args.values[opt.name]);
        if (!why.empty()) o.errors.push_back(why);
      });
      r.in_help = false;  // bench::options_help lists them
      rows.push_back(r);
    }
  }
  return rows;
}

std::string solve_help() {
  Options o;
  SolveSeen seen;
  return "usage: hympi solve --kernel K --grid NXxNYxNZ [options]\n"
         "\n"
         "Runs kernel K on the reference problem (docs/reference-problem.md) under a\n"
         "hybrid scheme and reports checksum and l2 of the final field, time and a\n"
         "per-thread breakdown.\n"
         "\n" +
         help_lines(solve_options(o, seen));
}

std::string info_help() {
  Options o;
  return "usage: hympi info [--json [PATH]] [--threads N] [--ranks-per-node R] [--rank-order O]\n"
         "\n"
         "Lists schemes (with the MPI thread level each needs), kernels, the MPI library and\n"
         "version, the thread level provided, the node map and the CPU each thread runs on.\n"
         "\n" +
         help_lines(info_options(o));
}

std::string bench_help(const std::string& name) {
  Options o;
  o.bench.name = name;
  const std::string sizes =
      "Sizes are bytes: a number (65536, 1.5, 1e6) with an optional unit B, k or kB,\n"
      "M or MB, G or GB (10^3, 10^6, 10^9), KiB, MiB, GiB (docs/units.md). ";
  const std::string times = "Times are the maximum over ranks, reported as min / median / max.\n";
  if (const bench::Benchmark* b = bench::find_benchmark(name)) {
    bool takes_bytes = false;
    for (const auto& opt : b->options) takes_bytes = takes_bytes || opt.bytes;
    // A benchmark that runs threads says how in its notes (options_help).
    return "usage: hympi bench " + b->name + " [options]\n\n" + b->description + "\n\n" +
           bench::options_help(*b) + help_lines(bench_options(o, false)) + "\n" +
           (takes_bytes ? sizes : "") + times;
  }
  std::string s =
      "usage: hympi bench <benchmark> [options]\n"
      "\n"
      "Communication benchmarks (docs/bench.md); hympi bench <benchmark> --help\n"
      "shows a benchmark's options.\n"
      "\n"
      "benchmarks:\n";
  for (const auto& b : bench::benchmark_registry()) {
    std::string pad(b.name.size() < 11 ? 11 - b.name.size() : 1, ' ');
    s += "  " + b.name + pad + b.description + "\n";
  }
  return s + "\ncommon options:\n" + help_lines(bench_options(o, true)) + "\n" + sizes + times;
}

std::string name_parameters(const std::string& message, bool as_flags) {
  if (!as_flags) return plain_parameters(message);
  Options o;
  SolveSeen seen;
  std::map<std::string, std::string> flag_of_parameter;
  for (const auto& r : solve_options(o, seen))
    if (!r.parameter.empty()) flag_of_parameter[r.parameter] = r.flag;
  return rename_parameters(message, [&](const std::string& name) {
    const auto flag = flag_of_parameter.find(name);
    return flag != flag_of_parameter.end() ? flag->second : name;
  });
}

}  // namespace hympi::cli
