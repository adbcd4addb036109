#include "output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "commbench/bench.hpp"
#include "hympi/error.hpp"
#include "hympi/kernels.hpp"
#include "hympi/output_file.hpp"
#include "hympi/scheme.hpp"
#include "hympi/timing.hpp"

namespace hympi::cli {

nlohmann::json stats_json(const Stats& s) {
  return {{"min", s.min}, {"median", s.median}, {"max", s.max}};
}

bool is_pure_mpi(const SchemeEntry& scheme, int threads) {
  return threads == 1 && &scheme == &pure_mpi_scheme();
}

namespace {

std::string dims_text(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

const char* periodic_rule_name(PeriodicRule r) {
  switch (r) {
    case PeriodicRule::Allowed: return "allowed";
    case PeriodicRule::EvenSizes: return "even-sizes";
    case PeriodicRule::Forbidden: return "forbidden";
  }
  return "allowed";
}

// The benchmarks of `hympi bench` (app/commbench/registry.cpp), for info:
// what a study needs to plan one it has no dedicated step for.
nlohmann::json benchmarks_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& b : bench::benchmark_registry()) {
    nlohmann::json options = nlohmann::json::array();
    for (const auto& o : b.options)
      options.push_back({{"name", o.name}, {"meta", o.meta}, {"help", o.help}, {"default", o.default_text}});
    list.push_back({{"name", b.name},
                    {"description", b.description},
                    {"min_ranks", b.min_ranks},
                    {"min_nodes", b.min_nodes},
                    {"uses_threads", b.uses_threads},
                    {"mpi_thread_level", thread_level_name(b.thread_level)},
                    {"options", options}});
  }
  return list;
}

}  // namespace

nlohmann::json solve_record(const SolveResult& r) {
  const SolveConfig& c = r.config;
  const SchemeInfo& scheme = c.scheme->info;
  nlohmann::json breakdown;
  for (int p = 0; p <= kPhaseCount; ++p) {
    const char* name = p < kPhaseCount ? phase_name(static_cast<Phase>(p)) : "idle";
    nlohmann::json col = nlohmann::json::array();
    for (const auto& t : r.breakdown) col.push_back(t[p]);
    breakdown[name] = col;
  }
  nlohmann::json rec = {
      {"kind", "solve"},
      {"kernel", kernel_name(c.kernel)},
      {"format", format_name(c.format)},
      {"scheme", scheme.name},
      {"scheme_class", scheme.seed_class},
      {"pure_mpi", is_pure_mpi(*c.scheme, c.threads)},
      {"grid", c.grid},
      {"periodic", c.periodic},
      {"proc_grid", r.grid.dims},
      {"node_block", r.grid.node_block},
      {"mapping", r.grid.node_aware ? "node-aware" : "rank-order"},
      {"threads", c.threads},
      {"reserved", r.reserved_used},
      {"iters", r.iterations},
      {"halo_depth", c.halo_depth},
      {"stores", stores_name(r.stores)},
      {"stores_requested", stores_choice_name(c.stores)},
      {"exchanges", r.exchanges},
      {"tuning", {{"what", r.tuned.empty() ? "nothing" : r.tuned},
                  {"blocks", r.tuning_blocks},
                  {"seconds", r.tuning_s},
                  {"tile_rows", r.tile_rows}}},
      {"checksum", r.checksum},
      {"l2", r.l2},
      {"time_s", stats_json(r.time_s)},
      {"repeat", c.repeat},
      {"mlups", r.mlups},
      {"bytes_per_exchange",
       {{"intra_node", r.bytes_intra}, {"inter_node", r.bytes_inter}, {"zero_copy", r.bytes_zero_copy}}},
      {"messages_per_exchange", {{"intra_node", r.messages_intra}, {"inter_node", r.messages_inter}}},
      {"breakdown_s", breakdown},
      {"fractions",
       {{"f_comm", r.f_comm}, {"f_comp_non", r.f_comp_non}, {"f_comp_overlap", r.f_comp_overlap}}}};
  if (kernel_info(c.kernel).converges) {
    rec["iterations"] = r.iterations;
    rec["converged"] = r.converged;
    rec["max_iters"] = c.max_iters;
    rec["residual"] = r.residual;
    rec["tol"] = c.tol;
  }
  return rec;
}

