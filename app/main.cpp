// hympi: the command-line front end. Rank 0 parses and validates, then
// broadcasts either the options or the one message that says what is wrong;
// every rank then exits with the same code, so no rank is left waiting.
#include <mpi.h>
#include <omp.h>
#include <unistd.h>

#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "context.hpp"
#include "hympi/error.hpp"
#include "hympi/kernels.hpp"
#include "hympi/scheme.hpp"
#include "hympi/solver.hpp"
#include "options.hpp"
#include "output.hpp"
#include "trace.hpp"

namespace {

using namespace hympi;
using namespace hympi::cli;

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;

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

// Rank 0's verdict, broadcast to all: a status and either options or text.
struct Verdict {
  int status = kExitOk;  // kExitOk: run; kExitUsage: error; -1: help printed
  std::string payload;   // options as JSON, or the message
};

void broadcast_string(std::string& s, MPI_Comm comm) {
  int len = static_cast<int>(s.size());
  HYMPI_CHECK_MPI(MPI_Bcast(&len, 1, MPI_INT, 0, comm));
  s.resize(static_cast<std::size_t>(len));
  HYMPI_CHECK_MPI(MPI_Bcast(s.data(), len, MPI_CHAR, 0, comm));
}

Verdict judge(const std::vector<std::string>& args, int size, int provided, const NodeMap& real) {
  Options o = parse(args);
  Verdict v;
  if (o.help) {
    std::cout << o.help_text << std::flush;
    v.status = -1;
    return v;
  }
  std::vector<std::string> errors = o.errors;
  if (o.command == Command::Solve && errors.empty()) {
    for (auto& e : validate_config(o.solve, size, &real, node_memory_bytes())) errors.push_back(e);
    if (const SchemeEntry* s = find_scheme(o.solve.scheme); s && provided < s->info.thread_level) {
      errors.push_back("scheme '" + s->info.name + "' needs " + thread_level_name(s->info.thread_level) +
                       ", but the MPI library provided " + thread_level_name(provided) +
                       " (requested " + thread_level_name(requested_thread_level(o)) + ")");
    }
  }
  if (o.command == Command::Bench && errors.empty()) {
    for (auto& e : bench::validate(o.bench, size, o.solve.ranks_per_node, o.solve.threads, provided,
                                   real, node_memory_bytes()))
      errors.push_back(e);
  }
  if (o.command == Command::Info && (o.solve.threads < 1 || o.solve.threads > 1024))
    errors.push_back("--threads must be between 1 and 1024");
  if (o.command == Command::Info && o.solve.ranks_per_node > 0 && size % o.solve.ranks_per_node)
    errors.push_back("--ranks-per-node " + std::to_string(o.solve.ranks_per_node) +
                     " does not divide the " + std::to_string(size) + " ranks");
  if (!o.json_path.empty()) {
    std::string why;
    if (!check_writable(o.json_path, why)) errors.push_back("--json '" + o.json_path + "': " + why);
  }
  if (o.solve.trace) {
    std::string why;
    if (!check_writable(o.trace_path, why))
      errors.push_back("--trace '" + o.trace_path + "': " + why);
    if (!o.json_path.empty() && o.trace_path == o.json_path)
      errors.push_back("--trace and --json name the same file '" + o.trace_path + "'");
  }
  if (!errors.empty()) {
    v.status = kExitUsage;
    v.payload = join_errors(errors);
    return v;
  }
  v.payload = to_json(o).dump();
  return v;
}

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

int run_info(const Options& o, int requested, int provided, const std::string& cmd) {
  const NodeMap nodes = discover_nodes(MPI_COMM_WORLD, o.solve.ranks_per_node, o.solve.rank_order);
  nlohmann::json ctx = make_context(MPI_COMM_WORLD, requested, provided, o.solve.threads, nodes, cmd);
  int rank = 0;
  HYMPI_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  if (rank != 0) return kExitOk;
  nlohmann::json schemes = nlohmann::json::array();
  for (const auto& e : scheme_registry())
    schemes.push_back({{"name", e.info.name},
                       {"class", e.info.seed_class},
                       {"description", e.info.description},
                       {"mpi_thread_level", thread_level_name(e.info.thread_level)},
                       {"available", provided >= e.info.thread_level},
                       {"overlap", e.info.overlap},
                       {"takes_reserved", e.info.takes_reserved},
                       {"min_threads", e.info.min_threads}});
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : kernel_registry())
    kernels.push_back({{"name", k.name},
                       {"description", k.description},
                       {"sweeps_per_iteration", k.sweeps_per_iteration},
                       {"flops_per_point", k.flops_per_point},
                       {"bytes_per_point", k.bytes_per_point},
                       {"bytes_per_point_crs", k.bytes_per_point_crs}});
  nlohmann::json doc = {{"context", ctx}, {"schemes", schemes}, {"kernels", kernels}};
  if (!o.json_path.empty()) {
    write_document(o.json_path, doc);
  } else if (o.json_stdout) {
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << "# hympi " << ctx["hympi_version"].get<std::string>() << " ("
              << ctx["git_revision"].get<std::string>() << ")\n"
              << "MPI library      " << ctx["mpi_library"].get<std::string>() << "\n"
              << "MPI standard     " << ctx["mpi_version"].get<std::string>() << "\n"
              << "thread level     requested " << thread_level_name(requested) << ", provided "
              << thread_level_name(provided) << "\n"
              << "# schemes\n";
    for (const auto& s : schemes)
      std::cout << "  " << std::left << std::setw(20) << s["name"].get<std::string>() << std::setw(8)
                << s["class"].get<std::string>() << std::setw(22)
                << s["mpi_thread_level"].get<std::string>() << (s["overlap"] ? "overlap   " : "no overlap")
                << (s["takes_reserved"] ? "  --reserved" : "") << "\n";
    std::cout << "# kernels\n";
    for (const auto& k : kernels)
      std::cout << "  " << std::left << std::setw(8) << k["name"].get<std::string>()
                << k["description"].get<std::string>() << "\n";
    std::cout << "# nodes: " << nodes.node_count << " " << (nodes.virtual_nodes ? "virtual" : "real") << "\n";
    const auto& cpus = ctx["thread_cpus"];
    const auto& aff = ctx["thread_affinity"];
    for (std::size_t r = 0; r < nodes.node_of_rank.size(); ++r) {
      const int n = nodes.node_of_rank[r];
      std::cout << "  rank " << r << "  node " << n << " (" << nodes.host_of_node[n] << ")  cpus";
      for (std::size_t t = 0; t < cpus[r].size(); ++t)
        std::cout << "  t" << t << ":" << cpus[r][t].get<int>() << " [" << aff[r][t].get<std::string>() << "]";
      std::cout << "\n";
    }
  }
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
  if (rank != 0) return kExitOk;
  print_solve(std::cout, r, size);
  if (o.solve.trace) {
    std::size_t events = 0;
    write_document(o.trace_path, trace_document(r, ctx, &events));
    std::cout << "trace      " << o.trace_path << " (" << events << " events, median repetition)\n";
  }
  std::cout << std::flush;
  if (!o.json_path.empty()) {
    nlohmann::json doc = {{"context", ctx}, {"results", nlohmann::json::array({solve_record(r)})}};
    write_document(o.json_path, doc);
  }
  return kExitOk;
}

