// The kernels' box loops (box_kernels.hpp), each against its reference or
// against another form of the same operator: jacobi, rbgs's colour sweeps,
// the operator A matrix-free, in CRS and in SELL, streaming against cached
// stores, and the serial CG reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hympi/hympi.hpp"
#include "kernels/box_kernels.hpp"

using namespace hympi;

namespace {
// The reference problem's initial values on every point of x, its one-layer
// halo included (the kernels' tests read the halo as neighbours' values).
void fill_initial_with_halo(Field& x) {
  const std::array<int, 3>& n = x.size();
  for (int k = -1; k <= n[2]; ++k)
    for (int j = -1; j <= n[1]; ++j)
      for (int i = -1; i <= n[0]; ++i) x.at(i, j, k) = initial_value(i + 1, j + 1, k + 1);
}
}  // namespace

TEST(Kernels, JacobiBoxMatchesReferenceOnOneBox) {
  // One sweep on a Dirichlet 6x5x4 grid as one box equals the reference.
  std::array<int, 3> n{6, 5, 4};
  Field u(n), v(n);
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 5; ++j)
      for (int i = 0; i < 6; ++i) u.at(i, j, k) = initial_value(i, j, k);
  jacobi_box(u, v, u.interior());
  ReferenceResult ref = reference_solve(KernelKind::Jacobi, n, false, 1, 0, 0);
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 5; ++j)
      for (int i = 0; i < 6; ++i) EXPECT_EQ(v.at(i, j, k), ref.field[i + 6 * (j + 5 * k)]);
}

// rbgs with temporal blocking (rbgs.cpp): one colour swept from a field
// into a second one equals the in-place colour sweep to the last bit, on a
// box reaching into the halo (negative local indices) with an odd global
// offset, rows of whole 8-point steps and a tail; the other colour does not
// (a wrong colour choice is caught). Red then black, a to b and back, gives
// the reference's iterations.
TEST(Kernels, RbgsColourSweepIsTheInPlaceOne) {
  const std::array<int, 3> n{19, 6, 5};
  const std::array<int, 3> offset{3, 8, 2};  // local (0,0,0) is a black point
  Field u(n, 2, RowLayout::CacheLine), out(n, 2, RowLayout::CacheLine);
  for (int k = -2; k < n[2] + 2; ++k)
    for (int j = -2; j < n[1] + 2; ++j)
      for (int i = -2; i < n[0] + 2; ++i) u.at(i, j, k) = initial_value(i + 2, j + 2, k + 2);
  const Box box{{-1, -1, -1}, {n[0] + 1, n[1] + 1, n[2] + 1}};
  for (int colour = 0; colour < 2; ++colour) {
    Field in_place(n, 2, RowLayout::CacheLine);
    std::copy(u.data(), u.data() + u.count(), in_place.data());
    rbgs_box(in_place, box, colour, offset);
    for (int written = 0; written < 2; ++written) {
      rbgs_colour_box(u, out, box, written, offset);
      long long differ = 0, changed = 0;
      for (int k = box.lo[2]; k < box.hi[2]; ++k)
        for (int j = box.lo[1]; j < box.hi[1]; ++j)
          for (int i = box.lo[0]; i < box.hi[0]; ++i) {
            differ += out.at(i, j, k) != in_place.at(i, j, k);
            changed += in_place.at(i, j, k) != u.at(i, j, k);
          }
      if (written == colour) {
        EXPECT_EQ(differ, 0) << "colour " << colour;
      } else {
        // Every point of either colour differs (the update changes every
        // point it writes here): the wrong colour misses all of them.
        EXPECT_EQ(differ, box.points()) << "colour " << colour << " written as " << written;
      }
      EXPECT_GT(changed, box.points() / 3);
    }
  }
  // Two iterations on a Dirichlet 7x6x5 grid as one box: red a -> b, black
  // b -> a, twice; the one-layer halo stays 0 (the boundary).
  const std::array<int, 3> g{7, 6, 5};
  Field a(g, 1, RowLayout::CacheLine), b(g, 1, RowLayout::CacheLine);
  for (int k = 0; k < g[2]; ++k)
    for (int j = 0; j < g[1]; ++j)
      for (int i = 0; i < g[0]; ++i) a.at(i, j, k) = initial_value(i, j, k);
  for (int it = 0; it < 2; ++it) {
    rbgs_colour_box(a, b, a.interior(), 0, {0, 0, 0});
    rbgs_colour_box(b, a, a.interior(), 1, {0, 0, 0});
  }
  const ReferenceResult ref = reference_solve(KernelKind::Rbgs, g, false, 2, 0, 0);
  for (int k = 0; k < g[2]; ++k)
    for (int j = 0; j < g[1]; ++j)
      for (int i = 0; i < g[0]; ++i) EXPECT_EQ(a.at(i, j, k), ref.field[i + g[0] * (j + g[1] * k)]);
}