void print_solve(std::ostream& out, const SolveResult& r, int ranks) {
  const SolveConfig& c = r.config;
  const SchemeInfo& scheme = c.scheme->info;
  out << "# hympi solve: kernel " << kernel_name(c.kernel)
      << (c.format == MatrixFormat::Crs ? " (CRS matrix)"
          : c.format == MatrixFormat::Sell ? " (SELL-8-1 matrix)" : "") << ", scheme " << scheme.name
      << " (seed 001 class " << scheme.seed_class << ")";
  if (is_pure_mpi(*c.scheme, c.threads)) out << " = pure MPI (class 1)";
  out << "\n# " << plural(ranks, "rank") << " x " << plural(c.threads, "thread");
  if (r.reserved_used) out << ", " << r.reserved_used << " reserved for communication";
  out << "; nodes: " << r.nodes.node_count << " " << (r.nodes.virtual_nodes ? "virtual" : "real")
      << "\n# grid " << dims_text(c.grid) << (c.periodic ? " periodic" : " Dirichlet")
      << ", process grid " << dims_text(r.grid.dims)
      << (r.grid.node_aware ? " node-aware, node block " + dims_text(r.grid.node_block)
                            : std::string(" in rank order"))
      << "\n";
  std::ostringstream s;
  s << std::setprecision(std::numeric_limits<double>::max_digits10);
  if (kernel_info(c.kernel).converges) {
    out << "iterations " << r.iterations << "  residual " << r.residual << "  (tol " << c.tol << ")\n";
    out << "converged  " << (r.converged ? "yes" : "NO: stopped at --max-iters " + std::to_string(c.max_iters) +
                                                        " with the residual above --tol")
        << "\n";
  }
  else
    out << "iterations " << r.iterations << "\n";
  s << "checksum   " << r.checksum << "\nl2         " << r.l2 << "\n";
  out << s.str();
  out << std::fixed << std::setprecision(6) << "time_s     min " << r.time_s.min << "  median "
      << r.time_s.median << "  max " << r.time_s.max << "  (" << plural(c.repeat, "repetition") << ")\n"
      << std::setprecision(2) << "MLUP/s     " << r.mlups << "\n"
      << "bytes/exchange  intra-node " << r.bytes_intra << "  inter-node " << r.bytes_inter
      << "  (messages " << r.messages_intra << " / " << r.messages_inter << ")";
  if (r.bytes_zero_copy > 0) out << "  zero-copy " << r.bytes_zero_copy;
  out << "\n";
  if (kernel_info(c.kernel).streaming_stores)
    out << "stores     " << stores_name(r.stores) << " (--stores " << stores_choice_name(c.stores)
        << ")\n";
  if (c.halo_depth > 1)
    out << "halo depth " << c.halo_depth << ": " << r.exchanges << " exchanges for "
        << r.iterations << " iterations"
        << (kernel_info(c.kernel).sweeps_per_iteration > 1
                ? " of " + std::to_string(kernel_info(c.kernel).sweeps_per_iteration) + " sweeps"
                : std::string())
        << " (faces " << c.halo_depth << " deep, with edges and corners)\n";
  if (r.tile_rows > 0) out << "tiles      " << r.tile_rows << " rows per wavefront tile (max over ranks)\n";
  if (r.tuning_blocks > 0)
    out << "tuned      " << r.tuned << " before the timed loop: " << r.tuning_blocks
        << " blocks, " << std::fixed << std::setprecision(3) << r.tuning_s << " s (not in time_s)\n";
  out << "# per-thread seconds (max over ranks)\n"
      << "# thread    interior    boundary        pack      unpack        comm        idle\n";
  out << std::setprecision(6);
  for (std::size_t t = 0; t < r.breakdown.size(); ++t) {
    out << std::setw(8) << t;
    for (int p = 0; p <= kPhaseCount; ++p) out << std::setw(12) << r.breakdown[t][p];
    out << "\n";
  }
  if (r.iterations > 0)
    out << std::setprecision(3) << "fractions  f_comm " << r.f_comm << "  f_comp_non "
        << r.f_comp_non << "  f_comp_overlap " << r.f_comp_overlap << "\n";
  else
    out << "fractions  none: no iteration ran\n";
  out.unsetf(std::ios::fixed);
}

