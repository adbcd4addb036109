// How many rows j a wavefront tile of temporally blocked sweeps holds
// (private to the library). The best height depends on which cache keeps a
// tile's planes between the sweeps, and the cache sizes a machine reports do
// not say that: measured on 256^3, depth 8, one thread per rank, tiles sized
// for a 4 MiB share of the L3 were 10-25 % faster than tiles sized for the
// L2 on a 2-core AMD EPYC VM, and about 2x slower (1.7-2.3x at 1-4 ranks,
// 1.1-1.8x at 8-16) on a 16-core Intel Xeon VM (the first VM's sysconf
// reports a 320 MiB L3, its lscpu 32 MiB: sizes a VM reports are no
// guide). So the library measures: the
// first blocks of each shape try both heights, alternately, and the faster
// one is kept for the rest of the process (FFTW's "measure", in small).
// Either height gives the same result to the last bit; only speed differs.
#pragma once

#include <array>
#include <map>
#include <mutex>

namespace hympi {
namespace detail {

// One shape of temporally blocked work: the same shape is the same work, so
// the times of its blocks compare directly.
struct WavefrontShape {
  int sweeps = 0;
  std::array<int, 3> extent{};  // the first sweep's region (points)
  int radius = 0;               // the stencil's reach, rows per sweep
  int threads = 0;
  int planes = 1;               // planes per wavefront step
  int candidates[2] = {0, 0};   // the two heights tried (rows)
  bool operator<(const WavefrontShape& o) const;
};

// Heights of tiles whose planes fit `budget_bytes` per thread: `live_planes`
// planes of `row_bytes` rows in flight, the tile's rows plus the
// parallelogram's shift of `sweeps * radius` rows. At least 8 rows per thread
// (fewer spend more on the per-step loop than the cache saves), at most
// `span`, the rows of the whole region.
int tile_rows_for_budget(double budget_bytes, int threads, double live_planes, double row_bytes,
                         int sweeps, int radius, int span);

// The L2 size of one core (sysconf), or 1 MiB where the system does not say.
double l2_cache_bytes();

// Process-wide memory of the choice, shared by every Domain (a solve builds
// its own Domain; the choice outlives it). Thread-safe.
class WavefrontTileTuner {
 public:
  // The height for the next block of `shape`, and which candidate it is
  // (0 or 1) while trying, or -1 once chosen (nothing to record).
  struct Pick {
    int rows = 0;
    int trial = -1;
  };
  Pick pick(const WavefrontShape& shape);
  // The time of a block run with candidate `trial` of `shape`.
  void record(const WavefrontShape& shape, int trial, double seconds);
  // "rows" chosen for `shape`, or 0 while still trying (tests, logs).
  int chosen(const WavefrontShape& shape);
  // Blocks timed as trials so far, every shape (tests: was anything tried?).
  long long trials_recorded();

  // Each candidate runs this many blocks before the faster (by its best
  // block) is kept. The order is 0, 1, 1, 0: a program that alternates two
  // updates of one shape gives each height both updates to time.
  static constexpr int kTrialsPerCandidate = 2;

 private:
  struct State {
    double best[2] = {0, 0};  // valid where timed[k] > 0
    int timed[2] = {0, 0};    // blocks timed per candidate
    int chosen = 0;           // rows, once decided
  };
  std::mutex mutex_;
  std::map<WavefrontShape, State> states_;
};

WavefrontTileTuner& wavefront_tile_tuner();

}  // namespace detail
}  // namespace hympi
