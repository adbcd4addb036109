#include "hympi/solver.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>

#include "hympi/error.hpp"
#include "hympi/scheme.hpp"

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

double allreduce_sum(double v, MPI_Comm comm) {
  double out = 0;
  HYMPI_CHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, comm));
  return out;
}

void fill_initial(Field& f, const LocalDomain& d) {
  const Box b = d.box();
#pragma omp parallel for schedule(static)
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i)
        f.at(i, j, k) = initial_value(d.offset[0] + i, d.offset[1] + j, d.offset[2] + k);
}

void fill_value(Field& f, double v) {
  const Box b = f.interior();
#pragma omp parallel for schedule(static)
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i) f.at(i, j, k) = v;
}

// Sum over threads of a per-thread partial, padded so threads do not share
// cache lines while accumulating.
struct alignas(64) Partial {
  double value = 0;
};

GridChoice grid_for(const SolveConfig& c, const NodeMap& nodes, int ranks) {
  const std::array<bool, 3> periodic{c.periodic, c.periodic, c.periodic};
  if (nodes.homogeneous())
    return choose_grid(c.grid, nodes.node_count, nodes.ranks_per_node.front(), periodic, c.proc_grid);
  // Nodes of different sizes: no node-aware block fits; plain rank order.
  GridChoice g = choose_grid(c.grid, 1, ranks, periodic, c.proc_grid);
  g.node_block = {1, 1, 1};
  g.node_aware = false;
  return g;
}

// One repetition's run: the kernel's iterations under the scheme.
struct RunState {
  MPI_Comm comm;
  const SolveConfig& cfg;
  const LocalDomain& domain;
  ExchangePlan& plan;
  Scheme& scheme;
  const SweepRegions& regions;
  const CrsMatrix* crs;
  int threads;
};

// Times the iteration loop only: allocation and initialisation are set-up.
// start() is collective (a barrier, so that all ranks begin together).
struct LoopClock {
  MPI_Comm comm;
  double t0 = 0, elapsed = 0;
  void start() {
    HYMPI_CHECK_MPI(MPI_Barrier(comm));
    t0 = now();
  }
  void stop() { elapsed = now() - t0; }
};

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

// Runs the iterations, returns the final field; iterations/residual for cg.
Field run_kernel(RunState& s, Timers& timers, int& iterations, double& residual, LoopClock& clock) {
  const LocalDomain& d = s.domain;
  const std::array<int, 3> n = d.size;
  const Box local = d.box();
  auto apply = [&](const Field& x, Field& y, const Box& b, double scale) {
    return s.crs ? crs_apply_box(*s.crs, x, y, b, scale) : stencil_apply_box(x, y, b, scale);
  };
  switch (s.cfg.kernel) {
    case KernelKind::Jacobi:
    case KernelKind::Spmv: {
      Field a(n), b(n);
      fill_initial(a, d);
      Field* cur = &a;
      Field* nxt = &b;
      const bool jacobi = s.cfg.kernel == KernelKind::Jacobi;
      clock.start();
      for (int it = 0; it < s.cfg.iters; ++it) {
        BoxFn fn = [&, cur, nxt](const Box& box, int) {
          if (jacobi)
            jacobi_box(*cur, *nxt, box);
          else
            apply(*cur, *nxt, box, kSpmvScale);
        };
        s.scheme.sweep(s.plan, *cur, s.regions, fn, timers);
        std::swap(cur, nxt);
      }
      clock.stop();
      iterations = s.cfg.iters;
      return std::move(*cur);
    }
    case KernelKind::Rbgs: {
      Field u(n);
      fill_initial(u, d);
      clock.start();
      for (int it = 0; it < s.cfg.iters; ++it)
        for (int colour = 0; colour < 2; ++colour)
          s.scheme.sweep(s.plan, u, s.regions,
                         [&](const Box& box, int) { rbgs_box(u, box, colour, d.offset); }, timers);
      clock.stop();
      iterations = s.cfg.iters;
      return u;
    }
    case KernelKind::Cg: {
      // Unpreconditioned CG. The only halo exchange is for p before q = A p;
      // p.q is summed inside the sweep, per thread, then over ranks. Vector
      // updates cannot overlap the exchange: they are booked as boundary
      // (non-overlappable) computation; the reductions as the master's Comm.
      Field x(n), r(n), p(n), q(n);
      fill_value(r, kRhs);
      fill_value(p, kRhs);
      const int nt = s.threads;
      std::vector<Partial> part(nt);
      auto parallel_sum = [&](auto&& body) {
        for (auto& v : part) v.value = 0;
#pragma omp parallel num_threads(nt)
        {
          const int t = omp_get_thread_num();
          PhaseTimer pt(timers[t], Phase::ComputeBoundary);
          part[t].value = body(split_box_part(local, nt, t));
        }
        double sum = 0;
        for (auto& v : part) sum += v.value;
        return sum;
      };
      auto reduce = [&](double v) {
        PhaseTimer c(timers[0], Phase::Comm);
        return allreduce_sum(v, s.comm);
      };
      clock.start();
      double rr = reduce(parallel_sum([&](const Box& b) { return dot_box(r, r, b); }));
      const double rr0 = rr;
      double rel = rr0 > 0 ? 1.0 : 0.0;
      int it = 0;
      while (it < s.cfg.max_iters && rel >= s.cfg.tol) {
        for (auto& v : part) v.value = 0;
        s.scheme.sweep(s.plan, p, s.regions,
                       [&](const Box& box, int t) { part[t].value += apply(p, q, box, 1.0); },
                       timers);
        double pq_local = 0;
        for (auto& v : part) pq_local += v.value;
        const double alpha = rr / reduce(pq_local);
        const double rr_new =
            reduce(parallel_sum([&](const Box& b) { return axpy_pair_box(x, r, p, q, alpha, b); }));
        ++it;
        rel = std::sqrt(rr_new / rr0);
        const double beta = rr_new / rr;
        parallel_sum([&](const Box& b) {
          xpay_box(p, r, beta, b);
          return 0.0;
        });
        rr = rr_new;
      }
      clock.stop();
      iterations = it;
      residual = rel;
      return x;
    }
  }
  throw std::logic_error("unknown kernel");
}

}  // namespace

