// Red-black Gauss-Seidel (seed 002 RB3d): one exchange before each colour.
#include "box_kernels.hpp"
#include "kernel_util.hpp"
#include "reference.hpp"

namespace hympi {

// ---- The box loop: one colour in place ----

void rbgs_box(Field& u, const Box& box, int colour, const std::array<int, 3>& offset) {
  if (box.empty()) return;
  const std::ptrdiff_t sj = u.stride_j(), sk = u.stride_k();
  double* d = u.data();
  for (int k = box.lo[2]; k < box.hi[2]; ++k) {
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      // First i of this colour in the row: global parity of (i + j + k).
      const int parity = (offset[0] + box.lo[0] + offset[1] + j + offset[2] + k) & 1;
      const int first = box.lo[0] + ((parity ^ colour) & 1);
      double* row = d + u.index(0, j, k);
      for (int i = first; i < box.hi[0]; i += 2)
        row[i] = (row[i - 1] + row[i + 1] + row[i - sj] + row[i + sj] + row[i - sk] + row[i + sk] +
                  kRhs) * kSixth;
    }
  }
}

// ---- The frozen serial reference (reference.hpp): the whole global grid,
// plain loops. Do not optimise. ----

namespace ref {

ReferenceResult rbgs(const ReferenceProblem& p) {
  const Grid g{p.global, p.periodic};
  const int iters = p.iters;
  std::vector<double> u = initial(g);
  for (int t = 0; t < iters; ++t)
    for (int colour = 0; colour < 2; ++colour)
      for (int k = 0; k < g.n[2]; ++k)
        for (int j = 0; j < g.n[1]; ++j)
          for (int i = 0; i < g.n[0]; ++i)
            if (((i + j + k) & 1) == colour)
              u[g.idx(i, j, k)] = (g.neighbour_sum(u, i, j, k) + kRhs) * kSixth;
  return finished(std::move(u), iters);
}

}  // namespace ref

// ---- The kernel: its facts, its iteration loop, its reference ----

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
  ReferenceResult reference(const ReferenceProblem& p) const override { return ref::rbgs(p); }
};

}  // namespace

const Kernel& rbgs_kernel() {
  static const Rbgs k;
  return k;
}

}  // namespace hympi
