// Domain::write_report and write_trace: the user kernel's result document
// (the context block and one result, as hympi solve writes them:
// docs/json-schema.md) and its thread timelines.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <nlohmann/json.hpp>

#include "hympi/build_info.hpp"
#include "hympi/context_json.hpp"
#include "hympi/output_file.hpp"
#include "hympi/trace.hpp"
#include "domain_impl.hpp"

namespace hympi {

namespace {

// Rank 0's command line, from /proc (the context block's "command").
std::string command_line() {
  FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (!f) return "";
  std::string raw;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) raw.append(buf, n);
  std::fclose(f);
  std::replace(raw.begin(), raw.end(), '\0', ' ');
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

// The report's one result (docs/json-schema.md, kind "solve" with
// "user_kernel": true), from what write_report gathered.
struct ReportFacts {
  double T = 0;                        // the slowest rank's loop time
  std::vector<detail::PhaseRow> rows;  // per thread, max over ranks
  detail::Fractions fractions;
  long long traffic[5] = {0, 0, 0, 0, 0};  // bytes intra, inter; messages intra, inter; zero-copy
  bool has_checksum = false;
  double sum = 0, l2 = 0;
  nlohmann::json checksums = nlohmann::json::array();  // {field, sum, l2} per named field
};

// The names the report gives the checksum fields: `given`, one per field,
// or field1, field2, ... Each is 1..64 printable ASCII characters and
// unique, so that the study can match a field across schemes by its name.
std::vector<std::string> checksum_names(std::size_t fields, const std::vector<std::string>& given) {
  if (given.empty()) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < fields; ++i) names.push_back("field" + std::to_string(i + 1));
    return names;
  }
  if (given.size() != fields)
    throw UsageError("write_report: " + std::to_string(given.size()) + " field name(s) for " +
                     std::to_string(fields) + " checksum field(s): give one name per field");
  for (std::size_t i = 0; i < given.size(); ++i) {
    const std::string& n = given[i];
    const bool printable = std::all_of(n.begin(), n.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
    if (n.empty() || n.size() > 64 || !printable)
      throw UsageError("write_report: field name " + std::to_string(i + 1) +
                       " must be 1..64 printable ASCII characters");
    if (std::find(given.begin(), given.begin() + static_cast<std::ptrdiff_t>(i), n) !=
        given.begin() + static_cast<std::ptrdiff_t>(i))
      throw UsageError("write_report: field name '" + n + "' is given twice");
  }
  return given;
}

// Text the program gave (its compiler, its flags) as printable ASCII of at
// most 4096 characters: a report must stay valid JSON whatever it holds.
std::string printable(const std::string& text) {
  std::string out = text.substr(0, 4096);
  for (char& c : out)
    if (c < 0x20 || c >= 0x7f) c = '?';
  return out;
}

nlohmann::json report_result(const Domain& domain, const Scheme& scheme, long long sweeps,
                             long long exchanges, const std::string& name, const ReportFacts& f) {
  const DomainConfig& c = domain.config();
  const SchemeInfo& s = c.scheme->info;
  const GridChoice& g = domain.grid();
  const double points = 1.0 * c.grid[0] * c.grid[1] * c.grid[2];
  nlohmann::json breakdown = nlohmann::json::object();
  for (int p = 0; p <= kPhaseCount; ++p) {
    nlohmann::json per_thread = nlohmann::json::array();
    for (const auto& row : f.rows) per_thread.push_back(row[p]);
    breakdown[p < kPhaseCount ? phase_name(static_cast<Phase>(p)) : "idle"] = per_thread;
  }
  const nlohmann::json none;  // null
  return {{"kind", "solve"},
          {"user_kernel", true},
          {"kernel", "user:" + name},
          {"format", "stencil"},
          {"scheme", s.name},
          {"scheme_class", s.seed_class},
          {"pure_mpi", c.threads == 1 && c.scheme == &pure_mpi_scheme()},
          {"grid", c.grid},
          {"periodic", c.periodic[0] || c.periodic[1] || c.periodic[2]},
          {"halo", c.halo},
          {"halo_depth", c.halo_depth},
          {"proc_grid", g.dims},
          {"node_block", g.node_block},
          {"mapping", g.node_aware ? "node-aware" : "rank-order"},
          {"threads", c.threads},
          {"reserved", scheme.reserved_threads()},
          {"iters", sweeps},
          {"exchanges", exchanges},
          {"checksum", f.has_checksum ? nlohmann::json(f.sum) : none},
          {"l2", f.has_checksum ? nlohmann::json(f.l2) : none},
          {"checksums", f.checksums},
          {"time_s", {{"min", f.T}, {"median", f.T}, {"max", f.T}}},
          {"repeat", 1},
          {"mlups", f.T > 0 ? points * sweeps / f.T / 1e6 : 0.0},
          {"bytes_per_exchange",
           {{"intra_node", f.traffic[0]}, {"inter_node", f.traffic[1]}, {"zero_copy", f.traffic[4]}}},
          {"messages_per_exchange", {{"intra_node", f.traffic[2]}, {"inter_node", f.traffic[3]}}},
          {"breakdown_s", breakdown},
          {"fractions",
           {{"f_comm", f.fractions.comm},
            {"f_comp_non", f.fractions.comp_non},
            {"f_comp_overlap", f.fractions.comp_overlap}}}};
}

}  // namespace

