#include "hympi/solver.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <iomanip>
#include <sstream>
#include <memory>
#include <stdexcept>
#include <utility>

#include "hympi/error.hpp"
#include "hympi/kernel.hpp"
#include "hympi/scheme.hpp"
#include "kernels/kernel_util.hpp"
#include "domain_support.hpp"
#include "wavefront_tiles.hpp"

namespace hympi {

namespace {

// The matrix in the format the config asks for, when the kernel has a stored
// form; built outside the timed loop.
struct OwnedMatrix {
  std::unique_ptr<CrsMatrix> crs;
  std::unique_ptr<SellMatrix> sell;
  StoredMatrix view() const { return {crs.get(), sell.get()}; }
};
OwnedMatrix stored_matrix(const KernelInfo& info, const SolveConfig& cfg,
                          const LocalDomain& domain) {
  OwnedMatrix m;
  if (cfg.format == MatrixFormat::Stencil || !info.supports(cfg.format)) return m;
  std::array<bool, 6> sides{};
  for (int dir = 0; dir < 6; ++dir) sides[dir] = domain.has_neighbour(dir);
  const Field layout(domain.size);
  if (cfg.format == MatrixFormat::Crs) m.crs = std::make_unique<CrsMatrix>(build_crs(layout, sides));
  if (cfg.format == MatrixFormat::Sell)
    m.sell = std::make_unique<SellMatrix>(build_sell(layout, sides));
  return m;
}

// Every repetition's timings and logs, and the last one's result.
struct Repetitions {
  std::vector<double> times;        // [rep]: loop time, max over ranks
  std::vector<double> local_times;  // [rep]: this rank's loop time
  std::vector<double> loop_starts;  // [rep]: LoopClock::t0
  std::vector<Timers> timers;       // [rep]
  std::vector<std::vector<detail::TraceLog>> logs;  // [rep][thread], with cfg.trace only
  KernelOutcome last;
  int tuning_blocks = 0;            // this rank's, over every repetition
  double tuning_s = 0;
};

// Per-thread trace logs of repetition rep, attached to its timers. Later
// repetitions log as many steps as the first: reserving that keeps
// reallocation out of their timed loops.
std::vector<detail::TraceLog> attach_trace(Timers& timers, const Repetitions& done, int threads) {
  std::vector<detail::TraceLog> logs(threads);
  for (int t = 0; t < threads; ++t) {
    if (!done.logs.empty()) logs[t].events.reserve(done.logs[0][t].events.size());
    timers[t].trace = &logs[t].events;
  }
  return logs;
}

// Collective: cfg.repeat runs of the kernel.
Repetitions run_repetitions(const Kernel& kernel, const KernelRun& run) {
  const SolveConfig& cfg = run.cfg;
  Domain& domain = run.domain;
  Repetitions reps;
  for (int rep = 0; rep < cfg.repeat; ++rep) {
    Timers& timers = domain.timers();
    for (auto& t : timers) t.trace = nullptr;
    std::vector<detail::TraceLog> logs;
    if (cfg.trace) logs = attach_trace(timers, reps, cfg.threads);
    KernelOutcome out = kernel.run(run);
    const double elapsed = domain.elapsed();
    double max_elapsed = 0;
    HYMPI_CHECK_MPI(MPI_Allreduce(&elapsed, &max_elapsed, 1, MPI_DOUBLE, MPI_MAX, domain.comm()));
    reps.times.push_back(max_elapsed);
    reps.local_times.push_back(elapsed);
    reps.loop_starts.push_back(domain.loop_start());
    reps.timers.push_back(timers);
    if (cfg.trace) reps.logs.push_back(std::move(logs));
    reps.tuning_blocks += out.tuning_blocks;
    reps.tuning_s += out.tuning_s;
    reps.last = std::move(out);
  }
  for (auto& t : domain.timers()) t.trace = nullptr;
  return reps;
}

// The repetition whose time is nearest the median. times[] are maxima over
// ranks: every rank picks the same one.
std::size_t median_repetition(const std::vector<double>& times, double median) {
  std::size_t med = 0;
  for (std::size_t i = 1; i < times.size(); ++i)
    if (std::fabs(times[i] - median) < std::fabs(times[med] - median)) med = i;
  return med;
}

// Collective: bytes and messages per exchange, summed over ranks.
void fill_exchange_counts(SolveResult& res, const ExchangePlan& plan, MPI_Comm comm) {
  long long mine[5] = {plan.bytes_intra(), plan.bytes_inter(), plan.messages_intra(),
                       plan.messages_inter(), plan.bytes_zero_copy()};
  long long all[5] = {0, 0, 0, 0, 0};
  HYMPI_CHECK_MPI(MPI_Allreduce(mine, all, 5, MPI_LONG_LONG, MPI_SUM, comm));
  res.bytes_intra = all[0];
  res.bytes_inter = all[1];
  res.messages_intra = all[2];
  res.messages_inter = all[3];
  res.bytes_zero_copy = all[4];
}

// Collective: everything the result reports, from the repetitions.
void summarise(SolveResult& res, Repetitions& reps, const KernelRun& run) {
  const SolveConfig& cfg = run.cfg;
  res.time_s = make_stats(reps.times);
  res.iterations = reps.last.iterations;
  res.residual = reps.last.residual;
  // A converging kernel stops at tol or at max_iters: below tol is converged.
  res.converged = !kernel_info(cfg.kernel).converges || res.residual < cfg.tol;
  const std::size_t med = median_repetition(reps.times, res.time_s.median);
  const MPI_Comm comm = run.domain.comm();
  if (cfg.trace)
    res.trace = detail::gather_trace(reps.logs[med], reps.loop_starts[med], reps.local_times[med], comm);
  res.breakdown = detail::breakdown_max(reps.timers[med], reps.local_times[med], comm);
  // No iteration ran (--iters 0, or cg converged at the start): nothing was
  // measured, so no fractions (all 0) rather than the set-up's wall time
  // reported as f_comp_non 1.
  const detail::Fractions f = res.iterations > 0
                                  ? detail::critical_fractions(res.breakdown, reps.times[med])
                                  : detail::Fractions{};
  res.f_comm = f.comm;
  res.f_comp_non = f.comp_non;
  res.f_comp_overlap = f.comp_overlap;
  const std::array<double, 2> sums = run.domain.checksum(reps.last.field);
  res.checksum = sums[0];
  res.l2 = sums[1];
  const double points = 1.0 * cfg.grid[0] * cfg.grid[1] * cfg.grid[2];
  res.mlups = res.time_s.median > 0 ? points * res.iterations / res.time_s.median / 1e6 : 0;
  fill_exchange_counts(res, run.domain.plan(), comm);
  res.exchanges = run.domain.exchanges();
  double tuning[2] = {static_cast<double>(reps.tuning_blocks), reps.tuning_s};
  HYMPI_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, tuning, 2, MPI_DOUBLE, MPI_MAX, comm));
  res.tuning_blocks = static_cast<int>(tuning[0]);
  res.tuning_s = tuning[1];
  res.tuned = res.tuning_blocks > 0 ? "wavefront tile rows" : "";
  res.tile_rows = run.domain.wavefront_tile_rows();
  HYMPI_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &res.tile_rows, 1, MPI_INT, MPI_MAX, comm));
}