// rbgs's blocked sweeps: after the first (red) colour sweep, plain Jacobi
// sweeps give the in-place colour sweeps' field to the last bit, at both
// colours, sweep after sweep; from the initial field a Jacobi sweep does not
// (its black points change).
TEST(Kernels, RbgsJacobiSweepsAfterTheFirstAreTheColourSweeps) {
  const std::array<int, 3> g{9, 6, 7};
  Field in_place(g, 1, RowLayout::CacheLine), a(g, 1, RowLayout::CacheLine),
      b(g, 1, RowLayout::CacheLine), jacobi_first(g, 1, RowLayout::CacheLine);
  for (int k = 0; k < g[2]; ++k)
    for (int j = 0; j < g[1]; ++j)
      for (int i = 0; i < g[0]; ++i) in_place.at(i, j, k) = a.at(i, j, k) = initial_value(i, j, k);
  const Box box = a.interior();
  jacobi_box(a, jacobi_first, box);
  rbgs_box(in_place, box, 0, {0, 0, 0});
  long long differ = 0;
  for (int k = 0; k < g[2]; ++k)
    for (int j = 0; j < g[1]; ++j)
      for (int i = 0; i < g[0]; ++i) differ += jacobi_first.at(i, j, k) != in_place.at(i, j, k);
  EXPECT_GT(differ, box.points() / 3) << "a Jacobi sweep from the initial field is not red's";
  rbgs_colour_box(a, b, box, 0, {0, 0, 0});
  Field* cur = &b;
  Field* nxt = &a;
  for (int sweep = 1; sweep < 8; ++sweep) {
    rbgs_box(in_place, box, sweep % 2, {0, 0, 0});
    jacobi_box(*cur, *nxt, box);
    std::swap(cur, nxt);
    differ = 0;
    for (int k = 0; k < g[2]; ++k)
      for (int j = 0; j < g[1]; ++j)
        for (int i = 0; i < g[0]; ++i) differ += cur->at(i, j, k) != in_place.at(i, j, k);
    EXPECT_EQ(differ, 0) << "sweep " << sweep;
  }
}

TEST(Kernels, CrsEqualsStencil) {
  std::array<int, 3> n{5, 4, 3};
  Field x(n), y1(n), y2(n);
  fill_initial_with_halo(x);
  std::array<bool, 6> all{true, true, true, true, true, true};
  CrsMatrix a = build_crs(x, all);
  EXPECT_EQ(a.col.size(), 7u * 60);
  double d1 = stencil_apply_box(x, y1, x.interior(), kSpmvScale);
  double d2 = crs_apply_box(a, x, y2, x.interior(), kSpmvScale);
  EXPECT_NEAR(d1, d2, 1e-12);
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 5; ++i) EXPECT_NEAR(y1.at(i, j, k), y2.at(i, j, k), 1e-15);
  // Dirichlet on every side: boundary rows drop their outside couplings.
  CrsMatrix b = build_crs(x, {false, false, false, false, false, false});
  EXPECT_EQ(b.col.size(), 60u * 7 - 2 * (4 * 3 + 5 * 3 + 5 * 4));
}

