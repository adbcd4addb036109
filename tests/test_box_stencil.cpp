// Box stencils through the user-kernel API (DomainConfig::stencil = Box)
// against a serial reference computed here: an update that reads every point
// within `halo` along each axis at once (27 points at halo 1, 125 at halo 2),
// each with its own weight, so that one stale edge or corner of the halo
// changes the result. Every point of every rank must equal the reference's
// to the last bit:
//   * every scheme this MPI and thread count can run, Dirichlet, periodic and
//     mixed boundaries, the node-aware grid and slab grids (uneven splits);
//   * temporal blocking (halo_depth 2 and 3, sweep_block with blocks of 1..3
//     sweeps) under every scheme;
//   * negative control: the same update on a star domain (faces only) must
//     NOT give the reference (the test sees a missing edge or corner);
//   * bad input: an unknown stencil value is refused with the parameter named.
// --depth-only runs the temporal-blocking cases only (ctest runs them again
// with wavefront tiles of one row: HYMPI_WAVEFRONT_TILE_ROWS=1);
// --decompositions default keeps the node-aware process grid only (as
// test_schemes does for an MPI that spins when oversubscribed: MPICH).
// Runs at any rank count with OMP_NUM_THREADS threads. Prints one line per
// failure and closes with "N passed, N failed, N skipped".
#include <mpi.h>
#include <omp.h>

#include <cstdio>
#include <string>
#include <vector>

#include "hympi/hympi.hpp"

using namespace hympi;

namespace {

int g_rank = 0;
int g_size = 1;
bool g_default_grid_only = false;  // --decompositions default

struct Tally {
  int passed = 0, failed = 0, skipped = 0;
  void check(bool ok, const std::string& what) {
    // Every rank must agree on the outcome: a failure anywhere fails all.
    int mine = ok ? 0 : 1, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
      ++failed;
      if (!ok) std::printf("FAIL rank %d: %s\n", g_rank, what.c_str());
    } else {
      ++passed;
    }
  }
};

constexpr int kSweeps = 3;
const std::array<int, 3> kGrid{12, 10, 9};
constexpr std::array<bool, 3> kNone{false, false, false}, kAll{true, true, true},
    kMixed{true, false, true};

// A different weight for every offset of the box of radius h (none is a
// sum of others by accident, and none is 0).
double weight(int di, int dj, int dk, int h) {
  const int w = 2 * h + 1;
  const int index = (di + h) + w * ((dj + h) + w * (dk + h));
  return 1.0 / (3.0 + 1.37 * index);
}

// The box update at one point, in one fixed order of the offsets: the same
// arithmetic serially and under hympi, so the results agree bit for bit.
template <typename Get>
double box_point(Get&& get, int i, int j, int k, int h) {
  double s = 0;
  for (int dk = -h; dk <= h; ++dk)
    for (int dj = -h; dj <= h; ++dj)
      for (int di = -h; di <= h; ++di) s += weight(di, dj, dk, h) * get(i + di, j + dj, k + dk);
  return s;
}

// The serial reference over the global grid: outside a Dirichlet boundary
// the values are 0 (a domain's halo there is never written), a periodic axis
// wraps. Returns the field after kSweeps sweeps.
std::vector<double> reference(const std::array<bool, 3>& periodic, int h) {
  const int nx = kGrid[0], ny = kGrid[1], nz = kGrid[2];
  auto index = [&](int i, int j, int k) { return i + 1LL * nx * (j + 1LL * ny * k); };
  std::vector<double> u(1LL * nx * ny * nz), next(u.size());
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) u[index(i, j, k)] = initial_value(i, j, k);
  for (int s = 0; s < kSweeps; ++s) {
    auto get = [&](int i, int j, int k) {
      int c[3] = {i, j, k};
      for (int d = 0; d < 3; ++d) {
        if (c[d] >= 0 && c[d] < kGrid[d]) continue;
        if (!periodic[d]) return 0.0;
        c[d] = (c[d] % kGrid[d] + kGrid[d]) % kGrid[d];
      }
      return u[index(c[0], c[1], c[2])];
    };
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) next[index(i, j, k)] = box_point(get, i, j, k, h);
    u.swap(next);
  }
  return u;
}

// The user's update: out = box stencil of in over `box`.
void box_update(const Field& in, Field& out, const Box& box, int h) {
  auto get = [&](int i, int j, int k) { return in.at(i, j, k); };
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j)
      for (int i = box.lo[0]; i < box.hi[0]; ++i) out.at(i, j, k) = box_point(get, i, j, k, h);
}