// The domain of a solve: the config's grid, boundaries and scheme, halo 1.
DomainConfig domain_config(const SolveConfig& c) {
  DomainConfig d;
  d.grid = c.grid;
  d.periodic = {c.periodic, c.periodic, c.periodic};
  d.halo = 1;
  d.halo_depth = c.halo_depth;
  d.wavefront_planes = kernel_info(c.kernel).wavefront_planes;
  d.scheme = c.scheme;
  d.threads = c.threads;
  d.reserved = c.reserved;
  d.ranks_per_node = c.ranks_per_node;
  d.rank_order = c.rank_order;
  d.proc_grid = c.proc_grid;
  // A built-in kernel that fails is a bug: an exception, as for any other.
  d.on_error = KernelErrorPolicy::Throw;
  d.use_environment = false;  // the solver traces through its own logs (cfg.trace)
  return d;
}

}  // namespace

SolveResult solve(MPI_Comm parent, const SolveConfig& cfg, LocalSolution* local) {
  if (!cfg.scheme) throw UsageError("no scheme given");
  const Kernel& kernel = kernel_for(cfg.kernel);
  detail::ScopedOmpSettings omp_settings(cfg.threads);
  Domain domain(parent, domain_config(cfg));

  SolveResult res;
  res.config = cfg;
  res.reserved_used = domain.scheme().reserved_threads();
  res.nodes = domain.nodes();
  res.grid = domain.grid();
  const OwnedMatrix matrix = stored_matrix(kernel.info(), cfg, domain.local());

  // Every rank decides alike: the smallest L2 any rank's host reports.
  int ranks = 1;
  HYMPI_CHECK_MPI(MPI_Comm_size(domain.comm(), &ranks));
  const double my_l2 = detail::l2_cache_bytes();
  double l2 = my_l2;
  HYMPI_CHECK_MPI(MPI_Allreduce(&my_l2, &l2, 1, MPI_DOUBLE, MPI_MIN, domain.comm()));
  res.stores = streaming_stores_for(cfg, ranks, l2);
  const KernelRun run{cfg, domain, matrix.view(), res.stores};
  Repetitions reps = run_repetitions(kernel, run);
  summarise(res, reps, run);
  if (local) {
    local->domain = domain.local();
    local->field = std::move(reps.last.field);
  }
  return res;
}

