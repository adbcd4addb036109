// Unit tests without MPI communication: splits, boxes, the node-aware grid,
// pack/unpack round trips, argument parsing, configuration checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
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

namespace {
// Distance between two byte offsets around a 4 KiB page.
long page_gap(long a, long b) {
  const long d = ((a - b) % 4096 + 4096) % 4096;
  return std::min(d, 4096 - d);
}
}  // namespace

// Fields made one after the other start at page offsets 256 B or more from
// where the next field's 7-point loads fall against its stores (centre,
// j +- 1, k +- 1), in both directions of a ping-pong (five offsets on a
// page of 4096 B leave a gap of 409 B or more: 256 B is always there);
// place 0 starts a page; every row stays on a line under CacheLine.
TEST(Field, ConsecutiveFieldsAreStaggeredInThePage) {
  for (int halo : {1, 8})
    for (int n0 : {32, 100, 128, 255, 256, 1024})
      for (RowLayout rows : {RowLayout::Packed, RowLayout::CacheLine}) {
        SCOPED_TRACE("n0 " + std::to_string(n0) + ", halo " + std::to_string(halo));
        const std::array<int, 3> n{n0, 6, 2};
        Field a(n, halo, rows, 0), b(n, halo, rows, 1), c(n, halo, rows, 2);
        const auto at = [](const Field& f) {
          return static_cast<long>(reinterpret_cast<std::uintptr_t>(f.data()));
        };
        if (rows == RowLayout::Packed) {
          EXPECT_EQ(at(a) % 4096, 0);
        }
        EXPECT_EQ(stagger_bytes(a.stride_j(), a.stride_k(), 0), 0u);
        EXPECT_EQ(stagger_bytes(a.stride_j(), a.stride_k(), 1) % 64, 0u);
        const long sj = 8 * a.stride_j(), sk = 8 * a.stride_k();
        for (const auto& pair : {std::make_pair(&a, &b), std::make_pair(&b, &c)})
          for (long load : {0L, sj, -sj, sk, -sk}) {
            EXPECT_GE(page_gap(at(*pair.second) - at(*pair.first), load), 256) << load;
            EXPECT_GE(page_gap(at(*pair.first) - at(*pair.second), load), 256) << load;
          }
        if (rows == RowLayout::CacheLine) {
          for (const Field* f : {&a, &b, &c})
            EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f->data() + f->index(0, 1, 1)) % 64, 0u);
        }
      }
}

namespace {
// The transparent-huge-page mode the kernel runs ("always", "madvise" or
// "never": the bracketed word), or "" where Linux does not say.
std::string huge_page_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto open = text.find('['), close = text.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  return text.substr(open + 1, close - open - 1);
}

// kB of huge pages (smaps' AnonHugePages) in the mappings that overlap
// [p, p + bytes) (madvise splits a mapping where its advice starts and ends).
long huge_page_kb_in(const void* p, std::size_t bytes) {
  std::ifstream in("/proc/self/smaps");
  const auto begin = reinterpret_cast<std::uintptr_t>(p), end = begin + bytes;
  bool inside = false;
  long total = 0;
  for (std::string line; std::getline(in, line);) {
    unsigned long lo = 0, hi = 0;
    char dash = 0;
    if (std::sscanf(line.c_str(), "%lx%c%lx ", &lo, &dash, &hi) == 3 && dash == '-')
      inside = lo < end && hi > begin;
    long kb = 0;
    if (inside && std::sscanf(line.c_str(), "AnonHugePages: %ld kB", &kb) == 1) total += kb;
  }
  return total;
}
}  // namespace

// A field holds whole 2 MiB pages on huge pages where Linux's transparent
// huge pages allow it: Field asks for them (advise_huge_pages) before its
// first touch. Under "madvise", memory that does not ask gets none: the
// control shows that the advice, not the system, made the difference.
TEST(Field, LargeFieldsAreOnHugePages) {
  const std::string mode = huge_page_mode();
  if (mode != "always" && mode != "madvise") GTEST_SKIP() << "transparent huge pages: '" << mode << "'";
  Field f({128, 128, 128});  // 17.6 MB: eight whole huge pages at least
  EXPECT_GE(huge_page_kb_in(f.data(), f.count() * sizeof(double)), 2048) << "mode " << mode;
  if (mode == "madvise") {
    std::unique_ptr<double[]> plain(new double[f.count()]);
    std::fill(plain.get(), plain.get() + f.count(), 1.0);
    EXPECT_EQ(huge_page_kb_in(plain.get(), f.count() * sizeof(double)), 0);
  }
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