void Domain::report_build(const std::string& compiler, const std::string& flags) {
  impl_->app_compiler = printable(compiler);
  impl_->app_flags = printable(flags);
}

void Domain::write_report(const std::string& path, const std::string& name,
                          const std::vector<const Field*>& checksum_fields,
                          const std::vector<std::string>& field_names) {
  Impl& d = *impl_;
  const MPI_Comm comm = d.comm();
  // Checked before any collective: every rank gets the same arguments, so
  // every rank throws, and none waits in a reduction.
  const std::vector<std::string> names = checksum_names(checksum_fields.size(), field_names);
  ReportFacts f;
  HYMPI_CHECK_MPI(MPI_Allreduce(&d.elapsed, &f.T, 1, MPI_DOUBLE, MPI_MAX, comm));
  f.rows = detail::breakdown_max(d.timers, d.elapsed, comm);
  f.fractions = detail::critical_fractions(f.rows, f.T);
  long long mine[5] = {d.plan->bytes_intra(), d.plan->bytes_inter(), d.plan->messages_intra(),
                       d.plan->messages_inter(), d.plan->bytes_zero_copy()};
  HYMPI_CHECK_MPI(MPI_Allreduce(mine, f.traffic, 5, MPI_LONG_LONG, MPI_SUM, comm));
  double sq = 0;
  for (std::size_t i = 0; i < checksum_fields.size(); ++i) {
    const auto c = checksum(*checksum_fields[i]);
    f.sum += c[0];
    sq += c[1] * c[1];
    f.checksums.push_back({{"field", names[i]}, {"sum", c[0]}, {"l2", c[1]}});
  }
  f.has_checksum = !checksum_fields.empty();
  f.l2 = std::sqrt(sq);
  int provided = MPI_THREAD_SINGLE;
  HYMPI_CHECK_MPI(MPI_Query_thread(&provided));
  const ThreadPlacement placement = gather_thread_placement(comm, d.cfg.threads);

  std::string error;
  if (d.rank == 0) {
    if (const std::string w = oversubscription_warning(placement); !w.empty()) std::cerr << w << std::endl;
    // The same context block as hympi's own documents; the requested thread
    // level is not known here: the provided one is given.
    nlohmann::json context = context_block(d.size, provided, provided, d.cfg.threads, d.nodes,
                                           placement, command_line());
    context["source"] = "user-kernel";
    // The program's build beside hympi's ("compiler", "flags"), when it said.
    if (!d.app_compiler.empty() || !d.app_flags.empty()) {
      context["app_compiler"] = d.app_compiler;
      context["app_flags"] = d.app_flags;
    }
    const nlohmann::json doc = {
        {"context", context},
        {"results", nlohmann::json::array(
                        {report_result(*this, *d.scheme, d.sweeps, d.exchanges, name, f)})}};
    const char* env = d.cfg.use_environment ? std::getenv("HYMPI_REPORT_JSON") : nullptr;
    const std::string target = env && *env ? env : path;
    if (target.empty())
      error = "no report path given (and HYMPI_REPORT_JSON is not set)";
    else
      error = write_text_file(target, doc.dump(2) + "\n");
  }
  d.share_error(error);
  if (!d.trace_env.empty()) write_trace(d.trace_env, name);
}

void Domain::write_trace(const std::string& path, const std::string& name) {
  Impl& d = *impl_;
  if (!d.tracing)
    throw UsageError("write_trace: the domain records no trace (set DomainConfig::trace, or "
                     "HYMPI_TRACE_JSON in the environment)");
  std::vector<detail::TraceLog> empty(d.timers.size());
  const std::vector<RankTrace> ranks =
      detail::gather_trace(d.logs.empty() ? empty : d.logs, d.t0, d.elapsed, d.comm());
  std::string error;
  if (d.rank == 0) {
    TraceMeta meta;
    meta.kernel = "user:" + name;
    meta.scheme = d.cfg.scheme->info.name;
    meta.grid = d.cfg.grid;
    meta.threads = d.cfg.threads;
    meta.reserved = d.scheme->reserved_threads();
    meta.iters = d.sweeps;
    meta.repetition = "the timed loop";
    const nlohmann::json context = {
        {"source", "user-kernel"}, {"hympi_version", kVersion}, {"ranks", d.size}};
    error = write_text_file(path, trace_document(meta, ranks, d.nodes, context).dump(2) + "\n");
  }
  d.share_error(error);
}


}  // namespace hympi