SolveResult solve(MPI_Comm parent, const SolveConfig& cfg, LocalSolution* local) {
  OwnedComm owned(parent);
  MPI_Comm comm = owned.get();
  int size = 0, rank = 0;
  HYMPI_CHECK_MPI(MPI_Comm_size(comm, &size));
  HYMPI_CHECK_MPI(MPI_Comm_rank(comm, &rank));

  const SchemeEntry* entry = find_scheme(cfg.scheme);
  if (!entry) throw UsageError("unknown scheme '" + cfg.scheme + "'");
  omp_set_dynamic(0);
  omp_set_num_threads(cfg.threads);

  SolveResult res;
  res.config = cfg;
  res.nodes = discover_nodes(comm, cfg.ranks_per_node, cfg.rank_order);
  res.grid = grid_for(cfg, res.nodes, size);
  const ProcessGrid grid = make_process_grid(comm, res.nodes, res.grid);
  const std::array<bool, 3> periodic{cfg.periodic, cfg.periodic, cfg.periodic};
  const LocalDomain domain = decompose(cfg.grid, periodic, grid);

  SchemeParams params{cfg.threads, cfg.reserved};
  std::unique_ptr<Scheme> scheme = entry->make(params);
  res.reserved_used = scheme->reserved_threads();
  ExchangePlan plan(comm, domain, res.nodes, scheme->face_pieces());

  SweepRegions regions;
  regions.local = domain.box();
  regions.interior = interior_box(domain);
  regions.boundary = subtract(regions.local, regions.interior);

  std::unique_ptr<CrsMatrix> crs;
  if (cfg.format == MatrixFormat::Crs &&
      (cfg.kernel == KernelKind::Spmv || cfg.kernel == KernelKind::Cg)) {
    std::array<bool, 6> sides{};
    for (int dir = 0; dir < 6; ++dir) sides[dir] = domain.has_neighbour(dir);
    crs = std::make_unique<CrsMatrix>(build_crs(Field(domain.size), sides));
  }

  RunState state{comm, cfg, domain, plan, *scheme, regions, crs.get(), cfg.threads};
  std::vector<double> times;
  std::vector<double> local_times;
  std::vector<Timers> all_timers;
  std::vector<std::vector<TraceLog>> all_logs;  // [rep][thread], with cfg.trace only
  std::vector<double> loop_starts;              // [rep]: LoopClock::t0
  Field final_field;
  for (int rep = 0; rep < cfg.repeat; ++rep) {
    Timers timers(cfg.threads);
    std::vector<TraceLog> logs;
    if (cfg.trace) {
      logs.resize(cfg.threads);
      for (int t = 0; t < cfg.threads; ++t) {
        // Later repetitions log as many steps as the first: reserving that
        // keeps reallocation out of their timed loops.
        if (rep > 0) logs[t].events.reserve(all_logs[0][t].events.size());
        timers[t].trace = &logs[t].events;
      }
    }
    LoopClock clock{comm};
    Field f = run_kernel(state, timers, res.iterations, res.residual, clock);
    const double elapsed = clock.elapsed;
    double max_elapsed = 0;
    HYMPI_CHECK_MPI(MPI_Allreduce(&elapsed, &max_elapsed, 1, MPI_DOUBLE, MPI_MAX, comm));
    times.push_back(max_elapsed);
    local_times.push_back(elapsed);
    loop_starts.push_back(clock.t0);
    all_timers.push_back(std::move(timers));
    if (cfg.trace) all_logs.push_back(std::move(logs));
    final_field = std::move(f);
  }
  res.time_s = make_stats(times);

  // The repetition whose time is nearest the median gives the breakdown (and
  // the trace). times[] are maxima over ranks: every rank picks the same one.
  std::size_t med = 0;
  for (std::size_t i = 1; i < times.size(); ++i)
    if (std::fabs(times[i] - res.time_s.median) < std::fabs(times[med] - res.time_s.median)) med = i;
  if (cfg.trace) res.trace = gather_trace(all_logs[med], loop_starts[med], local_times[med], comm);
  const Timers& tm = all_timers[med];
  const int nt = cfg.threads;
  std::vector<double> mine(static_cast<std::size_t>(nt) * (kPhaseCount + 1));
  for (int t = 0; t < nt; ++t) {
    for (int p = 0; p < kPhaseCount; ++p) mine[t * (kPhaseCount + 1) + p] = tm[t].seconds[p];
    mine[t * (kPhaseCount + 1) + kPhaseCount] = std::max(0.0, local_times[med] - tm[t].busy());
  }
  std::vector<double> worst(mine.size());
  HYMPI_CHECK_MPI(MPI_Allreduce(mine.data(), worst.data(), static_cast<int>(mine.size()),
                                MPI_DOUBLE, MPI_MAX, comm));
  res.breakdown.resize(nt);
  for (int t = 0; t < nt; ++t)
    for (int p = 0; p <= kPhaseCount; ++p) res.breakdown[t][p] = worst[t * (kPhaseCount + 1) + p];

  // Fractions of the wall time on the critical path (the model's inputs for
  // masteronly runs): communication = the busiest communicating thread's
  // pack + MPI + unpack; overlappable = the slowest thread's interior work;
  // the rest cannot overlap (boundary, vector updates, region overheads).
  const double T = times[med];
  if (T > 0) {
    double comm_max = 0, interior_max = 0;
    for (int t = 0; t < nt; ++t) {
      const auto& b = res.breakdown[t];
      comm_max = std::max(comm_max, b[static_cast<int>(Phase::Pack)] +
                                        b[static_cast<int>(Phase::Unpack)] +
                                        b[static_cast<int>(Phase::Comm)]);
      interior_max = std::max(interior_max, b[static_cast<int>(Phase::ComputeInterior)]);
    }
    res.f_comm = std::min(1.0, comm_max / T);
    res.f_comp_overlap = std::min(1.0 - res.f_comm, interior_max / T);
    res.f_comp_non = std::max(0.0, 1.0 - res.f_comm - res.f_comp_overlap);
  }

  double sum = 0, sq = 0;
  const Box b = domain.box();
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i) {
        const double v = final_field.at(i, j, k);
        sum += v;
        sq += v * v;
      }
  res.checksum = allreduce_sum(sum, comm);
  res.l2 = std::sqrt(allreduce_sum(sq, comm));
  const double points = 1.0 * cfg.grid[0] * cfg.grid[1] * cfg.grid[2];
  res.mlups = res.time_s.median > 0 ? points * res.iterations / res.time_s.median / 1e6 : 0;

  long long mine_counts[4] = {plan.bytes_intra(), plan.bytes_inter(), plan.messages_intra(),
                              plan.messages_inter()};
  long long all_counts[4] = {0, 0, 0, 0};
  HYMPI_CHECK_MPI(MPI_Allreduce(mine_counts, all_counts, 4, MPI_LONG_LONG, MPI_SUM, comm));
  res.bytes_intra = all_counts[0];
  res.bytes_inter = all_counts[1];
  res.messages_intra = all_counts[2];
  res.messages_inter = all_counts[3];

  if (local) {
    local->domain = domain;
    local->field = std::move(final_field);
  }
  return res;
}

