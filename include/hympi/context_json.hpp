// The JSON context block of every result document (docs/json-schema.md), built in one place for the hympi command line and a
// user's Domain report. Needs nlohmann/json (header only) on the include
// path; the rest of the library does not.
#pragma once

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <string>

#include "hympi/context.hpp"
#include "hympi/topology.hpp"

namespace hympi {

// The block from facts already gathered (placement: gather_thread_placement,
// on rank 0). Local: asks MPI only for its version. `ranks`: the size of the
// run's communicator.
nlohmann::json context_block(int ranks, int requested_level, int provided_level, int threads,
                             const NodeMap& nodes, const ThreadPlacement& placement,
                             const std::string& command_line);

// Collective over comm (it gathers the thread placement); meaningful on rank 0.
nlohmann::json make_context(MPI_Comm comm, int requested_level, int provided_level, int threads,
                            const NodeMap& nodes, const std::string& command_line);

}  // namespace hympi
