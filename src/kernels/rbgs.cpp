// Red-black Gauss-Seidel (seed 002 RB3d): one exchange before each colour.
#include "kernel_util.hpp"
#include "reference.hpp"

namespace hympi {

namespace {

class Rbgs final : public Kernel {
 public:
  const KernelInfo& info() const override {
    static const KernelInfo i = [] {
      KernelInfo k;
      k.kind = KernelKind::Rbgs;
      k.name = "rbgs";
      k.description = "red-black Gauss-Seidel (seed 002 RB3d), exchange before each colour";
      k.sweeps_per_iteration = 2;
      k.flops_per_point = 8.0;
      k.bytes_per_point = 2 * 2 * sizeof(double);  // read and write u in each colour's sweep
      k.fields = 1;
      k.periodic = PeriodicRule::EvenSizes;
      k.periodic_why = "red-black colouring is not consistent across an odd wrap-around";
      return k;
    }();
    return i;
  }
  KernelOutcome run(const KernelRun& run) const override {
    Domain& domain = run.domain;
    const LocalDomain& d = domain.local();
    Field u = domain.make_field();
    detail::fill_initial(u, d);
    domain.start_clock();
    for (int it = 0; it < run.cfg.iters; ++it)
      for (int colour = 0; colour < 2; ++colour)
        domain.sweep({&u}, [&](const Box& box, int) { rbgs_box(u, box, colour, d.offset); });
    domain.stop_clock();
    return {std::move(u), run.cfg.iters, 0.0};
  }
  ReferenceResult reference(const ReferenceProblem& p) const override { return reference_rbgs(p); }
};

}  // namespace

const Kernel& rbgs_kernel() {
  static const Rbgs k;
  return k;
}

}  // namespace hympi
