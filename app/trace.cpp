#include "trace.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "hympi/timing.hpp"

namespace hympi::cli {

namespace {

nlohmann::json metadata(const char* name, int pid, int tid, const nlohmann::json& args) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"args", args}};
}

// Microseconds rounded to nanoseconds: finer than the clock resolves, and
// it keeps the document free of 17-digit noise.
double micros(double seconds) { return std::round(seconds * 1e9) / 1e3; }

// A complete ("X") event; the trace format counts in microseconds.
nlohmann::json complete(const char* name, int pid, int tid, double start_s, double end_s) {
  const double ts = micros(start_s);
  const double dur = std::round((micros(end_s) - ts) * 1e3) / 1e3;
  return {{"ph", "X"}, {"name", name}, {"cat", "phase"}, {"pid", pid},
          {"tid", tid}, {"ts", ts},     {"dur", dur}};
}

}  // namespace

nlohmann::json trace_document(const SolveResult& r, const nlohmann::json& context,
                              std::size_t* events) {
  const SolveConfig& c = r.config;
  nlohmann::json list = nlohmann::json::array();
  nlohmann::json elapsed = nlohmann::json::array();
  std::size_t complete_events = 0;
  for (std::size_t rank = 0; rank < r.trace.size(); ++rank) {
    const RankTrace& rt = r.trace[rank];
    const int pid = static_cast<int>(rank);
    const int node = rank < r.nodes.node_of_rank.size() ? r.nodes.node_of_rank[rank] : -1;
    const std::string host = node >= 0 && node < static_cast<int>(r.nodes.host_of_node.size())
                                 ? r.nodes.host_of_node[node]
                                 : std::string("?");
    const std::string process = "rank " + std::to_string(rank) + " (" + host + ")";
    list.push_back(metadata("process_name", pid, 0, {{"name", process}}));
    list.push_back(metadata("process_sort_index", pid, 0, {{"sort_index", pid}}));
    elapsed.push_back(rt.elapsed);
    for (std::size_t t = 0; t < rt.threads.size(); ++t) {
      const int tid = static_cast<int>(t);
      list.push_back(metadata("thread_name", pid, tid, {{"name", "thread " + std::to_string(t)}}));
      list.push_back(metadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));
      // Steps in start order, clipped to [0, elapsed] and to the end of the
      // step before (PhaseTimers do not nest, so that only guards rounding);
      // every gap between them, before the first and after the last, is
      // idle time, so that the timeline of every thread covers the loop.
      std::vector<TraceEvent> steps = rt.threads[t];
      std::stable_sort(steps.begin(), steps.end(),
                       [](const TraceEvent& a, const TraceEvent& b) { return a.start < b.start; });
      double cursor = 0;
      for (const TraceEvent& e : steps) {
        const double start = std::clamp(std::max(e.start, cursor), 0.0, rt.elapsed);
        const double end = std::clamp(e.end, start, rt.elapsed);
        if (start - cursor >= kMinIdleSeconds) {
          list.push_back(complete("idle", pid, tid, cursor, start));
          ++complete_events;
        }
        list.push_back(complete(phase_name(e.phase), pid, tid, start, end));
        ++complete_events;
        cursor = end;
      }
      if (rt.elapsed - cursor >= kMinIdleSeconds) {
        list.push_back(complete("idle", pid, tid, cursor, rt.elapsed));
        ++complete_events;
      }
    }
  }
  if (events) *events = complete_events;
  nlohmann::json other = {
      {"hympi_trace_version", kTraceVersion},
      {"kernel", kernel_name(c.kernel)},
      {"format", c.format == MatrixFormat::Crs ? "crs" : "stencil"},
      {"scheme", c.scheme->info.name},
      {"grid", c.grid},
      {"ranks", r.trace.size()},
      {"threads", c.threads},
      {"reserved", r.reserved_used},
      {"iters", r.iterations},
      {"repeat", c.repeat},
      {"repetition", "median"},
      {"clock", "seconds from each rank's loop start (after a barrier)"},
      {"loop_elapsed_s", elapsed},
      {"context", context}};
  return {{"traceEvents", list}, {"displayTimeUnit", "ms"}, {"otherData", other}};
}

}  // namespace hympi::cli
