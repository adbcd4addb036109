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

// Temporal blocking (halo depth h > 1): `sweeps` sweeps of `update` from
// a to b and back, h per exchange (Domain::sweep_block; a last, shorter
// block for the remainder). First the wavefront's tile height is chosen by
// timing the first blocks of each shape, on a and b before they are
// initialised and outside the timed loop, for the loop's two block shapes
// (full, and the last one of sweeps % h), so that a single timed repetition
// runs at steady-state speed; then a and b are zeroed (halos included, as
// make_field gives them), a gets the initial field and the timed loop runs.
// The sweep that reads a is always an even one (0, 2, ...): the pointers
// swap after every sweep, in tuning and in the loop alike. `first` (when
// given) computes the timed loop's first sweep instead of `update` (rbgs);
// tuning runs `update` only. Collective.
KernelOutcome run_blocks(const KernelRun& run, Field& a, Field& b, int sweeps,
                         const PairBoxFn& update, const PairBoxFn* first = nullptr);

// A kernel that reads one field and writes the other, then swaps them, once
// per iteration (jacobi, spmv): box_op(in, out, box, stores) computes one
// box. With a halo depth h > 1, h iterations per exchange (run_blocks),
// always with cached stores: the next sweep of a tile reads the output from
// cache.
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
  if (domain.config().halo_depth > 1) {
    const PairBoxFn block_update = [&box_op](const Field& in, Field& out, const Box& box, int) {
      box_op(in, out, box, Stores::Cached);
    };
    return run_blocks(run, a, b, run.cfg.iters, block_update);
  }
  Field* cur = &a;
  Field* nxt = &b;
  fill_initial(a, domain.local());
  domain.start_clock();
  const Stores stores = run.stores;
  for (int it = 0; it < run.cfg.iters; ++it) {
    domain.sweep({cur}, [&box_op, cur, nxt, stores](const Box& box, int) {
      box_op(*cur, *nxt, box, stores);
    });
    std::swap(cur, nxt);
  }
  domain.stop_clock();
  KernelOutcome outcome;
  outcome.field = std::move(*cur);
  outcome.iterations = run.cfg.iters;
  return outcome;
}

}  // namespace detail
}  // namespace hympi
