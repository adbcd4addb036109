// Unit tests without MPI communication: splits, boxes, the node-aware grid,
// pack/unpack round trips, argument parsing, configuration checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <cstdint>
#include <set>

#include "hympi/hympi.hpp"
#include "options.hpp"
#include "kernels/box_kernels.hpp"
#include "wavefront_tiles.hpp"

using namespace hympi;

TEST(Split, UnevenSizesDifferByAtMostOneAndCover) {
  for (int n = 1; n < 40; ++n)
    for (int parts = 1; parts <= n; ++parts) {
      int next = 0, lo = n, hi = 0;
      for (int p = 0; p < parts; ++p) {
        Range r = split_range(n, parts, p);
        EXPECT_EQ(r.offset, next);
        next += r.size;
        lo = std::min(lo, r.size);
        hi = std::max(hi, r.size);
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(hi - lo, 1);
    }
}

TEST(Split, TenIntoThree) {
  EXPECT_EQ(split_range(10, 3, 0).size, 4);
  EXPECT_EQ(split_range(10, 3, 1).size, 3);
  EXPECT_EQ(split_range(10, 3, 2).offset, 7);
}

namespace {
// The reference problem's initial values on every point of x, its one-layer
// halo included (the kernels' tests read the halo as neighbours' values).
void fill_initial_with_halo(Field& x) {
  const std::array<int, 3>& n = x.size();
  for (int k = -1; k <= n[2]; ++k)
    for (int j = -1; j <= n[1]; ++j)
      for (int i = -1; i <= n[0]; ++i) x.at(i, j, k) = initial_value(i + 1, j + 1, k + 1);
}

// Every point of `outer` is in exactly one box.
void expect_partition(const Box& outer, const std::vector<Box>& boxes) {
  long long total = 0;
  for (const Box& b : boxes) total += b.points();
  EXPECT_EQ(total, outer.points());
  for (int k = outer.lo[2]; k < outer.hi[2]; ++k)
    for (int j = outer.lo[1]; j < outer.hi[1]; ++j)
      for (int i = outer.lo[0]; i < outer.hi[0]; ++i) {
        int hits = 0;
        for (const Box& b : boxes)
          hits += i >= b.lo[0] && i < b.hi[0] && j >= b.lo[1] && j < b.hi[1] && k >= b.lo[2] &&
                  k < b.hi[2];
        ASSERT_EQ(hits, 1) << i << "," << j << "," << k;
      }
}
}  // namespace

TEST(Boxes, SubtractGivesDisjointCover) {
  Box outer{{0, 0, 0}, {6, 5, 4}};
  Box inner{{1, 1, 1}, {5, 4, 3}};
  std::vector<Box> parts = subtract(outer, inner);
  EXPECT_EQ(parts.size(), 6u);
  parts.push_back(inner);
  expect_partition(outer, parts);
  // Only some sides shrunk (a neighbour on -x and +z only).
  Box inner2{{1, 0, 0}, {6, 5, 3}};
  auto parts2 = subtract(outer, inner2);
  EXPECT_EQ(parts2.size(), 2u);
  parts2.push_back(inner2);
  expect_partition(outer, parts2);
}

TEST(Boxes, SplitBoxPartitionsAlongKThenJ) {
  Box b{{0, 0, 0}, {5, 7, 9}};
  for (int parts : {1, 2, 3, 4, 9, 10, 13, 40, 63}) {
    auto boxes = split_box(b, parts);
    EXPECT_EQ(static_cast<int>(boxes.size()), parts);
    expect_partition(b, boxes);
    for (int p = 0; p < parts; ++p) EXPECT_EQ(boxes[p], split_box_part(b, parts, p));
  }
  auto two = split_box(b, 2);
  EXPECT_EQ(two[0].lo[2], 0);
  EXPECT_EQ(two[0].hi[2], 5);  // 9 planes: 5 + 4
}

TEST(Boxes, EmptyInteriorWhenLocalBoxIsThin) {
  Box outer{{0, 0, 0}, {1, 4, 4}};
  Box inner{{1, 0, 0}, {0, 4, 4}};  // shrunk from both x sides past each other
  EXPECT_TRUE(inner.empty());
  auto parts = subtract(outer, inner);
  expect_partition(outer, parts);
}

TEST(Boxes, GrownAndInteriorMoveOnlyNeighbourSides) {
  // A 4x6x8 box with neighbours below in x and above in z only.
  LocalDomain d;
  d.size = {4, 6, 8};
  d.neighbour.fill(MPI_PROC_NULL);
  d.neighbour[0] = 1;  // x lower
  d.neighbour[5] = 2;  // z upper
  const Box grown = grown_box(d, 2);  // a deep-halo sweep's region
  EXPECT_EQ(grown.lo, (std::array<int, 3>{-2, 0, 0}));
  EXPECT_EQ(grown.hi, (std::array<int, 3>{4, 6, 10}));
  const Box inner = interior_box(d, 1);
  EXPECT_EQ(inner.lo, (std::array<int, 3>{1, 0, 0}));
  EXPECT_EQ(inner.hi, (std::array<int, 3>{4, 6, 7}));
  EXPECT_TRUE(interior_box(d, 5).empty());  // shrunk past the x extent: empty, not negative
  EXPECT_EQ(interior_box(d, 5).hi[0], interior_box(d, 5).lo[0]);
}

TEST(Grid, NodeAwareBlockCutsFewestInterNodeFaces) {
  // 2 nodes x 4 ranks on a cube: the node boundary is one plane, and each
  // node holds a compact 2x2x1-like block.
  GridChoice g = choose_grid({64, 64, 64}, 2, 4, {false, false, false}, {0, 0, 0});
  EXPECT_TRUE(g.node_aware);
  EXPECT_EQ(g.dims[0] * g.dims[1] * g.dims[2], 8);
  std::array<int, 3> node_dims{g.dims[0] / g.node_block[0], g.dims[1] / g.node_block[1],
                               g.dims[2] / g.node_block[2]};
  EXPECT_EQ(face_points({64, 64, 64}, node_dims, {false, false, false}), 64 * 64);
  // A plain 2x2x2 grid in rank order would put 3 planes' worth across nodes:
  // the node-aware choice must not be worse than any other 8-rank grid.
  EXPECT_LE(face_points({64, 64, 64}, g.dims, {false, false, false}), 3LL * 64 * 64);
}

TEST(Grid, CoordinatesAreAPermutation) {
  for (int nodes : {1, 2, 3})
    for (int rpn : {1, 2, 4}) {
      GridChoice g = choose_grid({30, 30, 30}, nodes, rpn, {true, true, true}, {0, 0, 0});
      std::set<std::array<int, 3>> seen;
      for (int n = 0; n < nodes; ++n)
        for (int q = 0; q < rpn; ++q) seen.insert(grid_coords(g, n * rpn + q, n, q));
      EXPECT_EQ(static_cast<int>(seen.size()), nodes * rpn);
      // The ranks of node 0 form a block: their coordinates lie in node_block.
      for (int q = 0; q < rpn; ++q) {
        auto c = grid_coords(g, q, 0, q);
        for (int d = 0; d < 3; ++d) EXPECT_LT(c[d], g.node_block[d]);
      }
    }
}

TEST(Grid, FixedDimsKeptAndThinAxisAvoided) {
  GridChoice g = choose_grid({64, 64, 64}, 2, 2, {false, false, false}, {1, 1, 4});
  EXPECT_EQ(g.dims, (std::array<int, 3>{1, 1, 4}));
  EXPECT_TRUE(g.node_aware);
  EXPECT_EQ(g.node_block, (std::array<int, 3>{1, 1, 2}));
  // A grid with 2 points along x cannot take 4 ranks there.
  GridChoice thin = choose_grid({2, 64, 64}, 1, 4, {false, false, false}, {0, 0, 0});
  EXPECT_LE(thin.dims[0], 2);
}

TEST(Field, CacheLineRowsAreAlignedPaddedAndDistinct) {
  for (int halo : {1, 2, 3, 8, 9})
    for (const std::array<int, 3> n : {std::array<int, 3>{5, 4, 3}, {13, 2, 1}, {16, 3, 2}}) {
      Field f(n, halo, RowLayout::CacheLine);
      SCOPED_TRACE("halo " + std::to_string(halo) + ", n[0] " + std::to_string(n[0]));
      EXPECT_EQ(f.rows(), RowLayout::CacheLine);
      EXPECT_EQ(f.stride_j() % 8, 0);
      EXPECT_GE(f.stride_j(), n[0] + 2 * halo);
      EXPECT_LT(f.stride_j(), n[0] + 2 * halo + 8);
      EXPECT_EQ(f.stride_k(), f.stride_j() * (n[1] + 2 * halo));
      EXPECT_EQ(f.count(), static_cast<std::size_t>(f.stride_k() * (n[2] + 2 * halo)));
      // Every point, halo included, its own value, zero before; every row's
      // first interior point on a 64-byte line.
      std::set<const double*> seen;
      double label = 1;
      for (int k = -halo; k < n[2] + halo; ++k)
        for (int j = -halo; j < n[1] + halo; ++j) {
          EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&f.at(0, j, k)) % 64, 0u);
          for (int i = -halo; i < n[0] + halo; ++i) {
            EXPECT_EQ(f.at(i, j, k), 0.0);
            EXPECT_LT(f.index(i, j, k), static_cast<std::ptrdiff_t>(f.count()));
            EXPECT_GE(f.index(i, j, k), 0);
            seen.insert(&f.at(i, j, k));
            f.at(i, j, k) = label++;
          }
        }
      EXPECT_EQ(seen.size(), Field::count_for(n, halo));
      label = 1;
      for (int k = -halo; k < n[2] + halo; ++k)
        for (int j = -halo; j < n[1] + halo; ++j)
          for (int i = -halo; i < n[0] + halo; ++i) ASSERT_EQ(f.at(i, j, k), label++);
    }
  // Packed rows keep the documented layout.
  Field p({5, 4, 3}, 2);
  EXPECT_EQ(p.stride_j(), 9);
  EXPECT_EQ(p.rows(), RowLayout::Packed);
  EXPECT_EQ(p.count(), Field::count_for({5, 4, 3}, 2));
}

