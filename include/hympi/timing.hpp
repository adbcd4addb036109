// Per-thread time accounting: where each thread's time went.
#pragma once

#include <omp.h>

#include <vector>

namespace hympi {

enum class Phase { ComputeInterior = 0, ComputeBoundary, Pack, Unpack, Comm, Count };
constexpr int kPhaseCount = static_cast<int>(Phase::Count);
const char* phase_name(Phase p);

// One timed step of one thread (hympi solve --trace): seconds on the
// omp_get_wtime clock, as PhaseTimer measured them.
struct TraceEvent {
  Phase phase;
  double start, end;
};

// One rank's timeline of the median repetition (SolveConfig::trace): times in
// seconds from the rank's loop start, taken after the barrier that starts it.
struct RankTrace {
  double elapsed = 0;                            // the rank's own loop time
  std::vector<std::vector<TraceEvent>> threads;  // [thread], in start order
};

// Min / median / max of repeated timings.
struct Stats {
  double min = 0, median = 0, max = 0;
};
Stats make_stats(std::vector<double> values);

// One cache line per thread so that threads do not share lines while timing.
// `trace`, when set, is this thread's own event log: every timed step is also
// appended there (the caller keeps the logs of different threads on
// different cache lines). Unset, the cost is one predictable branch.
struct alignas(64) ThreadTimes {
  double seconds[kPhaseCount] = {0, 0, 0, 0, 0};
  std::vector<TraceEvent>* trace = nullptr;
  void add(Phase p, double s) { seconds[static_cast<int>(p)] += s; }
  void record(Phase p, double start, double end) {
    add(p, end - start);
    if (trace) trace->push_back({p, start, end});
  }
  double busy() const {
    double b = 0;
    for (double s : seconds) b += s;
    return b;
  }
};

static_assert(sizeof(ThreadTimes) == 64, "ThreadTimes must fill exactly one cache line");

using Timers = std::vector<ThreadTimes>;

inline double now() { return omp_get_wtime(); }

// Adds the time from construction to destruction to one phase of one thread.
// PhaseTimers never nest on one thread: each second is booked to one phase
// only, and a thread's trace events never overlap.
class PhaseTimer {
 public:
  PhaseTimer(ThreadTimes& t, Phase p) : t_(t), p_(p), start_(now()) {}
  ~PhaseTimer() { t_.record(p_, start_, now()); }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  ThreadTimes& t_;
  Phase p_;
  double start_;
};

}  // namespace hympi
