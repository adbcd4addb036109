// The Domain: construction (validation on every rank, decomposition,
// scheme, plan), its fields, sweeps and sums, and its clock. The wavefront of
// a temporal block is in domain_wavefront.cpp, the rules a config must meet
// in domain_validate.cpp, the report and trace in domain_report.cpp.
#include "hympi/domain.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "hympi/error.hpp"
#include "domain_impl.hpp"
#include "wavefront_tiles.hpp"

namespace hympi {

namespace {

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

}  // namespace

Domain::Domain(MPI_Comm parent, const DomainConfig& config)
    : impl_(std::make_unique<Impl>(parent, config)) {
  Impl& d = *impl_;
  const MPI_Comm comm = d.comm();
  HYMPI_CHECK_MPI(MPI_Comm_rank(comm, &d.rank));
  HYMPI_CHECK_MPI(MPI_Comm_size(comm, &d.size));
  std::vector<std::string> errors = validate_domain(config, d.size);
  if (errors.empty()) {
    int provided = MPI_THREAD_SINGLE;
    HYMPI_CHECK_MPI(MPI_Query_thread(&provided));
    if (provided < config.scheme->info.thread_level)
      errors.push_back("scheme '" + config.scheme->info.name + "' needs " +
                       thread_level_name(config.scheme->info.thread_level) +
                       ", but MPI was initialised with " + thread_level_name(provided));
  }
  if (!errors.empty()) throw UsageError(join(errors, "; "));
  d.nodes = discover_nodes(comm, config.ranks_per_node, config.rank_order);
  errors = validate_domain(config, d.size, &d.nodes);
  if (!errors.empty()) throw UsageError(join(errors, "; "));
  d.grid = choose_grid_for_nodes(config.grid, d.nodes, d.size, config.periodic, config.proc_grid);
  const ProcessGrid pgrid = make_process_grid(comm, d.nodes, d.grid);
  d.local = decompose(config.grid, config.periodic, pgrid);
  d.scheme = config.scheme->make(SchemeParams{config.threads, config.reserved});
  // A box stencil reads the halo's edges and corners; so does every sweep
  // but the last of a temporal block.
  const bool corners = config.stencil == Stencil::Box || config.halo_depth > 1;
  d.plan = std::make_unique<ExchangePlan>(comm, d.local, d.nodes, d.scheme->face_pieces(),
                                          d.layers(), corners, config.halo);
  d.regions.core = d.local.box();
  d.regions.local = d.local.box();
  d.regions.interior = interior_box(d.local, config.halo);
  d.regions.boundary = subtract(d.regions.local, d.regions.interior);
  d.regions.reads_edges = config.stencil == Stencil::Box;
  d.timers.assign(config.threads, ThreadTimes{});
  d.partials.assign(config.threads, detail::Partial{});
  // Rank 0's environment decides, so that every rank agrees.
  const char* env =
      d.rank == 0 && config.use_environment ? std::getenv("HYMPI_TRACE_JSON") : nullptr;
  d.trace_env = env ? env : "";
  detail::broadcast_text(d.trace_env, comm);
  d.tracing = config.trace || !d.trace_env.empty();
  d.forced_tile_rows = detail::forced_tile_rows(comm, d.rank);
  d.planes_per_step = detail::wavefront_planes(comm, d.rank, config.wavefront_planes);
}

Domain::~Domain() = default;

MPI_Comm Domain::comm() const { return impl_->comm(); }
const DomainConfig& Domain::config() const { return impl_->cfg; }
const LocalDomain& Domain::local() const { return impl_->local; }
std::array<bool, 6> Domain::physical_boundaries() const { return impl_->local.physical_boundaries(); }
const GridChoice& Domain::grid() const { return impl_->grid; }
const NodeMap& Domain::nodes() const { return impl_->nodes; }
Scheme& Domain::scheme() { return *impl_->scheme; }
const SweepRegions& Domain::regions() const { return impl_->regions; }
int Domain::threads() const { return impl_->cfg.threads; }
int Domain::wavefront_tile_rows() const { return impl_->wavefront_rows; }
const ExchangePlan& Domain::plan() const { return *impl_->plan; }

FieldLayout Domain::layout() const {
  FieldLayout l;
  l.size = impl_->local.size;
  l.halo = impl_->layers();
  l.stride_j = l.size[0] + 2 * l.halo;
  l.stride_k = l.stride_j * (l.size[1] + 2 * l.halo);
  l.count = Field::count_for(l.size, l.halo);
  return l;
}

Field Domain::make_field(RowLayout rows) const {
  // The first touch runs on the default team: make it the domain's threads.
  detail::ScopedOmpSettings omp(impl_->cfg.threads);
  // Each field one place further in the page than the one made before it
  // (stagger_bytes in field.hpp says why), from place 1: place 0, a page's
  // start, is near where malloc puts a large array (16 B in), which is what
  // a program often wraps (hympi_field_wrap) to sweep with a field of ours.
  return Field(impl_->local.size, impl_->layers(), rows, ++impl_->fields_made);
}

Field Domain::wrap_field(double* data) const {
  if (!data) throw UsageError("wrap_field: the array is a null pointer");
  return Field::wrap(data, impl_->local.size, impl_->layers());
}

void Domain::sweep(const std::vector<Field*>& exchange, const BoxFn& update) {
  const std::string failed = impl_->sweep(exchange, update);
  if (!failed.empty()) throw KernelError(failed);
}

double Domain::sweep_sum(const std::vector<Field*>& exchange, const BoxSumFn& update) {
  Impl& d = *impl_;
  d.reset_partials();
  const std::string failed =
      d.sweep(exchange, [&](const Box& box, int t) { d.partials[t].value += update(box, t); });
  const double sum = allreduce_sum(d.partial_sum());  // every rank, failed or not
  if (!failed.empty()) throw KernelError(failed);
  return sum;
}

void Domain::sweep_block(Field*& in, Field*& out, int sweeps, const PairBoxFn& update) {
  sweep_block(in, out, sweeps, update, update);
}

void Domain::sweep_block(Field*& in, Field*& out, int sweeps, const PairBoxFn& first,
                         const PairBoxFn& update) {
  const std::string failed = impl_->sweep_block(in, out, sweeps, first, update);
  if (!failed.empty()) throw KernelError(failed);
}

int Domain::tune_block(Field*& in, Field*& out, int sweeps, const PairBoxFn& update) {
  Impl& d = *impl_;
  // Each candidate's trial blocks, and one more in case a block failed
  // (its time is not recorded); every rank runs as many blocks as the one
  // with the most left to try, since a block is collective.
  const int most = 2 * detail::WavefrontTileTuner::kTrialsPerCandidate + 1;
  int blocks = 0;
  for (; blocks < most; ++blocks) {
    int pending = d.tile_choice_pending(sweeps) ? 1 : 0;
    HYMPI_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &pending, 1, MPI_INT, MPI_MAX, d.comm()));
    if (!pending) break;
    sweep_block(in, out, sweeps, update);
  }
  return blocks;
}

