// Unpreconditioned conjugate gradient for A u = f (Dirichlet only), the
// iterates of the frozen reference (ref::cg, below) in fewer sweeps over
// memory. With a stored matrix, three sweeps per iteration:
//   1. q = A p through the scheme (the only halo exchange: p's), p.q summed
//      inside the sweep;
//   2. r -= alpha q, r.r summed in the same pass;
//   3. x += alpha p and p = r + beta p in one pass: x's update waits for the
//      sweep that reads p anyway.
// Matrix-free, two, and q is never stored:
//   1. x += alpha p and r -= alpha (A p), r.r summed, A p recomputed from p
//      (whose halo is valid) by the operations of step 1 above;
//   2. through the scheme, exchanging r: p = r + beta p in place, with the
//      next iteration's p.(A p) summed in the same pass as 6 p.p - 2
//      p.(forward neighbours) (stencil_dot_box's form), the neighbours' new
//      p computed on the fly from r and their old p (each box's first
//      planes, which the box before it reads, set aside and copied in
//      after the sweep); p's halo is updated from r's the same way, so p
//      needs no exchange of its own (p_update_dot_box). The first p.(A p)
//      is one sweep of its own.
// Per point that is 11 arrays streamed with a stored matrix, q's
// write-allocate included (PETSc KSPCG: 14-15: MatMult, VecDot, 2 VecAXPY,
// VecNorm, VecAYPX), and 8 matrix-free (9 under a scheme of thin boxes,
// adaptive's tiles of one plane, where the next p goes to a second array
// with its write-allocate: run_matrix_free says why): one fewer than
// separate p update and p.(A p) sweeps, in two passes instead of three,
// the sum's loads done while the p update waits for memory. Every vector
// value is computed by the same operations in the same order as in the
// reference; matrix-free p.(A p) is summed in another form (the same in
// exact arithmetic), so there the iterates differ by round-off. The two
// reductions per iteration stay two MPI_Allreduce calls:
// beta needs r.r after r's update, which needs alpha, which needs
// p.(A p); merging them (Chronopoulos-Gear, pipelined CG: pipecg.cpp)
// changes the recurrence, not just the order of passes. The reductions are
// the master's Comm; the vector updates outside the scheme's sweep are
// booked as boundary (non-overlappable) computation (matrix-free, p's
// update is in the sweep, and its interior overlaps the exchange of r).
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "box_kernels.hpp"
#include "kernel_util.hpp"
#include "reference.hpp"

namespace hympi {

// ---- The box loops of the vector steps (q = A p is stencil.cpp's operator) ----

double r_update_box(Field& r, const Field& q, double alpha, const Box& box) {
  double rr = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = r.index(box.lo[0], j, k);
      double* __restrict rs = r.data() + base;
      const double* __restrict qs = q.data() + base;
#pragma omp simd reduction(+ : rr)
      for (int i = 0; i < box.extent(0); ++i) {
        rs[i] -= alpha * qs[i];
        rr += rs[i] * rs[i];
      }
    }
  return rr;
}

void xp_update_box(Field& x, Field& p, const Field& r, double alpha, double beta, const Box& box) {
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = x.index(box.lo[0], j, k);
      double* __restrict xs = x.data() + base;
      double* __restrict ps = p.data() + base;
      const double* __restrict rs = r.data() + base;
#pragma omp simd
      for (int i = 0; i < box.extent(0); ++i) {
        xs[i] += alpha * ps[i];
        ps[i] = rs[i] + beta * ps[i];
      }
    }
}

// cg's matrix-free sweeps prefetch the row kPlanesAhead planes above the
// one they compute: a sweep of the 7-point stencil streams one new plane
// from memory while its other reads hit cache, and on the 2-core VM the
// hardware prefetcher alone kept the p.(A p) sweep at 10 GB/s (1 rank,
// 128^3). Issued only where that plane exists (interior or halo), so the
// address stays inside the field. Written out in each loop: through a
// small helper function the p.(A p) sweep measured 0.51-0.54 s against
// 0.38-0.42 (cg 128^3, 319 iterations); in jacobi's and spmv's sweeps the
// prefetch gained nothing.
namespace {
constexpr int kPlanesAhead = 2;
// p_update_dot_box reads two arrays; its rows of plane k + 1, which its
// forward neighbours miss in, prefetched just before the row: cg 128^3
// (319 iterations) took 3.02 s at 1 rank and 2.13 s at 2 against 3.25 and
// 2.22 s with the prefetch 2 planes ahead (3 rounds, medians; 3.04 s with
// none at 1 rank).
constexpr int kFusedPlanesAhead = 1;
}  // namespace