// cg's matrix-free p.(A p) from forward neighbours: summed over boxes that
// tile the domain (as threads' boxes and ranks' domains do) it is the full
// p . (A p) with zero Dirichlet halos, to round-off; the halo below a box
// (another box's or rank's points) is not read.
TEST(Kernels, StencilDotOverBoxesIsPAp) {
  std::array<int, 3> n{11, 7, 6};
  Field p(n), ap(n);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i)
        p.at(i, j, k) = initial_value(i + 1, j + 1, k + 1) + 0.3 * std::sin(1.0 + i * j - k);
  const double full = stencil_apply_box(p, ap, p.interior(), 1.0);
  ASSERT_GT(full, 0.0);  // A is positive definite
  EXPECT_NEAR(stencil_dot_box(p, p.interior()), full, 1e-12 * full);
  // Eight boxes cut at i = 4, j = 3, k = 2: the couplings across the cuts are
  // counted once, by the box below.
  double split = 0.0;
  for (const auto& [i0, i1] : {std::pair{0, 4}, std::pair{4, 11}})
    for (const auto& [j0, j1] : {std::pair{0, 3}, std::pair{3, 7}})
      for (const auto& [k0, k1] : {std::pair{0, 2}, std::pair{2, 6}})
        split += stencil_dot_box(p, Box{{i0, j0, k0}, {i1, j1, k1}});
  EXPECT_NEAR(split, full, 1e-12 * full);
  // A value below the box is never read: the box's own sum does not move.
  const Box upper{{0, 0, 2}, {11, 7, 6}};
  const double before = stencil_dot_box(p, upper);
  for (int j = 0; j < n[1]; ++j)
    for (int i = 0; i < n[0]; ++i) p.at(i, j, 1) = 1e3;
  EXPECT_EQ(stencil_dot_box(p, upper), before);
}

// cg's fused p update: p' = r + b p at every point of its boxes (the
// expression of xp_update_box, so the same bits), p'.(A p') over the boxes
// as stencil_dot_box sums it on a stored p' (to round-off), and the halo of
// p' beside the boxes from r's and p's halos on the faces with a neighbour,
// not on physical ones. In place (p' in p, the set-aside faces copied back
// after every box) and into the second array.
static void check_fused_p_update(bool in_place) {
  SCOPED_TRACE(in_place ? "in place" : "into the second array");
  // 37 points along i: the in-place rows right of the split at 4 run the
  // vector loop's body (33 points), not only its remainder.
  std::array<int, 3> n{37, 7, 6};
  Field r(n), p(n), aside(n), want(n), old_p(n), x(n);
  const double beta = 0.37;
  // -i, +j and -k have a neighbour rank; +i, -j and +k are physical
  // boundaries (cg leaves 0 there; here every halo holds values, so that a
  // write to a physical face shows).
  const std::array<bool, 6> physical{false, true, true, false, false, true};
  for (int k = -1; k <= n[2]; ++k)
    for (int j = -1; j <= n[1]; ++j)
      for (int i = -1; i <= n[0]; ++i) {
        r.at(i, j, k) = initial_value(i + 1, j + 1, k + 1) + 0.1 * std::cos(1.0 * i - j + 2 * k);
        const double value = 0.5 - 0.2 * std::sin(1.0 + i * j - k);
        p.at(i, j, k) = want.at(i, j, k) = old_p.at(i, j, k) = value;
      }
  // Eight boxes split along i, j and k, taken in an order where a box runs
  // after the boxes its forward neighbours lie in, as a thread may: in
  // place, their set-aside faces must keep the old p for the boxes that
  // read them.
  double fused = 0.0;
  std::vector<Box> faces_set_aside;
  for (const auto& [k0, k1] : {std::pair{2, 6}, std::pair{0, 2}})
    for (const auto& [j0, j1] : {std::pair{3, 7}, std::pair{0, 3}})
      for (const auto& [i0, i1] : {std::pair{4, 37}, std::pair{0, 4}}) {
        const Box box{{i0, j0, k0}, {i1, j1, k1}};
        std::array<Box, 3> faces;
        const int count = deferred_faces(box, faces);
        EXPECT_EQ(count, (i0 > 0) + (j0 > 0) + (k0 > 0));
        faces_set_aside.insert(faces_set_aside.end(), faces.begin(), faces.begin() + count);
        fused += p_update_dot_box(p, r, aside, beta, box, physical, in_place);
      }
  if (in_place)
    for (const Box& face : faces_set_aside) copy_box(aside, p, face);
  const Field& got = in_place ? p : aside;
  // Where the update writes nothing: in place the old p, else 0.
  const Field& untouched = in_place ? old_p : x;
  // The unfused steps: p = r + b p (xp_update_box, x unused) on the points
  // and on the halo, then stencil_dot_box (which reads the + halo).
  xp_update_box(x, want, r, 0.0, beta, Box{{-1, -1, -1}, {n[0] + 1, n[1] + 1, n[2] + 1}});
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) ASSERT_EQ(got.at(i, j, k), want.at(i, j, k));
  if (!in_place) {  // p only read
    for (int k = 0; k < n[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i) ASSERT_EQ(p.at(i, j, k), old_p.at(i, j, k));
  }
  // The halo: the neighbour's p' on the faces with a neighbour, and
  // untouched on the physical ones.
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j) {
      EXPECT_EQ(got.at(-1, j, k), want.at(-1, j, k));             // -i
      EXPECT_EQ(got.at(n[0], j, k), untouched.at(n[0], j, k));    // +i
    }
  for (int k = 0; k < n[2]; ++k)
    for (int i = 0; i < n[0]; ++i) {
      EXPECT_EQ(got.at(i, -1, k), untouched.at(i, -1, k));        // -j
      EXPECT_EQ(got.at(i, n[1], k), want.at(i, n[1], k));         // +j
    }
  for (int j = 0; j < n[1]; ++j)
    for (int i = 0; i < n[0]; ++i) {
      EXPECT_EQ(got.at(i, j, -1), want.at(i, j, -1));             // -k
      EXPECT_EQ(got.at(i, j, n[2]), untouched.at(i, j, n[2]));    // +k
    }
  // The physical halos of p hold values here (cg keeps 0 there), which the
  // forward form reads at +i and +k as r + b p: as want's halo holds.
  const double unfused = stencil_dot_box(want, want.interior());
  ASSERT_GT(std::fabs(unfused), 0.0);
  EXPECT_NEAR(fused, unfused, 1e-12 * std::fabs(unfused));
}

