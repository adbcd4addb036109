#include "hympi/domain.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <iostream>
#include <sstream>
#include <thread>

#include "hympi/build_info.hpp"
#include "hympi/output_file.hpp"
#include "hympi/context.hpp"
#include "hympi/error.hpp"
#include "kernels/kernel_util.hpp"
#include "hympi/trace.hpp"
#include "json_text.hpp"
#include "run_support.hpp"
#include "schemes/scheme_util.hpp"
#include "wavefront_tiles.hpp"

namespace hympi {

// ---- validate_domain: every problem at once, no MPI. ----

namespace {

std::string dims_text(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// "'a' does" or "'a', 'b' do": the schemes that take reserved threads.
std::string schemes_taking_reserved() {
  std::string names;
  int count = 0;
  for (const auto& e : scheme_registry())
    if (e.info.takes_reserved) names += (count++ ? ", '" : "'") + e.info.name + "'";
  if (count == 0) return "none does";
  return names + (count == 1 ? " does" : " do");
}

// The thread rules the scheme declares in its SchemeInfo.
void check_threads(const DomainConfig& c, std::vector<std::string>& errors) {
  if (c.threads < 1 || c.threads > 1024)
    errors.push_back("`threads` must be between 1 and 1024 (got " + std::to_string(c.threads) + ")");
  if (!c.scheme) {
    errors.push_back("no scheme given (one of: " + scheme_names() + ")");
    return;
  }
  const SchemeInfo& s = c.scheme->info;
  if (!s.unavailable.empty()) errors.push_back("scheme '" + s.name + "' is " + s.unavailable);
  if (c.threads < 1) return;
  if (c.threads < s.min_threads)
    errors.push_back("scheme '" + s.name + "' needs at least " + std::to_string(s.min_threads) +
                     " threads (one communicates, the others compute); got threads = " +
                     std::to_string(c.threads));
  if (c.reserved != 0 && !s.takes_reserved)
    errors.push_back("scheme '" + s.name + "' takes no `reserved` (only " +
                     schemes_taking_reserved() + ")");
  if (s.takes_reserved && c.reserved != 0 && (c.reserved < 1 || c.reserved >= c.threads))
    errors.push_back("`reserved` must satisfy 1 <= m < threads (got m = " +
                     std::to_string(c.reserved) + ", threads = " + std::to_string(c.threads) + ")");
}

// The process grid fits the grid, and every rank's box is at least one halo
// thick along each axis where it has a neighbour (a halo comes from one
// neighbour only).
void check_decomposition(const DomainConfig& c, int ranks, const NodeMap* real_nodes,
                         std::vector<std::string>& errors) {
  int nodes = 1, rpn = ranks;
  if (c.ranks_per_node > 0) {
    rpn = c.ranks_per_node;
    nodes = ranks / rpn;
  } else if (real_nodes && real_nodes->homogeneous()) {
    nodes = real_nodes->node_count;
    rpn = real_nodes->ranks_per_node.front();
  }
  const GridChoice g = choose_grid(c.grid, nodes, rpn, c.periodic, c.proc_grid);
  const char axis[3] = {'x', 'y', 'z'};
  for (int d = 0; d < 3; ++d) {
    if (g.dims[d] > c.grid[d]) {
      errors.push_back("`grid` has " + std::to_string(c.grid[d]) + " points along " + axis[d] +
                       " but the process grid " + dims_text(g.dims) + " has " +
                       std::to_string(g.dims[d]) + " processes there (each needs >= 1 point)");
      continue;
    }
    const int thinnest = c.grid[d] / g.dims[d];
    const int width = c.halo * c.depth;
    const std::string what =
        c.depth == 1  ? "`halo` " + std::to_string(c.halo)
        : c.halo == 1 ? "`depth` " + std::to_string(c.depth)
                      : "`halo` " + std::to_string(c.halo) + " x `depth` " + std::to_string(c.depth) +
                            " (halo layers " + std::to_string(width) + ")";
    if ((g.dims[d] > 1 || c.periodic[d]) && thinnest < width)
      errors.push_back(what + " needs at least " + std::to_string(width) +
                       " points per rank along " + axis[d] + ", but " +
                       std::to_string(c.grid[d]) + " points over " + std::to_string(g.dims[d]) +
                       " processes give " + std::to_string(thinnest));
  }
}

}  // namespace

std::vector<std::string> validate_domain(const DomainConfig& c, int ranks,
                                         const NodeMap* real_nodes) {
  std::vector<std::string> errors;
  const bool grid_ok = c.grid[0] >= 1 && c.grid[1] >= 1 && c.grid[2] >= 1;
  if (!grid_ok) errors.push_back("`grid` dimensions must be positive integers");
  if (c.halo < 1 || c.halo > 64)
    errors.push_back("`halo` must be between 1 and 64 (got " + std::to_string(c.halo) + ")");
  if (c.depth < 1 || c.depth > 64)
    errors.push_back("`depth` must be between 1 and 64 (got " + std::to_string(c.depth) + ")");
  check_threads(c, errors);
  bool rpn_ok = true;
  if (c.ranks_per_node < 0 || (c.ranks_per_node > 0 && ranks % c.ranks_per_node != 0)) {
    errors.push_back("`ranks_per_node` " + std::to_string(c.ranks_per_node) +
                     " does not divide the " + std::to_string(ranks) + " ranks");
    rpn_ok = false;
  }
  if (rpn_ok && c.scheme && c.scheme->info.needs_node_peers) {
    // The largest node: the virtual ones, else the real ones (one node of
    // every rank when they are not known).
    int largest = c.ranks_per_node > 0 ? c.ranks_per_node : ranks;
    if (c.ranks_per_node == 0 && real_nodes && !real_nodes->ranks_per_node.empty())
      largest = *std::max_element(real_nodes->ranks_per_node.begin(),
                                  real_nodes->ranks_per_node.end());
    if (largest < 2)
      errors.push_back("scheme '" + c.scheme->info.name +
                       "' shares memory between the ranks of a node, but every node holds one "
                       "rank (run at least 2 ranks per node)");
  }
  const long long fixed = 1LL * c.proc_grid[0] * c.proc_grid[1] * c.proc_grid[2];
  if (c.proc_grid[0] > 0 && fixed != ranks)
    errors.push_back("`proc_grid` " + dims_text(c.proc_grid) + " has " + std::to_string(fixed) +
                     " processes, but there are " + std::to_string(ranks) + " ranks");
  else if (grid_ok && rpn_ok && c.halo >= 1 && c.halo <= 64 && c.depth >= 1 && c.depth <= 64)
    check_decomposition(c, ranks, real_nodes, errors);
  return errors;
}

// ---- Domain ----

namespace {

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::string box_text(const Box& b) {
  return "[" + std::to_string(b.lo[0]) + "," + std::to_string(b.hi[0]) + ")x[" +
         std::to_string(b.lo[1]) + "," + std::to_string(b.hi[1]) + ")x[" +
         std::to_string(b.lo[2]) + "," + std::to_string(b.hi[2]) + ")";
}

// The first failure of the user's update in one sweep: the update is not
// called again in that sweep (the communication still completes, so that no
// rank is left waiting for a message).
class FailureSlot {
 public:
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  void record(const Box& box, int thread, const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed()) return;
    box_ = box;
    thread_ = thread;
    what_ = what;
    failed_.store(true);
  }
  template <typename Fn>
  void guard(const Box& box, int thread, Fn&& fn) noexcept {
    if (failed()) return;
    try {
      fn();
    } catch (const std::exception& e) {
      record(box, thread, e.what());
    } catch (...) {
      record(box, thread, "unknown exception");
    }
  }
  std::string message(const std::string& scheme, int rank) const {
    return "the kernel's box update failed under scheme '" + scheme + "' on box " +
           box_text(box_) + " (rank " + std::to_string(rank) + ", thread " +
           std::to_string(thread_) + "): " + what_;
  }

