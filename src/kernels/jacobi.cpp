// Jacobi: u_new = (S(u) + f) / 6, one exchange per iteration.
#include "kernel_util.hpp"
#include "reference.hpp"

namespace hympi {

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
    return reference_jacobi(p);
  }
};

}  // namespace

const Kernel& jacobi_kernel() {
  static const Jacobi k;
  return k;
}

}  // namespace hympi
