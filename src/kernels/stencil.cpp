// What the kernels share: the 7-point operator A (y = scale A x) on a box,
// matrix-free, in CRS and in SELL-C-sigma, with and without cg's sum x.y
// (spmv and cg), and the stores a sweep uses. The arithmetic is written in
// the same order as the frozen reference (spmv.cpp), so that results agree
// to rounding whatever the decomposition. Each kernel's own box loops are in
// its file (box_kernels.hpp).
#include <algorithm>
#include <cstdint>

#include "box_kernels.hpp"

namespace hympi {

namespace {
constexpr int kSellSlots = 7;  // diagonal and six neighbours
using detail::finish_streaming;
using detail::kStreamLanes;
using detail::write_row;
}  // namespace

const char* stores_name(Stores s) { return s == Stores::Streaming ? "streaming" : "cached"; }

bool streaming_stores_available() { return kStreamLanes > 0; }

namespace {

// y = scale * (6 x - S(x)) on box, and with kDot the sum of x * y. One loop
// for both, so that spmv (no sum) and cg (the sum) compute the same y.
// Without the sum (spmv), the output may be written with streaming stores.
template <bool kDot>
double stencil_sweep(const Field& x, Field& y, const Box& box, double scale, Stores stores) {
  if (box.empty()) return 0.0;
  const std::ptrdiff_t sj = x.stride_j(), sk = x.stride_k();
  const int n = box.extent(0);
  double dot = 0.0;
  const auto update = [sj, sk, scale](const double* __restrict c, int i) {
    return (6.0 * c[i] - (c[i - 1] + c[i + 1] + c[i - sj] + c[i + sj] + c[i - sk] + c[i + sk])) *
           scale;
  };
  // spmv: two planes per pass (write_rows_pair and stream_rows_pair say why).
  int k = kDot ? box.lo[2] : detail::paired_planes(x, y, box, update, stores);
  for (; k < box.hi[2]; ++k) {
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = x.index(box.lo[0], j, k);
      const double* __restrict c = x.data() + base;
      double* __restrict out = y.data() + base;
      const auto value_at = [c, update](int i) { return update(c, i); };
      if constexpr (kDot) {
#pragma omp simd reduction(+ : dot)
        for (int i = 0; i < n; ++i) {
          const double v = value_at(i);
          out[i] = v;
          dot += c[i] * v;
        }
      } else {
        write_row(out, n, stores, value_at, c + sk + detail::kPrefetchAhead);
      }
    }
  }
  if constexpr (!kDot) finish_streaming(stores);
  return dot;
}

}  // namespace

double stencil_apply_box(const Field& x, Field& y, const Box& box, double scale) {
  return stencil_sweep<true>(x, y, box, scale, Stores::Cached);
}

