// Per-thread time accounting: where each thread's time went.
#pragma once

#include <omp.h>

#include <vector>

namespace hympi {

enum class Phase { ComputeInterior = 0, ComputeBoundary, Pack, Unpack, Comm, Count };
constexpr int kPhaseCount = static_cast<int>(Phase::Count);
const char* phase_name(Phase p);

// One cache line per thread so that threads do not share lines while timing.
struct alignas(64) ThreadTimes {
  double seconds[kPhaseCount] = {0, 0, 0, 0, 0};
  void add(Phase p, double s) { seconds[static_cast<int>(p)] += s; }
  double busy() const {
    double b = 0;
    for (double s : seconds) b += s;
    return b;
  }
};

using Timers = std::vector<ThreadTimes>;

inline double now() { return omp_get_wtime(); }

// Adds the time from construction to destruction to one phase of one thread.
class PhaseTimer {
 public:
  PhaseTimer(ThreadTimes& t, Phase p) : t_(t), p_(p), start_(now()) {}
  ~PhaseTimer() { t_.add(p_, now() - start_); }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  ThreadTimes& t_;
  Phase p_;
  double start_;
};

}  // namespace hympi
