// SpMV: x <- (A x) / 12 with A = 6 x - S(x), matrix-free or on a CRS matrix.
#include "box_kernels.hpp"
#include "kernel_util.hpp"
#include "reference.hpp"

namespace hympi {

// Its box loops are the operator A of stencil.cpp (stencil_spmv_box,
// sell_spmv_box, operator_apply_box), which cg applies too.

// ---- The frozen serial reference (reference.hpp): the whole global grid,
// plain loops. Do not optimise. ----

namespace ref {

ReferenceResult spmv(const ReferenceProblem& p) {
  const Grid g{p.global, p.periodic};
  const int iters = p.iters;
  std::vector<double> x = initial(g), y(g.points());
  for (int t = 0; t < iters; ++t) {
    apply_a(g, x, y, kSpmvScale);
    x.swap(y);
  }
  return finished(std::move(x), iters);
}

}  // namespace ref

// ---- The kernel: its facts, its iteration loop, its reference ----

namespace {

class Spmv final : public Kernel {
 public:
  const KernelInfo& info() const override {
    static const KernelInfo i = [] {
      KernelInfo k;
      k.kind = KernelKind::Spmv;
      k.name = "spmv";
      k.description = "x <- (A x) / 12 with A = 6 x - S(x), matrix-free, CRS or SELL";
      k.flops_per_point = 8.0;
      k.bytes_per_point = 2 * sizeof(double);  // stream x in, y out
      k.bytes_per_point_crs = k.bytes_per_point + kCrsMatrixBytesPerPoint;
      k.bytes_per_point_sell = k.bytes_per_point + kSellMatrixBytesPerPoint;
      k.fields = 2;
      k.temporal_blocking = true;
      k.streaming_stores = true;  // matrix-free only (the stored formats: cached)
      k.wavefront_planes = 2;     // stencil_spmv_box: two planes per pass
      return k;
    }();
    return i;
  }
  KernelOutcome run(const KernelRun& run) const override {
    const StoredMatrix m = run.matrix;
    // Matrix-free and SELL: the sweep without cg's dot product, which spmv
    // would discard (the same y to the last bit).
    if (!m.crs && !m.sell)
      return detail::run_ping_pong(run, [](const Field& x, Field& y, const Box& b, Stores s) {
        stencil_spmv_box(x, y, b, kSpmvScale, s);
      });
    if (m.sell)
      return detail::run_ping_pong(run, [m](const Field& x, Field& y, const Box& b, Stores) {
        sell_spmv_box(*m.sell, x, y, b, kSpmvScale);
      });
    return detail::run_ping_pong(run, [m](const Field& x, Field& y, const Box& b, Stores) {
      operator_apply_box(m, x, y, b, kSpmvScale);
    });
  }
  ReferenceResult reference(const ReferenceProblem& p) const override { return ref::spmv(p); }
};

}  // namespace

const Kernel& spmv_kernel() {
  static const Spmv k;
  return k;
}

}  // namespace hympi
