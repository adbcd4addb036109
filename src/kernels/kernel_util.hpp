// Helpers shared by the kernel files and the driver (private to the library).
#pragma once

#include <mpi.h>

#include <utility>

#include "hympi/kernel.hpp"

namespace hympi {
namespace detail {

// Collective over comm.
double allreduce_sum(double v, MPI_Comm comm);

// The reference problem's initial field on the local points.
void fill_initial(Field& f, const LocalDomain& d);
void fill_value(Field& f, double v);

// Sum over threads of a per-thread partial, padded so threads do not share
// cache lines while accumulating.
struct alignas(64) Partial {
  double value = 0;
};

// A kernel that reads one field and writes the other, then swaps them, once
// per iteration (jacobi, spmv): box_op(in, out, box) computes one box.
template <typename BoxOp>
KernelOutcome run_ping_pong(const KernelRun& run, Timers& timers, LoopClock& clock, BoxOp box_op) {
  const LocalDomain& d = run.domain;
  Field a(d.size), b(d.size);
  fill_initial(a, d);
  Field* cur = &a;
  Field* nxt = &b;
  clock.start();
  for (int it = 0; it < run.cfg.iters; ++it) {
    BoxFn fn = [&box_op, cur, nxt](const Box& box, int) { box_op(*cur, *nxt, box); };
    run.scheme.sweep(run.plan, *cur, run.regions, fn, timers);
    std::swap(cur, nxt);
  }
  clock.stop();
  return {std::move(*cur), run.cfg.iters, 0.0};
}

}  // namespace detail
}  // namespace hympi
