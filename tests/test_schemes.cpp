// Every scheme x every kernel x Dirichlet/periodic x odd/even grid x several
// decompositions gives the serial reference's field. Runs at any rank count
// with OMP_NUM_THREADS threads (ctest: 1-4 ranks, 1-3 threads).
//   * each rank compares its own box with the reference point by point;
//   * l2 and checksum agree to 1e-12 relative (cg, pipecg: iterations +-1,
//     field and l2 to 1e-6); pipecg also gives cg's reference solution
//     (field to 1e-6) within 2 iterations of cg's count;
//   * temporal blocking (halo depth 2 and 3, jacobi and spmv; rbgs at 2, 3,
//     4 and 8 colours per exchange, odd iteration counts): besides the
//     reference, every point equals the halo-depth-1 run's to the last bit,
//     and every block that tried a tile height ran before the timed loop;
//   * streaming stores (jacobi and spmv): every point equals the cached
//     stores' run's to the last bit.
// Prints one line per failure and closes with "N passed, N failed, N skipped".
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "hympi/hympi.hpp"
#include "wavefront_tiles.hpp"  // the tuner: was anything tried?

using namespace hympi;

namespace {

int g_rank = 0;

struct Tally {
  int passed = 0, failed = 0, skipped = 0;
};

struct Variant {
  KernelKind kernel;
  MatrixFormat format;
  bool first_grid_only = false;  // keeps the matrix short where one grid covers the cases
  int halo_depth = 1;
  // cg: 0 converges to tol (iterations within 1 of the reference's);
  // N stops after N iterations and compares that iterate, point by point, to
  // 1e-9 (the stored-matrix formats: their sweeps are the stencil's with
  // another operator, and converging costs each case ~30 iterations of two
  // reductions, which oversubscribed MPICH spends spinning).
  int cg_iterations = 0;
  // Streaming: the output written with non-temporal stores (auto gives
  // cached stores on these small grids); every point equals the cached
  // run's to the last bit.
  StoresChoice stores = StoresChoice::Auto;
  int iters = 4;
  // Instead of the two grids (0: those): a grid whose boxes take a deep
  // halo at 2 and 4 ranks.
  std::array<int, 3> grid{0, 0, 0};
  // The node-aware default decomposition only (a variant whose other
  // decompositions another variant covers).
  bool default_decomposition_only = false;
};

double rel_diff(double a, double b) {
  const double scale = std::max(std::fabs(a), std::fabs(b));
  return scale > 0 ? std::fabs(a - b) / scale : 0.0;
}

std::string describe(const SolveConfig& c, int reserved) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s(%s) depth %d iters %d stores %s/%s m=%d grid %dx%dx%d %s rpn=%d order=%s pg=%dx%dx%d",
                kernel_name(c.kernel), format_name(c.format), c.halo_depth, c.iters, stores_choice_name(c.stores),
                c.scheme->info.name.c_str(), reserved, c.grid[0], c.grid[1], c.grid[2],
                c.periodic ? "periodic" : "dirichlet", c.ranks_per_node,
                c.rank_order == RankOrder::RoundRobin ? "rr" : "seq", c.proc_grid[0],
                c.proc_grid[1], c.proc_grid[2]);
  return buf;
}

