// Fast box kernels of the 7-point stencil. The arithmetic is written in the
// same order as the frozen references in reference.cpp, so that results agree
// to rounding whatever the decomposition.
#include "hympi/kernels.hpp"

namespace hympi {

namespace {
constexpr double kSixth = 1.0 / 6.0;
}

void jacobi_box(const Field& u, Field& u_new, const Box& box) {
  if (box.empty()) return;
  const std::ptrdiff_t sj = u.stride_j(), sk = u.stride_k();
  const int n = box.extent(0);
  for (int k = box.lo[2]; k < box.hi[2]; ++k) {
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = u.index(box.lo[0], j, k);
      const double* __restrict c = u.data() + base;
      double* __restrict out = u_new.data() + base;
#pragma omp simd
      for (int i = 0; i < n; ++i)
        out[i] = (c[i - 1] + c[i + 1] + c[i - sj] + c[i + sj] + c[i - sk] + c[i + sk] + kRhs) * kSixth;
    }
  }
}

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

double stencil_apply_box(const Field& x, Field& y, const Box& box, double scale) {
  if (box.empty()) return 0.0;
  const std::ptrdiff_t sj = x.stride_j(), sk = x.stride_k();
  const int n = box.extent(0);
  double dot = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k) {
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = x.index(box.lo[0], j, k);
      const double* __restrict c = x.data() + base;
      double* __restrict out = y.data() + base;
#pragma omp simd reduction(+ : dot)
      for (int i = 0; i < n; ++i) {
        const double v = (6.0 * c[i] - (c[i - 1] + c[i + 1] + c[i - sj] + c[i + sj] + c[i - sk] +
                                        c[i + sk])) * scale;
        out[i] = v;
        dot += c[i] * v;
      }
    }
  }
  return dot;
}

CrsMatrix build_crs(const Field& layout, const std::array<bool, 6>& has_neighbour_side) {
  CrsMatrix a;
  a.size = layout.size();
  const auto& n = a.size;
  const std::int64_t rows = 1LL * n[0] * n[1] * n[2];
  a.row_ptr.assign(static_cast<std::size_t>(rows + 1), 0);
  a.col.reserve(static_cast<std::size_t>(rows * 7));
  a.val.reserve(static_cast<std::size_t>(rows * 7));
  const std::ptrdiff_t step[6] = {-1, 1, -layout.stride_j(), layout.stride_j(), -layout.stride_k(),
                                  layout.stride_k()};
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const std::ptrdiff_t c = layout.index(i, j, k);
        a.col.push_back(static_cast<std::int32_t>(c));
        a.val.push_back(6.0);
        const int idx[3] = {i, j, k};
        for (int dir = 0; dir < 6; ++dir) {
          const int ax = dir / 2;
          const bool at_face = (dir % 2 == 0) ? idx[ax] == 0 : idx[ax] == n[ax] - 1;
          if (at_face && !has_neighbour_side[dir]) continue;  // Dirichlet: coupling to 0
          a.col.push_back(static_cast<std::int32_t>(c + step[dir]));
          a.val.push_back(-1.0);
        }
        a.row_ptr[static_cast<std::size_t>(a.row(i, j, k) + 1)] =
            static_cast<std::int64_t>(a.col.size());
      }
  return a;
}

double crs_apply_box(const CrsMatrix& a, const Field& x, Field& y, const Box& box, double scale) {
  if (box.empty()) return 0.0;
  const double* xs = x.data();
  double* ys = y.data();
  double dot = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k) {
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::int64_t r0 = a.row(box.lo[0], j, k);
      const std::ptrdiff_t out0 = y.index(box.lo[0], j, k);
      for (int i = 0; i < box.extent(0); ++i) {
        double acc = 0.0;
        for (std::int64_t e = a.row_ptr[r0 + i]; e < a.row_ptr[r0 + i + 1]; ++e)
          acc += a.val[e] * xs[a.col[e]];
        const double v = acc * scale;
        ys[out0 + i] = v;
        dot += xs[out0 + i] * v;
      }
    }
  }
  return dot;
}

double axpy_pair_box(Field& x, Field& r, const Field& p, const Field& q, double alpha,
                     const Box& box) {
  double rr = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = x.index(box.lo[0], j, k);
      double* __restrict xs = x.data() + base;
      double* __restrict rs = r.data() + base;
      const double* __restrict ps = p.data() + base;
      const double* __restrict qs = q.data() + base;
#pragma omp simd reduction(+ : rr)
      for (int i = 0; i < box.extent(0); ++i) {
        xs[i] += alpha * ps[i];
        rs[i] -= alpha * qs[i];
        rr += rs[i] * rs[i];
      }
    }
  return rr;
}

void xpay_box(Field& p, const Field& r, double beta, const Box& box) {
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = p.index(box.lo[0], j, k);
      double* __restrict ps = p.data() + base;
      const double* __restrict rs = r.data() + base;
#pragma omp simd
      for (int i = 0; i < box.extent(0); ++i) ps[i] = rs[i] + beta * ps[i];
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

}  // namespace hympi
