#include "hympi/context_json.hpp"

#include <ctime>

#include "hympi/build_info.hpp"
#include "hympi/error.hpp"
#include "hympi/scheme.hpp"

namespace hympi {

nlohmann::json context_block(int ranks, int requested_level, int provided_level, int threads,
                             const NodeMap& nodes, const ThreadPlacement& placement,
                             const std::string& command_line) {
  char date[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return {{"schema_version", kContextSchemaVersion},
          {"hympi_version", kVersion},
          {"git_revision", kGitRevision},
          {"date", date},
          {"hosts", nodes.host_of_node},
          {"mpi_library", mpi_library_version()},
          {"mpi_version", mpi_standard_version()},
          {"thread_level_requested", thread_level_name(requested_level)},
          {"thread_level_provided", thread_level_name(provided_level)},
          {"ranks", ranks},
          {"threads_per_rank", threads},
          {"nodes",
           {{"count", nodes.node_count},
            {"kind", nodes.virtual_nodes ? "virtual" : "real"},
            {"ranks_per_node", nodes.ranks_per_node},
            {"node_of_rank", nodes.node_of_rank}}},
          {"thread_cpus", placement.cpu},
          {"thread_affinity", placement.affinity},
          {"oversubscribed", placement.oversubscribed},
          {"compiler", kCompiler},
          {"flags", kCompileFlags},
          {"command", command_line}};
}

nlohmann::json make_context(MPI_Comm comm, int requested_level, int provided_level, int threads,
                            const NodeMap& nodes, const std::string& command_line) {
  int size = 0;
  HYMPI_CHECK_MPI(MPI_Comm_size(comm, &size));
  const ThreadPlacement placement = gather_thread_placement(comm, threads);
  return context_block(size, requested_level, provided_level, threads, nodes, placement,
                       command_line);
}

}  // namespace hympi