// Temporal blocking with tiles of two heights tried in turn: the first
// blocks of a shape run with tiles sized for a 4 MiB L3 share and for one
// core's L2 (src/wavefront_tiles.hpp), and every point must still equal the
// depth-1 run's to the last bit. On 510 x 400 x 8 points (spmv: 401 rows,
// rbgs: 402, shapes of their own), depth 2, the heights differ for an L2
// below ~4 MiB per core at 1-3 threads and 1-2 ranks (71 and 16 rows at 1 MiB
// and 1 rank); 12 sweeps (rbgs: 6 iterations of two colours) are 6 blocks:
// 4 trying, 2 with the choice. Where the heights
// are equal on every rank (a large L2) nothing alternates: skipped, said so.
void alternating_tiles(Tally& tally, int threads, const std::string& only_scheme) {
  if (std::getenv("HYMPI_WAVEFRONT_TILE_ROWS")) return;  // forced: nothing is tried
  for (KernelKind kernel : {KernelKind::Jacobi, KernelKind::Spmv, KernelKind::Rbgs}) {
    SolveConfig c;
    c.kernel = kernel;
    c.scheme = &scheme_registry().front();
    if (!only_scheme.empty() && c.scheme->info.name != only_scheme) return;
    c.grid = {510, 400 + static_cast<int>(kernel == KernelKind::Spmv) + 2 * (kernel == KernelKind::Rbgs), 8};
    c.iters = 12 / kernel_info(kernel).sweeps_per_iteration;
    c.threads = threads;
    c.halo_depth = 2;
    SolveConfig plain = c;
    plain.halo_depth = 1;
    LocalSolution deep, one;
    const long long trials_before = detail::wavefront_tile_tuner().trials_recorded();
    const SolveResult tuned = solve(MPI_COMM_WORLD, c, &deep);
    long long tried = detail::wavefront_tile_tuner().trials_recorded() - trials_before;
    solve(MPI_COMM_WORLD, plain, &one);
    long long differ = 0;
    const LocalDomain& d = deep.domain;
    for (int k = 0; k < d.size[2]; ++k)
      for (int j = 0; j < d.size[1]; ++j)
        for (int i = 0; i < d.size[0]; ++i) differ += deep.field.at(i, j, k) != one.field.at(i, j, k);
    long long all = 0, tried_most = 0;
    MPI_Allreduce(&differ, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&tried, &tried_most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (all != 0) {
      ++tally.failed;
      if (g_rank == 0)
        std::printf("FAIL %s with tile heights tried in turn: %lld points differ from halo depth 1\n",
                    describe(c, 0).c_str(), all);
    } else if (tried_most > tuned.tuning_blocks) {
      // A trial block in the timed loop: a single timed run is not at
      // steady state.
      ++tally.failed;
      if (g_rank == 0)
        std::printf("FAIL %s: %lld blocks tried a tile height, only %d of them before the timed "
                    "loop\n", describe(c, 0).c_str(), tried_most, tuned.tuning_blocks);
    } else if (tried_most < 2 * detail::WavefrontTileTuner::kTrialsPerCandidate) {
      ++tally.skipped;
      if (g_rank == 0)
        std::printf("skipped %s: the two tile heights are equal here, nothing was tried "
                    "(%lld trial blocks)\n", describe(c, 0).c_str(), tried_most);
    } else {
      ++tally.passed;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // --decompositions default: only the node-aware default grid (for MPI
  // libraries that are slow when oversubscribed); all: every variant below.
  // --scheme NAME: that scheme only (make tsan's run of shared-window on
  // virtual nodes).
  bool all_decomps = true;
  std::string only_scheme;
  // --kernel NAME: that kernel's variants only (a quick check of one kernel
  // across the whole matrix of schemes, ranks and threads).
  std::string only_kernel;
  // --depth-only: the temporal-blocking variants only (ctest runs them again
  // with tiny wavefront tiles, HYMPI_WAVEFRONT_TILE_ROWS).
  bool depth_only = false;
  for (int i = 1; i < argc; ++i) depth_only = depth_only || std::string(argv[i]) == "--depth-only";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--decompositions") all_decomps = std::string(argv[i + 1]) != "default";
    if (std::string(argv[i]) == "--scheme") only_scheme = argv[i + 1];
    if (std::string(argv[i]) == "--kernel") only_kernel = argv[i + 1];
  }
  const char* env = std::getenv("OMP_NUM_THREADS");
  const int threads = env ? std::atoi(env) : 1;
  const double tol = 1e-12;

  const Variant variants[] = {{KernelKind::Jacobi, MatrixFormat::Stencil},
                              {KernelKind::Rbgs, MatrixFormat::Stencil},
                              {KernelKind::Spmv, MatrixFormat::Stencil},
                              {KernelKind::Spmv, MatrixFormat::Crs},
                              // SELL on the odd grid only: whole and cut chunks
                              // (13 = 8 + 5 rows, and thinner local boxes)
                              {KernelKind::Spmv, MatrixFormat::Sell, true},
                              {KernelKind::Cg, MatrixFormat::Stencil},
                              {KernelKind::Cg, MatrixFormat::Crs, false, 1, 8},
                              {KernelKind::Cg, MatrixFormat::Sell, true, 1, 8},
                              {KernelKind::Pipecg, MatrixFormat::Stencil},
                              {KernelKind::Pipecg, MatrixFormat::Crs, false, 1, 8},
                              {KernelKind::Pipecg, MatrixFormat::Sell, true, 1, 8},
                              // Temporal blocking: 4 iterations are blocks of
                              // 2 + 2 and 3 + 1 sweeps.
                              {KernelKind::Jacobi, MatrixFormat::Stencil, true, 2},
                              {KernelKind::Jacobi, MatrixFormat::Stencil, true, 3},
                              {KernelKind::Spmv, MatrixFormat::Stencil, true, 2},
                              // rbgs: depth h is h colours per exchange, 3
                              // iterations 6 colours: blocks of 3 + 3 (the
                              // second starts with black), 2 + 2 + 2 and
                              // 4 + 2; 5 iterations at depth 8: 8 + 2. Depth 3
                              // on every decomposition, the others on the
                              // default one of an even grid (both boundaries).
                              {KernelKind::Rbgs, MatrixFormat::Stencil, false, 3, 0, StoresChoice::Auto, 3},
                              {KernelKind::Rbgs, MatrixFormat::Stencil, true, 2, 0, StoresChoice::Auto, 3,
                               {12, 10, 8}, true},
                              {KernelKind::Rbgs, MatrixFormat::Stencil, true, 4, 0, StoresChoice::Auto, 3,
                               {12, 10, 8}, true},
                              // 16 x 16 x 32: the default decomposition
                              // splits z, 8+ planes per rank at 1-4 ranks.
                              {KernelKind::Rbgs, MatrixFormat::Stencil, true, 8, 0, StoresChoice::Auto, 5,
                               {16, 16, 32}, true},
                              // Streaming stores, at halo depth 1.
                              {KernelKind::Jacobi, MatrixFormat::Stencil, true, 1, 0, StoresChoice::Streaming},
                              {KernelKind::Spmv, MatrixFormat::Stencil, true, 1, 0, StoresChoice::Streaming}};
  const std::array<int, 3> grids[] = {{13, 11, 9}, {12, 10, 8}};

  // Decompositions: the node-aware default, virtual nodes in round-robin
  // order, and all ranks along one axis (k: whole z faces; x: strided faces).
  // Two virtual nodes of two ranks (at 4 ranks) give a scheme that shares
  // memory inside a node (needs_node_peers) faces of both kinds, with the
  // default decompositions too; only such schemes run it (the others gain
  // nothing over round-robin virtual nodes).
  struct Decomp {
    int rpn;
    RankOrder order;
    std::array<int, 3> pg;
    bool node_peers_only = false;
  };
  std::vector<Decomp> decomps = {{0, RankOrder::Sequential, {0, 0, 0}}};
  if (size > 1 && all_decomps) {
    if (size % 2 == 0) decomps.push_back({2, RankOrder::RoundRobin, {0, 0, 0}});
    decomps.push_back({0, RankOrder::Sequential, {1, 1, size}});
    decomps.push_back({0, RankOrder::Sequential, {size, 1, 1}});
  }
  if (size == 4) decomps.push_back({2, RankOrder::Sequential, {0, 0, 0}, true});

  std::map<std::tuple<int, int, bool, int, int>, ReferenceResult> refs;
  std::map<std::string, std::vector<double>> plain_fields;  // describe(depth-1 config) -> points
  Tally tally;
  for (const auto& v : variants)
    if ((!depth_only || v.halo_depth > 1) &&
        (only_kernel.empty() || only_kernel == kernel_name(v.kernel)))
    for (const auto& listed : grids)
      if (!v.first_grid_only || &listed == &grids[0])
      for (const std::array<int, 3>& grid : {v.grid[0] > 0 ? v.grid : listed})
      for (bool periodic : {false, true})
        for (const auto& dc : decomps)
          if (!v.default_decomposition_only || &dc == &decomps.front())
          for (const auto& entry : scheme_registry()) {
            const SchemeInfo& info = entry.info;
            std::vector<int> reserved_values = {0};
            if (info.takes_reserved) {
              reserved_values.clear();
              for (int m = 1; m < threads; ++m) reserved_values.push_back(m);
              if (reserved_values.empty()) reserved_values.push_back(0);
            }
            for (int m : reserved_values) {
              SolveConfig c;
              c.kernel = v.kernel;
              c.format = v.format;
              c.scheme = &entry;
              c.grid = grid;
              c.periodic = periodic;
              c.iters = v.iters;
              c.threads = threads;
              c.reserved = m;
              c.tol = v.cg_iterations ? 1e-15 : 1e-8;  // 1e-15: not reached in 8
              c.max_iters = v.cg_iterations ? v.cg_iterations : 500;
              c.ranks_per_node = dc.rpn;
              c.rank_order = dc.order;
              c.proc_grid = dc.pg;
              c.halo_depth = v.halo_depth;
              c.stores = v.stores;
              // Invalid combinations are the CLI tests' business: skip them.
              if (provided < info.thread_level || (dc.node_peers_only && !info.needs_node_peers) ||
                  (!only_scheme.empty() && info.name != only_scheme) ||
                  !validate_config(c, size, nullptr, 0).empty()) {
                ++tally.skipped;
                continue;
              }
              auto key = std::make_tuple(static_cast<int>(v.kernel), grid[0], periodic, c.max_iters, c.iters);
              if (!refs.count(key))
                refs[key] = reference_solve(v.kernel, grid, periodic, c.iters, c.tol, c.max_iters);
              const ReferenceResult& ref = refs[key];

              LocalSolution local;
              SolveResult r = solve(MPI_COMM_WORLD, c, &local);
              // Point-by-point on this rank's box.
              double ref_max = 0, err_max = 0, ref_sum = 0, ref_sq = 0;
              for (double x : ref.field) {
                ref_max = std::max(ref_max, std::fabs(x));
                ref_sum += x;
                ref_sq += x * x;
              }
              const LocalDomain& d = local.domain;
              for (int k = 0; k < d.size[2]; ++k)
                for (int j = 0; j < d.size[1]; ++j)
                  for (int i = 0; i < d.size[0]; ++i) {
                    const long long gi = d.offset[0] + i, gj = d.offset[1] + j, gk = d.offset[2] + k;
                    const double want = ref.field[gi + grid[0] * (gj + grid[1] * gk)];
                    err_max = std::max(err_max, std::fabs(local.field.at(i, j, k) - want));
                  }
              double err_all = 0;
              MPI_Allreduce(&err_max, &err_all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
              const bool cg = kernel_info(v.kernel).converges;
              const bool fixed = cg && v.cg_iterations > 0;
              const double ftol = fixed ? 1e-9 : cg ? 1e-6 : tol;
              bool ok = err_all <= ftol * ref_max && rel_diff(r.l2, std::sqrt(ref_sq)) <= ftol;
              if (!cg) ok = ok && std::fabs(r.checksum - ref_sum) <= tol * std::sqrt(ref_sq) * 10;
              // This rank's points in order, kept from the depth-1 runs
              // (earlier in the variant list) for the deeper ones.
              std::vector<double> mine;
              if (kernel_info(c.kernel).temporal_blocking && c.format == MatrixFormat::Stencil)
                for (int k = 0; k < d.size[2]; ++k)
                  for (int j = 0; j < d.size[1]; ++j)
                    for (int i = 0; i < d.size[0]; ++i) mine.push_back(local.field.at(i, j, k));
              SolveConfig plain = c;
              plain.halo_depth = 1;
              plain.stores = StoresChoice::Cached;
              const std::string plain_key = describe(plain, m);
              if (c.halo_depth == 1 && r.stores == Stores::Cached && !mine.empty())
                plain_fields[plain_key] = mine;
              long long differ = 0;
              if (c.halo_depth > 1 || r.stores == Stores::Streaming) {
                if (!plain_fields.count(plain_key)) {
                  LocalSolution one;
                  solve(MPI_COMM_WORLD, plain, &one);
                  plain_fields[plain_key].clear();
                  for (int k = 0; k < d.size[2]; ++k)
                    for (int j = 0; j < d.size[1]; ++j)
                      for (int i = 0; i < d.size[0]; ++i)
                        plain_fields[plain_key].push_back(one.field.at(i, j, k));
                }
                const std::vector<double>& one = plain_fields[plain_key];
                for (std::size_t p = 0; p < mine.size(); ++p) differ += mine[p] != one[p];
                long long all = 0;
                MPI_Allreduce(&differ, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
                differ = all;
                ok = ok && differ == 0;
              }
              if (fixed)
                ok = ok && r.iterations == v.cg_iterations && ref.iterations == v.cg_iterations;
              else if (cg)
                ok = ok && std::abs(r.iterations - ref.iterations) <= 1 && r.residual < c.tol;
              if (v.kernel == KernelKind::Pipecg && !fixed) {
                // cg's reference: the same solution to the tolerance, within
                // 2 iterations of cg's count.
                auto cg_key = std::make_tuple(static_cast<int>(KernelKind::Cg), grid[0], periodic,
                                              c.max_iters, c.iters);
                if (!refs.count(cg_key))
                  refs[cg_key] = reference_solve(KernelKind::Cg, grid, periodic, c.iters, c.tol,
                                                 c.max_iters);
                const ReferenceResult& cg_ref = refs[cg_key];
                double cg_err = 0, cg_max = 0;
                for (int k = 0; k < d.size[2]; ++k)
                  for (int j = 0; j < d.size[1]; ++j)
                    for (int i = 0; i < d.size[0]; ++i) {
                      const long long gi = d.offset[0] + i, gj = d.offset[1] + j, gk = d.offset[2] + k;
                      const double want = cg_ref.field[gi + grid[0] * (gj + grid[1] * gk)];
                      cg_err = std::max(cg_err, std::fabs(local.field.at(i, j, k) - want));
                      cg_max = std::max(cg_max, std::fabs(want));
                    }
                double pair[2] = {cg_err, cg_max};
                MPI_Allreduce(MPI_IN_PLACE, pair, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                const bool near_cg = pair[0] <= 1e-6 * pair[1] &&
                                     std::abs(r.iterations - cg_ref.iterations) <= 2;
                if (!near_cg && g_rank == 0)
                  std::printf("FAIL %s: against cg's reference: max point error %.3g (max %.3g), "
                              "iterations %d vs cg's %d\n", describe(c, m).c_str(), pair[0], pair[1],
                              r.iterations, cg_ref.iterations);
                ok = ok && near_cg;
              }
              if (ok) {
                ++tally.passed;
              } else {
                ++tally.failed;
                if (g_rank == 0)
                  std::printf("FAIL %s: max point error %.3g (ref max %.3g), l2 %.17g vs %.17g, "
                              "checksum %.17g vs %.17g, iterations %d vs %d, %lld points differ "
                              "from halo depth 1 / cached stores\n",
                              describe(c, m).c_str(), err_all, ref_max, r.l2, std::sqrt(ref_sq),
                              r.checksum, ref_sum, r.iterations, ref.iterations, differ);
              }
            }
          }
  if (only_kernel.empty()) alternating_tiles(tally, threads, only_scheme);
  if (g_rank == 0)
    std::printf("test_schemes: %d ranks x %d threads (%s)\n%d passed, %d failed, %d skipped\n", size,
                threads, thread_level_name(provided).c_str(), tally.passed, tally.failed,
                tally.skipped);
  MPI_Finalize();
  return tally.failed == 0 && tally.passed > 0 ? 0 : 1;
}