int run_bench(const Options& o, int requested, int provided, const std::string& cmd) {
  bench::BenchContext ctx;
  ctx.comm = MPI_COMM_WORLD;
  ctx.threads = o.solve.threads;
  ctx.provided = provided;
  ctx.ranks_per_node = o.solve.ranks_per_node;
  ctx.rank_order = o.solve.rank_order;
  ctx.opt = o.bench;
  return bench::run_benchmark(ctx, requested, o.json_path, cmd);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // The thread level must be chosen before MPI starts, so every process reads
  // the scheme from its own arguments (they are identical); the full
  // validation happens on rank 0 after MPI_Init_thread.
  const Options early = parse(args);
  const int requested = requested_thread_level(early);
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
    if (rank == 0) v = judge(args, size, provided, real);
    HYMPI_CHECK_MPI(MPI_Bcast(&v.status, 1, MPI_INT, 0, MPI_COMM_WORLD));
    broadcast_string(v.payload, MPI_COMM_WORLD);
    if (v.status == kExitUsage) {
      if (rank == 0) std::cerr << v.payload << std::endl;
      code = kExitUsage;
    } else if (v.status == kExitOk) {
      const Options o = from_json(nlohmann::json::parse(v.payload));
      const std::string cmd = command_line(argc, argv);
      code = o.command == Command::Info    ? run_info(o, requested, provided, cmd)
             : o.command == Command::Bench ? run_bench(o, requested, provided, cmd)
                                           : run_solve(o, requested, provided, cmd);
    }
  } catch (const std::exception& e) {
    // A failure on one rank after validation: say where, and take every rank
    // down with it rather than leave the others waiting in a collective.
    std::cerr << "hympi: error on rank " << rank << ": " << e.what() << std::endl;
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
  MPI_Finalize();
  return code;
}