TEST(Exchange, PackUnpackRoundTrip) {
  Field a({5, 4, 3}), b({5, 4, 3});
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 5; ++i) a.at(i, j, k) = 100 * k + 10 * j + i;
  FaceMessage m;
  m.send_box = Box{{4, 0, 0}, {5, 4, 3}};   // +x face
  m.recv_box = Box{{-1, 0, 0}, {0, 4, 3}};  // -x halo of the other side
  m.send_buf.resize(m.send_box.points());
  m.recv_buf.resize(m.recv_box.points());
  ExchangePlan::pack(m, a);
  m.recv_buf = m.send_buf;
  ExchangePlan::unpack(m, b);
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(b.at(-1, j, k), a.at(4, j, k));
  EXPECT_EQ(b.at(0, 0, 0), 0.0);  // unpack touched only the halo
}

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
  for (RowLayout rows : {RowLayout::Packed, RowLayout::CacheLine}) {
    const std::array<int, 3> n{37, 6, 5};
    Field x(n, 1, rows);
    for (int k = -1; k <= n[2]; ++k)
      for (int j = -1; j <= n[1]; ++j)
        for (int i = -1; i <= n[0]; ++i) x.at(i, j, k) = initial_value(i + 1, j + 1, k + 1) + 0.01 * i;
    std::vector<Box> boxes = {x.interior()};
    for (int lo : {0, 1, 3, 7, 8, 9})
      for (int len : {1, 5, 8, 13, 28}) {
        if (lo + len > n[0]) continue;
        Box b;
        b.lo = {lo, 1, 2};
        b.hi = {lo + len, 5, 4};
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
  s.off = kept;
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

using namespace hympi::cli;

TEST(Parse, Numbers) {
  long long v = 0;
  EXPECT_TRUE(parse_int("42", 0, 100, v));
  EXPECT_EQ(v, 42);
  EXPECT_FALSE(parse_int("4x", 0, 100, v));
  EXPECT_FALSE(parse_int("", 0, 100, v));
  EXPECT_FALSE(parse_int("101", 0, 100, v));
  EXPECT_FALSE(parse_int("99999999999999999999999", 0, 100, v));
  EXPECT_FALSE(parse_int(" 4", 0, 100, v));
  double d = 0;
  EXPECT_TRUE(parse_double("1e-8", d));
  EXPECT_FALSE(parse_double("nan", d));
  EXPECT_FALSE(parse_double("1e-8x", d));
}

TEST(Parse, Grids) {
  std::array<int, 3> g{};
  std::string why;
  EXPECT_TRUE(parse_grid("10x20x30", g, why));
  EXPECT_EQ(g, (std::array<int, 3>{10, 20, 30}));
  EXPECT_TRUE(parse_grid("16^3", g, why));
  EXPECT_EQ(g, (std::array<int, 3>{16, 16, 16}));
  EXPECT_FALSE(parse_grid("10x10", g, why));
  EXPECT_NE(why.find("three"), std::string::npos);
  EXPECT_FALSE(parse_grid("0x10x10", g, why));
  EXPECT_FALSE(parse_grid("-4x10x10", g, why));
  EXPECT_FALSE(parse_grid("axbxc", g, why));
  EXPECT_FALSE(parse_grid("16^2", g, why));
}

TEST(Parse, CollectsEveryProblemAtOnce) {
  Options o = parse({"solve", "--kernel", "nope", "--grid", "10x10", "--bogus", "--iters", "x"});
  EXPECT_EQ(o.errors.size(), 4u);
  Options ok = parse({"solve", "--kernel=cg", "--grid", "8^3", "--scheme", "funneled", "--threads", "2"});
  EXPECT_TRUE(ok.errors.empty());
  EXPECT_EQ(ok.solve.kernel, KernelKind::Cg);
  EXPECT_EQ(ok.solve.threads, 2);
  EXPECT_EQ(parse({"frobnicate"}).errors.size(), 1u);
  EXPECT_TRUE(parse({"solve", "--help"}).help);
  // What every rank parses after the broadcast: the same arguments and
  // default thread count give the same options, whatever the environment.
  Options back = parse({"solve", "--kernel=cg", "--grid", "8^3", "--scheme", "funneled"}, 3);
  EXPECT_EQ(back.solve.grid, ok.solve.grid);
  ASSERT_NE(back.solve.scheme, nullptr);
  EXPECT_EQ(back.solve.scheme->info.name, "funneled");
  EXPECT_EQ(back.solve.threads, 3);
  EXPECT_FALSE(back.solve.trace);
  // --trace: solve only.
  Options traced = parse({"solve", "--kernel", "jacobi", "--grid", "8^3", "--trace", "t.json"});
  EXPECT_TRUE(traced.errors.empty());
  EXPECT_TRUE(traced.solve.trace);
  EXPECT_EQ(traced.trace_path, "t.json");
  const Options bench_traced = parse({"bench", "beff", "--trace=t.json"});
  ASSERT_EQ(bench_traced.errors.size(), 1u);
  EXPECT_NE(bench_traced.errors[0].find("unknown option '--trace=t.json'"), std::string::npos);
}

TEST(Validate, SemanticErrors) {
  SolveConfig c;
  c.grid = {8, 8, 8};
  c.threads = 1;
  c.scheme = find_scheme("funneled");
  auto e = validate_config(c, 4, nullptr, 0);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].find("at least 2 threads"), std::string::npos);
  c.scheme = find_scheme("multiple");
  c.threads = 2;
  c.reserved = 2;
  EXPECT_EQ(validate_config(c, 4, nullptr, 0).size(), 1u);
  c.reserved = 1;
  EXPECT_TRUE(validate_config(c, 4, nullptr, 0).empty());
  c.scheme = find_scheme("adaptive");
  EXPECT_EQ(validate_config(c, 4, nullptr, 0).size(), 1u);  // takes no --reserved
  c.reserved = 0;
  c.kernel = KernelKind::Cg;
  c.periodic = true;
  EXPECT_EQ(validate_config(c, 4, nullptr, 0).size(), 1u);
  c.kernel = KernelKind::Rbgs;
  c.grid = {8, 8, 7};
  EXPECT_EQ(validate_config(c, 4, nullptr, 0).size(), 1u);
  c.periodic = false;
  c.proc_grid = {1, 1, 3};
  EXPECT_EQ(validate_config(c, 4, nullptr, 0).size(), 1u);
  c.proc_grid = {0, 0, 0};
  c.grid = {1, 1, 2};
  EXPECT_FALSE(validate_config(c, 4, nullptr, 0).empty());  // 4 ranks, 2 points
  c.grid = {1000, 1000, 1000};
  EXPECT_FALSE(validate_config(c, 4, nullptr, 1e9).empty());  // 8 GB > 1 GB
}