TEST(Kernels, FusedPUpdateIsPUpdateThenStencilDot) {
  check_fused_p_update(true);
  check_fused_p_update(false);
}

// cg's matrix-free x and r pass: x += a p and r -= a (A p) to the last bit
// of the stored-q form (stencil_apply_box, then r_update_box and x's
// update), r.r to round-off.
TEST(Kernels, StencilXrUpdateIsTheStoredQForm) {
  std::array<int, 3> n{9, 5, 6};
  Field x(n), r(n), p(n), q(n), x2(n), r2(n);
  for (int k = -1; k <= n[2]; ++k)
    for (int j = -1; j <= n[1]; ++j)
      for (int i = -1; i <= n[0]; ++i) {
        p.at(i, j, k) = initial_value(i + 1, j + 1, k + 1) + 0.3 * std::sin(1.0 * i * k - j);
        x.at(i, j, k) = x2.at(i, j, k) = 0.25 * std::cos(1.0 * i + j * k);
        r.at(i, j, k) = r2.at(i, j, k) = 1.0 - 0.1 * std::sin(2.0 * j - i);
      }
  const double alpha = 0.173;
  const double fused = stencil_xr_update_box(x, r, p, alpha, p.interior());
  stencil_apply_box(p, q, p.interior(), 1.0);
  const double stored = r_update_box(r2, q, alpha, p.interior());
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        x2.at(i, j, k) += alpha * p.at(i, j, k);
        ASSERT_EQ(x.at(i, j, k), x2.at(i, j, k));
        ASSERT_EQ(r.at(i, j, k), r2.at(i, j, k));
      }
  EXPECT_NEAR(fused, stored, 1e-12 * stored);
}

