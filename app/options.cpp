#include "options.hpp"

#include <mpi.h>

#include <cstdlib>
#include <functional>
#include <map>

#include "hympi/build_info.hpp"
#include "hympi/kernels.hpp"
#include "hympi/scheme.hpp"

namespace hympi::cli {

int thread_level_from_name(const std::string& name) {
  if (name == "single") return MPI_THREAD_SINGLE;
  if (name == "funneled") return MPI_THREAD_FUNNELED;
  if (name == "serialized") return MPI_THREAD_SERIALIZED;
  if (name == "multiple") return MPI_THREAD_MULTIPLE;
  return -1;
}

int requested_thread_level(const Options& o) {
  if (!o.thread_level.empty()) {
    int l = thread_level_from_name(o.thread_level);
    if (l >= 0) return l;
  }
  if (o.command == Command::Info) return MPI_THREAD_MULTIPLE;  // report the most on offer
  if (o.command == Command::Bench) {
    const bench::Benchmark* b = bench::find_benchmark(o.bench.name);
    return b ? b->thread_level : MPI_THREAD_FUNNELED;
  }
  if (o.solve.scheme) return o.solve.scheme->info.thread_level;
  return MPI_THREAD_FUNNELED;
}

std::string version_text() {
  return std::string("hympi ") + kVersion + " (" + kGitRevision + ")\n";
}

std::string main_usage() {
  return "usage: hympi <command> [options]\n"
         "\n"
         "Hybrid MPI + OpenMP schemes for 3-D stencil and sparse kernels.\n"
         "Run under mpirun/mpiexec/srun; every command works on any number of ranks.\n"
         "\n"
         "commands:\n"
         "  solve   run a kernel under a hybrid scheme (hympi solve --help)\n"
         "  info    schemes, kernels, MPI library, thread level, node map, thread CPUs\n"
         "  bench   communication benchmarks: beff, cyclic3d, internode, ratio, overlap, pack\n"
         "\n"
         "hympi <command> --help shows the options of a command; hympi --version the version.\n";
}

namespace {

std::string names_of_kernels() {
  std::string s;
  for (const auto& k : kernel_registry()) s += (s.empty() ? "" : ", ") + k.name;
  return s;
}

std::string solve_help() {
  return "usage: hympi solve --kernel K --grid NXxNYxNZ [options]\n"
         "\n"
         "Runs kernel K on the reference problem (SYSTEM.md) under a hybrid scheme and\n"
         "reports checksum and l2 of the final field, time and a per-thread breakdown.\n"
         "\n"
         "  --kernel K            " + names_of_kernels() + "\n"
         "  --grid G              global grid NXxNYxNZ, or N^3 for a cube\n"
         "  --iters T             iterations of jacobi/rbgs/spmv (default 10)\n"
         "  --halo-depth H        temporal blocking (jacobi, spmv stencil): halos H deep,\n"
         "                        one exchange per H iterations, the H sweeps in between as\n"
         "                        a wavefront over k planes (default 1; 1..64)\n"
         "  --stores S            auto | cached | streaming: how jacobi and spmv stencil at\n"
         "                        halo depth 1 write their output (streaming: non-temporal\n"
         "                        stores, no write-allocate read; auto: streaming where a\n"
         "                        thread's share of the input and output arrays exceeds\n"
         "                        a core's L2; default auto)\n"
         "  --periodic            periodic boundaries (default Dirichlet 0)\n"
         "  --scheme S            " + scheme_names() + " (default " + SolveConfig{}.scheme->info.name + ")\n"
         "  --threads N           OpenMP threads per rank (default $OMP_NUM_THREADS or 1)\n"
         "  --reserved M          communication threads of 'multiple' (1 <= M < N, default 1)\n"
         "  --format F            stencil | crs | sell: matrix-free, or a stored matrix in CRS\n"
         "                        or SELL-8-1 with 16-bit column offsets (spmv, cg)\n"
         "  --ranks-per-node R    virtual nodes of R ranks (default: real nodes)\n"
         "  --rank-order O        sequential | round-robin: ranks onto virtual nodes\n"
         "  --proc-grid PXxPYxPZ  process grid (default: node-aware choice)\n"
         "  --tol X               cg: relative residual to reach (default 1e-8)\n"
         "  --max-iters N         cg: iteration limit (default 10000)\n"
         "  --repeat R            repetitions; time is min/median/max (default 1)\n"
         "  --thread-level L      ask MPI for single|funneled|serialized|multiple instead\n"
         "                        of the level the scheme needs (refused if too low)\n"
         "  --json PATH           write the JSON result document (rank 0)\n"
         "  --trace PATH          write every thread's timeline of the median repetition\n"
         "                        as Chrome Trace Event JSON (Perfetto, chrome://tracing)\n"
         "  --help                this text\n";
}

std::string info_help() {
  return "usage: hympi info [--json [PATH]] [--threads N] [--ranks-per-node R] [--rank-order O]\n"
         "\n"
         "Lists schemes (with the MPI thread level each needs), kernels, the MPI library and\n"
         "version, the thread level provided, the node map and the CPU each thread runs on.\n"
         "\n"
         "  --json [PATH]         JSON instead of text: to PATH, or to stdout\n"
         "  --threads N           threads per rank to report (default $OMP_NUM_THREADS or 1)\n"
         "  --ranks-per-node R    virtual nodes of R ranks\n"
         "  --rank-order O        sequential | round-robin\n"
         "  --help                this text\n";
}

std::string bench_help(const std::string& name) {
  const std::string repeat = "  --repeat R            timed repetitions after one warm-up (default 3)\n";
  const std::string rest =
      "  --ranks-per-node R    virtual nodes of R ranks (default: real nodes)\n"
      "  --rank-order O        sequential | round-robin: ranks onto virtual nodes\n"
      "  --json PATH           write the JSON result document (rank 0; - for stdout)\n"
      "  --help                this text\n"
      "\n";
  const std::string sizes =
      "Sizes are bytes, optionally with a suffix: kB, MB, GB (10^3, 10^6, 10^9) or\n"
      "KiB, MiB, GiB. ";
  const std::string times = "Times are the maximum over ranks, reported as min / median / max.\n";
  if (const bench::Benchmark* b = bench::find_benchmark(name)) {
    bool takes_bytes = false;
    for (const auto& opt : b->options) takes_bytes = takes_bytes || opt.bytes;
    // A benchmark that runs threads says how in its notes (options_help).
    return "usage: hympi bench " + b->name + " [options]\n\n" + b->description + "\n\n" +
           bench::options_help(*b) + repeat + rest + (takes_bytes ? sizes : "") + times;
  }
  const std::string common =
      repeat + "  --threads N           threads per rank (pack and overlap only)\n" + rest + sizes + times;
  std::string s =
      "usage: hympi bench <benchmark> [options]\n"
      "\n"
      "Communication benchmarks (SYSTEM.md, \"Benchmarks\"); hympi bench <benchmark> --help\n"
      "shows a benchmark's options.\n"
      "\n"
      "benchmarks:\n";
  for (const auto& b : bench::benchmark_registry()) {
    std::string pad(b.name.size() < 11 ? 11 - b.name.size() : 1, ' ');
    s += "  " + b.name + pad + b.description + "\n";
  }
  return s + "\ncommon options:\n" + common;
}

using ValueHandler = std::function<void(const std::string&)>;
// The options a command accepts: value-taking ones handled by a function of
// their value, flags by a function of nothing.
struct Handlers {
  std::map<std::string, ValueHandler> with_value;
  std::map<std::string, std::function<void()>> flags;
};

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

constexpr long long kBig = 1LL << 30;
constexpr long long kMaxThreads = 1024;

// The help of a benchmark that does not exist is an error, not the general
// bench help with exit 0 ('hympi bench beff2 --help' is a typo to point out).
// True when it refused (one error added).
bool refuse_unknown_benchmark(Options& o) {
  if (o.command != Command::Bench || o.bench.name.empty() || bench::find_benchmark(o.bench.name))
    return false;
  o.errors.push_back("unknown benchmark '" + o.bench.name + "' (valid: " + bench::benchmark_names() + ")");
  return true;
}

// The command (args[0]) and its help text; false when there is nothing more
// to parse (no command, --help, unknown command).
bool pick_command(const std::vector<std::string>& args, Options& o) {
  if (args.empty()) {
    o.errors.push_back("no command given\n" + main_usage());
    return false;
  }
  const std::string& cmd = args[0];
  const bool asks_help = cmd == "--help" || cmd == "-h" || cmd == "help";
  const bool asks_version = cmd == "--version" || cmd == "-V" || cmd == "version";
  if ((asks_help || asks_version) && args.size() > 1) {
    // 'hympi help solve' is 'hympi solve --help' ('hympi help bench beff'
    // that benchmark's); anything else after them was meant for something
    // and would be dropped without a word.
    const bool command = args[1] == "solve" || args[1] == "info" || args[1] == "bench";
    if (asks_help && command && (args.size() == 2 || (args.size() == 3 && args[1] == "bench"))) {
      pick_command({args.begin() + 1, args.end()}, o);  // the command and its help text
      o.help = !refuse_unknown_benchmark(o);
      return false;
    }
    std::string got;
    for (std::size_t i = 1; i < args.size(); ++i) got += (i > 1 ? " " : "") + args[i];
    if (asks_help)
      o.errors.push_back("'" + cmd + "' takes at most a command (hympi help solve|info|bench "
                         "[BENCHMARK]); got '" + got + "'");
    else
      o.errors.push_back("'" + cmd + "' takes no arguments (got '" + got +
                         "'); for a command's options: hympi <command> --help");
    return false;
  }
  if (asks_help) {
    o.help = true;
    o.help_text = main_usage();
    return false;
  }
  if (asks_version) {
    o.help = true;
    o.help_text = version_text();
    return false;
  }
  if (cmd == "solve") {
    o.command = Command::Solve;
    o.help_text = solve_help();
  } else if (cmd == "info") {
    o.command = Command::Info;
    o.help_text = info_help();
  } else if (cmd == "bench") {
    o.command = Command::Bench;
    if (args.size() > 1 && args[1].rfind("-", 0) != 0) o.bench.name = args[1];
    o.help_text = bench_help(o.bench.name);
  } else {
    o.errors.push_back("unknown command '" + cmd + "' (valid: solve, info, bench)");
    return false;
  }
  return true;
}

// Options of every command: threads, virtual nodes, --help.
void add_common(Options& o, Handlers& h) {
  auto& e = o.errors;
  auto& s = o.solve;
  h.with_value["--threads"] = [&](const std::string& v) { int_opt(e, "--threads", 1, kMaxThreads, "threads", v, s.threads); };
  h.with_value["--ranks-per-node"] = [&](const std::string& v) {
    int_opt(e, "--ranks-per-node", 1, kBig, "ranks", v, s.ranks_per_node);
  };
  h.with_value["--rank-order"] = [&](const std::string& v) {
    if (v == "sequential")
      s.rank_order = RankOrder::Sequential;
    else if (v == "round-robin")
      s.rank_order = RankOrder::RoundRobin;
    else
      e.push_back("--rank-order '" + v + "': expected sequential or round-robin");
  };
  h.flags["--help"] = [&] { o.help = true; };
}

// A grid option: NXxNYxNZ or N^3 (a process grid: PXxPYxPZ or P^3).
ValueHandler grid_opt(std::vector<std::string>& e, const std::string& name, std::array<int, 3>& out,
                      bool* seen = nullptr, GridKind kind = GridKind::Points) {
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

// What the solve handlers saw (the required options).
struct SolveSeen {
  bool kernel = false, grid = false;
  bool kernel_known = false;  // --kernel named a registered kernel
};

// The problem: kernel, grid, iterations, boundaries, format, cg's limits.
void add_solve_problem(Options& o, Handlers& h, SolveSeen& seen) {
  auto& e = o.errors;
  auto& s = o.solve;
  h.with_value["--kernel"] = [&](const std::string& v) {
    seen.kernel = true;
    const KernelInfo* k = find_kernel(v);
    if (!k)
      e.push_back("unknown kernel '" + v + "' (valid: " + names_of_kernels() + ")");
    else
      s.kernel = k->kind;
    seen.kernel_known = k != nullptr;
  };
  h.with_value["--grid"] = grid_opt(e, "--grid", s.grid, &seen.grid);
  h.with_value["--iters"] = [&](const std::string& v) { int_opt(e, "--iters", 0, kBig, "iterations", v, s.iters); };
  h.with_value["--halo-depth"] = [&](const std::string& v) { int_opt(e, "--halo-depth", 1, 64, "layers", v, s.halo_depth); };
  h.with_value["--stores"] = [&](const std::string& v) {
    if (v == "auto")
      s.stores = StoresChoice::Auto;
    else if (v == "cached")
      s.stores = StoresChoice::Cached;
    else if (v == "streaming")
      s.stores = StoresChoice::Streaming;
    else
      e.push_back("--stores '" + v + "': expected auto, cached or streaming");
  };
  h.with_value["--format"] = [&](const std::string& v) {
    if (v == "stencil")
      s.format = MatrixFormat::Stencil;
    else if (v == "crs")
      s.format = MatrixFormat::Crs;
    else if (v == "sell")
      s.format = MatrixFormat::Sell;
    else
      e.push_back("--format '" + v + "': expected stencil, crs or sell");
  };
  h.with_value["--tol"] = [&](const std::string& v) {
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
  };
  h.with_value["--max-iters"] = [&](const std::string& v) { int_opt(e, "--max-iters", 1, kBig, "iterations", v, s.max_iters); };
  h.flags["--periodic"] = [&] { s.periodic = true; };
}

// How it runs and what it writes: scheme, threads, process grid, output.
void add_solve_run(Options& o, Handlers& h) {
  auto& e = o.errors;
  auto& s = o.solve;
  // Resolved here, once; an unknown name is reported with the other
  // problems of the config (main's command_errors), not as a parse error.
  h.with_value["--scheme"] = [&](const std::string& v) {
    s.scheme = find_scheme(v);
    o.unknown_scheme = s.scheme ? "" : v;
  };
  h.with_value["--reserved"] = [&](const std::string& v) {
    int_opt(e, "--reserved", 1, kMaxThreads - 1, "threads", v, s.reserved);
  };
  h.with_value["--proc-grid"] = grid_opt(e, "--proc-grid", s.proc_grid, nullptr, GridKind::Processes);
  h.with_value["--repeat"] = [&](const std::string& v) { int_opt(e, "--repeat", 1, 100000, "repetitions", v, s.repeat); };
  h.with_value["--json"] = [&](const std::string& v) {
    if (v.empty()) e.push_back("--json '': empty path (- writes to stdout)");
    o.json_path = v;
  };
  h.with_value["--trace"] = [&](const std::string& v) {
    if (v.empty()) e.push_back("--trace '': empty path (- writes to stdout)");
    o.trace_path = v;
    s.trace = true;
  };
  h.with_value["--thread-level"] = [&](const std::string& v) {
    if (thread_level_from_name(v) < 0)
      e.push_back("--thread-level '" + v + "': expected single, funneled, serialized or multiple");
    else
      o.thread_level = v;
  };
}

// The common bench options, then the named benchmark's own (from its table,
// starting from its defaults).
void add_bench(Options& o, Handlers& h) {
  auto& e = o.errors;
  h.with_value["--repeat"] = [&](const std::string& v) { int_opt(e, "--repeat", 1, 100000, "repetitions", v, o.bench.repeat); };
  h.with_value["--json"] = [&](const std::string& v) {
    if (v.empty()) e.push_back("--json '': empty path (- writes to stdout)");
    o.json_path = v;
  };
  const bench::Benchmark* b = bench::find_benchmark(o.bench.name);
  if (!b) return;
  o.bench.args = bench::default_args(*b);
  for (const auto& opt : b->options)
    h.with_value[opt.name] = [&o, &opt](const std::string& v) {
      const std::string why = opt.parse(v, o.bench.args.values[opt.name]);
      if (!why.empty()) o.errors.push_back(why);
    };
}

// Walks the arguments from `first` on, calling the handlers; collects every
// unknown or malformed option. `--name=value` is accepted for every option.
void scan(const std::vector<std::string>& args, std::size_t first, Options& o, const Handlers& h) {
  auto& e = o.errors;
  const std::string& cmd = args[0];
  for (std::size_t i = first; i < args.size(); ++i) {
    std::string a = args[i];
    std::string value;
    bool inline_value = false;
    auto eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      inline_value = true;
    }
    if (o.command == Command::Info && a == "--json") {
      // Optional value: a following word that is not an option is the path.
      if (inline_value && value.empty())
        e.push_back("--json= has an empty path (--json alone or --json - writes to stdout)");
      else if (inline_value)
        o.json_path = value;
      else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
        o.json_path = args[++i];
        if (o.json_path.empty()) e.push_back("--json '': empty path (--json alone or --json - writes to stdout)");
      }
      else
        o.json_stdout = true;
      continue;
    }
    if (auto f = h.flags.find(a); f != h.flags.end()) {
      if (inline_value)
        e.push_back(a + " takes no value");
      else
        f->second();
      o.given.insert(a);
      continue;
    }
    auto v = h.with_value.find(a);
    if (v == h.with_value.end()) {
      e.push_back("unknown option '" + args[i] + "' for 'hympi " + cmd + "' (see hympi " + cmd + " --help)");
      // Its value, if it has one, is not a second unknown option.
      if (!inline_value && i + 1 < args.size() && args[i + 1].rfind("-", 0) != 0) ++i;
      continue;
    }
    o.given.insert(a);
    if (!inline_value) {
      if (i + 1 >= args.size()) {
        e.push_back(a + " needs a value");
        continue;
      }
      value = args[++i];
    }
    v->second(value);
  }
}

// What must be there once every option is read.
void check_required(Options& o, const SolveSeen& seen) {
  auto& e = o.errors;
  if (o.command == Command::Bench) {
    if (o.bench.name.empty())
      e.push_back("missing benchmark name (valid: " + bench::benchmark_names() + ")");
    else if (!bench::find_benchmark(o.bench.name))
      e.push_back("unknown benchmark '" + o.bench.name + "' (valid: " + bench::benchmark_names() + ")");
  }
  if (o.command == Command::Solve) {
    if (!seen.kernel) e.push_back("missing --kernel (valid: " + names_of_kernels() + ")");
    if (!seen.grid) e.push_back("missing --grid NXxNYxNZ");
  }
}

// Options that were given but mean nothing for the chosen kernel or
// benchmark: an error, never silently ignored (one rule for every command).
void check_applicable(Options& o, const SolveSeen& seen) {
  auto& e = o.errors;
  auto given = [&](const char* name) { return o.given.count(name) > 0; };
  if (given("--rank-order") && !given("--ranks-per-node"))
    e.push_back("--rank-order applies only with --ranks-per-node (it orders ranks onto virtual nodes)");
  if (o.command == Command::Solve && seen.kernel_known) {
    const KernelInfo& k = kernel_info(o.solve.kernel);
    if (k.converges && given("--iters"))
      e.push_back("--iters does not apply to " + k.name +
                  " (it iterates until --tol is reached or --max-iters is hit)");
    for (const char* name : {"--tol", "--max-iters"})
      if (!k.converges && given(name))
        e.push_back(std::string(name) + " does not apply to " + k.name + " (only to cg; " + k.name +
                    " runs --iters iterations)");
    if (given("--format") && !k.supports(MatrixFormat::Crs)) {
      std::string names;
      for (const auto& other : kernel_registry())
        if (other.supports(MatrixFormat::Crs)) names += (names.empty() ? "" : ", ") + other.name;
      e.push_back("--format does not apply to " + k.name + " (only to " + names + ")");
    }
  }
  if (o.command == Command::Bench && given("--threads"))
    if (const bench::Benchmark* b = bench::find_benchmark(o.bench.name); b && !b->uses_threads)
      e.push_back("--threads does not apply to benchmark '" + b->name +
                  "' (it runs one thread per rank; threads matter to pack and overlap)");
}

}  // namespace

