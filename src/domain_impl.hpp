// The Domain's private state and its sweeps (domain.cpp), shared by the
// files that implement it: domain_wavefront.cpp (the sweeps of a temporal
// block after its exchange) and domain_report.cpp (report and trace).
// Private to the library.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hympi/domain.hpp"
#include "hympi/error.hpp"
#include "domain_support.hpp"
#include "schemes/scheme_util.hpp"
#include "wavefront_tiles.hpp"

namespace hympi {
namespace detail {

inline std::string dims_text(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

inline std::string box_text(const Box& b, BoxIndexing indexing) {
  if (indexing == BoxIndexing::FortranInclusive)
    return "(" + std::to_string(b.lo[0] + 1) + ":" + std::to_string(b.hi[0]) + ", " +
           std::to_string(b.lo[1] + 1) + ":" + std::to_string(b.hi[1]) + ", " +
           std::to_string(b.lo[2] + 1) + ":" + std::to_string(b.hi[2]) +
           ") in local Fortran indices";
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
  std::string message(const std::string& scheme, int rank, BoxIndexing indexing) const {
    return "the kernel's box update failed under scheme '" + scheme + "' on box " +
           box_text(box_, indexing) + " (rank " + std::to_string(rank) + ", thread " +
           std::to_string(thread_) + "): " + what_;
  }

 private:
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  Box box_;
  int thread_ = -1;
  std::string what_;
};


// Collective: rank 0's `text` on every rank.
inline void broadcast_text(std::string& text, MPI_Comm comm) {
  int length = static_cast<int>(text.size());
  HYMPI_CHECK_MPI(MPI_Bcast(&length, 1, MPI_INT, 0, comm));
  text.resize(static_cast<std::size_t>(length));
  if (length > 0) HYMPI_CHECK_MPI(MPI_Bcast(&text[0], length, MPI_CHAR, 0, comm));
}

// HYMPI_WAVEFRONT_TILE_ROWS on this rank (0: unset or unusable, with one
// warning on stderr from the first rank that has an unusable value).
// Collective over comm (domain_wavefront.cpp).
int forced_tile_rows(MPI_Comm comm, int rank);
// HYMPI_WAVEFRONT_PLANES, or `configured` (domain_wavefront.cpp). Collective.
int wavefront_planes(MPI_Comm comm, int rank, int configured);

inline const char* row_layout_name(RowLayout rows) {
  return rows == RowLayout::CacheLine ? "CacheLine" : "Packed";
}

}  // namespace detail

// The one non-blocking sum a Domain may have in flight (begin_sum); its
// destructor waits for it, so that a Domain left by an exception (a
// kernel's error under KernelErrorPolicy::Throw) frees no buffer MPI still
// writes. Every rank started it, so the wait completes.
struct PendingSum {
  MPI_Request request = MPI_REQUEST_NULL;
  int count = 0;
  double local[Domain::kMaxPendingSum] = {};
  double global[Domain::kMaxPendingSum] = {};
  bool active() const { return count > 0; }
  PendingSum() = default;
  PendingSum(const PendingSum&) = delete;
  PendingSum& operator=(const PendingSum&) = delete;
  ~PendingSum() {
    if (request != MPI_REQUEST_NULL) MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
};

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
  int fields_made = 0;  // make_field's count: each field's place in the page (Field's stagger)
  PendingSum pending;                   // begin_sum .. end_sum (after plan: destroyed first)
  double t0 = 0, elapsed = 0;
  long long sweeps = 0;
  long long exchanges = 0;              // halo exchanges since start_clock
  // Wavefront tile height forced by HYMPI_WAVEFRONT_TILE_ROWS (tests: small
  // grids then cross tile boundaries); 0: measured (wavefront_tiles.hpp).
  int forced_tile_rows = 0;
  // Planes per wavefront step, each sweep's box that many planes deep
  // (DomainConfig::wavefront_planes, or HYMPI_WAVEFRONT_PLANES).
  int planes_per_step = 1;
  // One of the two tile heights tried: planes of 4 MiB per thread (an L3
  // share); the other fits one core's L2.
  static constexpr double kL3ShareBytes = 4.0 * 1024 * 1024;
  // The tile height of the deepest wavefront run so far (its sweeps), for
  // Domain::wavefront_tile_rows; a later one of as many sweeps replaces it.
  int wavefront_sweeps = 0, wavefront_rows = 0;
  bool tracing = false;                 // config.trace or HYMPI_TRACE_JSON
  std::string trace_env;                // rank 0's HYMPI_TRACE_JSON, on every rank
  std::vector<detail::TraceLog> logs;   // [thread], filled from start_clock
  // The program's own build (report_build); empty until it says.
  std::string app_compiler, app_flags;

  MPI_Comm comm() const { return owned.get(); }
  // Halo layers of the domain's fields.
  int layers() const { return cfg.halo * cfg.halo_depth; }

  // Rank 0's outcome of a write on every rank, so that all throw or none does.
  void share_error(std::string& error) const {
    detail::broadcast_text(error, comm());
    if (!error.empty()) throw OutputError(error);
  }