// --stores: auto streams where one thread's share of the two arrays (in
// and out) exceeds the L2 given, only for the kernels with a separate output array
// at halo depth 1 in the stencil format; an explicit streaming elsewhere is
// refused with the kernels it applies to.
TEST(Validate, StreamingStoresRule) {
  SolveConfig c;
  c.kernel = KernelKind::Jacobi;
  c.grid = {128, 128, 128};  // 2 arrays of 16 MiB
  c.threads = 2;
  const double l2 = 2.0 * 1024 * 1024;
  if (!streaming_stores_available()) GTEST_SKIP() << "no streaming stores in this build";
  EXPECT_EQ(streaming_stores_for(c, 1, l2), Stores::Streaming);  // 16 MiB a thread
  EXPECT_EQ(streaming_stores_for(c, 6, l2), Stores::Streaming);  // 2.67 MiB
  EXPECT_EQ(streaming_stores_for(c, 8, l2), Stores::Cached);     // 2 MiB: not more
  EXPECT_EQ(streaming_stores_for(c, 16, l2), Stores::Cached);    // 1 MiB
  c.stores = StoresChoice::Cached;
  EXPECT_EQ(streaming_stores_for(c, 1, l2), Stores::Cached);
  c.stores = StoresChoice::Streaming;
  EXPECT_EQ(streaming_stores_for(c, 8, l2), Stores::Streaming);
  EXPECT_TRUE(validate_config(c, 8, nullptr, 0).empty());
  c.stores = StoresChoice::Auto;
  c.kernel = KernelKind::Spmv;
  EXPECT_EQ(streaming_stores_for(c, 1, l2), Stores::Streaming);
  c.format = MatrixFormat::Sell;  // no separate sweep of its own to stream
  EXPECT_EQ(streaming_stores_for(c, 1, l2), Stores::Cached);
  c.format = MatrixFormat::Stencil;
  c.halo_depth = 2;  // the tiles re-read their output from cache
  EXPECT_EQ(streaming_stores_for(c, 1, l2), Stores::Cached);
  c.stores = StoresChoice::Streaming;
  auto e = validate_config(c, 1, nullptr, 0);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].find("`stores` streaming applies only to the one-sweep loop"), std::string::npos);
  EXPECT_NE(e[0].find("jacobi, spmv"), std::string::npos);
  c.halo_depth = 1;
  for (KernelKind k : {KernelKind::Cg, KernelKind::Rbgs}) {
    c.kernel = k;
    EXPECT_EQ(streaming_stores_for(c, 1, l2), Stores::Cached);
    EXPECT_EQ(validate_config(c, 1, nullptr, 0).size(), 1u);
  }
}