int threads_from_environment(std::string* warning) {
  const char* env = std::getenv("OMP_NUM_THREADS");
  if (!env || !*env) return 1;
  // OpenMP's syntax: a list of counts, one per nesting level, the first for
  // the outermost (ours); blanks around a number are allowed.
  std::string first(env);
  first = first.substr(0, first.find(','));
  const auto blank = [](char ch) { return ch == ' ' || ch == '\t'; };
  while (!first.empty() && blank(first.back())) first.pop_back();
  std::size_t lead = 0;
  while (lead < first.size() && blank(first[lead])) ++lead;
  long long v = 0;
  if (parse_int(first.substr(lead), 1, 1024, v)) return static_cast<int>(v);
  if (warning)
    *warning = std::string("OMP_NUM_THREADS='") + env +
               "' is not a thread count (1-1024); using 1 thread per rank (--threads N sets it)";
  return 1;
}

Options parse(const std::vector<std::string>& args) { return parse(args, threads_from_environment()); }

Options parse(const std::vector<std::string>& args, int default_threads) {
  Options o;
  o.solve.threads = default_threads;
  if (!pick_command(args, o)) return o;
  Handlers h;
  SolveSeen seen;
  add_common(o, h);
  if (o.command == Command::Solve) {
    add_solve_problem(o, h, seen);
    add_solve_run(o, h);
  }
  if (o.command == Command::Bench) add_bench(o, h);
  scan(args, o.command == Command::Bench && !o.bench.name.empty() ? 2 : 1, o, h);
  if (o.help) {
    o.errors.clear();
    o.help = !refuse_unknown_benchmark(o);
    return o;
  }
  check_required(o, seen);
  check_applicable(o, seen);
  return o;
}

}  // namespace hympi::cli