// ---- validate_config: every problem at once, no MPI. ----

namespace {

void check_counts(const SolveConfig& c, std::vector<std::string>& errors) {
  if (c.iters < 0) errors.push_back("`iters` must be >= 0 (got " + std::to_string(c.iters) + ")");
  if (c.max_iters < 1) errors.push_back("`max_iters` must be >= 1");
  if (!(c.tol >= kMinTol) || !(c.tol < 1)) errors.push_back("`tol` must be in [1e-15, 1)");
  if (c.repeat < 1) errors.push_back("`repeat` must be >= 1");
}

const KernelInfo* registered(KernelKind kind) {
  for (const auto& k : kernel_registry())
    if (k.kind == kind) return &k;
  return nullptr;
}

// "a, b, c": the registered kernels for which has(info) holds.
template <typename Pred>
std::string kernel_names_where(Pred has) {
  std::string names;
  for (const auto& other : kernel_registry())
    if (has(other)) names += (names.empty() ? "" : ", ") + other.name;
  return names;
}

// The config runs a loop that can stream its output: a kernel with
// KernelInfo::streaming_stores, matrix-free, one sweep per exchange.
bool streaming_applies(const SolveConfig& c, const KernelInfo& k) {
  return k.streaming_stores && c.format == MatrixFormat::Stencil && c.halo_depth == 1;
}

// The rules the kernel declares in its KernelInfo.
void check_kernel(const SolveConfig& c, const KernelInfo& k, bool grid_ok,
                  std::vector<std::string>& errors) {
  if (c.periodic && k.periodic == PeriodicRule::Forbidden)
    errors.push_back(k.name + " needs Dirichlet boundaries: with periodic boundaries " +
                     k.periodic_why);
  if (c.periodic && k.periodic == PeriodicRule::EvenSizes && grid_ok &&
      (c.grid[0] % 2 || c.grid[1] % 2 || c.grid[2] % 2))
    errors.push_back(k.name + " with periodic boundaries needs even NX, NY, NZ (" +
                     k.periodic_why + ")");
  if (c.halo_depth > 1 && (!k.temporal_blocking || c.format != MatrixFormat::Stencil)) {
    const std::string names = kernel_names_where([](const KernelInfo& o) { return o.temporal_blocking; });
    errors.push_back("`halo_depth` " + std::to_string(c.halo_depth) +
                     " (temporal blocking) applies only to: " + names + ", in format stencil" +
                     (k.temporal_blocking ? " (format " + std::string(format_name(c.format)) + " given)"
                                          : " (" + k.name + " is not one)"));
  }
  if (c.stores == StoresChoice::Streaming) {
    if (!streaming_applies(c, k))
      errors.push_back("`stores` streaming applies only to the one-sweep loop (`halo_depth` 1, format "
                       "stencil) of: " +
                       kernel_names_where([](const KernelInfo& o) { return o.streaming_stores; }) +
                       " (the kernels that write an output array they do not read)");
    else if (!streaming_stores_available())
      errors.push_back("`stores` streaming: this build has no streaming stores (x86 with SSE2 or "
                       "wider only); use cached or auto");
  }
  if (!k.supports(c.format)) {
    const std::string names =
        kernel_names_where([&c](const KernelInfo& o) { return o.supports(c.format); });
    errors.push_back(std::string("`format` ") + format_name(c.format) + " applies only to: " + names);
  }
}

// The kernel's memory fits the nodes: on the fullest node, every rank's
// fields over the largest local box with their halo layers (halo x
// halo_depth on every side) and rows padded to whole cache lines (the
// matrix-free kernels' layout; an upper bound for the others), plus the
// stored matrix over the box. Per grid point alone, a deep halo on small
// boxes (16^3 boxes at depth 8 allocate 8x their points) or thin rows would
// pass a grid that cannot be allocated.
void check_memory(const SolveConfig& c, int ranks, const NodeMap* real_nodes,
                  double node_memory_bytes, const KernelInfo& kernel,
                  std::vector<std::string>& errors) {
  int nodes = 1, ranks_per_node = ranks;
  if (c.ranks_per_node > 0) {
    ranks_per_node = c.ranks_per_node;
    nodes = ranks / ranks_per_node;
  } else if (real_nodes && real_nodes->homogeneous()) {
    nodes = real_nodes->node_count;
    ranks_per_node = real_nodes->ranks_per_node.front();
  }
  const DomainConfig d = domain_config(c);
  const GridChoice g = choose_grid(d.grid, nodes, ranks_per_node, d.periodic, d.proc_grid);
  const double layers = 1.0 * d.halo * d.halo_depth;
  double points = 1, allocated = 1;
  for (int axis = 0; axis < 3; ++axis) {
    const double n = std::ceil(1.0 * d.grid[axis] / g.dims[axis]);  // the largest box's side
    double with_halo = n + 2 * layers;
    if (axis == 0) with_halo = std::ceil(with_halo / 8) * 8;  // rows of whole 64-byte lines
    points *= n;
    allocated *= with_halo;
  }
  const double matrix = kernel.memory_bytes_per_point(c.format) - sizeof(double) * kernel.fields;
  // Temporal blocking sweeps from one field into another: two at least
  // (rbgs, in place at depth 1, holds one there).
  const int fields = c.halo_depth > 1 ? std::max(kernel.fields, 2) : kernel.fields;
  // The ranks that share one host's memory: the fullest real node where the
  // nodes are known (virtual nodes split the decomposition, not the memory:
  // four virtual nodes of one rank on one host still need four ranks' worth
  // of it), else the (virtual) node size.
  int sharing = ranks_per_node;
  if (real_nodes && !real_nodes->ranks_per_node.empty())
    sharing = *std::max_element(real_nodes->ranks_per_node.begin(), real_nodes->ranks_per_node.end());
  const double need = sharing * (sizeof(double) * fields * allocated + matrix * points);
  // In double and printed as such: a grid of 2^90 points must not wrap a
  // 64-bit integer into a negative size.
  const auto megabytes = [](double bytes) {
    std::ostringstream s;
    s << std::setprecision(bytes < 1e18 ? 15 : 3) << std::floor(bytes / 1e6) << " MB";
    return s.str();
  };
  if (need > node_memory_bytes)
    errors.push_back("the grid needs about " + megabytes(need) + " per node (" +
                     std::to_string(sharing) + " rank" + (sharing == 1 ? "" : "s") +
                     ", halos and row padding included), more than the node's " +
                     megabytes(node_memory_bytes));
}

}  // namespace

