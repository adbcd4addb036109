// The box loops of the built-in kernels (private to the library; the tests
// call them directly). Each kernel's own loops are in its file (jacobi.cpp,
// rbgs.cpp, cg.cpp) beside its reference; stencil.cpp holds what kernels
// share: the 7-point operator A matrix-free, in CRS and in SELL (spmv and
// cg), and the streaming-store helpers below (jacobi and spmv). The
// arithmetic is written in the same order as the frozen references, so that
// results agree to rounding whatever the decomposition.
#pragma once

#include <array>
#include <cstdint>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "hympi/kernels.hpp"

namespace hympi {

constexpr double kSixth = 1.0 / 6.0;

// ---- jacobi.cpp, rbgs.cpp ----

// u_new = (S(u) + f) / 6 on box.
void jacobi_box(const Field& u, Field& u_new, const Box& box, Stores stores = Stores::Cached);
// In-place update of the points of one colour ((gi+gj+gk) % 2 == colour,
// global indices) in box; offset = global index of local point (0,0,0).
void rbgs_box(Field& u, const Box& box, int colour, const std::array<int, 3>& offset);
// The same colour as a two-field sweep (temporal blocking): out = rbgs_box's
// value at the colour's points of box, in's value at the others (in and out
// of one layout). In-place and two-field sweeps give the same bits.
void rbgs_colour_box(const Field& in, Field& out, const Box& box, int colour,
                     const std::array<int, 3>& offset);

// ---- stencil.cpp: the operator A, shared by spmv and cg ----

// y = scale * (6 x - S(x)) on box; returns sum over box of x * y (CG's p.q).
double stencil_apply_box(const Field& x, Field& y, const Box& box, double scale);
// The same y without the sum (spmv discards it): the same operations for y,
// so the same values to the last bit, without the reduction's dependent adds.
void stencil_spmv_box(const Field& x, Field& y, const Box& box, double scale,
                      Stores stores = Stores::Cached);

double crs_apply_box(const CrsMatrix& a, const Field& x, Field& y, const Box& box, double scale);
double sell_apply_box(const SellMatrix& a, const Field& x, Field& y, const Box& box, double scale);
// The same y without the sum (spmv): the same values to the last bit.
void sell_spmv_box(const SellMatrix& a, const Field& x, Field& y, const Box& box, double scale);

// The operator A in whichever form is stored: CRS or SELL when one is given,
// matrix-free otherwise.
inline double operator_apply_box(const StoredMatrix& m, const Field& x, Field& y, const Box& box,
                                 double scale) {
  if (m.sell) return sell_apply_box(*m.sell, x, y, box, scale);
  if (m.crs) return crs_apply_box(*m.crs, x, y, box, scale);
  return stencil_apply_box(x, y, box, scale);
}

// ---- cg.cpp ----

// CG vector steps over a box (cg.cpp), each with the reference's arithmetic
// (ref::cg) in as few sweeps over memory as the recurrence allows; the sum
// forms return their partial dot product.
double dot_box(const Field& a, const Field& b, const Box& box);
double r_update_box(Field& r, const Field& q, double alpha, const Box& box);  // r -= a q; r.r
// x += a p, then p = r + b p: x's update deferred to the sweep that reads p anyway.
void xp_update_box(Field& x, Field& p, const Field& r, double alpha, double beta, const Box& box);
// Matrix-free: p.(A p) without storing A p (from p and its + halo only: the
// sum over all boxes and ranks is p.(A p), one box's sum is not; equal in
// exact arithmetic, not to the last bit); x += a p with r -= a (A p),
// recomputing A p from p (halo still valid) with the very operations of
// stencil_apply_box (scale 1), so r is what it would be from a stored q, to
// the last bit; returns r.r.
double stencil_dot_box(const Field& p, const Box& box);
double stencil_xr_update_box(Field& x, Field& r, const Field& p, double alpha, const Box& box);
// Matrix-free, the next iteration's first sweep fused with p's update, in
// place: p = r + b p on box, and the new p.(A p) in stencil_dot_box's form
// from values of the new p computed on the fly at the forward neighbours
// (from r and the old p, which a forward neighbour still holds: the sweep
// runs forward, and a neighbour in another box is on that box's set-aside
// face, below). Also writes the new p into p's halo cells beside box on
// the faces with a neighbour rank (physical: Domain::physical_boundaries())
// from r's halo, just exchanged, and p's, which holds the neighbour's p: so
// p's halo is the neighbour's new p with no exchange of its own. The
// points of the box's faces that a box before it borders (deferred_faces:
// read by that box as forward neighbours, in any order across threads) go
// to `aside` instead of p: copy them into p (copy_box) once every box of
// the sweep is done. Not in place (in_place false): every point and halo
// cell goes to `aside`, p is only read (the next p is then `aside`).
double p_update_dot_box(Field& p, const Field& r, Field& aside, double beta, const Box& box,
                        const std::array<bool, 6>& physical, bool in_place);
// The faces of box that p_update_dot_box sets aside: its first plane along
// each axis where box does not start at the local box's face (0 to 3,
// overlapping at edges). Returns their count.
int deferred_faces(const Box& box, std::array<Box, 3>& faces);
// to = from on box (the same layout).
void copy_box(const Field& from, Field& to, const Box& box);


// ---- Streaming stores (jacobi's and spmv's one-sweep loops) ----

namespace detail {

// Streaming stores: one vector of kStreamLanes doubles per non-temporal
// store, at an address aligned to the vector (the instruction requires it).
// The computed values reach them through `lanes` (write_row), on the stack
// where GCC does not keep them in registers, and a load wider than the stores
// that wrote its data cannot take it from them: a store-forwarding stall
// on every line. So the width follows the compiler's vectors: 16 bytes
// where GCC's tuning computes in 16-byte vectors (Zen 1, znver1: jacobi
// streaming 1.15-1.18x against 32-byte stores, bench/README.md, "The lanes
// of a streaming line"), 32 bytes for the other AVX targets,
// AVX-512 ones included: their tuning mostly computes in 32-byte vectors
// (icelake-server did, then loaded 64 bytes: a stall), and a 32-byte load
// takes its data from a 64-byte store where one computes in those.
#if defined(__AVX__) && !defined(__tune_znver1__)
constexpr int kStreamLanes = 4;
inline void stream_vector(double* out, const double* lanes) {
  _mm256_stream_pd(out, _mm256_load_pd(lanes));
}
#elif defined(__SSE2__)
constexpr int kStreamLanes = 2;
inline void stream_vector(double* out, const double* lanes) { _mm_stream_pd(out, _mm_load_pd(lanes)); }
#else
constexpr int kStreamLanes = 0;
inline void stream_vector(double*, const double*) {}
#endif

constexpr int kLineDoubles = 8;  // doubles per 64-byte cache line
constexpr std::uintptr_t kLineBytes = sizeof(double) * kLineDoubles;

// One line's values (lanes, aligned) out to an aligned line of out through
// streaming stores, its vectors back to back so that the write-combining
// buffer fills at once.
__attribute__((always_inline)) inline void stream_line(double* out, const double* lanes) {
  constexpr int kLanes = kStreamLanes > 0 ? kStreamLanes : 1;
  for (int v = 0; v < kLineDoubles; v += kLanes) stream_vector(out + v, lanes + v);
}

// How far ahead of the row being computed a streaming sweep prefetches the
// plane it reads from memory (k + 1), in doubles: 16 KiB, about eight rows
// of a 256-wide box. Without it the core's time and the memory's add up
// rather than overlap (bench/README, "The streaming floor"): the hardware
// prefetcher alone keeps too few lines in flight once the loop computes
// between its loads. 512 to 4096 doubles ahead measured alike.
constexpr std::ptrdiff_t kPrefetchAhead = 2048;

// out[i] = value_at(i) for i in [0, n), the values computed by the same
// expression either way. Streaming: the row's whole 64-byte lines (from its
// first aligned one) go through non-temporal stores, one line per step, the
// line's vectors stored back to back (`lanes` in registers where GCC keeps
// them there, on the stack otherwise: kStreamLanes says why its width
// matters), so that each write-combining buffer fills at once; the
// unaligned head and the tail go through ordinary stores. Each line's step
// also prefetches ahead[i] (ahead: the plane the row's loads miss in,
// kPrefetchAhead doubles on; nullptr for none). The caller ends its sweep
// with finish_streaming().
template <class ValueAt>
__attribute__((always_inline)) inline void write_row(double* __restrict out, int n, Stores stores,
                                                     ValueAt value_at,
                                                     const double* ahead = nullptr) {
  if (kStreamLanes == 0 || stores == Stores::Cached) {
#pragma omp simd
    for (int i = 0; i < n; ++i) out[i] = value_at(i);
    return;
  }
  int i = 0;
  for (; i < n && reinterpret_cast<std::uintptr_t>(out + i) % kLineBytes != 0; ++i)
    out[i] = value_at(i);
  for (; i + kLineDoubles <= n; i += kLineDoubles) {
#if defined(__SSE2__)
    if (ahead) _mm_prefetch(reinterpret_cast<const char*>(ahead + i), _MM_HINT_T0);
#endif
    alignas(kLineBytes) double lanes[kLineDoubles];
#pragma omp simd
    for (int l = 0; l < kLineDoubles; ++l) lanes[l] = value_at(i + l);
    stream_line(out + i, lanes);
  }
  for (; i < n; ++i) out[i] = value_at(i);
}

// Two rows of consecutive planes, out0[i] = value0(i) and out1[i] =
// value1(i), in one loop (cached stores). A 7-point update of plane k reads
// plane k + 1, and of plane k + 1 plane k: computed together, each row of
// the two planes comes from L2 (or beyond) once per pass instead of once for
// each plane's pass, a third fewer refills of L1 per update; every value is
// the same expression as alone, so the same bits. The blocked jacobi at
// depth 8 ran 1.04x / 1.09x at 1 / 2 ranks on a 16-core Xeon VM and 1.08x
// on a 2-core AMD EPYC VM (bench/README, "Two planes per pass"). Not
// inlined: in the caller's loop nest GCC ran out of registers for the
// twelve row pointers and reloaded three from the stack on every step
// (out of line, with kStreamLanes' width, on a Zen 1 VM: jacobi in cache
// 1.11x, at depth 8 1.10x, spmv at depth 8 1.29x; bench/README.md, "The
// lanes of a streaming line"); one call per pair of rows costs nothing
// measurable.
template <class Value0, class Value1>
__attribute__((noinline)) void write_rows_pair(double* __restrict out0, double* __restrict out1,
                                               int n, Value0 value0, Value1 value1) {
#pragma omp simd
  for (int i = 0; i < n; ++i) {
    out0[i] = value0(i);
    out1[i] = value1(i);
  }
}

// Two rows of consecutive planes as write_rows_pair, with streaming stores
// (write_row's whole lines: both rows' line per step). out1 - out0 must be
// a whole number of lines (the caller checks). ahead0 and ahead1: the two
// planes the pair reads from memory first (k + 1 and k + 2), prefetched.
// Of the four planes a pair reads, two come from cache instead of two of
// three per plane: on a Zen 1 VM, jacobi 1.10x and spmv 1.06x at 1 rank,
// 1.05x and 1.04x at 2 (bench/README, "Two planes per pass, streaming").
// It lost (0.72x) before kStreamLanes matched the compiler's vectors.
template <class Value0, class Value1>
__attribute__((noinline)) void stream_rows_pair(double* __restrict out0, double* __restrict out1,
                                                int n, Value0 value0, Value1 value1,
                                                const double* ahead0, const double* ahead1) {
  int i = 0;
  for (; i < n && reinterpret_cast<std::uintptr_t>(out0 + i) % kLineBytes != 0; ++i) {
    out0[i] = value0(i);
    out1[i] = value1(i);
  }
  for (; i + kLineDoubles <= n; i += kLineDoubles) {
#if defined(__SSE2__)
    _mm_prefetch(reinterpret_cast<const char*>(ahead0 + i), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(ahead1 + i), _MM_HINT_T0);
#endif
    alignas(kLineBytes) double lanes0[kLineDoubles];
    alignas(kLineBytes) double lanes1[kLineDoubles];
#pragma omp simd
    for (int l = 0; l < kLineDoubles; ++l) {
      lanes0[l] = value0(i + l);
      lanes1[l] = value1(i + l);
    }
    stream_line(out0 + i, lanes0);
    stream_line(out1 + i, lanes1);
  }
  for (; i < n; ++i) {
    out0[i] = value0(i);
    out1[i] = value1(i);
  }
}

// The planes of `box` two at a time from box.lo[2]: out's rows from in's,
// out[p] = update(c, i) with c the row's first point in `in`
// (write_rows_pair, or stream_rows_pair for streaming stores). Returns the
// first plane not done: box.hi[2], or the last plane of an odd count, for
// the caller's one-plane loop (every plane, box.lo[2], where streaming
// stores cannot pair: planes not a whole number of lines apart).
template <class Update>
__attribute__((always_inline)) inline int paired_planes(const Field& in, Field& out, const Box& box,
                                                        Update update,
                                                        Stores stores = Stores::Cached) {
  const std::ptrdiff_t sk = in.stride_k();
  const int n = box.extent(0);
  const bool stream = stores == Stores::Streaming && kStreamLanes > 0;
  int k = box.lo[2];
  if (stream && sk % kLineDoubles != 0) return k;  // planes not whole lines apart
  for (; k + 1 < box.hi[2]; k += 2) {
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t base = in.index(box.lo[0], j, k);
      const double* __restrict c = in.data() + base;
      if (stream)
        stream_rows_pair(
            out.data() + base, out.data() + base + sk, n,
            [c, update](int i) { return update(c, i); },
            [c, sk, update](int i) { return update(c + sk, i); }, c + sk + kPrefetchAhead,
            c + 2 * sk + kPrefetchAhead);
      else
        write_rows_pair(
            out.data() + base, out.data() + base + sk, n,
            [c, update](int i) { return update(c, i); },
            [c, sk, update](int i) { return update(c + sk, i); });
    }
  }
  return k;
}

// Non-temporal stores are weakly ordered: fence them before the sweep's
// results are read by another thread (after the scheme's barrier) or sent.
inline void finish_streaming(Stores stores) {
#if defined(__SSE2__)
  if (stores == Stores::Streaming) _mm_sfence();
#else
  (void)stores;
#endif
}

}  // namespace detail

}  // namespace hympi
