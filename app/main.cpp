// hympi: the command-line front end. Every process parses its own command
// line once (the thread level must be known before MPI starts); rank 0
// validates its parse, then broadcasts either its invocation (every rank
// runs rank 0's: a rank whose own invocation is the same keeps its parse)
// or the one message that says what is wrong; every rank then exits with
// the same code, so no rank is left waiting.
#include <mpi.h>
#include <omp.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "hympi/context_json.hpp"
#include "hympi/error.hpp"
#include "hympi/scheme.hpp"
#include "hympi/solver.hpp"
#include "options.hpp"
#include "output.hpp"
#include "trace.hpp"

namespace {

using namespace hympi;
using namespace hympi::cli;

// Exit codes (README, "Exit codes"): the same on every rank.
constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;         // bad input: nothing ran
constexpr int kExitNotConverged = 3;  // cg stopped at --max-iters above --tol (results written)
constexpr int kExitOutput = 4;        // a result file could not be written (earlier file kept)
// 1: a run failed (a benchmark's own check, an MPI error, a rank that died).

double node_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

std::string join_errors(const std::vector<std::string>& errors) {
  std::string s = errors.size() == 1 ? "hympi: error: " : "hympi: errors:\n";
  for (std::size_t i = 0; i < errors.size(); ++i)
    s += (errors.size() == 1 ? "" : "  - ") + errors[i] + (i + 1 < errors.size() ? "\n" : "");
  return s;
}

// Rank 0's verdict, broadcast to all: a status and either arguments or text.
struct Verdict {
  int status = kExitOk;  // kExitOk: run; kExitUsage: error; -1: help printed
  std::string payload;   // rank 0's invocation (see invocation_text), or the message
};

// What a process's command line is: its arguments and the default thread
// count ($OMP_NUM_THREADS), all that parse() depends on. Parsed once per
// process, before MPI starts, because the thread level to ask for depends
// on the scheme.
struct Invocation {
  std::vector<std::string> args;
  int default_threads = 1;
  std::string env_warning;  // why $OMP_NUM_THREADS was not used ("" if it was)
  Options options;          // parse(args, default_threads)
};

Invocation parse_command_line(int argc, char** argv) {
  Invocation inv;
  inv.args.assign(argv + 1, argv + argc);
  inv.default_threads = threads_from_environment(&inv.env_warning);
  inv.options = parse(inv.args, inv.default_threads);
  return inv;
}

std::string invocation_text(const Invocation& inv) {
  return nlohmann::json{{"args", inv.args}, {"default_threads", inv.default_threads}}.dump();
}

// What runs: rank 0's options. A process whose own invocation is rank 0's
// (the usual case under a launcher) keeps its parse; another one parses
// rank 0's arguments, so that every rank runs the same.
Options options_of_run(const std::string& rank0_text, Invocation& own) {
  if (rank0_text == invocation_text(own)) return std::move(own.options);
  const nlohmann::json j = nlohmann::json::parse(rank0_text);
  return parse(j.at("args").get<std::vector<std::string>>(), j.at("default_threads").get<int>());
}

void broadcast_string(std::string& s, MPI_Comm comm) {
  int len = static_cast<int>(s.size());
  HYMPI_CHECK_MPI(MPI_Bcast(&len, 1, MPI_INT, 0, comm));
  s.resize(static_cast<std::size_t>(len));
  HYMPI_CHECK_MPI(MPI_Bcast(s.data(), len, MPI_CHAR, 0, comm));
}

std::vector<std::string> command_errors(const Options& o, int size, int provided, const NodeMap& real) {
  std::vector<std::string> errors;
  if (o.command == Command::Solve) {
    if (!o.solve.scheme) errors.push_back(unknown_scheme_message(o.unknown_scheme));
    for (const auto& e : validate_config(o.solve, size, &real, node_memory_bytes()))
      errors.push_back(name_parameters(e));
    if (const SchemeEntry* s = o.solve.scheme; s && provided < s->info.thread_level) {
      errors.push_back("scheme '" + s->info.name + "' needs " + thread_level_name(s->info.thread_level) +
                       ", but the MPI library provided " + thread_level_name(provided) +
                       " (requested " + thread_level_name(requested_thread_level(o)) + ")");
    }
  }
  if (o.command == Command::Bench) {
    bench::RunShape shape;
    shape.ranks = size;
    shape.ranks_per_node = o.solve.ranks_per_node;
    shape.threads = o.solve.threads;
    shape.provided = provided;
    shape.real_nodes = &real;
    shape.node_memory_bytes = node_memory_bytes();
    errors = bench::validate(o.bench, shape);
  }
  if (o.command == Command::Info)
    errors = check_threads_and_nodes(o.solve.threads, o.solve.ranks_per_node, size);
  return errors;
}

std::vector<std::string> output_errors(const Options& o) {
  std::vector<std::string> errors;
  std::string why;
  if (!o.json_path.empty() && !check_writable(o.json_path, why))
    errors.push_back("--json '" + o.json_path + "': " + why);
  if (o.solve.trace) {
    if (!check_writable(o.trace_path, why)) errors.push_back("--trace '" + o.trace_path + "': " + why);
    if (!o.json_path.empty() && o.trace_path == o.json_path)
      errors.push_back(o.trace_path == "-" ? std::string("--trace and --json cannot both be stdout ('-')")
                                           : "--trace and --json name the same file '" + o.trace_path + "'");
  }
  return errors;
}

// Rank 0: validate everything parsed, say what is wrong all at once.
Verdict judge(const Invocation& inv, int size, int provided, const NodeMap& real) {
  const Options& o = inv.options;
  Verdict v;
  if (o.help) {
    std::cout << o.help_text << std::flush;
    v.status = -1;
    return v;
  }
  // Only where the default matters: --threads given overrides it.
  if (!inv.env_warning.empty() && !o.given.count("--threads"))
    std::cerr << "hympi: warning: " << inv.env_warning << std::endl;
  std::vector<std::string> errors = o.errors;
  if (errors.empty() || o.command == Command::Info)
    for (auto& e : command_errors(o, size, provided, real)) errors.push_back(e);
  else if (o.command == Command::Solve && !o.solve.scheme)
    errors.push_back(unknown_scheme_message(o.unknown_scheme));  // with the other parse errors
  for (auto& e : output_errors(o)) errors.push_back(e);
  if (!errors.empty()) {
    v.status = kExitUsage;
    v.payload = join_errors(errors);
    return v;
  }
  v.payload = invocation_text(inv);
  return v;
}

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

// Threads per rank of the run: a benchmark that runs no threads runs one.
int threads_of_run(const Options& o) {
  if (o.command != Command::Bench) return o.solve.threads;
  const bench::Benchmark* b = bench::find_benchmark(o.bench.name);
  return b && b->uses_threads ? o.solve.threads : 1;
}

// Collective: one line on rank 0's stderr when a host runs more threads
// than it has CPUs for them (the context block records it too).
void warn_if_oversubscribed(const Options& o) {
  const int threads = threads_of_run(o);
  const ThreadPlacement p = gather_thread_placement(MPI_COMM_WORLD, threads);
  if (const std::string w = oversubscription_warning(p); !w.empty()) std::cerr << w << std::endl;
}

int run_info(const Options& o, int requested, int provided, const std::string& cmd) {
  const NodeMap nodes = discover_nodes(MPI_COMM_WORLD, o.solve.ranks_per_node, o.solve.rank_order);
  nlohmann::json ctx = make_context(MPI_COMM_WORLD, requested, provided, o.solve.threads, nodes, cmd);
  int rank = 0;
  HYMPI_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  if (rank != 0) return kExitOk;
  const nlohmann::json doc = info_document(ctx, provided);
  if (!o.json_path.empty() || o.json_stdout)
    write_document(o.json_stdout ? "-" : o.json_path, doc);
  else
    print_info(std::cout, doc, nodes, requested, provided);
  return kExitOk;
}

int run_solve(const Options& o, int requested, int provided, const std::string& cmd) {
  int rank = 0, size = 0;
  HYMPI_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  HYMPI_CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  const SolveResult r = solve(MPI_COMM_WORLD, o.solve);
  nlohmann::json ctx;
  if (!o.json_path.empty() || o.solve.trace)
    ctx = make_context(MPI_COMM_WORLD, requested, provided, o.solve.threads, r.nodes, cmd);
  const int code = r.converged ? kExitOk : kExitNotConverged;
  if (rank != 0) return code;
  // A document on stdout (--json - or --trace -) leaves stdout to it alone.
  std::ostream& table = o.json_path == "-" || o.trace_path == "-" ? std::cerr : std::cout;
  print_solve(table, r, size);
  table << std::flush;
  // The JSON first: it holds the results; the trace is the extra.
  if (!o.json_path.empty()) {
    nlohmann::json doc = {{"context", ctx}, {"results", nlohmann::json::array({solve_record(r)})}};
    write_document(o.json_path, doc);
  }
  if (o.solve.trace) {
    std::size_t events = 0;
    write_document(o.trace_path, trace_document(r, ctx, &events));
    table << "trace      " << o.trace_path << " (" << events << " events, median repetition)\n"
          << std::flush;
  }
  if (!r.converged)
    std::cerr << "hympi: error: " << kernel_name(o.solve.kernel) << " did not converge: residual "
              << r.residual << " after " << r.iterations << " iterations ("
              << (r.iterations < o.solve.max_iters
                      ? std::string("stagnated: its true residual stopped falling")
                      : "--max-iters " + std::to_string(o.solve.max_iters))
              << "), above --tol " << o.solve.tol << "; results were written, exit code "
              << kExitNotConverged << std::endl;
  return code;
}

int run_bench(const Options& o, int requested, int provided, const std::string& cmd) {
  bench::BenchContext ctx;
  ctx.comm = MPI_COMM_WORLD;
  ctx.threads = threads_of_run(o);
  ctx.provided = provided;
  ctx.ranks_per_node = o.solve.ranks_per_node;
  ctx.rank_order = o.solve.rank_order;
  ctx.opt = o.bench;
  return bench::run_benchmark(ctx, requested, o.json_path, cmd);
}

}  // namespace