  // The failure of a sweep's update: under the Abort policy one line and
  // MPI_Abort; under Throw its message, which the caller throws once the
  // collectives every rank makes after the sweep are done (a sum's
  // MPI_Allreduce), so that the other ranks are not left waiting there.
  std::string failure(const detail::FailureSlot& slot) {
    if (!slot.failed()) return "";
    const std::string msg = slot.message(cfg.scheme->info.name, rank, cfg.box_indexing);
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
                         detail::dims_text(f->size()) + " with halo " + std::to_string(f->halo()) +
                         ", the domain's fields are " + detail::dims_text(local.size) + " with halo " +
                         std::to_string(layers()));
      // An update indexes the fields it sweeps with one index (as the
      // library's box kernels do): packed and padded rows must not mix. By
      // kind, not stride, so that every rank refuses alike (a rank whose
      // packed rows are whole lines already would otherwise go on into the
      // exchange alone).
      if (f->rows() != fields[0]->rows())
        throw UsageError("field " + std::to_string(i) + " of the sweep has " +
                         detail::row_layout_name(f->rows()) + " rows and field 0 " +
                         detail::row_layout_name(fields[0]->rows()) +
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
    detail::FailureSlot slot;
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
    detail::FailureSlot slot;
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
    r.reads_edges = cfg.stencil == Stencil::Box;
    return r;
  }
  // The block's first sweep by `first`, the others by `update`.
  std::string sweep_block(Field*& in, Field*& out, int count, const PairBoxFn& first,
                          const PairBoxFn& update) {
    check_fields({in, out});
    if (in == out || in->data() == out->data())
      throw UsageError("sweep_block: `in` and `out` are the same field (the sweeps need two)");
    if (count < 1 || count > cfg.halo_depth)
      throw UsageError("sweep_block: " + std::to_string(count) +
                       " sweeps, but the domain's depth allows 1 to " + std::to_string(cfg.halo_depth));
    plan->set_field_count(1);
    detail::FailureSlot slot;
    const int r = cfg.halo;
    if (!scheme->info().overlap) {
      // Nothing to overlap: the scheme exchanges over an empty region, then
      // every sweep of the block runs in the wavefront (the first one too,
      // so that no sweep streams the whole field on its own).
      SweepRegions exchange_only;
      exchange_only.core = local.box();
      scheme->sweep(*plan, {in}, exchange_only, [](const Box&, int) {}, timers);
      wavefront(in, out, count, first, update, slot);
      if (count % 2) std::swap(in, out);
    } else {
      // The first sweep through the scheme, its interior overlapped with the
      // exchange; the others in the wavefront.
      Field* src = in;
      Field* dst = out;
      const BoxFn first_sweep = [&](const Box& box, int t) {
        slot.guard(box, t, [&] { first(*src, *dst, box, t); });
      };
      scheme->sweep(*plan, {src}, grown_regions((count - 1) * r), first_sweep, timers);
      std::swap(in, out);
      if (count > 1) wavefront(in, out, count - 1, update, update, slot);
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
  // the P planes from k = P w - L t (P = planes_per_step, 2; L = P + r with
  // threads, r on one thread: domain_wavefront.cpp says why): with threads,
  // the planes up to k + P - 1 + r of sweep t - 1 were done at earlier
  // steps, and the planes it overwrites are no longer read by sweep t - 1,
  // whose next group reads from k + L - r >= k + P. So the planes of one
  // step are independent: the threads share their rows, with a barrier
  // between steps. Each thread takes the same share (first, second,
  // ...) of every sweep's rows, so what it reads of sweep t - 1 it wrote
  // itself, in its own core's cache, but for the rows at the shares' edges
  // (measured at 1 rank x 2 threads on 256^3, depth 4 and 8: 10-20 % faster
  // than cutting the step's rows of all sweeps, one after the other, into n
  // runs, where a thread reads planes that the other wrote). A tile holds
  // about 2 (L sweeps + 2r + P) planes of its rows in the two fields. Two
  // heights are tried (wavefront_tiles.hpp): planes of 4 MiB per thread (an
  // L3 share) and planes of one core's L2. On 256^3, depth 8, one thread per
  // rank, the first won by 10-25 % on a 2-core AMD EPYC VM (untiled planes
  // were 10-20 % slower still), the second by about 2x on a 16-core Intel
  // Xeon VM; the first blocks of each shape time both and keep the faster.
  // Sweep 0 by `first`, the others by `update`.
  void wavefront(Field* a, Field* b, int sweeps, const PairBoxFn& first, const PairBoxFn& update,
                 detail::FailureSlot& slot);
  // The shape (and the two tile heights) of a wavefront of `sweeps` sweeps
  // (domain_wavefront.cpp).
  detail::WavefrontShape wavefront_shape(int sweeps) const;
  // Whether a block of `count` sweeps would still try a tile height on
  // this rank (not forced, not yet chosen for its shape).
  bool tile_choice_pending(int count) const;


  double partial_sum() const {
    double sum = 0;
    for (const auto& p : partials) sum += p.value;
    return sum;
  }

  void reset_partials() {
    for (auto& p : partials) p.value = 0;
  }
};

}  // namespace hympi