struct Case {
  const SchemeEntry* scheme;
  int threads;
  int halo;
  std::array<bool, 3> periodic;
  std::array<int, 3> proc_grid;
  Stencil stencil = Stencil::Box;
  int depth = 1;  // > 1: kSweeps sweeps through sweep_block, in blocks of up to depth
};

std::string label(const Case& c) {
  char text[200];
  std::snprintf(text, sizeof text, "%s %s halo %d depth %d periodic %d%d%d pg %dx%dx%d threads %d",
                c.scheme->info.name.c_str(), c.stencil == Stencil::Box ? "box" : "star", c.halo,
                c.depth, c.periodic[0], c.periodic[1], c.periodic[2], c.proc_grid[0],
                c.proc_grid[1], c.proc_grid[2], c.threads);
  return text;
}

// kSweeps sweeps of the box update under hympi; returns how many points of
// all ranks differ from the reference (any bit), or -1 when the config is not
// valid here (skipped: a slab too thin, shared-window on one rank per node).
long long points_differing(const Case& c, const std::vector<double>& ref) {
  DomainConfig config;
  config.grid = kGrid;
  config.periodic = c.periodic;
  config.halo = c.halo;
  config.halo_depth = c.depth;
  config.stencil = c.stencil;
  config.scheme = c.scheme;
  config.threads = c.threads;
  config.proc_grid = c.proc_grid;
  config.on_error = KernelErrorPolicy::Throw;
  if (!validate_domain(config, g_size).empty()) return -1;
  Domain d(MPI_COMM_WORLD, config);
  const LocalDomain& L = d.local();
  Field a = d.make_field(), b = d.make_field();
  for (int k = 0; k < L.size[2]; ++k)
    for (int j = 0; j < L.size[1]; ++j)
      for (int i = 0; i < L.size[0]; ++i)
        a.at(i, j, k) = initial_value(L.offset[0] + i, L.offset[1] + j, L.offset[2] + k);
  Field* in = &a;
  Field* out = &b;
  const PairBoxFn update = [&](const Field& src, Field& dst, const Box& box, int) {
    box_update(src, dst, box, c.halo);
  };
  if (c.depth == 1) {
    for (int s = 0; s < kSweeps; ++s) {
      d.sweep({in}, [&](const Box& box, int t) { update(*in, *out, box, t); });
      std::swap(in, out);
    }
  } else {
    // Blocks of `depth` sweeps, the last one shorter where kSweeps is not a
    // multiple (depth 2: a block of 2, then a block of 1).
    for (int done = 0; done < kSweeps;) {
      const int block = std::min(c.depth, kSweeps - done);
      d.sweep_block(in, out, block, update);
      done += block;
    }
  }
  long long differ = 0;
  for (int k = 0; k < L.size[2]; ++k)
    for (int j = 0; j < L.size[1]; ++j)
      for (int i = 0; i < L.size[0]; ++i) {
        const long long g = (L.offset[0] + i) + 1LL * kGrid[0] * ((L.offset[1] + j) +
                                                                  1LL * kGrid[1] * (L.offset[2] + k));
        differ += in->at(i, j, k) != ref[g];
      }
  long long all = 0;
  MPI_Allreduce(&differ, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

void expect_reference(Tally& tally, const Case& c, const std::vector<double>& ref) {
  const long long differ = points_differing(c, ref);
  if (differ < 0) {
    ++tally.skipped;
    return;
  }
  tally.check(differ == 0, label(c) + ": " + std::to_string(differ) +
                               " points differ from the serial reference");
}

// The process grids for a boundary: the node-aware one, and (uneven splits
// of 9 and 12 points) Dirichlet: slabs along z, and at 4 ranks a cut along
// two axes, whose edges and corners come from other ranks without periodic
// axes; periodic: slabs along x. Mixed boundaries: the node-aware grid only
// (the halo-2 and temporal-blocking cases run there too).
std::vector<std::array<int, 3>> process_grids(const std::array<bool, 3>& periodic) {
  std::vector<std::array<int, 3>> grids{{0, 0, 0}};
  if (g_default_grid_only) return grids;
  if (periodic == kNone) {
    grids.push_back({1, 1, g_size});
    if (g_size == 4) grids.push_back({2, 1, 2});
  } else if (periodic == kAll) {
    grids.push_back({g_size, 1, 1});
  }
  return grids;
}

void bad_stencil(Tally& tally) {
  DomainConfig c;
  c.grid = kGrid;
  c.stencil = static_cast<Stencil>(7);
  const auto errors = validate_domain(c, g_size);
  const std::string want = "`stencil` 7 is unknown: accepted 0 (star) or 1 (box)";
  tally.check(errors.size() == 1 && errors[0] == want,
              "an unknown stencil is refused by name: '" + (errors.empty() ? "" : errors[0]) + "'");
  std::string message;
  try {
    Domain d(MPI_COMM_WORLD, c);
  } catch (const UsageError& e) {
    message = e.what();
  }
  tally.check(message == want, "Domain throws UsageError for it on every rank: '" + message + "'");
}

// Every scheme x Dirichlet, periodic and mixed x their process grids, halo 1;
// and halo 2 (125 points) on the node-aware grid, mixed boundaries.
void plain_sweeps(Tally& tally, const std::vector<const SchemeEntry*>& schemes, int threads) {
  for (const auto& periodic : {kNone, kAll, kMixed}) {
    const std::vector<double> ref = reference(periodic, 1);
    for (const SchemeEntry* s : schemes)
      for (const auto& pg : process_grids(periodic))
        expect_reference(tally, {s, threads, 1, periodic, pg}, ref);
  }
  const std::vector<double> ref2 = reference(kMixed, 2);
  for (const SchemeEntry* s : schemes)
    expect_reference(tally, {s, threads, 2, kMixed, {0, 0, 0}}, ref2);
}

// Temporal blocking with a box stencil: depth 2 (blocks of 2 and 1) and 3
// at halo 1, depth 2 at halo 2, under every scheme: the plain sweeps' result.
void blocked_sweeps(Tally& tally, const std::vector<const SchemeEntry*>& schemes, int threads) {
  const std::vector<double> ref1 = reference(kMixed, 1), ref2 = reference(kMixed, 2);
  for (const SchemeEntry* s : schemes)
    for (const auto& [halo, depth] : {std::pair{1, 2}, std::pair{1, 3}, std::pair{2, 2}}) {
      Case deep{s, threads, halo, kMixed, {0, 0, 0}};
      deep.depth = depth;
      expect_reference(tally, deep, halo == 1 ? ref1 : ref2);
    }
}

// Negative control: the box update on a star domain (faces only). Periodic
// on every axis, so that the halo's edges and corners hold neighbours'
// values at any rank count: they stay 0 here, and the result must differ.
void star_misses_edges(Tally& tally, int threads) {
  const std::vector<double> ref = reference(kAll, 1);
  Case star{&pure_mpi_scheme(), threads, 1, kAll, {0, 0, 0}};
  star.stencil = Stencil::Star;
  const long long differ = points_differing(star, ref);
  tally.check(differ > 0, "a box update on a star domain must differ from the reference, but " +
                              std::to_string(differ) + " points differ");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const int threads = omp_get_max_threads();
  bool depth_only = false;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--depth-only") {
      depth_only = true;
    } else if (arg == "--decompositions" && a + 1 < argc &&
               (std::string(argv[a + 1]) == "all" || std::string(argv[a + 1]) == "default")) {
      g_default_grid_only = std::string(argv[++a]) == "default";
    } else {
      if (g_rank == 0)
        std::fprintf(stderr, "test_box_stencil: unknown argument '%s' (accepted: --depth-only, "
                             "--decompositions all|default)\n", arg.c_str());
      MPI_Finalize();
      return 2;
    }
  }
  Tally tally;
  try {
    std::vector<const SchemeEntry*> schemes;
    for (const auto& s : scheme_registry()) {
      if (provided < s.info.thread_level || threads < s.info.min_threads ||
          !s.info.unavailable.empty()) {
        ++tally.skipped;
        continue;
      }
      schemes.push_back(&s);
    }
    if (!depth_only) plain_sweeps(tally, schemes, threads);
    blocked_sweeps(tally, schemes, threads);
    if (!depth_only) {
      star_misses_edges(tally, threads);
      bad_stencil(tally);
    }
  } catch (const std::exception& e) {
    std::printf("rank %d: %s\n", g_rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (g_rank == 0)
    std::printf("%d passed, %d failed, %d skipped\n", tally.passed, tally.failed, tally.skipped);
  MPI_Finalize();
  return tally.failed || tally.passed == 0 ? 1 : 0;
}
