#include "wavefront_tiles.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <tuple>

namespace hympi {
namespace detail {

bool WavefrontShape::operator<(const WavefrontShape& o) const {
  return std::tie(sweeps, extent, radius, threads, planes, candidates[0], candidates[1]) <
         std::tie(o.sweeps, o.extent, o.radius, o.threads, o.planes, o.candidates[0], o.candidates[1]);
}

int tile_rows_for_budget(double budget_bytes, int threads, double live_planes, double row_bytes,
                         int sweeps, int radius, int span) {
  const double fit = budget_bytes * threads / (live_planes * row_bytes) - 1.0 * sweeps * radius;
  const int rows = static_cast<int>(std::min(fit, 1.0 * span));
  return std::max(1, std::min(span, std::max(8 * threads, rows)));
}

double l2_cache_bytes() {
  static const double bytes = [] {
#ifdef _SC_LEVEL2_CACHE_SIZE
    const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (reported > 0) return static_cast<double>(reported);
#endif
    return 1024.0 * 1024.0;
  }();
  return bytes;
}

namespace {

// HYMPI_WAVEFRONT_TUNE_LOG=1: each choice on stderr, with the times behind it.
bool tune_log() {
  static const bool on = [] {
    const char* v = std::getenv("HYMPI_WAVEFRONT_TUNE_LOG");
    return v != nullptr && *v != '\0' && *v != '0';
  }();
  return on;
}

}  // namespace

WavefrontTileTuner::Pick WavefrontTileTuner::pick(const WavefrontShape& shape) {
  if (shape.candidates[0] == shape.candidates[1]) return {shape.candidates[0], -1};
  std::lock_guard<std::mutex> lock(mutex_);
  const State& s = states_[shape];
  if (s.chosen > 0) return {s.chosen, -1};
  // 0, 1, 1, 0, ...: each height sees the machine's drift and, where a
  // program alternates two updates of one shape, both updates.
  const int n = s.timed[0] + s.timed[1];
  int trial = (n % 4 == 1 || n % 4 == 2) ? 1 : 0;
  if (s.timed[trial] >= kTrialsPerCandidate) trial = 1 - trial;
  return {shape.candidates[trial], trial};
}

void WavefrontTileTuner::record(const WavefrontShape& shape, int trial, double seconds) {
  if (trial < 0 || trial > 1 || !(seconds > 0)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  State& s = states_[shape];
  if (s.chosen > 0) return;
  s.best[trial] = s.timed[trial] > 0 ? std::min(s.best[trial], seconds) : seconds;
  ++s.timed[trial];
  if (s.timed[0] < kTrialsPerCandidate || s.timed[1] < kTrialsPerCandidate) return;
  const int faster = s.best[0] <= s.best[1] ? 0 : 1;
  s.chosen = shape.candidates[faster];
  if (tune_log())
    std::fprintf(stderr,
                 "hympi: wavefront tiles for %d sweeps of %dx%dx%d points, %d thread(s): "
                 "%d rows %.3f ms, %d rows %.3f ms (best of %d blocks each): %d rows\n",
                 shape.sweeps, shape.extent[0], shape.extent[1], shape.extent[2], shape.threads,
                 shape.candidates[0], 1e3 * s.best[0], shape.candidates[1], 1e3 * s.best[1],
                 kTrialsPerCandidate, s.chosen);
}

int WavefrontTileTuner::chosen(const WavefrontShape& shape) {
  if (shape.candidates[0] == shape.candidates[1]) return shape.candidates[0];
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = states_.find(shape);
  return it == states_.end() ? 0 : it->second.chosen;
}

long long WavefrontTileTuner::trials_recorded() {
  std::lock_guard<std::mutex> lock(mutex_);
  long long timed = 0;
  for (const auto& entry : states_) timed += entry.second.timed[0] + entry.second.timed[1];
  return timed;
}

WavefrontTileTuner& wavefront_tile_tuner() {
  static WavefrontTileTuner tuner;
  return tuner;
}

}  // namespace detail
}  // namespace hympi
