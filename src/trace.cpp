#include "hympi/trace.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "hympi/timing.hpp"

namespace hympi {

namespace {

// Microseconds rounded to nanoseconds: finer than the clock resolves, and
// it keeps the document free of 17-digit noise.
double micros(double seconds) { return std::round(seconds * 1e9) / 1e3; }

nlohmann::json metadata(const char* name, int pid, int tid, nlohmann::json args) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

// A complete ("X") event; the trace format counts in microseconds.
nlohmann::json complete(const char* name, int pid, int tid, double start_s, double end_s) {
  const double ts = micros(start_s);
  const double dur = std::round((micros(end_s) - ts) * 1e3) / 1e3;
  return {{"ph", "X"}, {"name", name}, {"cat", "phase"}, {"pid", pid}, {"tid", tid},
          {"ts", ts},  {"dur", dur}};
}

// One thread's steps in start order, clipped to [0, elapsed] and to the end
// of the step before (PhaseTimers do not nest, so that only guards
// rounding); every gap between them, before the first and after the last,
// is idle time, so that the timeline of every thread covers the loop.
// Returns the number of events added.
std::size_t thread_events(const RankTrace& rt, std::size_t t, int pid, nlohmann::json& list) {
  const int tid = static_cast<int>(t);
  std::size_t added = 0;
  std::vector<TraceEvent> steps = rt.threads[t];
  std::stable_sort(steps.begin(), steps.end(),
                   [](const TraceEvent& a, const TraceEvent& b) { return a.start < b.start; });
  double cursor = 0;
  for (const TraceEvent& e : steps) {
    const double start = std::clamp(std::max(e.start, cursor), 0.0, rt.elapsed);
    const double end = std::clamp(e.end, start, rt.elapsed);
    if (start - cursor >= kMinIdleSeconds) {
      list.push_back(complete("idle", pid, tid, cursor, start));
      ++added;
    }
    list.push_back(complete(phase_name(e.phase), pid, tid, start, end));
    ++added;
    cursor = end;
  }
  if (rt.elapsed - cursor >= kMinIdleSeconds) {
    list.push_back(complete("idle", pid, tid, cursor, rt.elapsed));
    ++added;
  }
  return added;
}

}  // namespace

nlohmann::json trace_document(const TraceMeta& meta, const std::vector<RankTrace>& ranks,
                              const NodeMap& nodes, const nlohmann::json& context,
                              std::size_t* events) {
  nlohmann::json list = nlohmann::json::array();
  nlohmann::json elapsed = nlohmann::json::array();
  std::size_t complete_events = 0;
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
    const RankTrace& rt = ranks[rank];
    const int pid = static_cast<int>(rank);
    const int node = rank < nodes.node_of_rank.size() ? nodes.node_of_rank[rank] : -1;
    const std::string host = node >= 0 && node < static_cast<int>(nodes.host_of_node.size())
                                 ? nodes.host_of_node[node]
                                 : std::string("?");
    const std::string process = "rank " + std::to_string(rank) + " (" + host + ")";
    list.push_back(metadata("process_name", pid, 0, {{"name", process}}));
    list.push_back(metadata("process_sort_index", pid, 0, {{"sort_index", pid}}));
    elapsed.push_back(rt.elapsed);
    for (std::size_t t = 0; t < rt.threads.size(); ++t) {
      const int tid = static_cast<int>(t);
      list.push_back(metadata("thread_name", pid, tid, {{"name", "thread " + std::to_string(t)}}));
      list.push_back(metadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));
      complete_events += thread_events(rt, t, pid, list);
    }
  }
  if (events) *events = complete_events;
  return {{"traceEvents", list},
          {"displayTimeUnit", "ms"},
          {"otherData",
           {{"hympi_trace_version", kTraceVersion},
            {"kernel", meta.kernel},
            {"format", meta.format},
            {"scheme", meta.scheme},
            {"grid", meta.grid},
            {"ranks", ranks.size()},
            {"threads", meta.threads},
            {"reserved", meta.reserved},
            {"iters", meta.iters},
            {"repeat", meta.repeat},
            {"repetition", meta.repetition},
            {"clock", "seconds from each rank's loop start (after a barrier)"},
            {"loop_elapsed_s", elapsed},
            {"context", context}}}};
}

}  // namespace hympi
