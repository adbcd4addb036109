// Helpers shared by the kernel files and the driver (private to the library).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <utility>

#include "hympi/kernel.hpp"

namespace hympi {
namespace detail {

// The reference problem's initial field on the local points.
void fill_initial(Field& f, const LocalDomain& d);
void fill_value(Field& f, double v);

// A kernel that reads one field and writes the other, then swaps them, once
// per iteration (jacobi, spmv): box_op(in, out, box, stores) computes one
// box. With a halo depth h > 1, h iterations per exchange
// (Domain::sweep_block), always with cached stores: the next sweep of a
// tile reads the output from cache.
template <typename BoxOp>
KernelOutcome run_ping_pong(const KernelRun& run, BoxOp box_op) {
  Domain& domain = run.domain;
  // Matrix-free, rows padded to cache lines: the stencil's centre, j+-1 and
  // k+-1 loads and its stores split no line (faster in cache and at
  // --halo-depth 8: bench/README.md). A stored matrix's column indices
  // address packed rows.
  const RowLayout rows =
      run.matrix.crs || run.matrix.sell ? RowLayout::Packed : RowLayout::CacheLine;
  Field a = domain.make_field(rows), b = domain.make_field(rows);
  Field* cur = &a;
  Field* nxt = &b;
  const int halo_depth = domain.config().halo_depth;
  const PairBoxFn block_update = [&box_op](const Field& in, Field& out, const Box& box, int) {
    box_op(in, out, box, Stores::Cached);
  };
  KernelOutcome outcome;
  if (halo_depth > 1 && run.cfg.iters > 0) {
    // The wavefront's tile height is chosen by timing the first blocks of
    // each shape: here, on these fields before they are initialised and
    // outside the timed loop, for the loop's two block shapes (full, and
    // the last one of iters % halo_depth sweeps), so that a single timed
    // repetition runs at steady-state speed.
    const double started = now();
    const int full = std::min(halo_depth, run.cfg.iters), last = run.cfg.iters % halo_depth;
    outcome.tuning_blocks = domain.tune_block(cur, nxt, full, block_update);
    if (last > 0 && run.cfg.iters > halo_depth)
      outcome.tuning_blocks += domain.tune_block(cur, nxt, last, block_update);
    outcome.tuning_s = outcome.tuning_blocks > 0 ? now() - started : 0.0;
    // Both fields back to make_field's zeros, halos included.
    for (Field* f : {&a, &b}) std::fill(f->data(), f->data() + f->count(), 0.0);
    cur = &a;
    nxt = &b;
  }
  fill_initial(a, domain.local());
  domain.start_clock();
  if (halo_depth == 1) {
    const Stores stores = run.stores;
    for (int it = 0; it < run.cfg.iters; ++it) {
      domain.sweep({cur}, [&box_op, cur, nxt, stores](const Box& box, int) {
        box_op(*cur, *nxt, box, stores);
      });
      std::swap(cur, nxt);
    }
  } else {
    for (int it = 0; it < run.cfg.iters; it += halo_depth)
      domain.sweep_block(cur, nxt, std::min(halo_depth, run.cfg.iters - it), block_update);
  }
  domain.stop_clock();
  outcome.field = std::move(*cur);
  outcome.iterations = run.cfg.iters;
  return outcome;
}

}  // namespace detail
}  // namespace hympi
