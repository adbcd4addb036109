// hympi solve --trace: the per-thread timelines as a Chrome Trace Event
// document (docs/json-schema.md), which Perfetto and chrome://tracing open.
// Nothing here talks MPI.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>

#include "hympi/solver.hpp"

namespace hympi::cli {

// The trace document (hympi/trace.hpp's trace_document) of a solve run with
// config.trace (r.trace filled, as on rank 0). `context` is the result documents' context block. `events`, when
// given, receives the number of "X" (timed step and idle) events.
nlohmann::json trace_document(const SolveResult& r, const nlohmann::json& context,
                              std::size_t* events = nullptr);

}  // namespace hympi::cli