// The memory check counts what the fields allocate: halo layers (halo x
// halo_depth on every side) and rows padded to whole lines, on every rank of
// the node, plus the stored matrix over the interior.
TEST(Validate, MemoryCountsHalosAndPadding) {
  SolveConfig c;
  c.kernel = KernelKind::Jacobi;  // 2 fields, rows padded
  c.grid = {32, 32, 32};
  c.halo_depth = 8;
  // 8 ranks: boxes of 16^3 with 8-deep halos: 32 x 32 x 32 allocated
  // (32 already whole lines), 2 fields, 8 ranks = 4194304 B; per point
  // alone it would be 16 B x 32^3 = 524288 B.
  EXPECT_TRUE(validate_config(c, 8, nullptr, 4194304).empty());
  const auto e = validate_config(c, 8, nullptr, 4194303);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].find("(8 ranks, halos and row padding included)"), std::string::npos) << e[0];
  // Thin rows: 1 rank, 4 x 64 x 64 points, depth 1: rows of 6 doubles
  // padded to 8, 8 x 66 x 66 allocated, 2 fields = 557568 B.
  c.grid = {4, 64, 64};
  c.halo_depth = 1;
  EXPECT_TRUE(validate_config(c, 1, nullptr, 557568).empty());
  EXPECT_EQ(validate_config(c, 1, nullptr, 557567).size(), 1u);
  // A stored matrix adds its bytes per interior point.
  c.kernel = KernelKind::Spmv;
  c.format = MatrixFormat::Crs;
  const double crs = 557568 + kCrsMatrixBytesPerPoint * 4 * 64 * 64;
  EXPECT_TRUE(validate_config(c, 1, nullptr, crs).empty());
  EXPECT_EQ(validate_config(c, 1, nullptr, crs - 1).size(), 1u);
  // Virtual nodes on one host share its memory: 8 virtual nodes of one rank
  // each (boxes of 16^3 at depth 8, 524288 B per rank) on one real node of 8
  // ranks need 8 ranks' worth, not one.
  c.kernel = KernelKind::Jacobi;
  c.format = MatrixFormat::Stencil;
  c.grid = {32, 32, 32};
  c.halo_depth = 8;
  c.ranks_per_node = 1;
  NodeMap one_host;
  one_host.node_count = 1;
  one_host.ranks_per_node = {8};
  one_host.node_of_rank.assign(8, 0);
  EXPECT_TRUE(validate_config(c, 8, &one_host, 4194304).empty());
  const auto shared = validate_config(c, 8, &one_host, 4194303);
  ASSERT_EQ(shared.size(), 1u);
  EXPECT_NE(shared[0].find("(8 ranks, halos"), std::string::npos) << shared[0];
  // Without the real nodes, the virtual node size is all that is known.
  EXPECT_TRUE(validate_config(c, 8, nullptr, 524288).empty());
}

