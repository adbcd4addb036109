// Helpers shared by the kernel files and the driver (private to the library).
#pragma once

#include <mpi.h>

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
  fill_initial(a, domain.local());
  Field* cur = &a;
  Field* nxt = &b;
  const int halo_depth = domain.config().halo_depth;
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
    const PairBoxFn update = [&box_op](const Field& in, Field& out, const Box& box, int) {
      box_op(in, out, box, Stores::Cached);
    };
    for (int it = 0; it < run.cfg.iters; it += halo_depth)
      domain.sweep_block(cur, nxt, std::min(halo_depth, run.cfg.iters - it), update);
  }
  domain.stop_clock();
  return {std::move(*cur), run.cfg.iters, 0.0};
}

}  // namespace detail
}  // namespace hympi