// spmv's matrix-free sweep (no dot product) gives cg's sweep's y to the last
// bit, on the whole box and on a box that starts and ends mid-row.
TEST(Kernels, SpmvSweepEqualsStencilApplyBitwise) {
  std::array<int, 3> n{11, 6, 5};
  Field x(n), y1(n), y2(n);
  for (int k = -1; k <= n[2]; ++k)
    for (int j = -1; j <= n[1]; ++j)
      for (int i = -1; i <= n[0]; ++i) x.at(i, j, k) = initial_value(i + 1, j + 1, k + 1) + 0.1 * i;
  Box part;
  part.lo = {3, 1, 1};
  part.hi = {10, 5, 4};
  for (const Box& box : {x.interior(), part}) {
    stencil_apply_box(x, y1, box, kSpmvScale);
    stencil_spmv_box(x, y2, box, kSpmvScale);
    for (int k = 0; k < n[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i) EXPECT_EQ(y1.at(i, j, k), y2.at(i, j, k));
  }
}

// Streaming stores write the values cached stores write, to the last bit,
// and nothing outside the box: jacobi and spmv, both row layouts, boxes
// whose rows start on and off a vector boundary and are shorter and longer
// than one vector (the head, the streamed body and the tail of each row).
TEST(Kernels, StreamingStoresEqualCachedBitwise) {
  // Planes a whole number of lines apart (both layouts of 37 x 6) stream two
  // planes per pass; packed 37 x 5 (stride_k 273 doubles) one at a time.
  const std::array<int, 3> shapes[] = {{37, 6, 5}, {37, 5, 5}};
  for (const std::array<int, 3>& n : shapes) {
    for (RowLayout rows : {RowLayout::Packed, RowLayout::CacheLine}) {
      Field x(n, 1, rows);
      if (n[1] == 5 && rows == RowLayout::Packed) {
        EXPECT_NE(x.stride_k() % 8, 0);
      }
      if (n[1] == 6) {
        EXPECT_EQ(x.stride_k() % 8, 0);
      }
      for (int k = -1; k <= n[2]; ++k)
        for (int j = -1; j <= n[1]; ++j)
          for (int i = -1; i <= n[0]; ++i)
            x.at(i, j, k) = initial_value(i + 1, j + 1, k + 1) + 0.01 * i;
      std::vector<Box> boxes = {x.interior()};
      for (int lo : {0, 1, 3, 7, 8, 9})
        for (int len : {1, 5, 8, 13, 28}) {
          if (lo + len > n[0]) continue;
          Box b;
          b.lo = {lo, 1, 1};
          b.hi = {lo + len, 4, 4};
          boxes.push_back(b);
        }
      for (const Box& box : boxes)
        for (int kernel = 0; kernel < 2; ++kernel) {
          Field cached(n, 1, rows), streamed(n, 1, rows);
          // A sentinel everywhere, so a store outside the box shows.
          std::fill(cached.data(), cached.data() + cached.count(), -7.0);
          std::fill(streamed.data(), streamed.data() + streamed.count(), -7.0);
          if (kernel == 0) {
            jacobi_box(x, cached, box, Stores::Cached);
            jacobi_box(x, streamed, box, Stores::Streaming);
          } else {
            stencil_spmv_box(x, cached, box, kSpmvScale, Stores::Cached);
            stencil_spmv_box(x, streamed, box, kSpmvScale, Stores::Streaming);
          }
          long long differ = 0, written = 0;
          for (std::size_t p = 0; p < cached.count(); ++p) {
            differ += std::memcmp(&cached.data()[p], &streamed.data()[p], sizeof(double)) != 0;
            written += cached.data()[p] != -7.0;
          }
          EXPECT_EQ(differ, 0) << (kernel ? "spmv" : "jacobi") << " box i " << box.lo[0] << ".."
                               << box.hi[0];
          EXPECT_EQ(written, box.points());
        }
    }
  }
  EXPECT_STREQ(stores_name(Stores::Streaming), "streaming");
#if defined(__x86_64__)
  EXPECT_TRUE(streaming_stores_available());
#endif
}

// SELL (both column layouts; cg's sweep and spmv's) gives CRS's values to
// the last bit, on the whole box and on boxes that cut chunks (13 = one chunk
// of 8 + 5 rows); the dot product it returns is summed in another order.
TEST(Kernels, SellEqualsCrsBitwise) {
  std::array<int, 3> n{13, 4, 3};
  Field x(n);
  fill_initial_with_halo(x);
  const Box boxes[] = {x.interior(), Box{{3, 1, 0}, {11, 4, 2}}, Box{{9, 0, 1}, {13, 2, 3}},
                       Box{{0, 0, 0}, {1, 4, 3}}};
  for (bool periodic : {true, false})
    for (bool compress : {true, false}) {
      const std::array<bool, 6> sides{periodic, periodic, periodic, periodic, periodic, periodic};
      const CrsMatrix a = build_crs(x, sides);
      const SellMatrix s = build_sell(x, sides, compress);
      EXPECT_EQ(s.off.empty(), compress);
      for (const Box& b : boxes) {
        Field y1(n), y2(n);
        const double d1 = crs_apply_box(a, x, y1, b, kSpmvScale);
        const double d2 = sell_apply_box(s, x, y2, b, kSpmvScale);
        EXPECT_NEAR(d1, d2, 1e-13 * std::fabs(d1));  // summed in another order
        Field y3(n);  // spmv's sweep, without the sum
        sell_spmv_box(s, x, y3, b, kSpmvScale);
        for (int k = 0; k < n[2]; ++k)
          for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i) {
              EXPECT_EQ(y1.at(i, j, k), y2.at(i, j, k));
              EXPECT_EQ(y1.at(i, j, k), y3.at(i, j, k));
            }
      }
    }
}