// Wavefront tile heights (src/wavefront_tiles.hpp): depth 8, radius 1, so 38
// planes in flight, of rows of 272 doubles (256 points and 8-deep halos on
// both sides).
TEST(WavefrontTiles, HeightsFitTheBudget) {
  using hympi::detail::tile_rows_for_budget;
  const double row = 8.0 * 272, planes = 38;
  // 4 MiB / (38 x 2176 B) = 50.7 rows, less the 8 rows of the parallelogram.
  EXPECT_EQ(tile_rows_for_budget(4.0 * 1024 * 1024, 1, planes, row, 8, 1, 263), 42);
  EXPECT_EQ(tile_rows_for_budget(2.0 * 1024 * 1024, 1, planes, row, 8, 1, 263), 17);
  // At least 8 rows per thread; threads share a tile, so its budget grows.
  EXPECT_EQ(tile_rows_for_budget(512.0 * 1024, 1, planes, row, 8, 1, 263), 8);
  EXPECT_EQ(tile_rows_for_budget(512.0 * 1024, 3, planes, row, 8, 1, 263), 24);
  EXPECT_EQ(tile_rows_for_budget(2.0 * 1024 * 1024, 2, planes, row, 8, 1, 263), 42);
  // Never more than the region's rows, never fewer than one.
  EXPECT_EQ(tile_rows_for_budget(4.0 * 1024 * 1024, 16, planes, row, 8, 1, 263), 263);
  EXPECT_EQ(tile_rows_for_budget(4.0 * 1024 * 1024, 1, planes, row, 8, 1, 5), 5);
  EXPECT_GT(hympi::detail::l2_cache_bytes(), 0.0);
}

