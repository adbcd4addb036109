// The JSON context block of every result document (SYSTEM.md, docs/json-schema.md).
#pragma once

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "hympi/context.hpp"
#include "hympi/topology.hpp"

namespace hympi::cli {

constexpr int kSchemaVersion = kContextSchemaVersion;
using hympi::gather_thread_placement;
using hympi::ThreadPlacement;

// Collective. The document's context block; meaningful on rank 0.
nlohmann::json make_context(MPI_Comm comm, int requested_level, int provided_level, int threads,
                            const NodeMap& nodes, const std::string& command_line);

using hympi::mpi_library_version;
using hympi::mpi_standard_version;

}  // namespace hympi::cli