 private:
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  Box box_;
  int thread_ = -1;
  std::string what_;
};

template <typename T, std::size_t N>
std::string json_array(const std::array<T, N>& a) {
  std::string out = "[";
  for (std::size_t i = 0; i < N; ++i) out += (i ? ", " : "") + std::to_string(a[i]);
  return out + "]";
}

// Rank 0's command line, from /proc (the context block's "command").
std::string command_line() {
  FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (!f) return "";
  std::string raw;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) raw.append(buf, n);
  std::fclose(f);
  std::replace(raw.begin(), raw.end(), '\0', ' ');
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

template <typename T, typename Fn>
std::string json_list(const std::vector<T>& items, Fn&& one) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + one(items[i]);
  return out + "]";
}

const char* row_layout_name(RowLayout rows) {
  return rows == RowLayout::CacheLine ? "CacheLine" : "Packed";
}

}  // namespace

struct Domain::Impl {
  Impl(MPI_Comm parent, const DomainConfig& c) : owned(parent), cfg(c) {}

  detail::OwnedComm owned;
  DomainConfig cfg;
  int rank = 0, size = 1;
  NodeMap nodes;
  GridChoice grid;
  LocalDomain local;
  std::unique_ptr<Scheme> scheme;
  std::unique_ptr<ExchangePlan> plan;
  SweepRegions regions;
  Timers timers;
  std::vector<detail::Partial> partials;
  double t0 = 0, elapsed = 0;
  long long sweeps = 0;
  long long exchanges = 0;              // halo exchanges since start_clock
  // Wavefront tile height forced by HYMPI_WAVEFRONT_TILE_ROWS (tests: small
  // grids then cross tile boundaries); 0: measured (wavefront_tiles.hpp).
  int forced_tile_rows = 0;
  // One of the two tile heights tried: planes of 4 MiB per thread (an L3
  // share); the other fits one core's L2.
  static constexpr double kL3ShareBytes = 4.0 * 1024 * 1024;
  bool tracing = false;                 // config.trace or HYMPI_TRACE_JSON
  std::string trace_env;                // rank 0's HYMPI_TRACE_JSON, on every rank
  std::vector<detail::TraceLog> logs;   // [thread], filled from start_clock

