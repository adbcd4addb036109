// The sweeps of a temporal block after its exchange (Domain::sweep_block):
// a wavefront over k planes inside tiles of j rows (domain_impl.hpp says how).
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <chrono>
#include <vector>

#include "domain_impl.hpp"
#include "wavefront_tiles.hpp"

namespace hympi {

namespace detail {

namespace {

// The whole number in environment variable `name` if it lies in [lo, hi];
// 0 when unset or empty, and when unusable: then one warning, by the first
// rank that has such a value rather than by every rank, saying what is
// done `instead` (a warning, not an error: a refusal would need the ranks
// to agree anyway). Each rank's own value: ranks need not agree. Collective.
int env_setting(MPI_Comm comm, int rank, const char* name, const char* unit, long lo, long hi,
                const char* instead, std::once_flag& warned) {
  const char* text = std::getenv(name);
  int unusable = 0, value = 0;
  if (text && *text != '\0') {  // empty: unset
    char* end = nullptr;
    errno = 0;
    const long parsed = std::strtol(text, &end, 10);
    if (*end == '\0' && errno == 0 && parsed >= lo && parsed <= hi)
      value = static_cast<int>(parsed);
    else
      unusable = 1;
  }
  int unusable_ranks = 0, first = unusable ? rank : INT_MAX;
  HYMPI_CHECK_MPI(MPI_Allreduce(&unusable, &unusable_ranks, 1, MPI_INT, MPI_SUM, comm));
  HYMPI_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
  if (unusable && rank == first) {
    std::call_once(warned, [&] {
      std::fprintf(stderr,
                   "hympi: %s='%s' is not a number of %s (accepted %ld .. %ld) on %d rank(s); "
                   "ignored there, %s\n",
                   name, text, unit, lo, hi, unusable_ranks, instead);
    });
  }
  return value;
}

}  // namespace

// HYMPI_WAVEFRONT_TILE_ROWS (tiles are local: ranks need not agree); 0 when
// unset or unusable. Collective over comm.
int forced_tile_rows(MPI_Comm comm, int rank) {
  static std::once_flag warned;
  return env_setting(comm, rank, "HYMPI_WAVEFRONT_TILE_ROWS", "rows", 1, 1000000,
                     "the tile height is measured", warned);
}

// HYMPI_WAVEFRONT_PLANES, planes per wavefront step (domain_impl.hpp), or
// `configured` (DomainConfig::wavefront_planes) when unset or unusable.
// Collective over comm.
int wavefront_planes(MPI_Comm comm, int rank, int configured) {
  static std::once_flag warned;
  const int planes = env_setting(comm, rank, "HYMPI_WAVEFRONT_PLANES", "planes", 1, 4,
                                 "the domain's own planes per step", warned);
  return planes > 0 ? planes : configured;
}

}  // namespace detail

namespace {

// Planes between sweep t - 1 and sweep t in the wavefront: at step w sweep
// t computes the group of P = planes_per_step planes [P w - lag t, + P).
// With threads, the planes of one step must be independent (one barrier
// per step), so sweep t reads only planes that earlier steps wrote: up to
// plane P w - lag t + P - 1 + r, below P (w - 1) - lag (t - 1) + P, so lag
// >= P + r. One thread runs a step's sweeps in order, so sweep t may read
// the planes up to P w - lag t + P - 1 + r that sweep t - 1 wrote moments
// before (it has done those below P w - lag (t - 1) + P), still in L1 or
// L2: lag r, whatever P. Fewer planes live: with one plane per step, depth
// 8 on 256^3 ran 3-7 % faster at 1 rank than with lag r + 1 (bench/README.md,
// "The wavefront's lag on one thread"). What sweep t + 1 then overwrites
// (planes below P w - lag t + P - lag of sweep t's input) sweep t has read.
// Two planes per step let a kernel compute two planes in one pass and read
// each row between them from L1 once for both (write_rows_pair in
// src/kernels/box_kernels.hpp; bench/README.md, "Two planes per pass").
int wavefront_lag(int radius, int threads, int planes) {
  return threads == 1 ? radius : radius + planes;
}

// floor(a / b) for b > 0.
int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

detail::WavefrontShape Domain::Impl::wavefront_shape(int sweeps) const {
  const int r = cfg.halo, n = cfg.threads, planes = planes_per_step;
  const int lag = wavefront_lag(r, n, planes);
  const Box first = grown_box(local, (sweeps - 1) * r);
  const double row_bytes = 8.0 * (first.extent(0) + 2 * r);
  const double live_planes = 2.0 * (lag * sweeps + 2 * r + planes);
  const int span = first.extent(1) + (sweeps - 1) * r;  // rows of the tiles, shifted
  detail::WavefrontShape shape;
  shape.sweeps = sweeps;
  shape.extent = {first.extent(0), first.extent(1), first.extent(2)};
  shape.radius = r;
  shape.threads = n;
  shape.planes = planes;
  shape.candidates[0] =
      detail::tile_rows_for_budget(kL3ShareBytes, n, live_planes, row_bytes, sweeps, r, span);
  shape.candidates[1] = detail::tile_rows_for_budget(detail::l2_cache_bytes(), n, live_planes,
                                                     row_bytes, sweeps, r, span);
  return shape;
}

bool Domain::Impl::tile_choice_pending(int count) const {
  // sweep_block's wavefront: every sweep of the block where the scheme does
  // not overlap, all but the first where it does.
  const int sweeps = scheme->info().overlap ? count - 1 : count;
  if (forced_tile_rows > 0 || sweeps < 1) return false;
  return detail::wavefront_tile_tuner().chosen(wavefront_shape(sweeps)) == 0;
}

void Domain::Impl::wavefront(Field* a, Field* b, int sweeps, const PairBoxFn& first,
                             const PairBoxFn& update, detail::FailureSlot& slot) {
  const int r = cfg.halo, n = cfg.threads, planes = planes_per_step;
  const int lag = wavefront_lag(r, n, planes);
  std::vector<Box> region(static_cast<std::size_t>(sweeps));
  int w_lo = 0, w_hi = 0;
  for (int t = 0; t < sweeps; ++t) {
    region[t] = grown_box(local, (sweeps - 1 - t) * r);
    // The steps whose group [planes * w - lag * t, + planes) meets the region.
    const int lo = floor_div(region[t].lo[2] + lag * t, planes);
    const int hi = floor_div(region[t].hi[2] - 1 + lag * t, planes);
    w_lo = t == 0 ? lo : std::min(w_lo, lo);
    w_hi = t == 0 ? hi : std::max(w_hi, hi);
  }
  const int y0 = region[0].lo[1];
  const int y_end = region[0].hi[1] + (sweeps - 1) * r;  // last row of the last sweep, shifted
  const detail::WavefrontShape shape = wavefront_shape(sweeps);
  detail::WavefrontTileTuner::Pick pick{forced_tile_rows, -1};
  if (forced_tile_rows <= 0) pick = detail::wavefront_tile_tuner().pick(shape);
  const int tile = pick.rows;
  if (sweeps >= wavefront_sweeps) {
    wavefront_sweeps = sweeps;
    wavefront_rows = tile;
  }
  const int tiles = (y_end - y0 + tile - 1) / tile;
  // A failed update skips the rest of the block: its time says nothing.
  const bool failed_before = slot.failed();
  const auto started = std::chrono::steady_clock::now();
  detail::on_threads(n, [&](int th) {
    // Barrier waits count as this computation: the rows of a step are
    // shared evenly, so they are short.
    PhaseTimer pt(timers[th], Phase::ComputeBoundary);
    std::vector<int> row_lo(static_cast<std::size_t>(sweeps)), row_hi(row_lo.size());
    for (int J = 0; J < tiles; ++J) {
      for (int t = 0; t < sweeps; ++t) {
        row_lo[t] = std::max(region[t].lo[1], y0 + J * tile - t * r);
        row_hi[t] = std::min(region[t].hi[1], y0 + (J + 1) * tile - t * r);
      }
      for (int w = w_lo; w <= w_hi; ++w) {
        bool any = false;  // the same on every thread: no barrier skipped by some
        for (int t = 0; t < sweeps; ++t) {
          const Box& g = region[t];
          const int k_lo = std::max(g.lo[2], planes * w - lag * t);
          const int k_hi = std::min(g.hi[2], planes * w - lag * t + planes);
          if (k_hi <= k_lo || row_hi[t] <= row_lo[t]) continue;
          any = true;
          // Share th of the sweep's rows; the odd rows of the rounding go
          // to another thread from sweep to sweep (t % n), so no thread
          // gets all of them.
          const int rows = row_hi[t] - row_lo[t];
          const int from = row_lo[t] + static_cast<int>((1LL * rows * th + t % n) / n);
          const int to = row_lo[t] + static_cast<int>((1LL * rows * (th + 1) + t % n) / n);
          if (from < to) {
            Box box = g;
            box.lo[1] = from;
            box.hi[1] = to;
            box.lo[2] = k_lo;
            box.hi[2] = k_hi;
            const Field& src = t % 2 == 0 ? *a : *b;
            Field& dst = t % 2 == 0 ? *b : *a;
            const PairBoxFn& fn = t == 0 ? first : update;
            slot.guard(box, th, [&] { fn(src, dst, box, th); });
          }
        }
        if (!any) continue;
        if (n > 1) {
#pragma omp barrier
        }
      }
    }
  });
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  if (!failed_before && !slot.failed())
    detail::wavefront_tile_tuner().record(shape, pick.trial, took.count());
}

}  // namespace hympi
