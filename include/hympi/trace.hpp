// Thread timelines as a Chrome Trace Event document (docs/json-schema.md),
// which Perfetto and chrome://tracing open: `hympi solve --trace` and a
// user's Domain (Domain::write_trace) write the same format.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "hympi/timing.hpp"
#include "hympi/topology.hpp"

namespace hympi {

constexpr int kTraceVersion = 1;

// Gaps shorter than this (seconds) between a thread's steps get no "idle"
// event: below the clock's useful resolution, and they would only bloat
// the document.
constexpr double kMinIdleSeconds = 0.5e-6;

// What the timelines are of (the document's otherData).
struct TraceMeta {
  std::string kernel;
  std::string format = "stencil";
  std::string scheme;
  std::array<int, 3> grid{0, 0, 0};
  int threads = 1;
  int reserved = 0;
  long long iters = 0;
  int repeat = 1;
  std::string repetition = "median";  // which repetition the timelines are of
};

// The document of every rank's timeline ([rank], as gathered on rank 0):
// each thread's timed steps in start order, clipped to its loop, and every
// gap between them filled with "idle", so that a thread's timeline covers
// its loop. context: the context block (an empty object for none).
// `events`, when given, receives the number of "X" (step and idle) events.
// Built with nlohmann/json (header only), like context_json.hpp.
nlohmann::json trace_document(const TraceMeta& meta, const std::vector<RankTrace>& ranks,
                              const NodeMap& nodes, const nlohmann::json& context,
                              std::size_t* events = nullptr);

}  // namespace hympi