// Chunks whose slots are partly offsets and partly consecutive columns (a
// mask that build_sell itself never makes: it stores all slots one way):
// the offsets pointer must step over masked slots only. Built from the plain
// layout by dropping the offsets of slots 0 and 2 and shifting the others'
// base and offsets apart; y equals CRS's.
TEST(Kernels, SellMixedMasksEqualCrsBitwise) {
  std::array<int, 3> n{13, 4, 3};
  Field x(n);
  fill_initial_with_halo(x);
  const std::array<bool, 6> sides{true, false, true, true, false, true};
  const CrsMatrix a = build_crs(x, sides);
  SellMatrix s = build_sell(x, sides, false);
  std::vector<std::uint16_t> kept;
  const std::size_t chunks = s.mask.size();
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::uint16_t* o = s.off.data() + s.off_ptr[c];
    const std::int64_t first = static_cast<std::int64_t>(kept.size());
    int slot_run = 0;
    for (int slot = 0; slot < 7; ++slot) {  // diagonal and six neighbours
      if (!(s.mask[c] >> slot & 1u)) continue;
      const std::uint16_t* run = o + kSellChunk * slot_run++;
      if (slot == 0 || slot == 2) continue;  // consecutive: base + r, no offsets
      // The same columns through a base moved back by slot + 1 and offsets
      // moved up as much: each masked slot's offsets differ from the others',
      // so reading another slot's run would read other columns.
      s.base[static_cast<std::size_t>(s.chunk_ptr[c] / kSellChunk + slot)] -= slot + 1;
      for (int r = 0; r < kSellChunk; ++r) kept.push_back(static_cast<std::uint16_t>(run[r] + slot + 1));
    }
    s.mask[c] &= static_cast<std::uint8_t>(~0x5u);
    s.off_ptr[c] = first;
  }
  s.off_ptr[chunks] = static_cast<std::int64_t>(kept.size());
  s.off.assign(kept.begin(), kept.end());
  const Box boxes[] = {x.interior(), Box{{3, 1, 0}, {11, 4, 2}}, Box{{9, 0, 1}, {13, 2, 3}}};
  for (const Box& b : boxes) {
    Field y1(n), y2(n), y3(n);
    crs_apply_box(a, x, y1, b, kSpmvScale);
    sell_apply_box(s, x, y2, b, kSpmvScale);
    sell_spmv_box(s, x, y3, b, kSpmvScale);
    for (int k = -1; k <= n[2]; ++k)
      for (int j = -1; j <= n[1]; ++j)
        for (int i = -1; i <= n[0]; ++i) {  // halo and points outside b: untouched (0)
          EXPECT_EQ(y1.at(i, j, k), y2.at(i, j, k)) << i << " " << j << " " << k;
          EXPECT_EQ(y1.at(i, j, k), y3.at(i, j, k)) << i << " " << j << " " << k;
        }
  }
}

TEST(Reference, CgConvergesOnSmallGrid) {
  ReferenceResult r = reference_solve(KernelKind::Cg, {8, 8, 8}, false, 0, 1e-10, 1000);
  EXPECT_LT(r.residual, 1e-10);
  EXPECT_GT(r.iterations, 5);
  EXPECT_LT(r.iterations, 100);
}