  MPI_Comm comm() const { return owned.get(); }
  // Halo layers of the domain's fields.
  int layers() const { return cfg.halo * cfg.depth; }

  // Rank 0's outcome of a write on every rank, so that all throw or none does.
  void share_error(std::string& error) const {
    int length = static_cast<int>(error.size());
    HYMPI_CHECK_MPI(MPI_Bcast(&length, 1, MPI_INT, 0, comm()));
    error.resize(static_cast<std::size_t>(length));
    if (length > 0) HYMPI_CHECK_MPI(MPI_Bcast(&error[0], length, MPI_CHAR, 0, comm()));
    if (!error.empty()) throw OutputError(error);
  }

  // The failure of a sweep's update: under the Abort policy one line and
  // MPI_Abort; under Throw its message, which the caller throws once the
  // collectives every rank makes after the sweep are done (a sum's
  // MPI_Allreduce), so that the other ranks are not left waiting there.
  std::string failure(const FailureSlot& slot) {
    if (!slot.failed()) return "";
    const std::string msg = slot.message(cfg.scheme->info.name, rank);
    if (cfg.on_error == KernelErrorPolicy::Throw) return msg;
    std::fprintf(stderr, "hympi: error: %s\n", msg.c_str());
    std::fflush(stderr);
    // Give the launcher time to forward the line before the job is torn down.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    MPI_Abort(comm(), 3);
    return msg;  // not reached
  }