void Domain::for_each(const BoxFn& update) {
  const std::string failed = impl_->for_each(update);
  if (!failed.empty()) throw KernelError(failed);
}

double Domain::for_each_local_sum(const BoxSumFn& update) {
  Impl& d = *impl_;
  d.reset_partials();
  const std::string failed =
      d.for_each([&](const Box& box, int t) { d.partials[t].value += update(box, t); });
  if (!failed.empty()) throw KernelError(failed);
  return d.partial_sum();
}

double Domain::for_each_sum(const BoxSumFn& update) {
  Impl& d = *impl_;
  d.reset_partials();
  const std::string failed =
      d.for_each([&](const Box& box, int t) { d.partials[t].value += update(box, t); });
  const double sum = allreduce_sum(d.partial_sum());  // every rank, failed or not
  if (!failed.empty()) throw KernelError(failed);
  return sum;
}

double Domain::allreduce_sum(double local) {
  PhaseTimer c(impl_->timers[0], Phase::Comm);
  double sum = 0;
  HYMPI_CHECK_MPI(MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, impl_->comm()));
  return sum;
}

void Domain::begin_sum(const std::vector<double>& local) {
  Impl& d = *impl_;
  if (d.pending.active())
    throw UsageError("begin_sum: a sum is in flight already (end_sum it first)");
  const int count = static_cast<int>(local.size());
  if (count < 1 || count > kMaxPendingSum)
    throw UsageError("begin_sum: " + std::to_string(count) + " values, 1 to " +
                     std::to_string(kMaxPendingSum) + " allowed");
  PhaseTimer c(d.timers[0], Phase::Comm);
  std::copy(local.begin(), local.end(), d.pending.local);
  HYMPI_CHECK_MPI(MPI_Iallreduce(d.pending.local, d.pending.global, count, MPI_DOUBLE, MPI_SUM,
                                 d.comm(), &d.pending.request));
  d.pending.count = count;
  d.plan->set_background(&d.pending.request);
}

std::vector<double> Domain::end_sum() {
  Impl& d = *impl_;
  if (!d.pending.active()) throw UsageError("end_sum: no sum in flight (begin_sum starts one)");
  {
    PhaseTimer c(d.timers[0], Phase::Comm);
    HYMPI_CHECK_MPI(MPI_Wait(&d.pending.request, MPI_STATUS_IGNORE));
  }
  d.plan->set_background(nullptr);
  const std::vector<double> sums(d.pending.global, d.pending.global + d.pending.count);
  d.pending.count = 0;
  return sums;
}

void Domain::start_clock() {
  Impl& d = *impl_;
  HYMPI_CHECK_MPI(MPI_Barrier(d.comm()));
  for (auto& t : d.timers) {
    std::fill(std::begin(t.seconds), std::end(t.seconds), 0.0);
    if (t.trace) t.trace->clear();
  }
  if (d.tracing) {  // a new log per thread; a run of sweeps logs as many steps as the last
    d.logs.resize(d.timers.size());
    for (std::size_t t = 0; t < d.timers.size(); ++t) {
      d.logs[t].events.clear();
      d.timers[t].trace = &d.logs[t].events;
    }
  }
  d.sweeps = 0;
  d.exchanges = 0;
  d.elapsed = 0;
  d.t0 = now();
}

void Domain::stop_clock() { impl_->elapsed = now() - impl_->t0; }
double Domain::elapsed() const { return impl_->elapsed; }
long long Domain::sweeps() const { return impl_->sweeps; }
long long Domain::exchanges() const { return impl_->exchanges; }
Timers& Domain::timers() { return impl_->timers; }
double Domain::loop_start() const { return impl_->t0; }

std::array<double, 2> Domain::checksum(const Field& f) {
  const Box b = impl_->local.box();
  double mine[2] = {0, 0};
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i) {
        const double v = f.at(i, j, k);
        mine[0] += v;
        mine[1] += v * v;
      }
  double all[2] = {0, 0};
  HYMPI_CHECK_MPI(MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, impl_->comm()));
  return {all[0], std::sqrt(all[1])};
}


}  // namespace hympi