// p.(A p) = sum_i 6 p_i^2 - sum_i sum_nb p_i p_nb, and the second sum counts
// every coupling twice, once from each end: so it is 2 sum_i p_i (p_i+x +
// p_i+y + p_i+z), the forward neighbours only. A coupling across a box or
// rank face is counted by the box below it (which reads the other's points
// or its + halo, exchanged); one into a Dirichlet boundary reads a halo of
// 0. Four loads per point instead of seven: this sweep was core-bound, at
// 1.1-1.3 G points/s from memory while reading one array. The same value
// as p . (A p) in exact arithmetic, not to the last bit (the terms cancel
// differently), so cg's iterates change by round-off only.
double stencil_dot_box(const Field& p, const Box& box) {
  if (box.empty()) return 0.0;
  const std::ptrdiff_t sj = p.stride_j(), sk = p.stride_k();
  const int n = box.extent(0);
  double dot = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k) {
    const bool ahead = k + kPlanesAhead < p.size()[2] + p.halo();
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const double* __restrict c = p.data() + p.index(box.lo[0], j, k);
      if (ahead)
        for (int q = 0; q < n; q += 8) __builtin_prefetch(c + q + kPlanesAhead * sk, 0, 3);
#pragma omp simd reduction(+ : dot)
      for (int i = 0; i < n; ++i) dot += c[i] * (6.0 * c[i] - 2.0 * (c[i + 1] + c[i + sj] + c[i + sk]));
    }
  }
  return dot;
}

// x += a p and r -= a (A p), r.r: A p recomputed from p (its halo valid) by
// the operations of stencil_apply_box (scale 1), so r is what a stored q
// would give, to the last bit; x's update rides on this sweep's read of p.
double stencil_xr_update_box(Field& x, Field& r, const Field& p, double alpha, const Box& box) {
  if (box.empty()) return 0.0;
  const std::ptrdiff_t sj = p.stride_j(), sk = p.stride_k();
  const int n = box.extent(0);
  double rr = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k) {
    const bool ahead = k + kPlanesAhead < p.size()[2] + p.halo();
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = p.index(box.lo[0], j, k);
      const double* __restrict c = p.data() + base;
      double* __restrict rs = r.data() + base;
      double* __restrict xs = x.data() + base;
      if (ahead)
        for (int q = 0; q < n; q += 8) __builtin_prefetch(c + q + kPlanesAhead * sk, 0, 3);
#pragma omp simd reduction(+ : rr)
      for (int i = 0; i < n; ++i) {
        const double q =
            (6.0 * c[i] - (c[i - 1] + c[i + 1] + c[i - sj] + c[i + sj] + c[i - sk] + c[i + sk])) * 1.0;
        xs[i] += alpha * c[i];
        rs[i] -= alpha * q;
        rr += rs[i] * rs[i];
      }
    }
  }
  return rr;
}

int deferred_faces(const Box& box, std::array<Box, 3>& faces) {
  int count = 0;
  if (box.empty()) return 0;
  for (int d = 0; d < 3; ++d) {
    if (box.lo[d] == 0) continue;  // the local box's own face: no box below
    Box face = box;
    face.hi[d] = box.lo[d] + 1;
    faces[static_cast<std::size_t>(count++)] = face;
  }
  return count;
}