  void check_fields(const std::vector<Field*>& fields) const {
    if (fields.empty())
      throw UsageError("a sweep needs at least one field to exchange (for work without an "
                       "exchange use for_each)");
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const Field* f = fields[i];
      if (!f || !f->data())
        throw UsageError("field " + std::to_string(i) + " of the sweep is empty");
      if (f->size() != local.size || f->halo() != layers())
        throw UsageError("field " + std::to_string(i) + " of the sweep is " +
                         dims_text(f->size()) + " with halo " + std::to_string(f->halo()) +
                         ", the domain's fields are " + dims_text(local.size) + " with halo " +
                         std::to_string(layers()));
      // An update indexes the fields it sweeps with one index (as the
      // library's box kernels do): packed and padded rows must not mix. By
      // kind, not stride, so that every rank refuses alike (a rank whose
      // packed rows are whole lines already would otherwise go on into the
      // exchange alone).
      if (f->rows() != fields[0]->rows())
        throw UsageError("field " + std::to_string(i) + " of the sweep has " +
                         row_layout_name(f->rows()) + " rows and field 0 " +
                         row_layout_name(fields[0]->rows()) +
                         " rows: fields swept together must share one RowLayout (make_field's "
                         "default and wrap_field are Packed)");
    }
  }

  // One sweep of the scheme with the update guarded; after the sweep's
  // communication completed, aborts on a failure or returns its message
  // ("" when none).
  std::string sweep(const std::vector<Field*>& fields, const BoxFn& update) {
    check_fields(fields);
    plan->set_field_count(static_cast<int>(fields.size()));
    FailureSlot slot;
    const BoxFn guarded = [&](const Box& box, int t) {
      slot.guard(box, t, [&] { update(box, t); });
    };
    scheme->sweep(*plan, fields, regions, guarded, timers);
    ++sweeps;
    ++exchanges;
    return failure(slot);
  }

  // Every local point once, all threads, no exchange; booked as boundary
  // (non-overlappable) computation. Returns like sweep.
  std::string for_each(const BoxFn& update) {
    const int n = cfg.threads;
    const Box box = local.box();
    FailureSlot slot;
    detail::on_threads(n, [&](int t) {
      PhaseTimer pt(timers[t], Phase::ComputeBoundary);
      const Box part = split_box_part(box, n, t);
      slot.guard(part, t, [&] { update(part, t); });
    });
    return failure(slot);
  }

  // The regions of a first sweep that also computes `grow` layers of the
  // halo on every side with a neighbour (temporal blocking).
  SweepRegions grown_regions(int grow) const {
    SweepRegions r;
    r.core = local.box();
    r.local = grown_box(local, grow);
    r.interior = interior_box(local, cfg.halo);
    r.boundary = subtract(r.local, r.interior);
    return r;
  }
  std::string sweep_block(Field*& in, Field*& out, int count, const PairBoxFn& update) {
    check_fields({in, out});
    if (in == out || in->data() == out->data())
      throw UsageError("sweep_block: `in` and `out` are the same field (the sweeps need two)");
    if (count < 1 || count > cfg.depth)
      throw UsageError("sweep_block: " + std::to_string(count) +
                       " sweeps, but the domain's depth allows 1 to " + std::to_string(cfg.depth));
    plan->set_field_count(1);
    FailureSlot slot;
    const int r = cfg.halo;
    if (!scheme->info().overlap) {
      // Nothing to overlap: the scheme exchanges over an empty region, then
      // every sweep of the block runs in the wavefront (the first one too,
      // so that no sweep streams the whole field on its own).
      SweepRegions exchange_only;
      exchange_only.core = local.box();
      scheme->sweep(*plan, {in}, exchange_only, [](const Box&, int) {}, timers);
      wavefront(in, out, count, update, slot);
      if (count % 2) std::swap(in, out);
    } else {
      // The first sweep through the scheme, its interior overlapped with the
      // exchange; the others in the wavefront.
      Field* src = in;
      Field* dst = out;
      const BoxFn first = [&](const Box& box, int t) {
        slot.guard(box, t, [&] { update(*src, *dst, box, t); });
      };
      scheme->sweep(*plan, {src}, grown_regions((count - 1) * r), first, timers);
      std::swap(in, out);
      if (count > 1) wavefront(in, out, count - 1, update, slot);
      if ((count - 1) % 2) std::swap(in, out);
    }
    sweeps += count;
    ++exchanges;
    return failure(slot);
  }

  // The sweeps of a block after the exchange, as a wavefront over k planes
  // inside tiles of rows j. Sweep t of `sweeps` (t = 0 first) computes the
  // core grown by (sweeps - 1 - t) * r and reads what sweep t - 1 wrote (a
  // layer wider), ping-ponging between the two fields; `a` holds the input
  // of sweep 0.
  //
  // Tiles are parallelograms in (j, t): tile J gives sweep t the rows
  // [J0 - t r, J1 - t r), so the rows j - r of sweep t - 1 that sweep t reads
  // lie in this tile or an earlier one (all done), and the rows it
  // overwrites (sweep t - 2's) are below those that later tiles of sweep
  // t - 1 read (from J1 - t r up). Inside a tile, at step w sweep t computes
  // plane k = w - L t, L = r + 1: the planes up to k + r of sweep t - 1 were
  // done at earlier steps, and the plane it overwrites is no longer read by
  // sweep t - 1, whose next plane k + L reads from k + L - r > k. So the
  // planes of one step are independent: the threads share their rows, with
  // a barrier between steps. Each thread takes the same share (first, second,
  // ...) of every sweep's rows, so what it reads of sweep t - 1 it wrote
  // itself, in its own core's cache, but for the rows at the shares' edges
  // (measured at 1 rank x 2 threads on 256^3, depth 4 and 8: 10-20 % faster
  // than cutting the step's rows of all sweeps, one after the other, into n
  // runs, where a thread reads planes that the other wrote). A tile holds
  // about 2 (L sweeps + 2r + 1) planes of its rows in the two fields. Two
  // heights are tried (wavefront_tiles.hpp): planes of 4 MiB per thread (an
  // L3 share) and planes of one core's L2. On 256^3, depth 8, one thread per
  // rank, the first won by 10-25 % on a 2-core AMD EPYC VM (untiled planes
  // were 10-20 % slower still), the second by about 2x on a 16-core Intel
  // Xeon VM; the first blocks of each shape time both and keep the faster.
  void wavefront(Field* a, Field* b, int sweeps, const PairBoxFn& update, FailureSlot& slot) {
    const int r = cfg.halo, lag = r + 1, n = cfg.threads;
    std::vector<Box> region(static_cast<std::size_t>(sweeps));
    int w_lo = 0, w_hi = 0;
    for (int t = 0; t < sweeps; ++t) {
      region[t] = grown_box(local, (sweeps - 1 - t) * r);
      const int lo = region[t].lo[2] + lag * t, hi = region[t].hi[2] - 1 + lag * t;
      w_lo = t == 0 ? lo : std::min(w_lo, lo);
      w_hi = t == 0 ? hi : std::max(w_hi, hi);
    }
    const double row_bytes = 8.0 * (region[0].extent(0) + 2 * r);
    const double live_planes = 2.0 * (lag * sweeps + 2 * r + 1);
    const int y0 = region[0].lo[1];
    const int y_end = region[0].hi[1] + (sweeps - 1) * r;  // last row of the last sweep, shifted
    detail::WavefrontShape shape;
    shape.sweeps = sweeps;
    shape.extent = {region[0].extent(0), region[0].extent(1), region[0].extent(2)};
    shape.radius = r;
    shape.threads = n;
    shape.candidates[0] = detail::tile_rows_for_budget(kL3ShareBytes, n, live_planes, row_bytes,
                                                       sweeps, r, y_end - y0);
    shape.candidates[1] = detail::tile_rows_for_budget(detail::l2_cache_bytes(), n, live_planes,
                                                       row_bytes, sweeps, r, y_end - y0);
    detail::WavefrontTileTuner::Pick pick{forced_tile_rows, -1};
    if (forced_tile_rows <= 0) pick = detail::wavefront_tile_tuner().pick(shape);
    const int tile = pick.rows;
    const int tiles = (y_end - y0 + tile - 1) / tile;
    // A failed update skips the rest of the block: its time says nothing.
    const bool failed_before = slot.failed();
    const auto started = std::chrono::steady_clock::now();
    detail::on_threads(n, [&](int th) {
      // Barrier waits count as this computation: the rows of a step are
      // shared evenly, so they are short.
      PhaseTimer pt(timers[th], Phase::ComputeBoundary);
      std::vector<int> row_lo(static_cast<std::size_t>(sweeps)), row_hi(row_lo.size());
      for (int J = 0; J < tiles; ++J) {
        for (int t = 0; t < sweeps; ++t) {
          row_lo[t] = std::max(region[t].lo[1], y0 + J * tile - t * r);
          row_hi[t] = std::min(region[t].hi[1], y0 + (J + 1) * tile - t * r);
        }
        for (int w = w_lo; w <= w_hi; ++w) {
          bool any = false;  // the same on every thread: no barrier skipped by some
          for (int t = 0; t < sweeps; ++t) {
            const int k = w - lag * t;
            const Box& g = region[t];
            if (k < g.lo[2] || k >= g.hi[2] || row_hi[t] <= row_lo[t]) continue;
            any = true;
            // Share th of the sweep's rows; the odd rows of the rounding go
            // to another thread from sweep to sweep (t % n), so no thread
            // gets all of them.
            const int rows = row_hi[t] - row_lo[t];
            const int from = row_lo[t] + static_cast<int>((1LL * rows * th + t % n) / n);
            const int to = row_lo[t] + static_cast<int>((1LL * rows * (th + 1) + t % n) / n);
            if (from < to) {
              Box box = g;
              box.lo[1] = from;
              box.hi[1] = to;
              box.lo[2] = k;
              box.hi[2] = k + 1;
              const Field& src = t % 2 == 0 ? *a : *b;
              Field& dst = t % 2 == 0 ? *b : *a;
              slot.guard(box, th, [&] { update(src, dst, box, th); });
            }
          }
          if (!any) continue;
          if (n > 1) {
#pragma omp barrier
          }
        }
      }
    });
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    if (!failed_before && !slot.failed())
      detail::wavefront_tile_tuner().record(shape, pick.trial, took.count());
  }

  double partial_sum() const {
    double sum = 0;
    for (const auto& p : partials) sum += p.value;
    return sum;
  }

  void reset_partials() {
    for (auto& p : partials) p.value = 0;
  }
};

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
  d.plan = std::make_unique<ExchangePlan>(comm, d.local, d.nodes, d.scheme->face_pieces(),
                                          d.layers(), config.depth > 1, config.halo);
  d.regions.core = d.local.box();
  d.regions.local = d.local.box();
  d.regions.interior = interior_box(d.local, config.halo);
  d.regions.boundary = subtract(d.regions.local, d.regions.interior);
  d.timers.assign(config.threads, ThreadTimes{});
  d.partials.assign(config.threads, detail::Partial{});
  // Rank 0's environment decides, so that every rank agrees.
  const char* env =
      d.rank == 0 && config.use_environment ? std::getenv("HYMPI_TRACE_JSON") : nullptr;
  d.trace_env = env ? env : "";
  int length = static_cast<int>(d.trace_env.size());
  HYMPI_CHECK_MPI(MPI_Bcast(&length, 1, MPI_INT, 0, comm));
  d.trace_env.resize(static_cast<std::size_t>(length));
  if (length > 0) HYMPI_CHECK_MPI(MPI_Bcast(&d.trace_env[0], length, MPI_CHAR, 0, comm));
  d.tracing = config.trace || !d.trace_env.empty();
  // Each rank's own: tiles are local, so ranks need not agree.
  const char* rows = std::getenv("HYMPI_WAVEFRONT_TILE_ROWS");
  int unusable = 0;
  if (rows && *rows != '\0') {  // empty: unset
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(rows, &end, 10);
    if (*end == '\0' && errno == 0 && value >= 1 && value <= 1000000)
      d.forced_tile_rows = static_cast<int>(value);
    else
      unusable = 1;
  }
  // A warning, not an error (the tile height is then measured), printed
  // once by the first rank that has an unusable value rather than by every
  // rank; a refusal would need the ranks to agree anyway.
  int unusable_ranks = 0, first = unusable ? d.rank : INT_MAX;
  HYMPI_CHECK_MPI(MPI_Allreduce(&unusable, &unusable_ranks, 1, MPI_INT, MPI_SUM, comm));
  HYMPI_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
  if (unusable && d.rank == first) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      std::fprintf(stderr,
                   "hympi: HYMPI_WAVEFRONT_TILE_ROWS='%s' is not a number of rows (1-1000000) on "
                   "%d rank(s); ignored there, the tile height is measured\n",
                   rows, unusable_ranks);
    });
  }
}

