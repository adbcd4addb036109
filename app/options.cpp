#include "options.hpp"

#include "option_table.hpp"

#include <mpi.h>

#include <cstdlib>
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
         "hympi <command> --help shows the options of a command; hympi --version the version.\n"
         "\n"
         "exit codes: 0 done, 1 a run failed after it started, 2 bad input (nothing ran),\n"
         "3 cg did not converge (results written), 4 a result file or standard output could\n"
         "not be written (docs/exit-codes.md).\n";
}

namespace {

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

// The rows of the command's table by flag (a later row of the same flag
// wins, as a benchmark's own option would).
using RowsByFlag = std::map<std::string, const OptionRow*>;

RowsByFlag by_flag(const std::vector<OptionRow>& rows) {
  RowsByFlag m;
  for (const auto& r : rows) m[r.flag] = &r;
  return m;
}

// An option with an optional value (info --json): a following word that is
// not an option is the path. Returns the index of the last word it took.
std::size_t optional_json(const std::vector<std::string>& args, std::size_t i, bool inline_value,
                          const std::string& value, Options& o) {
  auto& e = o.errors;
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
  return i;
}

// Walks the arguments from `first` on, calling the handlers; collects every
// unknown or malformed option. `--name=value` is accepted for every option.
void scan(const std::vector<std::string>& args, std::size_t first, Options& o, const RowsByFlag& h) {
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
    const auto found = h.find(a);
    if (found == h.end()) {
      e.push_back("unknown option '" + args[i] + "' for 'hympi " + cmd + "' (see hympi " + cmd + " --help)");
      // Its value, if it has one, is not a second unknown option.
      if (!inline_value && i + 1 < args.size() && args[i + 1].rfind("-", 0) != 0) ++i;
      continue;
    }
    const OptionRow& row = *found->second;
    if (row.optional_value) {
      i = optional_json(args, i, inline_value, value, o);
      continue;
    }
    if (row.on) {
      if (inline_value)
        e.push_back(a + " takes no value");
      else
        row.on();
      o.given.insert(a);
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
    row.set(value);
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
    std::string converging;
    for (const auto& other : kernel_registry())
      if (other.converges) converging += (converging.empty() ? "" : ", ") + other.name;
    for (const char* name : {"--tol", "--max-iters"})
      if (!k.converges && given(name))
        e.push_back(std::string(name) + " does not apply to " + k.name + " (only to " + converging +
                    "; " + k.name + " runs --iters iterations)");
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
               "' is not a thread count (accepted 1 .. 1024); using 1 thread per rank (--threads N sets it)";
  return 1;
}

Options parse(const std::vector<std::string>& args) { return parse(args, threads_from_environment()); }

Options parse(const std::vector<std::string>& args, int default_threads) {
  Options o;
  o.solve.threads = default_threads;
  if (!pick_command(args, o)) return o;
  SolveSeen seen;
  const std::vector<OptionRow> rows = o.command == Command::Solve ? solve_options(o, seen)
                                      : o.command == Command::Info ? info_options(o)
                                                                   : bench_options(o, false);
  scan(args, o.command == Command::Bench && !o.bench.name.empty() ? 2 : 1, o, by_flag(rows));
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
