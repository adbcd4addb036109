#include "hympi/solver.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>

#include "hympi/error.hpp"
#include "hympi/kernel.hpp"
#include "hympi/scheme.hpp"
#include "kernels/kernel_util.hpp"

namespace hympi {

Stats make_stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return s;
}

namespace {

// A duplicate of the caller's communicator that returns error codes (so that
// HYMPI_CHECK_MPI sees them) and is freed on every path.
class OwnedComm {
 public:
  explicit OwnedComm(MPI_Comm parent) {
    HYMPI_CHECK_MPI(MPI_Comm_dup(parent, &comm_));
    HYMPI_CHECK_MPI(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  }
  ~OwnedComm() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  OwnedComm(const OwnedComm&) = delete;
  OwnedComm& operator=(const OwnedComm&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

GridChoice grid_for(const SolveConfig& c, const NodeMap& nodes, int ranks) {
  return choose_grid_for_nodes(c.grid, nodes, ranks, {c.periodic, c.periodic, c.periodic},
                               c.proc_grid);
}

// One thread's event log, on a cache line of its own: threads append to
// their logs at the same time, and the vectors' end pointers would otherwise
// share lines.
struct alignas(64) TraceLog {
  std::vector<TraceEvent> events;
};

// Collective. Every rank's timeline on rank 0 (empty elsewhere), times made
// relative to each rank's loop start t0. One MPI_Gatherv of a flat array of
// doubles per rank: [elapsed, count of thread 0 .. count of thread n-1,
// then per event (phase, start, end)].
std::vector<RankTrace> gather_trace(const std::vector<TraceLog>& logs, double t0, double elapsed,
                                    MPI_Comm comm) {
  int size = 0, rank = 0;
  HYMPI_CHECK_MPI(MPI_Comm_size(comm, &size));
  HYMPI_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  const int nt = static_cast<int>(logs.size());
  std::vector<double> flat{elapsed};
  for (const auto& l : logs) flat.push_back(static_cast<double>(l.events.size()));
  for (const auto& l : logs)
    for (const TraceEvent& e : l.events) {
      flat.push_back(static_cast<double>(static_cast<int>(e.phase)));
      flat.push_back(e.start - t0);
      flat.push_back(e.end - t0);
    }
  if (flat.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error("trace too large to gather: use fewer iterations");
  const int mine = static_cast<int>(flat.size());
  std::vector<int> counts(rank == 0 ? size : 0), displs(rank == 0 ? size : 0);
  HYMPI_CHECK_MPI(MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm));
  long long total = 0;
  for (int r = 0; r < static_cast<int>(counts.size()); ++r) {
    displs[r] = static_cast<int>(total);
    total += counts[r];
  }
  if (total > std::numeric_limits<int>::max())
    throw std::runtime_error("trace too large to gather: use fewer iterations or ranks");
  std::vector<double> all(static_cast<std::size_t>(total));
  HYMPI_CHECK_MPI(MPI_Gatherv(flat.data(), mine, MPI_DOUBLE, all.data(), counts.data(),
                              displs.data(), MPI_DOUBLE, 0, comm));
  std::vector<RankTrace> out;
  if (rank != 0) return out;
  out.resize(size);
  for (int r = 0; r < size; ++r) {
    const double* p = all.data() + displs[r];
    RankTrace& rt = out[r];
    rt.elapsed = *p++;
    std::vector<std::size_t> n(nt);
    for (int t = 0; t < nt; ++t) n[t] = static_cast<std::size_t>(*p++);
    rt.threads.resize(nt);
    for (int t = 0; t < nt; ++t) {
      rt.threads[t].reserve(n[t]);
      for (std::size_t i = 0; i < n[t]; ++i, p += 3)
        rt.threads[t].push_back({static_cast<Phase>(static_cast<int>(p[0])), p[1], p[2]});
    }
  }
  return out;
}

// solve() sets the OpenMP settings its parallel regions rely on (no dynamic
// adjustment, cfg.threads threads for regions without a num_threads clause)
// for its own duration only, and gives the caller's back on every path.
class ScopedOmpSettings {
 public:
  explicit ScopedOmpSettings(int threads)
      : dynamic_(omp_get_dynamic()), max_threads_(omp_get_max_threads()) {
    omp_set_dynamic(0);
    omp_set_num_threads(threads);
  }
  ~ScopedOmpSettings() {
    omp_set_dynamic(dynamic_);
    omp_set_num_threads(max_threads_);
  }
  ScopedOmpSettings(const ScopedOmpSettings&) = delete;
  ScopedOmpSettings& operator=(const ScopedOmpSettings&) = delete;

 private:
  int dynamic_;
  int max_threads_;
};

// The matrix, when the config asks for CRS and the kernel has a CRS form.
std::unique_ptr<CrsMatrix> stored_matrix(const KernelInfo& info, const SolveConfig& cfg,
                                         const LocalDomain& domain) {
  if (cfg.format != MatrixFormat::Crs || !info.supports(MatrixFormat::Crs)) return nullptr;
  std::array<bool, 6> sides{};
  for (int dir = 0; dir < 6; ++dir) sides[dir] = domain.has_neighbour(dir);
  return std::make_unique<CrsMatrix>(build_crs(Field(domain.size), sides));
}

// Every repetition's timings and logs, and the last one's result.
struct Repetitions {
  std::vector<double> times;        // [rep]: loop time, max over ranks
  std::vector<double> local_times;  // [rep]: this rank's loop time
  std::vector<double> loop_starts;  // [rep]: LoopClock::t0
  std::vector<Timers> timers;       // [rep]
  std::vector<std::vector<TraceLog>> logs;  // [rep][thread], with cfg.trace only
  KernelOutcome last;
};

// Per-thread trace logs of repetition rep, attached to its timers. Later
// repetitions log as many steps as the first: reserving that keeps
// reallocation out of their timed loops.
std::vector<TraceLog> attach_trace(Timers& timers, const Repetitions& done, int threads) {
  std::vector<TraceLog> logs(threads);
  for (int t = 0; t < threads; ++t) {
    if (!done.logs.empty()) logs[t].events.reserve(done.logs[0][t].events.size());
    timers[t].trace = &logs[t].events;
  }
  return logs;
}

// Collective: cfg.repeat runs of the kernel.
Repetitions run_repetitions(const Kernel& kernel, const KernelRun& run) {
  const SolveConfig& cfg = run.cfg;
  Repetitions reps;
  for (int rep = 0; rep < cfg.repeat; ++rep) {
    Timers timers(cfg.threads);
    std::vector<TraceLog> logs;
    if (cfg.trace) logs = attach_trace(timers, reps, cfg.threads);
    LoopClock clock{run.comm};
    KernelOutcome out = kernel.run(run, timers, clock);
    const double elapsed = clock.elapsed;
    double max_elapsed = 0;
    HYMPI_CHECK_MPI(MPI_Allreduce(&elapsed, &max_elapsed, 1, MPI_DOUBLE, MPI_MAX, run.comm));
    reps.times.push_back(max_elapsed);
    reps.local_times.push_back(elapsed);
    reps.loop_starts.push_back(clock.t0);
    reps.timers.push_back(std::move(timers));
    if (cfg.trace) reps.logs.push_back(std::move(logs));
    reps.last = std::move(out);
  }
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

// Collective: per thread and phase (then idle), max over ranks.
void fill_breakdown(SolveResult& res, const Timers& tm, double local_time, int nt, MPI_Comm comm) {
  const int width = kPhaseCount + 1;
  std::vector<double> mine(static_cast<std::size_t>(nt) * width);
  for (int t = 0; t < nt; ++t) {
    for (int p = 0; p < kPhaseCount; ++p) mine[t * width + p] = tm[t].seconds[p];
    mine[t * width + kPhaseCount] = std::max(0.0, local_time - tm[t].busy());
  }
  std::vector<double> worst(mine.size());
  HYMPI_CHECK_MPI(MPI_Allreduce(mine.data(), worst.data(), static_cast<int>(mine.size()),
                                MPI_DOUBLE, MPI_MAX, comm));
  res.breakdown.resize(nt);
  for (int t = 0; t < nt; ++t)
    for (int p = 0; p <= kPhaseCount; ++p) res.breakdown[t][p] = worst[t * width + p];
}

// Fractions of the wall time T on the critical path (the model's inputs for
// masteronly runs): communication = the busiest communicating thread's
// pack + MPI + unpack; overlappable = the slowest thread's interior work;
// the rest cannot overlap (boundary, vector updates, region overheads).
void fill_fractions(SolveResult& res, double T) {
  if (!(T > 0)) return;
  double comm_max = 0, interior_max = 0;
  for (const auto& b : res.breakdown) {
    comm_max = std::max(comm_max, b[static_cast<int>(Phase::Pack)] +
                                      b[static_cast<int>(Phase::Unpack)] +
                                      b[static_cast<int>(Phase::Comm)]);
    interior_max = std::max(interior_max, b[static_cast<int>(Phase::ComputeInterior)]);
  }
  res.f_comm = std::min(1.0, comm_max / T);
  res.f_comp_overlap = std::min(1.0 - res.f_comm, interior_max / T);
  res.f_comp_non = std::max(0.0, 1.0 - res.f_comm - res.f_comp_overlap);
}

// Collective: checksum and L2 norm of the global result.
void fill_checksums(SolveResult& res, const Field& f, const LocalDomain& domain, MPI_Comm comm) {
  double sum = 0, sq = 0;
  const Box b = domain.box();
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i) {
        const double v = f.at(i, j, k);
        sum += v;
        sq += v * v;
      }
  res.checksum = detail::allreduce_sum(sum, comm);
  res.l2 = std::sqrt(detail::allreduce_sum(sq, comm));
}

// Collective: bytes and messages per exchange, summed over ranks.
void fill_exchange_counts(SolveResult& res, const ExchangePlan& plan, MPI_Comm comm) {
  long long mine[4] = {plan.bytes_intra(), plan.bytes_inter(), plan.messages_intra(),
                       plan.messages_inter()};
  long long all[4] = {0, 0, 0, 0};
  HYMPI_CHECK_MPI(MPI_Allreduce(mine, all, 4, MPI_LONG_LONG, MPI_SUM, comm));
  res.bytes_intra = all[0];
  res.bytes_inter = all[1];
  res.messages_intra = all[2];
  res.messages_inter = all[3];
}

// Collective: everything the result reports, from the repetitions.
void summarise(SolveResult& res, Repetitions& reps, const KernelRun& run) {
  const SolveConfig& cfg = run.cfg;
  res.time_s = make_stats(reps.times);
  res.iterations = reps.last.iterations;
  res.residual = reps.last.residual;
  const std::size_t med = median_repetition(reps.times, res.time_s.median);
  if (cfg.trace)
    res.trace = gather_trace(reps.logs[med], reps.loop_starts[med], reps.local_times[med], run.comm);
  fill_breakdown(res, reps.timers[med], reps.local_times[med], cfg.threads, run.comm);
  fill_fractions(res, reps.times[med]);
  fill_checksums(res, reps.last.field, run.domain, run.comm);
  const double points = 1.0 * cfg.grid[0] * cfg.grid[1] * cfg.grid[2];
  res.mlups = res.time_s.median > 0 ? points * res.iterations / res.time_s.median / 1e6 : 0;
  fill_exchange_counts(res, run.plan, run.comm);
}

}  // namespace

SolveResult solve(MPI_Comm parent, const SolveConfig& cfg, LocalSolution* local) {
  OwnedComm owned(parent);
  MPI_Comm comm = owned.get();
  int size = 0;
  HYMPI_CHECK_MPI(MPI_Comm_size(comm, &size));

  const SchemeEntry* entry = cfg.scheme;
  if (!entry) throw UsageError("no scheme given");
  const Kernel& kernel = kernel_for(cfg.kernel);
  ScopedOmpSettings omp_settings(cfg.threads);

  SolveResult res;
  res.config = cfg;
  res.nodes = discover_nodes(comm, cfg.ranks_per_node, cfg.rank_order);
  res.grid = grid_for(cfg, res.nodes, size);
  const ProcessGrid grid = make_process_grid(comm, res.nodes, res.grid);
  const std::array<bool, 3> periodic{cfg.periodic, cfg.periodic, cfg.periodic};
  const LocalDomain domain = decompose(cfg.grid, periodic, grid);

  std::unique_ptr<Scheme> scheme = entry->make(SchemeParams{cfg.threads, cfg.reserved});
  res.reserved_used = scheme->reserved_threads();
  ExchangePlan plan(comm, domain, res.nodes, scheme->face_pieces());

  SweepRegions regions;
  regions.local = domain.box();
  regions.interior = interior_box(domain);
  regions.boundary = subtract(regions.local, regions.interior);
  const std::unique_ptr<CrsMatrix> crs = stored_matrix(kernel.info(), cfg, domain);

  const KernelRun run{comm, cfg, domain, plan, *scheme, regions, crs.get(), cfg.threads};
  Repetitions reps = run_repetitions(kernel, run);
  summarise(res, reps, run);
  if (local) {
    local->domain = domain;
    local->field = std::move(reps.last.field);
  }
  return res;
}

// ---- validate_config: every problem at once, no MPI. ----

namespace {

void check_counts(const SolveConfig& c, std::vector<std::string>& errors) {
  if (c.iters < 0) errors.push_back("`iters` must be >= 0 (got " + std::to_string(c.iters) + ")");
  if (c.max_iters < 1) errors.push_back("`max_iters` must be >= 1");
  if (!(c.tol > 0) || !(c.tol < 1)) errors.push_back("`tol` must be in (0, 1)");
  if (c.repeat < 1) errors.push_back("`repeat` must be >= 1");
  if (c.threads < 1 || c.threads > 1024)
    errors.push_back("`threads` must be between 1 and 1024 (got " + std::to_string(c.threads) + ")");
}

// "'a' does" or "'a', 'b' do": the schemes that take reserved threads.
std::string schemes_taking_reserved() {
  std::string names;
  int count = 0;
  for (const auto& e : scheme_registry())
    if (e.info.takes_reserved) {
      names += (count++ ? ", '" : "'") + e.info.name + "'";
    }
  if (count == 0) return "none does";
  return names + (count == 1 ? " does" : " do");
}

// The thread rules the scheme declares in its SchemeInfo.
void check_scheme_threads(const SolveConfig& c, std::vector<std::string>& errors) {
  if (!c.scheme || c.threads < 1) return;
  const SchemeInfo& s = c.scheme->info;
  if (c.threads < s.min_threads)
    errors.push_back("scheme '" + s.name + "' needs at least " + std::to_string(s.min_threads) +
                     " threads (one communicates, the others compute); got threads = " +
                     std::to_string(c.threads));
  if (c.reserved != 0 && !s.takes_reserved)
    errors.push_back("scheme '" + s.name + "' takes no `reserved` (only " + schemes_taking_reserved() +
                     ")");
  if (s.takes_reserved && c.reserved != 0 && (c.reserved < 1 || c.reserved >= c.threads))
    errors.push_back("`reserved` must satisfy 1 <= m < threads (got m = " +
                     std::to_string(c.reserved) + ", threads = " + std::to_string(c.threads) + ")");
}

const KernelInfo* registered(KernelKind kind) {
  for (const auto& k : kernel_registry())
    if (k.kind == kind) return &k;
  return nullptr;
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
  if (!k.supports(c.format)) {
    std::string names;
    for (const auto& other : kernel_registry())
      if (other.supports(c.format)) names += (names.empty() ? "" : ", ") + other.name;
    errors.push_back("`format` crs applies only to: " + names);
  }
}

// The process grid fits the grid, and the kernel's memory fits the nodes.
void check_decomposition(const SolveConfig& c, int ranks, const NodeMap* real_nodes,
                         double node_memory_bytes, const KernelInfo* kernel,
                         std::vector<std::string>& errors) {
  int nodes = 1, rpn = ranks;
  if (c.ranks_per_node > 0) {
    rpn = c.ranks_per_node;
    nodes = ranks / rpn;
  } else if (real_nodes && real_nodes->homogeneous()) {
    nodes = real_nodes->node_count;
    rpn = real_nodes->ranks_per_node.front();
  }
  const std::array<bool, 3> periodic{c.periodic, c.periodic, c.periodic};
  const GridChoice g = choose_grid(c.grid, nodes, rpn, periodic, c.proc_grid);
  const char axis[3] = {'x', 'y', 'z'};
  for (int d = 0; d < 3; ++d)
    if (g.dims[d] > c.grid[d])
      errors.push_back("`grid` has " + std::to_string(c.grid[d]) + " points along " + axis[d] +
                       " but the process grid " + std::to_string(g.dims[0]) + "x" +
                       std::to_string(g.dims[1]) + "x" + std::to_string(g.dims[2]) + " has " +
                       std::to_string(g.dims[d]) + " processes there (each needs >= 1 point)");
  if (node_memory_bytes > 0 && kernel) {
    const double need =
        kernel->memory_bytes_per_point(c.format) * c.grid[0] * c.grid[1] * c.grid[2] / nodes;
    if (need > node_memory_bytes)
      errors.push_back("the grid needs about " + std::to_string(static_cast<long long>(need / 1e6)) +
                       " MB per node, more than the node's " +
                       std::to_string(static_cast<long long>(node_memory_bytes / 1e6)) + " MB");
  }
}

}  // namespace

std::vector<std::string> validate_config(const SolveConfig& c, int ranks, const NodeMap* real_nodes,
                                         double node_memory_bytes) {
  std::vector<std::string> errors;
  const bool grid_ok = c.grid[0] >= 1 && c.grid[1] >= 1 && c.grid[2] >= 1;
  if (!grid_ok) errors.push_back("`grid` dimensions must be positive integers");
  check_counts(c, errors);
  check_scheme_threads(c, errors);
  const KernelInfo* kernel = registered(c.kernel);
  if (kernel)
    check_kernel(c, *kernel, grid_ok, errors);
  else
    errors.push_back("unknown kernel " + std::to_string(static_cast<int>(c.kernel)));

  bool rpn_ok = true;
  if (c.ranks_per_node < 0 || (c.ranks_per_node > 0 && ranks % c.ranks_per_node != 0)) {
    errors.push_back("`ranks_per_node` " + std::to_string(c.ranks_per_node) +
                     " does not divide the " + std::to_string(ranks) + " ranks");
    rpn_ok = false;
  }
  const long long fixed = 1LL * c.proc_grid[0] * c.proc_grid[1] * c.proc_grid[2];
  if (c.proc_grid[0] > 0 && fixed != ranks)
    errors.push_back("`proc_grid` " + std::to_string(c.proc_grid[0]) + "x" +
                     std::to_string(c.proc_grid[1]) + "x" + std::to_string(c.proc_grid[2]) +
                     " has " + std::to_string(fixed) + " processes, but there are " +
                     std::to_string(ranks) + " ranks");
  else if (grid_ok && rpn_ok)
    check_decomposition(c, ranks, real_nodes, node_memory_bytes, kernel, errors);
  return errors;
}

}  // namespace hympi