void stencil_spmv_box(const Field& x, Field& y, const Box& box, double scale, Stores stores) {
  stencil_sweep<false>(x, y, box, scale, stores);
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

SellMatrix build_sell(const Field& layout, const std::array<bool, 6>& has_neighbour_side,
                      bool compress_columns) {
  constexpr int C = kSellChunk;
  constexpr int kSlots = kSellSlots;
  SellMatrix a;
  a.size = layout.size();
  const auto& n = a.size;
  a.chunks_per_line = (n[0] + C - 1) / C;
  const std::int64_t chunks = 1LL * a.chunks_per_line * n[1] * n[2];
  a.chunk_ptr.resize(static_cast<std::size_t>(chunks + 1));
  a.base.resize(static_cast<std::size_t>(chunks * kSlots));
  a.mask.assign(static_cast<std::size_t>(chunks), 0);
  a.off_ptr.resize(static_cast<std::size_t>(chunks + 1));
  a.val.resize(static_cast<std::size_t>(chunks * kSlots * C));
  const std::ptrdiff_t step[kSlots] = {0,  -1, 1, -layout.stride_j(), layout.stride_j(),
                                       -layout.stride_k(), layout.stride_k()};
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int ic = 0; ic < a.chunks_per_line; ++ic) {
        const std::int64_t c = a.chunk(ic, j, k);
        const std::int64_t p = c * kSlots * C;
        a.chunk_ptr[static_cast<std::size_t>(c)] = p;
        a.off_ptr[static_cast<std::size_t>(c)] = static_cast<std::int64_t>(a.off.size());
        const int i0 = ic * C;
        const std::ptrdiff_t diag0 = layout.index(i0, j, k);
        for (int s = 0; s < kSlots; ++s) {
          a.base[static_cast<std::size_t>(p / C + s)] = static_cast<std::int32_t>(diag0 + step[s]);
          // Row r of every slot reads column base + r: consecutive, unless
          // the plain layout is asked for.
          if (!compress_columns) {
            a.mask[static_cast<std::size_t>(c)] |= static_cast<std::uint8_t>(1u << s);
            for (int r = 0; r < C; ++r) a.off.push_back(static_cast<std::uint16_t>(r));
          }
          for (int r = 0; r < C; ++r) {
            const std::size_t e = static_cast<std::size_t>(p + s * C + r);
            const int idx[3] = {i0 + r, j, k};
            if (idx[0] >= n[0]) {  // padding row past the line's end: never computed
              a.val[e] = 0.0;
              continue;
            }
            // Slot s > 0 is direction s - 1 (-i, +i, -j, +j, -k, +k).
            bool coupled = true;
            if (s > 0) {
              const int dir = s - 1, ax = dir / 2;
              const bool at_face = (dir % 2 == 0) ? idx[ax] == 0 : idx[ax] == n[ax] - 1;
              coupled = !(at_face && !has_neighbour_side[dir]);
            }
            a.val[e] = s == 0 ? 6.0 : (coupled ? -1.0 : 0.0);
          }
        }
      }
  a.chunk_ptr[static_cast<std::size_t>(chunks)] = chunks * kSlots * C;
  a.off_ptr[static_cast<std::size_t>(chunks)] = static_cast<std::int64_t>(a.off.size());
  return a;
}