const char* stores_choice_name(StoresChoice s) {
  switch (s) {
    case StoresChoice::Cached: return "cached";
    case StoresChoice::Streaming: return "streaming";
    case StoresChoice::Auto: break;
  }
  return "auto";
}

Stores streaming_stores_for(const SolveConfig& c, int ranks, double l2_bytes) {
  const KernelInfo* k = registered(c.kernel);
  if (!k || !streaming_applies(c, *k) || !streaming_stores_available() ||
      c.stores == StoresChoice::Cached)
    return Stores::Cached;
  if (c.stores == StoresChoice::Streaming) return Stores::Streaming;
  if (l2_bytes <= 0) l2_bytes = detail::l2_cache_bytes();
  // The sweep's two arrays (in and out) per thread: cached stores pay only
  // where both stay in cache until the next sweep.
  const double points = 1.0 * c.grid[0] * c.grid[1] * c.grid[2];
  const double share =
      2.0 * sizeof(double) * points / (1.0 * std::max(1, ranks) * std::max(1, c.threads));
  return share > l2_bytes ? Stores::Streaming : Stores::Cached;
}

std::vector<std::string> validate_config(const SolveConfig& c, int ranks, const NodeMap* real_nodes,
                                         double node_memory_bytes) {
  // The domain's rules (grid, threads and scheme, nodes, decomposition),
  // then the kernel's and the solve's own.
  DomainConfig d = domain_config(c);
  if (!c.scheme) {  // the caller reports the name it could not resolve
    d.scheme = &pure_mpi_scheme();
    d.reserved = 0;
  }
  // The domain names its parameters as SolveConfig does (`halo_depth`).
  std::vector<std::string> errors = validate_domain(d, ranks, real_nodes);
  const bool grid_ok = c.grid[0] >= 1 && c.grid[1] >= 1 && c.grid[2] >= 1;
  check_counts(c, errors);
  const KernelInfo* kernel = registered(c.kernel);
  if (kernel)
    check_kernel(c, *kernel, grid_ok, errors);
  else
    errors.push_back("unknown kernel " + std::to_string(static_cast<int>(c.kernel)));
  if (errors.empty() && kernel && node_memory_bytes > 0)
    check_memory(c, ranks, real_nodes, node_memory_bytes, *kernel, errors);
  return errors;
}

}  // namespace hympi