double p_update_dot_box(Field& p, const Field& r, Field& aside, double beta, const Box& box,
                        const std::array<bool, 6>& physical, bool in_place) {
  if (box.empty()) return 0.0;
  const std::ptrdiff_t sj = p.stride_j(), sk = p.stride_k();
  const int n = box.extent(0);
  // In place, the box's first point of each row goes aside when a box lies
  // before it along i; so do the rows of its first row or plane along j
  // and k when a box lies before it there.
  const int first_aside = in_place && box.lo[0] > 0 ? 1 : 0;
  double dot = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k) {
    const bool ahead = k + kFusedPlanesAhead < p.size()[2] + p.halo();
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = p.index(box.lo[0], j, k);
      const double* __restrict rs = r.data() + base;
      // Read and written in place: not __restrict. Each point is written
      // after its last read in this row: an iteration reads its forward
      // neighbour i + 1 before it writes i, a lexically forward dependence,
      // which SIMD lanes running the statements in order keep (the loads of
      // a vector of iterations come before its stores).
      double* ps = p.data() + base;
      double* __restrict out_aside = aside.data() + base;
      const bool row_aside = !in_place || (k == box.lo[2] && box.lo[2] > 0) ||
                             (j == box.lo[1] && box.lo[1] > 0);
      if (ahead)
        for (int q = 0; q < n; q += 8) {
          __builtin_prefetch(rs + q + kFusedPlanesAhead * sk, 0, 3);
          __builtin_prefetch(ps + q + kFusedPlanesAhead * sk, 0, 3);
        }
      const auto v = [rs, ps, beta](std::ptrdiff_t i) { return rs[i] + beta * ps[i]; };
      const auto term = [&v, sj, sk](std::ptrdiff_t i, double c) {
        return c * (6.0 * c - 2.0 * (v(i + 1) + v(i + sj) + v(i + sk)));
      };
      // Points [0, aside_end) of the row go aside, the rest in place.
      const int aside_end = row_aside ? n : first_aside;
#pragma omp simd reduction(+ : dot)
      for (int i = 0; i < aside_end; ++i) {
        const double c = v(i);
        out_aside[i] = c;
        dot += term(i, c);
      }
#pragma omp simd reduction(+ : dot)
      for (int i = aside_end; i < n; ++i) {
        const double c = v(i);
        dot += term(i, c);
        ps[i] = c;
      }
    }
  }
  // The halo cells beside the box on faces with a neighbour rank: the
  // neighbour's p' there, from r's halo (just exchanged) and p's (the
  // neighbour's p, kept so by this same update every iteration). Only this
  // box reads them in this sweep (its last points' forward neighbours),
  // above, before they change here.
  Field& halo_out = in_place ? p : aside;
  const std::array<int, 3> size = p.size();
  for (int d = 0; d < 3; ++d)
    for (int side = 0; side < 2; ++side) {
      const bool at_face = side == 0 ? box.lo[d] == 0 : box.hi[d] == size[d];
      if (!at_face || physical[2 * d + side]) continue;
      Box face = box;
      face.lo[d] = side == 0 ? -1 : size[d];
      face.hi[d] = face.lo[d] + 1;
      for (int k = face.lo[2]; k < face.hi[2]; ++k)
        for (int j = face.lo[1]; j < face.hi[1]; ++j)
          for (int i = face.lo[0]; i < face.hi[0]; ++i)
            halo_out.at(i, j, k) = r.at(i, j, k) + beta * p.at(i, j, k);
    }
  return dot;
}

void copy_box(const Field& from, Field& to, const Box& box) {
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = to.index(box.lo[0], j, k);
      std::copy(from.data() + base, from.data() + base + box.extent(0), to.data() + base);
    }
}

double dot_box(const Field& a, const Field& b, const Box& box) {
  double s = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = a.index(box.lo[0], j, k);
      const double* __restrict as = a.data() + base;
      const double* __restrict bs = b.data() + base;
#pragma omp simd reduction(+ : s)
      for (int i = 0; i < box.extent(0); ++i) s += as[i] * bs[i];
    }
  return s;
}

// ---- The frozen serial reference (reference.hpp): the whole global grid,
// plain loops. Do not optimise. ----