Domain::~Domain() = default;

MPI_Comm Domain::comm() const { return impl_->comm(); }
const DomainConfig& Domain::config() const { return impl_->cfg; }
const LocalDomain& Domain::local() const { return impl_->local; }
const GridChoice& Domain::grid() const { return impl_->grid; }
const NodeMap& Domain::nodes() const { return impl_->nodes; }
Scheme& Domain::scheme() { return *impl_->scheme; }
const SweepRegions& Domain::regions() const { return impl_->regions; }
int Domain::threads() const { return impl_->cfg.threads; }
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
  return Field(impl_->local.size, impl_->layers(), rows);
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
  const std::string failed = impl_->sweep_block(in, out, sweeps, update);
  if (!failed.empty()) throw KernelError(failed);
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
  return detail::allreduce_sum(local, impl_->comm());
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

void Domain::write_report(const std::string& path, const std::string& name,
                          const std::vector<const Field*>& checksum_fields) {
  Impl& d = *impl_;
  const MPI_Comm comm = d.comm();
  double T = 0;
  HYMPI_CHECK_MPI(MPI_Allreduce(&d.elapsed, &T, 1, MPI_DOUBLE, MPI_MAX, comm));
  const std::vector<detail::PhaseRow> rows = detail::breakdown_max(d.timers, d.elapsed, comm);
  const detail::Fractions fr = detail::critical_fractions(rows, T);
  long long mine[5] = {d.plan->bytes_intra(), d.plan->bytes_inter(), d.plan->messages_intra(),
                       d.plan->messages_inter(), d.plan->bytes_zero_copy()};
  long long traffic[5] = {0, 0, 0, 0, 0};
  HYMPI_CHECK_MPI(MPI_Allreduce(mine, traffic, 5, MPI_LONG_LONG, MPI_SUM, comm));
  double sum = 0, sq = 0;
  for (const Field* f : checksum_fields) {
    const auto c = checksum(*f);
    sum += c[0];
    sq += c[1] * c[1];
  }
  int provided = MPI_THREAD_SINGLE;
  HYMPI_CHECK_MPI(MPI_Query_thread(&provided));
  const ThreadPlacement placement = gather_thread_placement(comm, d.cfg.threads);

  std::string error;
  if (d.rank == 0) {
    if (const std::string w = oversubscription_warning(placement); !w.empty()) std::cerr << w << std::endl;
    const DomainConfig& c = d.cfg;
    const SchemeInfo& s = c.scheme->info;
    const double points = 1.0 * c.grid[0] * c.grid[1] * c.grid[2];
    std::ostringstream o;
    const auto quoted = [](const std::string& v) { return detail::json_string(v); };
    const auto number = [](int v) { return std::to_string(v); };
    char date[32];
    const std::time_t now_t = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now_t));
    // The same context block as hympi's own documents (docs/json-schema.md);
    // the requested thread level is not known here: the provided one is given.
    o << "{\n  \"context\": {\"schema_version\": " << kContextSchemaVersion
      << ", \"source\": \"user-kernel\", \"hympi_version\": " << detail::json_string(kVersion)
      << ", \"git_revision\": " << detail::json_string(kGitRevision)
      << ", \"date\": " << detail::json_string(date)
      << ", \"hosts\": " << json_list(d.nodes.host_of_node, quoted)
      << ", \"mpi_library\": " << detail::json_string(mpi_library_version())
      << ", \"mpi_version\": " << detail::json_string(mpi_standard_version())
      << ", \"thread_level_requested\": " << detail::json_string(thread_level_name(provided))
      << ", \"thread_level_provided\": " << detail::json_string(thread_level_name(provided))
      << ", \"ranks\": " << d.size << ", \"threads_per_rank\": " << c.threads
      << ", \"nodes\": {\"count\": " << d.nodes.node_count << ", \"kind\": \""
      << (d.nodes.virtual_nodes ? "virtual" : "real") << "\", \"ranks_per_node\": "
      << json_list(d.nodes.ranks_per_node, number)
      << ", \"node_of_rank\": " << json_list(d.nodes.node_of_rank, number) << "}"
      << ", \"thread_cpus\": "
      << json_list(placement.cpu, [&](const std::vector<int>& r) { return json_list(r, number); })
      << ", \"thread_affinity\": "
      << json_list(placement.affinity,
                   [&](const std::vector<std::string>& r) { return json_list(r, quoted); })
      << ", \"oversubscribed\": " << (placement.oversubscribed ? "true" : "false")
      << ", \"compiler\": " << detail::json_string(kCompiler)
      << ", \"flags\": " << detail::json_string(kCompileFlags)
      << ", \"command\": " << detail::json_string(command_line())
      << "},\n  \"results\": [{\"kind\": \"solve\", \"user_kernel\": true, \"kernel\": "
      << detail::json_string("user:" + name) << ", \"format\": \"stencil\", \"scheme\": "
      << detail::json_string(s.name) << ", \"scheme_class\": " << detail::json_string(s.seed_class)
      << ", \"pure_mpi\": " << (c.threads == 1 && c.scheme == &pure_mpi_scheme() ? "true" : "false")
      << ", \"grid\": " << json_array(c.grid) << ", \"periodic\": "
      << (c.periodic[0] || c.periodic[1] || c.periodic[2] ? "true" : "false")
      << ", \"halo\": " << c.halo << ", \"halo_depth\": " << c.depth << ", \"proc_grid\": " << json_array(d.grid.dims)
      << ", \"node_block\": " << json_array(d.grid.node_block) << ", \"mapping\": \""
      << (d.grid.node_aware ? "node-aware" : "rank-order") << "\", \"threads\": " << c.threads
      << ", \"reserved\": " << d.scheme->reserved_threads() << ", \"iters\": " << d.sweeps
      << ", \"exchanges\": " << d.exchanges
      << ", \"checksum\": " << (checksum_fields.empty() ? "null" : detail::json_number(sum))
      << ", \"l2\": " << (checksum_fields.empty() ? "null" : detail::json_number(std::sqrt(sq)))
      << ", \"time_s\": {\"min\": " << detail::json_number(T) << ", \"median\": " << detail::json_number(T)
      << ", \"max\": " << detail::json_number(T) << "}, \"repeat\": 1, \"mlups\": "
      << detail::json_number(T > 0 ? points * d.sweeps / T / 1e6 : 0)
      << ", \"bytes_per_exchange\": {\"intra_node\": " << traffic[0]
      << ", \"inter_node\": " << traffic[1] << ", \"zero_copy\": " << traffic[4]
      << "}, \"messages_per_exchange\": {\"intra_node\": "
      << traffic[2] << ", \"inter_node\": " << traffic[3] << "}, \"breakdown_s\": {";
    for (int p = 0; p <= kPhaseCount; ++p) {
      o << (p ? ", " : "") << "\""
        << (p < kPhaseCount ? phase_name(static_cast<Phase>(p)) : "idle") << "\": [";
      for (std::size_t t = 0; t < rows.size(); ++t) o << (t ? ", " : "") << detail::json_number(rows[t][p]);
      o << "]";
    }
    o << "}, \"fractions\": {\"f_comm\": " << detail::json_number(fr.comm)
      << ", \"f_comp_non\": " << detail::json_number(fr.comp_non)
      << ", \"f_comp_overlap\": " << detail::json_number(fr.comp_overlap) << "}}]\n}\n";
    const char* env = c.use_environment ? std::getenv("HYMPI_REPORT_JSON") : nullptr;
    const std::string target = env && *env ? env : path;
    if (target.empty())
      error = "no report path given (and HYMPI_REPORT_JSON is not set)";
    else
      error = write_text_file(target, o.str());
  }
  d.share_error(error);
  if (!d.trace_env.empty()) write_trace(d.trace_env, name);
}

void Domain::write_trace(const std::string& path, const std::string& name) {
  Impl& d = *impl_;
  if (!d.tracing)
    throw UsageError("write_trace: the domain records no trace (set DomainConfig::trace, or "
                     "HYMPI_TRACE_JSON in the environment)");
  std::vector<detail::TraceLog> empty(d.timers.size());
  const std::vector<RankTrace> ranks =
      detail::gather_trace(d.logs.empty() ? empty : d.logs, d.t0, d.elapsed, d.comm());
  std::string error;
  if (d.rank == 0) {
    TraceMeta meta;
    meta.kernel = "user:" + name;
    meta.scheme = d.cfg.scheme->info.name;
    meta.grid = d.cfg.grid;
    meta.threads = d.cfg.threads;
    meta.reserved = d.scheme->reserved_threads();
    meta.iters = d.sweeps;
    meta.repetition = "the timed loop";
    const std::string context = "{\"source\": \"user-kernel\", \"hympi_version\": " +
                                detail::json_string(kVersion) + ", \"ranks\": " +
                                std::to_string(d.size) + "}";
    error = write_text_file(path, trace_json(meta, ranks, d.nodes, context));
  }
  d.share_error(error);
}

}  // namespace hympi