int main(int argc, char** argv) {
  // The thread level must be chosen before MPI starts, so every process
  // parses its own arguments (they are identical) once, here; the
  // validation happens on rank 0 after MPI_Init_thread, and what runs is
  // rank 0's invocation (options_of_run).
  Invocation own = parse_command_line(argc, argv);
  const int requested = requested_thread_level(own.options);
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(&argc, &argv, requested, &provided) != MPI_SUCCESS) {
    std::cerr << "hympi: error: MPI_Init_thread failed\n";
    return 1;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int code = kExitOk;
  try {
    // Real nodes are needed to validate the grid against the process grid.
    const NodeMap real = discover_nodes(MPI_COMM_WORLD, 0, RankOrder::Sequential);
    Verdict v;
    if (rank == 0) v = judge(own, size, provided, real);
    HYMPI_CHECK_MPI(MPI_Bcast(&v.status, 1, MPI_INT, 0, MPI_COMM_WORLD));
    broadcast_string(v.payload, MPI_COMM_WORLD);
    if (v.status == kExitUsage) {
      if (rank == 0) std::cerr << v.payload << std::endl;
      code = kExitUsage;
    } else if (v.status == kExitOk) {
      const Options o = options_of_run(v.payload, own);
      const std::string cmd = command_line(argc, argv);
      warn_if_oversubscribed(o);
      code = o.command == Command::Info    ? run_info(o, requested, provided, cmd)
             : o.command == Command::Bench ? run_bench(o, requested, provided, cmd)
                                           : run_solve(o, requested, provided, cmd);
    }
  } catch (const OutputError& e) {
    // Only rank 0 writes, after every collective of the run: no rank waits
    // on it, so this is one line and an exit code, not an abort.
    std::cerr << "hympi: error: " << e.what() << std::endl;
    code = kExitOutput;
  } catch (const std::exception& e) {
    // A failure on one rank after validation: say where, and take every rank
    // down with it rather than leave the others waiting in a collective.
    std::cerr << "hympi: error on rank " << rank << ": " << e.what() << std::endl;
    // MPICH's Hydra kills every process on MPI_Abort and can drop output it
    // has not forwarded yet: give it a moment to carry this line out.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
  // The table (or help) on standard output that could not be written, a full
  // disk: a failure, not a silent success. Any result file was written
  // before. (Under mpirun the ranks write to mpirun, which drops a failed
  // write of its own without a word: there only --json can tell.)
  if (rank == 0) {
    errno = 0;
    std::cout.flush();
    if (!std::cout) {
      // errno names the reason when this flush failed; an earlier failed
      // flush (the solve table's) left a state but maybe no errno.
      const int err = errno;
      std::cerr << "hympi: error: cannot write to standard output: "
                << (err != 0 ? std::strerror(err) : "the write failed") << std::endl;
      if (code == kExitOk) code = kExitOutput;
    }
  }
  MPI_Finalize();
  return code;
}
