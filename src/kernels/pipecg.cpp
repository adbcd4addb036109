// Pipelined conjugate gradient for A u = f (Dirichlet only): Ghysels and
// Vanroose, "Hiding global synchronization latency in the preconditioned
// Conjugate Gradient algorithm", Parallel Computing 40 (2014), Alg. 4
// without the preconditioner. cg (cg.cpp) sums twice per iteration, and
// each sum blocks: beta needs r.r after r's update, which needs alpha,
// which needs p.q. Here one MPI_Iallreduce per iteration carries both
// gamma = r.r and delta = w.r (w = A r, kept by recurrence), and it is in
// flight while the sweep computes q = A w (Domain::begin_sum / end_sum: the
// scheme's communicating thread tests it meanwhile). Per iteration:
//   1. start the sum of (r.r, w.r); q = A w through the scheme (w's halo,
//      the only exchange); wait for the sum;
//   2. beta = gamma / gamma_prev, alpha = gamma / (delta - beta gamma /
//      alpha_prev) (first iteration: beta = 0, alpha = gamma / delta);
//   3. one pass: z = q + beta z, s = w + beta s, p = r + beta p,
//      x += alpha p, r -= alpha s, w -= alpha z, with this rank's r.r and
//      w.r for the next iteration's sum.
// In exact arithmetic the iterates are cg's; in floating point the
// recurrences for r, w, s = A p and z = A s drift from their definitions
// faster than cg's r does (Cools et al., SIAM J. Sci. Comput. 40 (2018)).
// Residual replacement bounds the drift, and the rule is:
//   * every kReplaceEvery iterations, and
//   * whenever the recurrence's residual says converged (the drift check),
// x and p are kept and r = b - A x, w = A r, s = A p, z = A s recomputed
// (two sweeps, each exchanging two fields). After a drift check the loop
// goes on until the recomputed residual is below tol too, so the residual
// reported is always a true one, |b - A x| / |b|, never only the
// recurrence's. A true residual cannot fall much below the rounding error
// of b - A x (cg's recurrence residual can, which is why cg reaches 1e-15
// and pipecg does not: at 64^3 its true residual stalled at 4e-12), so a
// replacement whose true residual is above tol and not below half the
// previous replacement's (at most 100 iterations before) stops the solve
// as stagnated (not converged: `hympi solve` exits 3) instead of running
// to max_iters. Per point that is 15 arrays streamed per iteration
// matrix-free (q = A w: 2; the update: 7 read, 6 written) against cg's 8:
// pipelined cg trades memory traffic for the latency of a blocking sum, and
// wins only where that latency is a large part of an iteration.
#include <cmath>

#include "box_kernels.hpp"
#include "kernel_util.hpp"
#include "reference.hpp"

namespace hympi {

namespace {

// Iterations between residual replacements (besides the drift check at
// convergence): two sweeps per hundred iterations, which keeps the
// recurrences near their definitions on the longer runs of large grids. At
// 64^3, 1 rank, pipecg took 159 iterations to 1e-8 and 200 to 1e-12, cg
// 159 and 199.
constexpr int kReplaceEvery = 100;

// This rank's gamma = r.r and delta = w.r.
struct Dots {
  double rr = 0, wr = 0;
};

// ---- The box loops ----

// y = A x on box in whichever form the operator is stored (no sum).
void apply_a_box(const StoredMatrix& m, const Field& x, Field& y, const Box& box) {
  if (m.sell)
    sell_spmv_box(*m.sell, x, y, box, 1.0);
  else if (m.crs)
    crs_apply_box(*m.crs, x, y, box, 1.0);
  else
    stencil_spmv_box(x, y, box, 1.0);
}

// r = b - r on box (r holds A x): the residual, as the reference forms it.
void rhs_minus_box(Field& r, const Box& box) {
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      double* __restrict rs = r.data() + r.index(box.lo[0], j, k);
#pragma omp simd
      for (int i = 0; i < box.extent(0); ++i) rs[i] = kRhs - rs[i];
    }
}

Dots dots_box(const Field& r, const Field& w, const Box& box) {
  double rr = 0, wr = 0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = r.index(box.lo[0], j, k);
      const double* __restrict rs = r.data() + base;
      const double* __restrict ws = w.data() + base;
#pragma omp simd reduction(+ : rr, wr)
      for (int i = 0; i < box.extent(0); ++i) {
        rr += rs[i] * rs[i];
        wr += ws[i] * rs[i];
      }
    }
  return {rr, wr};
}

struct Vectors {
  Field x, r, w, p, s, z, q;
};

