// Red-black Gauss-Seidel (seed 002 RB3d): one exchange before each colour,
// or one per H colours with --halo-depth H (temporal blocking).
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

// ---- The two-field form of one colour (temporal blocking) ----

namespace {

// Points per step of a row: a whole number of SIMD vectors (8 doubles: one
// AVX-512 vector, two AVX ones), even, so that the colour's lanes are the
// same in every step.
constexpr int kColourLanes = 8;

// One row: out[i] = the update's value where (i & 1) == kUpdated, in[i]
// elsewhere. The stencil is computed at every point of a step (one SIMD
// loop) and the other colour's lanes are then taken from `in`: with the
// lanes fixed at compile time the compiler blends with a constant mask.
// Measured in cache (256 x 8 x 8 and 256 x 32 x 8 points, 2-core AMD EPYC
// VM, GCC 12 -O3 -march=native, bench/README.md): as fast as jacobi's row
// and the in-place strided loop; computing only the colour's points over
// stride-2 loads, or copying the row and then updating every other point,
// was 15-60 % slower, and a blend whose mask is computed from i (the plain
// `(i & 1) ? :`) 2-3x.
template <int kUpdated>
inline void colour_row(const double* __restrict c, double* __restrict out, int n, std::ptrdiff_t sj,
                       std::ptrdiff_t sk) {
  const auto value_at = [c, sj, sk](int i) {
    return (c[i - 1] + c[i + 1] + c[i - sj] + c[i + sj] + c[i - sk] + c[i + sk] + kRhs) * kSixth;
  };
  int i = 0;
  for (; i + kColourLanes <= n; i += kColourLanes) {
    double v[kColourLanes];
#pragma omp simd
    for (int l = 0; l < kColourLanes; ++l) v[l] = value_at(i + l);
    for (int l = 0; l < kColourLanes; ++l) out[i + l] = (l & 1) == kUpdated ? v[l] : c[i + l];
  }
  for (; i < n; ++i) out[i] = (i & 1) == kUpdated ? value_at(i) : c[i];
}

}  // namespace

void rbgs_colour_box(const Field& in, Field& out, const Box& box, int colour,
                     const std::array<int, 3>& offset) {
  if (box.empty()) return;
  const std::ptrdiff_t sj = in.stride_j(), sk = in.stride_k();
  const int n = box.extent(0);
  for (int k = box.lo[2]; k < box.hi[2]; ++k) {
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = in.index(box.lo[0], j, k);
      // Global parity of the row's first point (negative local indices of
      // the halo too: & 1 of a negative int is its parity).
      const int parity = (offset[0] + box.lo[0] + offset[1] + j + offset[2] + k) & 1;
      // The colour's points are those at an even i - lo where the row
      // starts on the colour, at an odd one elsewhere.
      if (((parity ^ colour) & 1) == 0)
        colour_row<0>(in.data() + base, out.data() + base, n, sj, sk);
      else
        colour_row<1>(in.data() + base, out.data() + base, n, sj, sk);
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
      // --halo-depth H: H colours per exchange, each a two-field sweep
      // (run_blocked), bit-identical to the in-place ones; two planes per
      // wavefront step, as jacobi's.
      k.temporal_blocking = true;
      k.wavefront_planes = 2;
      k.periodic = PeriodicRule::EvenSizes;
      k.periodic_why = "red-black colouring is not consistent across an odd wrap-around";
      return k;
    }();
    return i;
  }
  KernelOutcome run(const KernelRun& run) const override {
    if (run.domain.config().halo_depth > 1) return run_blocked(run);
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

 private:
  // Temporal blocking: each colour's sweep (half an iteration) as a
  // two-field sweep, `halo_depth` of them per exchange. In-place, a
  // colour's update reads only the other colour's points (every neighbour
  // of the 7-point star has the other parity), which that sweep leaves
  // alone. So the first sweep, red, writes the update into `out` at the red
  // points and copies `in` at the black ones (rbgs_colour_box): the
  // in-place sweep's field to the last bit. Every later sweep is a plain
  // Jacobi sweep (jacobi_box, the same expression): at the colour it
  // updates it computes the in-place update from the other colour's
  // values; at the other colour it recomputes each value from the very
  // neighbours it was computed from one sweep before (they are of the
  // colour that sweep left alone), so the same bits come out again. (From
  // the initial field a Jacobi sweep would not do: its black values were
  // not computed from its red ones.) The Jacobi sweep computes two planes
  // per pass (KernelInfo::wavefront_planes) and blends nothing: rbgs at
  // depth 8 on 256^3 ran 1.11x / 1.17x faster at 1 / 2 ranks than with the
  // colour sweep for every sweep, on a Zen 1 VM (bench/README.md, "rbgs
  // with temporal blocking").
  static KernelOutcome run_blocked(const KernelRun& run) {
    Domain& domain = run.domain;
    const std::array<int, 3> offset = domain.local().offset;
    Field a = domain.make_field(RowLayout::CacheLine), b = domain.make_field(RowLayout::CacheLine);
    const PairBoxFn red_sweep = [offset](const Field& in, Field& out, const Box& box, int) {
      rbgs_colour_box(in, out, box, 0, offset);
    };
    const PairBoxFn jacobi_sweep = [](const Field& in, Field& out, const Box& box, int) {
      jacobi_box(in, out, box, Stores::Cached);
    };
    return detail::run_blocks(run, a, b, 2 * run.cfg.iters, jacobi_sweep, &red_sweep);
  }
};

}  // namespace

const Kernel& rbgs_kernel() {
  static const Rbgs k;
  return k;
}

}  // namespace hympi