namespace ref {

ReferenceResult cg(const ReferenceProblem& prob) {
  const Grid g{prob.global, prob.periodic};
  const double tol = prob.tol;
  const int max_iters = prob.max_iters;
  std::vector<double> x(g.points(), 0.0), r(g.points(), kRhs), p = r, q(g.points());
  double rr = dot(r, r);
  const double rr0 = rr;
  int it = 0;
  double rel = 1.0;
  while (it < max_iters && rel >= tol) {
    apply_a(g, p, q, 1.0);
    const double alpha = rr / dot(p, q);
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    const double rr_new = dot(r, r);
    ++it;
    rel = std::sqrt(rr_new / rr0);
    const double beta = rr_new / rr;
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = r[i] + beta * p[i];
    rr = rr_new;
  }
  return finished(std::move(x), it, rel);
}

}  // namespace ref

// ---- The kernel: its facts, its iteration loop, its reference ----

namespace {

// One repetition's vectors. Sums over threads and ranks go through the
// Domain: the vector updates as non-overlappable computation, the reductions
// as the master's communication.
struct CgState {
  explicit CgState(Domain& d)
      : domain(d), x(d.make_field()), r(d.make_field()), p(d.make_field()), extra(d.make_field()) {
    detail::fill_value(r, kRhs);
    detail::fill_value(p, kRhs);
  }
  Domain& domain;
  // extra: q = A p with a stored matrix; matrix-free, the points of the
  // next p that the fused sweep sets aside (or the whole next p under thin
  // boxes).
  Field x, r, p, extra;
};

class Cg final : public Kernel {
 public:
  const KernelInfo& info() const override {
    static const KernelInfo i = [] {
      KernelInfo k;
      k.kind = KernelKind::Cg;
      k.name = "cg";
      k.description = "unpreconditioned conjugate gradient for A u = f (Dirichlet only)";
      k.flops_per_point = 8.0 + 6.0 + 2.0;  // apply A, x and r update, p update
      // Arrays streamed matrix-free: x and r update (p, r, x read; r, x
      // written: 5), then p's update with p.(A p) in place (r and p read, p
      // written: 3; 4 under adaptive's thin tiles, run_matrix_free). A
      // stored matrix: q = A p (p read, q written), r update (q, r, r), x
      // and p update (x, p, r, x, p), and q's write-allocate: 11 besides
      // the matrix.
      k.bytes_per_point = 8 * sizeof(double);
      k.bytes_per_point_crs = 11 * sizeof(double) + kCrsMatrixBytesPerPoint;
      k.bytes_per_point_sell = 11 * sizeof(double) + kSellMatrixBytesPerPoint;
      k.fields = 4;  // x, r, p and q (stored matrix) or p's set-aside points (matrix-free)
      k.converges = true;
      k.periodic = PeriodicRule::Forbidden;
      k.periodic_why = "the operator is singular and f = 1 is not in its range";
      return k;
    }();
    return i;
  }

  KernelOutcome run(const KernelRun& run) const override {
    return run.matrix.crs || run.matrix.sell ? run_stored(run) : run_matrix_free(run);
  }

  ReferenceResult reference(const ReferenceProblem& p) const override { return ref::cg(p); }

 private:
  // A stored matrix: q = A p with p's exchange and p.q, then r -= alpha q
  // with r.r, then x and p in one pass.
  static KernelOutcome run_stored(const KernelRun& run) {
    Domain& domain = run.domain;
    CgState s(domain);
    Field& q = s.extra;
    domain.start_clock();
    double rr = domain.for_each_sum([&](const Box& b, int) { return dot_box(s.r, s.r, b); });
    const double rr0 = rr;
    double rel = rr0 > 0 ? 1.0 : 0.0;
    int it = 0;
    while (it < run.cfg.max_iters && rel >= run.cfg.tol) {
      const double p_q = domain.sweep_sum(
          {&s.p}, [&](const Box& box, int) { return operator_apply_box(run.matrix, s.p, q, box, 1.0); });
      const double alpha = rr / p_q;
      const double rr_new =
          domain.for_each_sum([&](const Box& b, int) { return r_update_box(s.r, q, alpha, b); });
      ++it;
      rel = std::sqrt(rr_new / rr0);
      const double beta = rr_new / rr;
      domain.for_each([&](const Box& b, int) { xp_update_box(s.x, s.p, s.r, alpha, beta, b); });
      rr = rr_new;
    }
    domain.stop_clock();
    return {std::move(s.x), it, rel};
  }