// Step 3 on box, in the reference's order; returns the box's r.r and w.r.
Dots update_box(Vectors& v, double alpha, double beta, const Box& box) {
  double rr = 0, wr = 0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = v.x.index(box.lo[0], j, k);
      double* __restrict xs = v.x.data() + base;
      double* __restrict rs = v.r.data() + base;
      double* __restrict ws = v.w.data() + base;
      double* __restrict ps = v.p.data() + base;
      double* __restrict ss = v.s.data() + base;
      double* __restrict zs = v.z.data() + base;
      const double* __restrict qs = v.q.data() + base;
#pragma omp simd reduction(+ : rr, wr)
      for (int i = 0; i < box.extent(0); ++i) {
        zs[i] = qs[i] + beta * zs[i];
        ss[i] = ws[i] + beta * ss[i];
        ps[i] = rs[i] + beta * ps[i];
        xs[i] += alpha * ps[i];
        rs[i] -= alpha * ss[i];
        ws[i] -= alpha * zs[i];
        rr += rs[i] * rs[i];
        wr += ws[i] * rs[i];
      }
    }
  return {rr, wr};
}

}  // namespace

// ---- The frozen serial reference: the whole global grid, plain loops, the
// same recurrence and replacement rule. Do not optimise. ----

namespace ref {

namespace {

struct PipeVectors {
  std::vector<double> x, r, w, p, s, z, q;
};

// r = b - A x, w = A r, s = A p, z = A s.
void replace_residual(const Grid& g, PipeVectors& v) {
  apply_a(g, v.x, v.r, 1.0);
  for (double& ri : v.r) ri = kRhs - ri;
  apply_a(g, v.p, v.s, 1.0);
  apply_a(g, v.r, v.w, 1.0);
  apply_a(g, v.s, v.z, 1.0);
}

}  // namespace

ReferenceResult pipecg(const ReferenceProblem& prob) {
  const Grid g{prob.global, prob.periodic};
  const std::size_t n = static_cast<std::size_t>(g.points());
  PipeVectors v{std::vector<double>(n, 0.0), std::vector<double>(n, kRhs), std::vector<double>(n),
                std::vector<double>(n, 0.0), std::vector<double>(n, 0.0),
                std::vector<double>(n, 0.0), std::vector<double>(n)};
  apply_a(g, v.r, v.w, 1.0);
  bool r_is_true = true;  // r = b - A x computed, not recurred
  bool checking = false;  // r was just replaced: gamma is a true residual
  int it = 0;
  double gamma0 = 0, gamma_prev = 0, alpha_prev = 0, rel = 0, last_check = HUGE_VAL;
  for (;;) {
    const double gamma = dot(v.r, v.r), delta = dot(v.w, v.r);
    if (it < prob.max_iters) apply_a(g, v.w, v.q, 1.0);
    if (it == 0 && r_is_true && gamma0 == 0) gamma0 = gamma;
    rel = gamma0 > 0 ? std::sqrt(gamma / gamma0) : 0.0;
    if (checking) {  // stagnated: the true residual no longer halves
      checking = false;
      if (rel >= prob.tol && rel > 0.5 * last_check) break;
      last_check = rel;
    }
    if (rel < prob.tol && !r_is_true) {  // the drift check
      replace_residual(g, v);
      r_is_true = checking = true;
      continue;
    }
    if (rel < prob.tol || it >= prob.max_iters) break;
    const double beta = it > 0 ? gamma / gamma_prev : 0.0;
    const double alpha = it > 0 ? gamma / (delta - beta * gamma / alpha_prev) : gamma / delta;
    for (std::size_t i = 0; i < n; ++i) {
      v.z[i] = v.q[i] + beta * v.z[i];
      v.s[i] = v.w[i] + beta * v.s[i];
      v.p[i] = v.r[i] + beta * v.p[i];
      v.x[i] += alpha * v.p[i];
      v.r[i] -= alpha * v.s[i];
      v.w[i] -= alpha * v.z[i];
    }
    gamma_prev = gamma;
    alpha_prev = alpha;
    ++it;
    r_is_true = false;
    if (it % kReplaceEvery == 0) {
      replace_residual(g, v);
      r_is_true = checking = true;
    }
  }
  return finished(std::move(v.x), it, rel);
}

}  // namespace ref

// ---- The kernel: its facts, its iteration loop, its reference ----

namespace {

// One repetition's vectors and the per-thread parts of this rank's dots.
class PipeCgState {
 public:
  PipeCgState(Domain& d, const StoredMatrix& m)
      : domain_(d),
        matrix_(m),
        v_{d.make_field(), d.make_field(), d.make_field(), d.make_field(),
           d.make_field(),  d.make_field(), d.make_field()},
        parts_(static_cast<std::size_t>(d.threads())) {
    detail::fill_value(v_.r, kRhs);
  }
  const Field& x() const { return v_.x; }
  Field& take_x() { return v_.x; }

  // w = A r (r's halo exchanged); returns this rank's dots.
  Dots start() {
    domain_.sweep({&v_.r}, [&](const Box& b, int) { apply_a_box(matrix_, v_.r, v_.w, b); });
    return local_dots([&](const Box& b) { return dots_box(v_.r, v_.w, b); });
  }
  // q = A w through the scheme, while a sum is in flight.
  void apply_q() {
    domain_.sweep({&v_.w}, [&](const Box& b, int) { apply_a_box(matrix_, v_.w, v_.q, b); });
  }
  Dots update(double alpha, double beta) {
    return local_dots([&](const Box& b) { return update_box(v_, alpha, beta, b); });
  }
  // r = b - A x and s = A p (x's and p's halos), then w = A r and z = A s
  // (r's and s's): the reference's operations, so the same values.
  Dots replace_residual() {
    domain_.sweep({&v_.x, &v_.p}, [&](const Box& b, int) {
      apply_a_box(matrix_, v_.x, v_.r, b);
      rhs_minus_box(v_.r, b);
      apply_a_box(matrix_, v_.p, v_.s, b);
    });
    domain_.sweep({&v_.r, &v_.s}, [&](const Box& b, int) {
      apply_a_box(matrix_, v_.r, v_.w, b);
      apply_a_box(matrix_, v_.s, v_.z, b);
    });
    return local_dots([&](const Box& b) { return dots_box(v_.r, v_.w, b); });
  }

