// Runs a kernel under a scheme on a communicator: topology, decomposition,
// exchange plan, iterations, timing, checksums.
#pragma once

#include <mpi.h>

#include <array>
#include <string>
#include <vector>

#include "hympi/exchange.hpp"
#include "hympi/field.hpp"
#include "hympi/kernels.hpp"
#include "hympi/scheme.hpp"
#include "hympi/timing.hpp"
#include "hympi/topology.hpp"

namespace hympi {

// The smallest cg tolerance: below it only the recurrence's residual falls
// further (to underflow: 0 after enough iterations), not the true residual,
// which stops near the rounding error, so "converged" would mean nothing.
constexpr double kMinTol = 1e-15;

// How the one-sweep loop (halo_depth 1, stencil format) of a kernel with
// KernelInfo::streaming_stores writes its output array (Stores, kernels.hpp).
// Auto: streaming where one thread's share of the sweep's two arrays (in
// and out) is larger than a core's L2 cache (they cannot stay in cache from
// one sweep to the next, so the write-allocate read is pure cost), else
// cached. See streaming_stores_for.
enum class StoresChoice { Auto, Cached, Streaming };
// "auto", "cached", "streaming": the names the CLI and the JSON use.
const char* stores_choice_name(StoresChoice s);

struct SolveConfig {
  KernelKind kernel = KernelKind::Jacobi;
  MatrixFormat format = MatrixFormat::Stencil;
  // A registry entry (find_scheme, scheme_registry); default: pure_mpi_scheme().
  const SchemeEntry* scheme = &pure_mpi_scheme();
  std::array<int, 3> grid{0, 0, 0};
  bool periodic = false;
  int iters = 10;            // jacobi, rbgs, spmv
  // Temporal blocking: iterations per halo exchange (halos this deep; the
  // kernels with KernelInfo::temporal_blocking, stencil format).
  int halo_depth = 1;
  StoresChoice stores = StoresChoice::Auto;
  int threads = 1;
  int reserved = 0;          // 0: scheme default (multiple: 1)
  double tol = 1e-8;         // cg, kMinTol .. 1
  int max_iters = 10000;     // cg
  int repeat = 1;
  int ranks_per_node = 0;    // 0: real nodes
  RankOrder rank_order = RankOrder::Sequential;
  std::array<int, 3> proc_grid{0, 0, 0};  // 0: chosen node-aware
  bool trace = false;        // record every thread's timed steps (SolveResult::trace)
};

struct SolveResult {
  SolveConfig config;
  int reserved_used = 0;
  GridChoice grid;
  NodeMap nodes;
  Stores stores = Stores::Cached;  // how the output array was written (config.stores)
  int iterations = 0;        // iterations done (cg: until converged)
  double residual = 0;       // cg: final relative residual
  bool converged = true;     // cg: residual < tol (false: stopped at max_iters)
  double checksum = 0, l2 = 0;
  Stats time_s;
  double mlups = 0;
  long long bytes_intra = 0, bytes_inter = 0;        // all ranks, per exchange
  long long messages_intra = 0, messages_inter = 0;  // all ranks, per exchange
  long long bytes_zero_copy = 0;  // of bytes_intra, read through shared memory (no message)
  long long exchanges = 0;   // halo exchanges per repetition (iterations / halo_depth, rounded up)
  // Tuning before the timed loops, over all repetitions (KernelOutcome):
  // what was tuned ("" when nothing), blocks run (max over ranks) and the
  // seconds it took (max over ranks). Never part of time_s.
  std::string tuned;
  int tuning_blocks = 0;
  double tuning_s = 0;
  // Temporal blocking: rows per wavefront tile of the timed blocks, max
  // over ranks (Domain::wavefront_tile_rows); 0 without a wavefront.
  int tile_rows = 0;
  // Per thread and phase, of the median repetition, max over ranks:
  // phase order of timing.hpp, then idle as the last entry.
  std::vector<std::array<double, kPhaseCount + 1>> breakdown;
  double f_comm = 0, f_comp_non = 0, f_comp_overlap = 0;
  // With config.trace, on rank 0 only: every rank's timeline ([rank]) of the
  // repetition that gives the breakdown. Empty on other ranks.
  std::vector<RankTrace> trace;
};

// Local result of the last repetition, for tests that compare point by point.
// The matrix-free jacobi and spmv return a field with rows padded to cache
// lines (RowLayout::CacheLine): index it through the Field (at, index).
struct LocalSolution {
  LocalDomain domain;
  Field field;
};

// Collective over comm. The config must be valid (see validate_config); the
// calling program must run with at least the scheme's MPI thread level.
// OpenMP: solve() turns dynamic adjustment off and sets cfg.threads as the
// default team size for its own duration, and restores the caller's
// settings when it returns or throws.
SolveResult solve(MPI_Comm comm, const SolveConfig& config, LocalSolution* local = nullptr);

// Every problem with a config at once (empty when valid), given the ranks of
// the communicator. Pure function, no MPI. Messages name the parameters as
// they are named in SolveConfig, in backquotes (`iters`, `ranks_per_node`), so
// that a front end can put its own names for them. A null scheme is a name
// the caller could not resolve: the caller reports it (it knows the name);
// the checks that need the scheme are skipped. solve() refuses a null scheme.
// real_nodes: the nodes found without --ranks-per-node (nullptr: one node);
// node_memory_bytes: memory of one node (0: not checked).
std::vector<std::string> validate_config(const SolveConfig& config, int ranks,
                                         const NodeMap* real_nodes, double node_memory_bytes);

const char* kernel_name(KernelKind k);

// The stores config.stores gives on `ranks` ranks: Cached for a kernel or
// format or halo depth that has no separate output array to stream, and in
// a build without streaming stores; for Auto, Streaming where the two
// arrays' bytes per thread (2 x 8 x grid points / (ranks x threads)) are
// more than l2_bytes (0: this machine's L2 per core). solve() passes the
// smallest L2 of its ranks, so that every rank decides alike.
Stores streaming_stores_for(const SolveConfig& config, int ranks, double l2_bytes = 0);

}  // namespace hympi
