// The JSON context block of every result document (SYSTEM.md, docs/json-schema.md).
#pragma once

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "hympi/topology.hpp"

namespace hympi::cli {

constexpr int kSchemaVersion = 1;

// Where each thread of each rank runs: the CPU it ran on (sched_getcpu) and
// the CPUs it may run on (its affinity mask). Collective; valid on rank 0.
struct ThreadPlacement {
  std::vector<std::vector<int>> cpu;               // [rank][thread]
  std::vector<std::vector<std::string>> affinity;  // [rank][thread], e.g. "0-3"
};
ThreadPlacement gather_thread_placement(MPI_Comm comm, int threads);

// Collective. The document's context block; meaningful on rank 0.
nlohmann::json make_context(MPI_Comm comm, int requested_level, int provided_level, int threads,
                            const NodeMap& nodes, const std::string& command_line);

std::string mpi_library_version();
std::string mpi_standard_version();

}  // namespace hympi::cli