namespace {

// Rows r_lo..r_hi-1 of one SELL chunk, one row at a time (chunks that a box
// cuts). o: the chunk's offsets, one run of C per masked slot.
template <bool kDot>
double sell_rows(const double* __restrict v, const std::int32_t* __restrict base,
                 unsigned mask, const std::uint16_t* __restrict o, int width, const double* xs,
                 double* ys, std::ptrdiff_t out0, int r_lo, int r_hi, double scale) {
  constexpr int C = kSellChunk;
  double dot = 0.0;
  for (int r = r_lo; r < r_hi; ++r) {
    double acc = 0.0;
    const std::uint16_t* os = o;
    for (int s = 0; s < width; ++s) {
      int col_off = r;
      if (mask >> s & 1u) {
        col_off = os[r];
        os += C;
      }
      acc += v[s * C + r] * xs[base[s] + col_off];
    }
    const double y = acc * scale;
    ys[out0 + r] = y;
    if constexpr (kDot) dot += xs[out0 + r] * y;
  }
  return dot;
}

// Rows r_lo..r_hi-1 of a chunk of seven consecutive slots (every chunk of
// this operator with compressed columns). The slots are named one by one so
// that the compiler keeps each row's sum in a vector register and loads x
// straight from seven row pointers: a loop over slots into an acc[C] array
// made it compute the pointers in vector registers and spill the sums (2.6x
// slower in cache). Inlined, so that whole chunks get a loop of constant
// length (a variable one cost 15-20 %).
template <bool kDot>
__attribute__((always_inline)) inline double sell_chunk7(
    const double* __restrict v, const std::int32_t* __restrict base, const double* xs,
    double* __restrict yo, const double* __restrict xo, int r_lo, int r_hi, double scale) {
  constexpr int C = kSellChunk;
  static_assert(kSellSlots == 7, "the unrolled chunk names seven slots");
  const double* __restrict x0 = xs + base[0];
  const double* __restrict x1 = xs + base[1];
  const double* __restrict x2 = xs + base[2];
  const double* __restrict x3 = xs + base[3];
  const double* __restrict x4 = xs + base[4];
  const double* __restrict x5 = xs + base[5];
  const double* __restrict x6 = xs + base[6];
  double dot = 0.0;
#pragma omp simd reduction(+ : dot)
  for (int r = r_lo; r < r_hi; ++r) {
    double acc = 0.0;
    acc += v[r] * x0[r];
    acc += v[C + r] * x1[r];
    acc += v[2 * C + r] * x2[r];
    acc += v[3 * C + r] * x3[r];
    acc += v[4 * C + r] * x4[r];
    acc += v[5 * C + r] * x5[r];
    acc += v[6 * C + r] * x6[r];
    const double yv = acc * scale;
    yo[r] = yv;
    if constexpr (kDot) dot += xo[r] * yv;
  }
  return dot;
}

// y = scale * A x on box with A in SELL, and with kDot the sum of x * y (one
// loop for both, so that spmv and cg compute the same y). Every row sums its
// slots in slot order, as CRS and sell_rows do: the same y to the last bit.
template <bool kDot>
double sell_sweep(const SellMatrix& a, const Field& x, Field& y, const Box& box, double scale) {
  if (box.empty()) return 0.0;
  constexpr int C = kSellChunk;
  const double* xs = x.data();
  double* ys = y.data();
  double dot = 0.0;
  const int lo = box.lo[0], hi = box.hi[0];
  for (int k = box.lo[2]; k < box.hi[2]; ++k) {
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      for (int ic = lo / C; ic * C < hi; ++ic) {
        const std::int64_t c = a.chunk(ic, j, k);
        const std::int64_t p = a.chunk_ptr[c];
        const int width = static_cast<int>((a.chunk_ptr[c + 1] - p) / C);
        const double* __restrict v = a.val.data() + p;
        const std::int32_t* __restrict base = a.base.data() + p / C;
        const unsigned mask = a.mask[c];
        const std::uint16_t* __restrict o = a.off.data() + a.off_ptr[c];
        const int i0 = ic * C;
        const std::ptrdiff_t out0 = y.index(i0, j, k);
        // Rows r_lo..r_hi-1 of the chunk lie in the box (all C unless the
        // box cuts the chunk: a box edge inside an i-line).
        const int r_lo = std::max(lo - i0, 0), r_hi = std::min(hi - i0, C);
        double* __restrict yo = ys + out0;
        const double* __restrict xo = xs + out0;
        if (mask == 0 && width == kSellSlots) {  // the common chunk
          if (r_lo == 0 && r_hi == C)  // whole: a loop of constant length
            dot += sell_chunk7<kDot>(v, base, xs, yo, xo, 0, C, scale);
          else
            dot += sell_chunk7<kDot>(v, base, xs, yo, xo, r_lo, r_hi, scale);
          continue;
        }
        if (r_lo > 0 || r_hi < C) {  // a cut chunk with offsets: row by row
          dot += sell_rows<kDot>(v, base, mask, o, width, xs, ys, out0, r_lo, r_hi, scale);
          continue;
        }
        // A whole chunk with fewer slots or with 16-bit offsets.
        double acc[C] = {};
        for (int s = 0; s < width; ++s) {
          const double* __restrict xb = xs + base[s];
          const double* __restrict vs = v + s * C;
          if (mask >> s & 1u) {
#pragma omp simd
            for (int r = 0; r < C; ++r) acc[r] += vs[r] * xb[o[r]];
            o += C;
          } else {
#pragma omp simd
            for (int r = 0; r < C; ++r) acc[r] += vs[r] * xb[r];
          }
        }
#pragma omp simd reduction(+ : dot)
        for (int r = 0; r < C; ++r) {
          const double yv = acc[r] * scale;
          yo[r] = yv;
          if constexpr (kDot) dot += xo[r] * yv;
        }
      }
    }
  }
  return dot;
}

}  // namespace

double sell_apply_box(const SellMatrix& a, const Field& x, Field& y, const Box& box, double scale) {
  return sell_sweep<true>(a, x, y, box, scale);
}

void sell_spmv_box(const SellMatrix& a, const Field& x, Field& y, const Box& box, double scale) {
  sell_sweep<false>(a, x, y, box, scale);
}

}  // namespace hympi