 private:
  // One line per thread: no false sharing between the threads' sums.
  struct alignas(64) Part {
    Dots dots;
  };
  // box_dots over every local point (no exchange); this rank's sums, the
  // threads' parts added in thread order.
  template <typename BoxDots>
  Dots local_dots(BoxDots box_dots) {
    for (Part& p : parts_) p.dots = Dots{};
    domain_.for_each([&](const Box& b, int t) {
      const Dots d = box_dots(b);
      parts_[t].dots.rr += d.rr;
      parts_[t].dots.wr += d.wr;
    });
    Dots sum;
    for (const Part& p : parts_) {
      sum.rr += p.dots.rr;
      sum.wr += p.dots.wr;
    }
    return sum;
  }

  Domain& domain_;
  const StoredMatrix& matrix_;
  Vectors v_;
  std::vector<Part> parts_;
};

class PipeCg final : public Kernel {
 public:
  const KernelInfo& info() const override {
    static const KernelInfo i = [] {
      KernelInfo k;
      k.kind = KernelKind::Pipecg;
      k.name = "pipecg";
      k.description =
          "pipelined conjugate gradient (Ghysels-Vanroose): one MPI_Iallreduce per iteration, "
          "overlapped with A w (Dirichlet only)";
      // q = A w (8), the six vector updates (12), r.r and w.r (4).
      k.flops_per_point = 8.0 + 12.0 + 4.0;
      // q = A w reads w and writes q (2); the update reads q, z, w, s, r, p,
      // x and writes all but q (13). A stored matrix adds itself only.
      k.bytes_per_point = (2 + 13) * sizeof(double);
      k.bytes_per_point_crs = k.bytes_per_point + kCrsMatrixBytesPerPoint;
      k.bytes_per_point_sell = k.bytes_per_point + kSellMatrixBytesPerPoint;
      k.fields = 7;  // x, r, w, p, s, z, q
      k.converges = true;
      k.periodic = PeriodicRule::Forbidden;
      k.periodic_why = "the operator is singular and f = 1 is not in its range";
      k.default_study = false;
      k.default_study_why =
          "cg's variant for latency-bound runs: it streams 15 arrays per point and iteration "
          "against cg's 8, so the default study would only get slower; ask for it with --kernels";
      return k;
    }();
    return i;
  }

  KernelOutcome run(const KernelRun& run) const override {
    Domain& domain = run.domain;
    PipeCgState s(domain, run.matrix);
    domain.start_clock();
    Dots local = s.start();
    bool r_is_true = true;  // r = b - A x computed, not recurred
    bool checking = false;  // r was just replaced: gamma is a true residual
    int it = 0;
    double gamma0 = 0, gamma_prev = 0, alpha_prev = 0, rel = 0, last_check = HUGE_VAL;
    for (;;) {
      domain.begin_sum({local.rr, local.wr});
      if (it < run.cfg.max_iters) s.apply_q();  // overlapped with the sum
      const std::vector<double> sums = domain.end_sum();
      const double gamma = sums[0], delta = sums[1];
      if (it == 0 && r_is_true && gamma0 == 0) gamma0 = gamma;
      rel = gamma0 > 0 ? std::sqrt(gamma / gamma0) : 0.0;
      if (checking) {  // stagnated: the true residual no longer halves
        checking = false;
        if (rel >= run.cfg.tol && rel > 0.5 * last_check) break;
        last_check = rel;
      }
      if (rel < run.cfg.tol && !r_is_true) {  // the drift check
        local = s.replace_residual();
        r_is_true = checking = true;
        continue;
      }
      if (rel < run.cfg.tol || it >= run.cfg.max_iters) break;
      const double beta = it > 0 ? gamma / gamma_prev : 0.0;
      const double alpha = it > 0 ? gamma / (delta - beta * gamma / alpha_prev) : gamma / delta;
      local = s.update(alpha, beta);
      gamma_prev = gamma;
      alpha_prev = alpha;
      ++it;
      r_is_true = false;
      if (it % kReplaceEvery == 0) {
        local = s.replace_residual();
        r_is_true = checking = true;
      }
    }
    domain.stop_clock();
    return {std::move(s.take_x()), it, rel};
  }

  ReferenceResult reference(const ReferenceProblem& p) const override { return ref::pipecg(p); }
};

}  // namespace

const Kernel& pipecg_kernel() {
  static const PipeCg k;
  return k;
}

}  // namespace hympi
