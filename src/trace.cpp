#include "hympi/trace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "hympi/timing.hpp"
#include "json_text.hpp"

namespace hympi {

namespace {

// Microseconds rounded to nanoseconds: finer than the clock resolves, and
// it keeps the document free of 17-digit noise.
double micros(double seconds) { return std::round(seconds * 1e9) / 1e3; }

std::string metadata(const char* name, int pid, int tid, const std::string& args) {
  return "{\"ph\": \"M\", \"name\": \"" + std::string(name) + "\", \"pid\": " +
         std::to_string(pid) + ", \"tid\": " + std::to_string(tid) + ", \"args\": " + args + "}";
}

// A complete ("X") event; the trace format counts in microseconds.
std::string complete(const char* name, int pid, int tid, double start_s, double end_s) {
  const double ts = micros(start_s);
  const double dur = std::round((micros(end_s) - ts) * 1e3) / 1e3;
  return "{\"ph\": \"X\", \"name\": \"" + std::string(name) + "\", \"cat\": \"phase\", \"pid\": " +
         std::to_string(pid) + ", \"tid\": " + std::to_string(tid) +
         ", \"ts\": " + detail::json_number(ts) + ", \"dur\": " + detail::json_number(dur) + "}";
}

}  // namespace

std::string trace_json(const TraceMeta& meta, const std::vector<RankTrace>& ranks,
                       const NodeMap& nodes, const std::string& context_json, std::size_t* events) {
  std::vector<std::string> list;
  std::string elapsed = "[";
  std::size_t complete_events = 0;
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
    const RankTrace& rt = ranks[rank];
    const int pid = static_cast<int>(rank);
    const int node = rank < nodes.node_of_rank.size() ? nodes.node_of_rank[rank] : -1;
    const std::string host = node >= 0 && node < static_cast<int>(nodes.host_of_node.size())
                                 ? nodes.host_of_node[node]
                                 : std::string("?");
    const std::string process = "rank " + std::to_string(rank) + " (" + host + ")";
    list.push_back(metadata("process_name", pid, 0, "{\"name\": " + detail::json_string(process) + "}"));
    list.push_back(metadata("process_sort_index", pid, 0, "{\"sort_index\": " + std::to_string(pid) + "}"));
    elapsed += (rank ? ", " : "") + detail::json_number(rt.elapsed);
    for (std::size_t t = 0; t < rt.threads.size(); ++t) {
      const int tid = static_cast<int>(t);
      list.push_back(metadata("thread_name", pid, tid,
                              "{\"name\": \"thread " + std::to_string(t) + "\"}"));
      list.push_back(metadata("thread_sort_index", pid, tid,
                              "{\"sort_index\": " + std::to_string(tid) + "}"));
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
  elapsed += "]";
  if (events) *events = complete_events;
  std::ostringstream o;
  o << "{\"traceEvents\": [";
  for (std::size_t i = 0; i < list.size(); ++i) o << (i ? ",\n  " : "\n  ") << list[i];
  o << "\n], \"displayTimeUnit\": \"ms\", \"otherData\": {"
    << "\"hympi_trace_version\": " << kTraceVersion
    << ", \"kernel\": " << detail::json_string(meta.kernel)
    << ", \"format\": " << detail::json_string(meta.format)
    << ", \"scheme\": " << detail::json_string(meta.scheme) << ", \"grid\": [" << meta.grid[0]
    << ", " << meta.grid[1] << ", " << meta.grid[2] << "], \"ranks\": " << ranks.size()
    << ", \"threads\": " << meta.threads << ", \"reserved\": " << meta.reserved
    << ", \"iters\": " << meta.iters << ", \"repeat\": " << meta.repeat
    << ", \"repetition\": " << detail::json_string(meta.repetition)
    << ", \"clock\": \"seconds from each rank's loop start (after a barrier)\""
    << ", \"loop_elapsed_s\": " << elapsed << ", \"context\": " << context_json << "}}\n";
  return o.str();
}

}  // namespace hympi
