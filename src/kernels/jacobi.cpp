// Jacobi: u_new = (S(u) + f) / 6, one exchange per iteration.
#include "box_kernels.hpp"
#include "kernel_util.hpp"
#include "reference.hpp"

namespace hympi {

namespace {
using detail::finish_streaming;
using detail::write_row;
}  // namespace

// ---- The box loop (every scheme's sweeps call it) ----

void jacobi_box(const Field& u, Field& u_new, const Box& box, Stores stores) {
  if (box.empty()) return;
  const std::ptrdiff_t sj = u.stride_j(), sk = u.stride_k();
  const int n = box.extent(0);
  const auto update = [sj, sk](const double* __restrict c, int i) {
    return (c[i - 1] + c[i + 1] + c[i - sj] + c[i + sj] + c[i - sk] + c[i + sk] + kRhs) * kSixth;
  };
  // Two planes per pass (write_rows_pair and stream_rows_pair say why).
  int k = detail::paired_planes(u, u_new, box, update, stores);
  for (; k < box.hi[2]; ++k) {
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = u.index(box.lo[0], j, k);
      const double* __restrict c = u.data() + base;
      write_row(
          u_new.data() + base, n, stores, [c, update](int i) { return update(c, i); },
          c + sk + detail::kPrefetchAhead);
    }
  }
  finish_streaming(stores);
}

// ---- The frozen serial reference (reference.hpp): the whole global grid,
// plain loops. Do not optimise. ----

namespace ref {

ReferenceResult jacobi(const ReferenceProblem& p) {
  const Grid g{p.global, p.periodic};
  const int iters = p.iters;
  std::vector<double> u = initial(g), v(g.points());
  for (int t = 0; t < iters; ++t) {
    for (int k = 0; k < g.n[2]; ++k)
      for (int j = 0; j < g.n[1]; ++j)
        for (int i = 0; i < g.n[0]; ++i)
          v[g.idx(i, j, k)] = (g.neighbour_sum(u, i, j, k) + kRhs) * kSixth;
    u.swap(v);
  }
  return finished(std::move(u), iters);
}

}  // namespace ref

// ---- The kernel: its facts, its iteration loop, its reference ----

namespace {

class Jacobi final : public Kernel {
 public:
  const KernelInfo& info() const override {
    static const KernelInfo i = [] {
      KernelInfo k;
      k.kind = KernelKind::Jacobi;
      k.name = "jacobi";
      k.description = "Jacobi sweep u_new = (S(u) + f) / 6";
      k.flops_per_point = 8.0;
      k.bytes_per_point = 2 * sizeof(double);  // stream u in, u_new out
      k.fields = 2;
      k.temporal_blocking = true;
      k.streaming_stores = true;
      k.wavefront_planes = 2;  // jacobi_box: two planes per pass
      return k;
    }();
    return i;
  }
  KernelOutcome run(const KernelRun& run) const override {
    return detail::run_ping_pong(run, [](const Field& u, Field& u_new, const Box& b, Stores s) {
      jacobi_box(u, u_new, b, s);
    });
  }
  ReferenceResult reference(const ReferenceProblem& p) const override {
    return ref::jacobi(p);
  }
};

}  // namespace

const Kernel& jacobi_kernel() {
  static const Jacobi k;
  return k;
}

}  // namespace hympi