std::vector<std::string> validate_config(const SolveConfig& c, int ranks, const NodeMap* real_nodes,
                                         double node_memory_bytes) {
  std::vector<std::string> errors;
  const SchemeEntry* entry = find_scheme(c.scheme);
  if (!entry) {
    std::string names;
    for (const auto& e : scheme_registry()) names += (names.empty() ? "" : ", ") + e.info.name;
    errors.push_back("unknown scheme '" + c.scheme + "' (valid: " + names + ")");
  }
  bool grid_ok = true;
  for (int d = 0; d < 3; ++d)
    if (c.grid[d] < 1) grid_ok = false;
  if (!grid_ok) errors.push_back("grid dimensions must be positive integers");
  if (c.iters < 0) errors.push_back("--iters must be >= 0 (got " + std::to_string(c.iters) + ")");
  if (c.max_iters < 1) errors.push_back("--max-iters must be >= 1");
  if (!(c.tol > 0) || !(c.tol < 1)) errors.push_back("--tol must be in (0, 1)");
  if (c.repeat < 1) errors.push_back("--repeat must be >= 1");
  if (c.threads < 1 || c.threads > 1024)
    errors.push_back("--threads must be between 1 and 1024 (got " + std::to_string(c.threads) + ")");
  if (entry && c.threads >= 1) {
    const SchemeInfo& s = entry->info;
    if (c.threads < s.min_threads)
      errors.push_back("scheme '" + s.name + "' needs at least " + std::to_string(s.min_threads) +
                       " threads (one communicates, the others compute); got --threads " +
                       std::to_string(c.threads));
    if (c.reserved != 0 && !s.takes_reserved)
      errors.push_back("scheme '" + s.name + "' takes no --reserved (only 'multiple' does)");
    if (s.takes_reserved && c.reserved != 0 && (c.reserved < 1 || c.reserved >= c.threads))
      errors.push_back("--reserved must satisfy 1 <= m < threads (got m = " +
                       std::to_string(c.reserved) + ", threads = " + std::to_string(c.threads) + ")");
  }
  if (c.kernel == KernelKind::Cg && c.periodic)
    errors.push_back("cg needs Dirichlet boundaries: with --periodic the operator is singular "
                     "and f = 1 is not in its range");
  if (c.kernel == KernelKind::Rbgs && c.periodic && grid_ok &&
      (c.grid[0] % 2 || c.grid[1] % 2 || c.grid[2] % 2))
    errors.push_back("rbgs --periodic needs even NX, NY, NZ (red-black colouring is not "
                     "consistent across an odd wrap-around)");
  if (c.format == MatrixFormat::Crs && c.kernel != KernelKind::Spmv && c.kernel != KernelKind::Cg)
    errors.push_back("--format crs applies to spmv and cg only");

  bool rpn_ok = true;
  if (c.ranks_per_node < 0 || (c.ranks_per_node > 0 && ranks % c.ranks_per_node != 0)) {
    errors.push_back("--ranks-per-node " + std::to_string(c.ranks_per_node) +
                     " does not divide the " + std::to_string(ranks) + " ranks");
    rpn_ok = false;
  }
  const bool fixed = c.proc_grid[0] > 0;
  if (fixed && 1LL * c.proc_grid[0] * c.proc_grid[1] * c.proc_grid[2] != ranks) {
    errors.push_back("--proc-grid " + std::to_string(c.proc_grid[0]) + "x" +
                     std::to_string(c.proc_grid[1]) + "x" + std::to_string(c.proc_grid[2]) +
                     " has " + std::to_string(1LL * c.proc_grid[0] * c.proc_grid[1] * c.proc_grid[2]) +
                     " processes, but there are " + std::to_string(ranks) + " ranks");
  } else if (grid_ok && rpn_ok) {
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
        errors.push_back("grid has " + std::to_string(c.grid[d]) + " points along " + axis[d] +
                         " but the process grid " + std::to_string(g.dims[0]) + "x" +
                         std::to_string(g.dims[1]) + "x" + std::to_string(g.dims[2]) + " has " +
                         std::to_string(g.dims[d]) + " processes there (each needs >= 1 point)");
    if (node_memory_bytes > 0) {
      // Fields of the kernel, plus the CRS matrix when stored.
      double per_point = 8.0 * (c.kernel == KernelKind::Cg ? 4 : c.kernel == KernelKind::Rbgs ? 1 : 2);
      if (c.format == MatrixFormat::Crs) per_point += 7 * 12.0 + 8.0;
      const double need = per_point * c.grid[0] * c.grid[1] * c.grid[2] / nodes;
      if (need > node_memory_bytes)
        errors.push_back("the grid needs about " + std::to_string(static_cast<long long>(need / 1e6)) +
                         " MB per node, more than the node's " +
                         std::to_string(static_cast<long long>(node_memory_bytes / 1e6)) + " MB");
    }
  }
  return errors;
}

}  // namespace hympi
