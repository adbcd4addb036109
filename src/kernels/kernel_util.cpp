#include "kernel_util.hpp"

#include <algorithm>

#include "hympi/error.hpp"

namespace hympi {

namespace detail {

void fill_initial(Field& f, const LocalDomain& d) {
  const Box b = d.box();
#pragma omp parallel for schedule(static)
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i)
        f.at(i, j, k) = initial_value(d.offset[0] + i, d.offset[1] + j, d.offset[2] + k);
}

void fill_value(Field& f, double v) {
  const Box b = f.interior();
#pragma omp parallel for schedule(static)
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i) f.at(i, j, k) = v;
}

KernelOutcome run_blocks(const KernelRun& run, Field& a, Field& b, int sweeps,
                         const PairBoxFn& update, const PairBoxFn* first) {
  Domain& domain = run.domain;
  const int depth = domain.config().halo_depth;
  Field* cur = &a;
  Field* nxt = &b;
  KernelOutcome outcome;
  if (sweeps > 0) {
    const double started = now();
    const int full = std::min(depth, sweeps), last = sweeps % depth;
    outcome.tuning_blocks = domain.tune_block(cur, nxt, full, update);
    if (last > 0 && sweeps > depth) outcome.tuning_blocks += domain.tune_block(cur, nxt, last, update);
    outcome.tuning_s = outcome.tuning_blocks > 0 ? now() - started : 0.0;
    for (Field* f : {&a, &b}) std::fill(f->data(), f->data() + f->count(), 0.0);
    cur = &a;
    nxt = &b;
  }
  fill_initial(a, domain.local());
  domain.start_clock();
  for (int done = 0; done < sweeps; done += depth)
    domain.sweep_block(cur, nxt, std::min(depth, sweeps - done),
                       done == 0 && first ? *first : update, update);
  domain.stop_clock();
  outcome.field = std::move(*cur);
  outcome.iterations = run.cfg.iters;
  return outcome;
}

}  // namespace detail
}  // namespace hympi