nlohmann::json info_document(const nlohmann::json& context, int provided) {
  nlohmann::json schemes = nlohmann::json::array();
  for (const auto& e : scheme_registry())
    schemes.push_back({{"name", e.info.name},
                       {"class", e.info.seed_class},
                       {"description", e.info.description},
                       {"mpi_thread_level", thread_level_name(e.info.thread_level)},
                       {"available", provided >= e.info.thread_level && e.info.unavailable.empty()},
                       {"unavailable", e.info.unavailable},
                       {"overlap", e.info.overlap},
                       {"takes_reserved", e.info.takes_reserved},
                       {"min_threads", e.info.min_threads},
                       {"needs_node_peers", e.info.needs_node_peers}});
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : kernel_registry())
    kernels.push_back({{"name", k.name},
                       {"description", k.description},
                       {"sweeps_per_iteration", k.sweeps_per_iteration},
                       {"flops_per_point", k.flops_per_point},
                       {"bytes_per_point", k.bytes_per_point},
                       {"bytes_per_point_crs", k.bytes_per_point_crs},
                       {"bytes_per_point_sell", k.bytes_per_point_sell},
                       {"temporal_blocking", k.temporal_blocking},
                       {"fields", k.fields},
                       {"converges", k.converges},
                       {"streaming_stores", k.streaming_stores},
                       {"wavefront_planes", k.wavefront_planes},
                       {"periodic", periodic_rule_name(k.periodic)},
                       {"periodic_why", k.periodic_why},
                       {"default_study", k.default_study},
                       {"default_study_why", k.default_study_why}});
  return {{"context", context}, {"schemes", schemes}, {"kernels", kernels},
          {"benchmarks", benchmarks_json()}};
}

void print_info(std::ostream& out, const nlohmann::json& doc, const NodeMap& nodes, int requested,
                int provided) {
  const auto& ctx = doc["context"];
  out << "# hympi " << ctx["hympi_version"].get<std::string>() << " ("
      << ctx["git_revision"].get<std::string>() << ")\n"
      << "MPI library      " << ctx["mpi_library"].get<std::string>() << "\n"
      << "MPI standard     " << ctx["mpi_version"].get<std::string>() << "\n"
      << "thread level     requested " << thread_level_name(requested) << ", provided "
      << thread_level_name(provided) << "\n"
      << "# schemes\n";
  for (const auto& s : doc["schemes"])
    out << "  " << std::left << std::setw(20) << s["name"].get<std::string>() << std::setw(10)
        << s["class"].get<std::string>() << std::setw(22) << s["mpi_thread_level"].get<std::string>()
        << (s["overlap"] ? "overlap   " : "no overlap") << (s["takes_reserved"] ? "  --reserved" : "")
        << (s["unavailable"].get<std::string>().empty() ? "" : "  " + s["unavailable"].get<std::string>())
        << "\n";
  out << "# kernels\n";
  for (const auto& k : doc["kernels"])
    out << "  " << std::left << std::setw(8) << k["name"].get<std::string>()
        << k["description"].get<std::string>() << "\n";
  out << "# nodes: " << nodes.node_count << " " << (nodes.virtual_nodes ? "virtual" : "real") << "\n";
  const auto& cpus = ctx["thread_cpus"];
  const auto& aff = ctx["thread_affinity"];
  for (std::size_t r = 0; r < nodes.node_of_rank.size(); ++r) {
    const int n = nodes.node_of_rank[r];
    out << "  rank " << r << "  node " << n << " (" << nodes.host_of_node[n] << ")  cpus";
    for (std::size_t t = 0; t < cpus[r].size(); ++t)
      out << "  t" << t << ":" << cpus[r][t].get<int>() << " [" << aff[r][t].get<std::string>() << "]";
    out << "\n";
  }
  out << std::right;
}

bool check_writable(const std::string& path, std::string& why) {
  why = check_writable_path(path);
  return why.empty();
}

void write_document(const std::string& path, const nlohmann::json& doc) {
  const std::string error = write_text_file(path, doc.dump(2) + "\n");
  if (!error.empty()) throw OutputError(error);
}

std::string plural(long long n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace hympi::cli