  // Matrix-free: p.(A p) with p's exchange once; then per iteration x and r
  // (r.r), and, unless converged, one sweep that exchanges r and updates p
  // = r + beta p with its p.(A p) (p_update_dot_box): two passes over
  // memory per iteration instead of three (cg 128^3 1.08x at 1 rank and
  // 1.05x at 2 on a 2-core Zen 1 VM). In place where the scheme's boxes are
  // thick, 8 arrays per point instead of 9 (1.05x / 1.10x more): the points
  // p_update_dot_box sets aside (a box's first planes, which the box before
  // it reads) are copied into p after the sweep, when every box has read
  // them. A set-aside point moves 4 arrays more than one in place (written
  // aside with its write-allocate, read back, written into p with its), so
  // where they pass a tenth of the points (adaptive's tiles of one plane),
  // the sweeps write the whole next p into the second array instead, 9
  // arrays per point: checked on each rank after each sweep in place (so
  // after its first), and kept for the rest of the solve; the same values
  // either way. The iterates are those of the unfused loop (p by the same
  // expression; p.(A p) summed in another order: round-off).
  static KernelOutcome run_matrix_free(const KernelRun& run) {
    Domain& domain = run.domain;
    CgState s(domain);
    Field* p = &s.p;
    Field* aside = &s.extra;
    bool in_place = true;
    const std::array<bool, 6> physical = domain.physical_boundaries();
    const std::array<int, 3> size = s.p.size();
    const double points = 1.0 * size[0] * size[1] * size[2];
    // Per thread, the faces its boxes set aside in this sweep.
    std::vector<std::vector<Box>> set_aside(static_cast<std::size_t>(domain.threads()));
    domain.start_clock();
    double rr = domain.for_each_sum([&](const Box& b, int) { return dot_box(s.r, s.r, b); });
    const double rr0 = rr;
    double rel = rr0 > 0 ? 1.0 : 0.0;
    int it = 0;
    double p_ap = 0.0;
    if (it < run.cfg.max_iters && rel >= run.cfg.tol)
      p_ap = domain.sweep_sum({p}, [&](const Box& box, int) { return stencil_dot_box(*p, box); });
    while (it < run.cfg.max_iters && rel >= run.cfg.tol) {
      const double alpha = rr / p_ap;
      const double rr_new = domain.for_each_sum(
          [&](const Box& b, int) { return stencil_xr_update_box(s.x, s.r, *p, alpha, b); });
      ++it;
      rel = std::sqrt(rr_new / rr0);
      const double beta = rr_new / rr;
      rr = rr_new;
      if (it >= run.cfg.max_iters || rel < run.cfg.tol) break;
      p_ap = domain.sweep_sum({&s.r}, [&](const Box& box, int t) {
        if (in_place) {
          std::array<Box, 3> faces;
          const int count = deferred_faces(box, faces);
          auto& mine = set_aside.at(static_cast<std::size_t>(t));
          mine.insert(mine.end(), faces.begin(), faces.begin() + count);
        }
        return p_update_dot_box(*p, s.r, *aside, beta, box, physical, in_place);
      });
      if (!in_place) {
        std::swap(p, aside);
        continue;
      }
      domain.for_each([&](const Box& b, int) {
        for (const auto& faces : set_aside)
          for (const Box& face : faces) copy_box(*aside, *p, intersect(face, b));
      });
      double aside_points = 0.0;
      for (auto& faces : set_aside) {
        for (const Box& face : faces)
          aside_points += 1.0 * face.extent(0) * face.extent(1) * face.extent(2);
        faces.clear();
      }
      in_place = aside_points <= 0.1 * points;
    }
    domain.stop_clock();
    return {std::move(s.x), it, rel};
  }
};

}  // namespace

const Kernel& cg_kernel() {
  static const Cg k;
  return k;
}

}  // namespace hympi
