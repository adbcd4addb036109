// SpMV: x <- (A x) / 12 with A = 6 x - S(x), matrix-free or on a CRS matrix.
#include "kernel_util.hpp"
#include "reference.hpp"

namespace hympi {

namespace {

class Spmv final : public Kernel {
 public:
  const KernelInfo& info() const override {
    static const KernelInfo i = [] {
      KernelInfo k;
      k.kind = KernelKind::Spmv;
      k.name = "spmv";
      k.description = "x <- (A x) / 12 with A = 6 x - S(x), matrix-free or CRS";
      k.flops_per_point = 8.0;
      k.bytes_per_point = 2 * sizeof(double);  // stream x in, y out
      k.bytes_per_point_crs = k.bytes_per_point + kCrsMatrixBytesPerPoint;
      k.fields = 2;
      return k;
    }();
    return i;
  }
  KernelOutcome run(const KernelRun& run) const override {
    const CrsMatrix* crs = run.crs;
    return detail::run_ping_pong(run, [crs](const Field& x, Field& y, const Box& b) {
      operator_apply_box(crs, x, y, b, kSpmvScale);
    });
  }
  ReferenceResult reference(const ReferenceProblem& p) const override { return reference_spmv(p); }
};

}  // namespace

const Kernel& spmv_kernel() {
  static const Spmv k;
  return k;
}

}  // namespace hympi