TEST(WavefrontTiles, TunerAlternatesThenKeepsTheFaster) {
  hympi::detail::WavefrontTileTuner tuner;
  hympi::detail::WavefrontShape shape;
  shape.sweeps = 8;
  shape.extent = {256, 256, 256};
  shape.radius = 1;
  shape.threads = 1;
  shape.candidates[0] = 42;
  shape.candidates[1] = 17;
  // Trials in the order 0, 1, 1, 0, two per candidate; each block's time
  // recorded.
  const long long before = tuner.trials_recorded();
  const double times[] = {2.0, 1.0, 1.5, 3.0};  // 42: best 2.0; 17: best 1.0
  const int order[] = {0, 1, 1, 0};
  for (int b = 0; b < 4; ++b) {
    const auto pick = tuner.pick(shape);
    EXPECT_EQ(pick.trial, order[b]);
    EXPECT_EQ(pick.rows, order[b] == 0 ? 42 : 17);
    EXPECT_EQ(tuner.chosen(shape), 0);
    tuner.record(shape, pick.trial, times[b]);
  }
  EXPECT_EQ(tuner.chosen(shape), 17);
  EXPECT_EQ(tuner.trials_recorded() - before, 4);
  for (int b = 0; b < 3; ++b) {
    const auto pick = tuner.pick(shape);
    EXPECT_EQ(pick.rows, 17);
    EXPECT_EQ(pick.trial, -1);
    tuner.record(shape, pick.trial, 0.001);  // ignored once chosen
  }
  EXPECT_EQ(tuner.chosen(shape), 17);

  // Another shape keeps its own trials; here the first candidate wins.
  shape.sweeps = 4;
  for (double t : {1.0, 2.0, 1.2, 1.1}) {
    const auto pick = tuner.pick(shape);
    tuner.record(shape, pick.trial, t);
  }
  EXPECT_EQ(tuner.chosen(shape), 42);

  // A block that was picked but not timed (its update failed) is picked
  // again; nothing is decided until both heights have two timed blocks.
  shape.sweeps = 2;
  EXPECT_EQ(tuner.pick(shape).trial, 0);  // not recorded
  tuner.record(shape, 0, 1.0);
  tuner.record(shape, 0, 1.0);
  tuner.record(shape, 0, 1.0);            // a third of candidate 0: no decision
  EXPECT_EQ(tuner.chosen(shape), 0);
  EXPECT_EQ(tuner.pick(shape).trial, 1);  // candidate 0 has its two
  tuner.record(shape, 1, 0.5);
  EXPECT_EQ(tuner.chosen(shape), 0);
  tuner.record(shape, 1, 0.7);
  EXPECT_EQ(tuner.chosen(shape), 17);
  tuner.record(shape, -1, 0.1);           // not a trial: ignored
  tuner.record(shape, 0, 0.0);            // no time: ignored
  EXPECT_EQ(tuner.chosen(shape), 17);

  // Equal candidates need no trial.
  shape.candidates[1] = 42;
  const auto pick = tuner.pick(shape);
  EXPECT_EQ(pick.rows, 42);
  EXPECT_EQ(pick.trial, -1);
  EXPECT_EQ(tuner.chosen(shape), 42);
}
