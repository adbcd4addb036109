// The user-kernel API: a stencil code hands hympi its fields and its box
// update, and runs them under any scheme of the classification. The built-in
// kernels (src/kernels/) are written on this same API.
//
// A Domain is the global grid cut over the ranks (node-aware), the halo
// width, the chosen scheme with its threads, and the exchange plan. Fields
// are arrays of doubles over the local box plus `halo` points on every side,
// i fastest (see Field). One sweep exchanges the halos of the listed fields
// (one message per neighbour and direction carries all of them) and calls
// the user's update on every local point exactly once; where the scheme
// overlaps, the interior is computed while the messages travel and the
// boundary after.
//
// Thread rules: construct, sweep, reduce and report from the thread that
// called MPI_Init_thread (the master), outside any parallel region. The
// update runs on hympi's threads (thread ids 0..threads-1) inside hympi's
// parallel regions: it must not call MPI or any Domain function, and writes
// only the points of the box it is given (plus its own per-thread data).
#pragma once

#include <mpi.h>

#include <array>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hympi/box.hpp"
#include "hympi/decomposition.hpp"
#include "hympi/exchange.hpp"
#include "hympi/field.hpp"
#include "hympi/scheme.hpp"
#include "hympi/timing.hpp"
#include "hympi/topology.hpp"

namespace hympi {

// What to do when the user's update throws (C++) or returns an error (C,
// Fortran). The sweep always finishes its communication first.
enum class KernelErrorPolicy {
  Abort,   // print one line naming scheme, box, rank and thread; MPI_Abort(comm, 3)
  Throw,   // throw KernelError on the failing rank (the caller stops the others)
};

// How the messages of a failing update name its box: C++'s and C's
// zero-based half-open [lo,hi), or Fortran's 1-based inclusive lo:hi (the
// Fortran module's domains, whose callbacks get boxes in those indices).
enum class BoxIndexing { ZeroBasedHalfOpen, FortranInclusive };

// The shape of the user's stencil: which halo points an update reads.
// Star: along the axes only (the faces of the halo); box: every point within
// `halo` along each axis at once (27 points at halo 1: faces, edges and
// corners of the halo), e.g. lattice Boltzmann D3Q19/D3Q27, HPCG's operator.
enum class Stencil { Star = 0, Box = 1 };

struct DomainConfig {
  std::array<int, 3> grid{0, 0, 0};                   // global points NX, NY, NZ
  std::array<bool, 3> periodic{false, false, false};  // per axis
  int halo = 1;          // halo width: the radius of the stencil
  // Box: the exchange also brings the halo's edges and corners (26
  // neighbours), under every scheme; star: the faces only (at halo_depth 1).
  Stencil stencil = Stencil::Star;
  // Temporal blocking: sweeps per exchange (sweep_block; hympi solve
  // --halo-depth, SolveConfig::halo_depth; `depth` in the C and Fortran
  // config). Fields then carry halo * halo_depth layers (FieldLayout::halo,
  // Field::halo()), and the exchange brings edges and corners too (with
  // either stencil).
  int halo_depth = 1;
  // Planes per step of sweep_block's wavefront, 1 .. 4: each call of the
  // update then gets boxes that many planes deep (fewer at the region's
  // ends). 2 pays for an update that computes two planes in one pass and so
  // reads each row between them from L1 once for both (the built-in jacobi,
  // spmv and rbgs, KernelInfo::wavefront_planes); one that computes plane after
  // plane ran 1-5 % slower with 2 (bench/README.md, "Two planes per pass").
  // HYMPI_WAVEFRONT_PLANES overrides it (measurements, tests).
  int wavefront_planes = 1;
  // A registry entry (find_scheme); default: pure_mpi_scheme().
  const SchemeEntry* scheme = &pure_mpi_scheme();
  int threads = 1;       // n
  int reserved = 0;      // m (0: scheme default)
  int ranks_per_node = 0;                  // 0: real nodes
  RankOrder rank_order = RankOrder::Sequential;
  std::array<int, 3> proc_grid{0, 0, 0};  // 0: chosen node-aware
  KernelErrorPolicy on_error = KernelErrorPolicy::Abort;
  // Record every thread's timed steps between start_clock and stop_clock
  // (write_trace). Also on when HYMPI_TRACE_JSON is set in rank 0's
  // environment; write_report then writes the trace there too.
  bool trace = false;
  // Read HYMPI_REPORT_JSON and HYMPI_TRACE_JSON (hympi's own solve does not:
  // it has its own --json and --trace).
  bool use_environment = true;
  BoxIndexing box_indexing = BoxIndexing::ZeroBasedHalfOpen;
};

// Every problem with a config at once (empty when valid), for `ranks` ranks.
// Pure function, no MPI; parameters are named as in DomainConfig, in
// backquotes. A null scheme is reported as such. real_nodes: the nodes found
// without ranks_per_node (nullptr: one node).
std::vector<std::string> validate_domain(const DomainConfig& config, int ranks,
                                         const NodeMap* real_nodes = nullptr);

// The user's update returned an error or threw (KernelErrorPolicy::Throw).
class KernelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The update of one box; the sum form returns this box's part of a sum
// (e.g. a residual), which the sweep adds over threads and ranks.
using BoxSumFn = std::function<double(const Box&, int thread)>;

// The update of one box in a two-field sweep: `out` from `in` (sweep_block).
using PairBoxFn = std::function<void(const Field& in, Field& out, const Box&, int thread)>;

// The memory layout of every field of a domain (packed rows: that of
// make_field() and wrap_field(); make_field(RowLayout::CacheLine) pads rows).
struct FieldLayout {
  std::array<int, 3> size{0, 0, 0};  // local points
  int halo = 1;  // layers on every side: DomainConfig::halo * halo_depth
  std::ptrdiff_t stride_j = 0, stride_k = 0;  // i is contiguous
  std::size_t count = 0;  // doubles in the array, halo included
};

class Domain {
 public:
  // Collective over comm (duplicated; errors return codes). Throws
  // UsageError listing every problem of the config. The program must run
  // with at least the scheme's MPI thread level (else UsageError).
  Domain(MPI_Comm comm, const DomainConfig& config);
  ~Domain();
  Domain(const Domain&) = delete;
  Domain& operator=(const Domain&) = delete;

  MPI_Comm comm() const;              // hympi's duplicate of the caller's
  const DomainConfig& config() const;
  const LocalDomain& local() const;   // offset, size, neighbours of this rank
  // Which of this rank's faces are physical boundaries, ordered -i, +i, -j,
  // +j, -k, +k (LocalDomain::physical_boundaries). No MPI.
  std::array<bool, 6> physical_boundaries() const;
  const GridChoice& grid() const;     // process grid, node block
  const NodeMap& nodes() const;
  Scheme& scheme();
  const SweepRegions& regions() const;
  int threads() const;
  FieldLayout layout() const;
  const ExchangePlan& plan() const;

  // A field of this layout, all zero, first touched by the domain's threads.
  // RowLayout::CacheLine pads its rows to whole cache lines (faster stencils
  // in cache, e.g. under sweep_block); its strides are then not layout()'s:
  // index through the Field. Each field made starts at another offset in
  // its 4 KiB page than the one made before it (Field's `stagger`), so that
  // a sweep from one into the next does not store where it loads.
  Field make_field(RowLayout rows = RowLayout::Packed) const;
  // A field over the caller's memory (layout().count doubles, not owned;
  // first touch is the caller's).
  Field wrap_field(double* data) const;

  // One sweep: exchange the halos of `exchange` (fields of this domain), then
  // update every local point once. Collective over comm().
  void sweep(const std::vector<Field*>& exchange, const BoxFn& update);
  // The same; returns the sum of the update's results over threads and
  // ranks (one MPI_Allreduce).
  double sweep_sum(const std::vector<Field*>& exchange, const BoxSumFn& update);
  // Temporal blocking: `sweeps` (1..halo_depth) sweeps of a two-field update
  // with one exchange. The halos of *in are exchanged halo_depth * halo deep, with
  // edges and corners. Under a scheme that overlaps, the first sweep runs
  // through the scheme over the local box grown into the halo by
  // (sweeps - 1) * halo on the sides with a neighbour (its interior
  // overlapped as the scheme does), then sweeps 2..`sweeps` run as a
  // wavefront over k planes (each a layer thinner, threads sharing the
  // planes of one wavefront step), so that the planes a sweep reads are
  // still in cache; under one that does not, the scheme only exchanges and
  // every sweep runs in the wavefront. `update` may be a star or a box
  // stencil (the deep halo holds edges and corners, and the wavefront's
  // order covers every point within `halo` along each axis at once); it
  // reads no further than `halo` points along each axis, and computes a
  // point the same way wherever it lies, so that the result is the one of
  // `sweeps` plain sweeps to the last bit. The pointers swap after every sweep: *in
  // holds the result. Collective over comm().
  void sweep_block(Field*& in, Field*& out, int sweeps, const PairBoxFn& update);
  // The same, with the block's first sweep computed by `first` and the
  // others by `update` (both as above): for an update that differs in the
  // first sweep of a run only (rbgs's, src/kernels/rbgs.cpp).
  void sweep_block(Field*& in, Field*& out, int sweeps, const PairBoxFn& first,
                   const PairBoxFn& update);
  // Temporal blocking, before start_clock: runs blocks of `sweeps` sweeps
  // of `update` (as sweep_block) until every rank has chosen the height of
  // its wavefront tiles for that block (the first blocks of a shape time
  // two heights, src/wavefront_tiles.hpp), so that the timed loop's blocks
  // all run with the choice from the first one. The choice is remembered
  // for the process: a later call for the same shape runs no block. *in and
  // *out are overwritten: initialise them after. Returns the blocks run.
  // Collective over comm().
  int tune_block(Field*& in, Field*& out, int sweeps, const PairBoxFn& update);
  // Rows per tile of this rank's deepest wavefront so far (the last of that
  // many sweeps: after tune_block, the timed blocks' height); 0 before any.
  int wavefront_tile_rows() const;
  // Every local point once, all threads, no exchange (vector updates);
  // booked as non-overlappable computation. The sum form reduces like
  // sweep_sum; local_sum stops at this rank's sum (no MPI).
  void for_each(const BoxFn& update);
  double for_each_sum(const BoxSumFn& update);
  double for_each_local_sum(const BoxSumFn& update);
  // Collective sum over ranks, booked as the master's communication.
  double allreduce_sum(double local);
  // A sum over ranks overlapped with the sweeps that follow (pipelined cg):
  // begin_sum starts an MPI_Iallreduce of `local` (1 to kMaxPendingSum
  // values); the sweeps until end_sum test it on the thread that
  // communicates for the scheme (funneled, multiple, shared-window: until it
  // completes, while the others compute; adaptive: between tiles; the
  // others: between phases), and end_sum waits for it and returns the sums.
  // One in flight at a time; a Domain destroyed with one in flight waits
  // for it. Both collective over comm(), booked as the master's
  // communication.
  static constexpr int kMaxPendingSum = 8;
  void begin_sum(const std::vector<double>& local);
  std::vector<double> end_sum();

  // Timing of the user's loop: start_clock() (collective: a barrier, then
  // zeroes the per-thread times and the sweep count), stop_clock().
  void start_clock();
  void stop_clock();
  double elapsed() const;             // this rank's seconds between them
  long long sweeps() const;           // sweeps since start_clock()
  long long exchanges() const;        // halo exchanges since start_clock() (a block: one)
  Timers& timers();                   // per thread and phase since start_clock()
  double loop_start() const;          // now() at start_clock()

  // Collective: the timed loop's summary as a JSON document on `path` (rank
  // 0 writes; "-" is stdout), in the shape of `hympi solve --json` results so
  // that hympi-lab study --app and report read it. `name` names the kernel
  // ("user:" is prefixed). HYMPI_REPORT_JSON in rank 0's environment
  // replaces `path`; with HYMPI_TRACE_JSON set the trace is written there
  // too. Throws OutputError when a file cannot be written. Each of
  // `checksum_fields` is reported by name (`field_names`, one per field;
  // empty: field1, field2, ...) with its sum and l2 norm ("checksums"), so
  // that the study can check that every scheme computed the same fields;
  // "checksum" and "l2" are those of all of them together. UsageError when
  // the names are not one per field, empty or repeated.
  void write_report(const std::string& path, const std::string& name,
                    const std::vector<const Field*>& checksum_fields = {},
                    const std::vector<std::string>& field_names = {});
  // The program's own compiler and flags, written into every later report's
  // context as app_compiler and app_flags (hympi's own are "compiler" and
  // "flags"): hympi cannot see how the program was built, so it says so.
  // C and C++: HYMPI_APP_COMPILER and HYMPI_APP_FLAGS (hympi/hympi.h).
  void report_build(const std::string& compiler, const std::string& flags);

  // Collective: the timelines of every thread of every rank in the timed
  // loop, as a Chrome Trace Event document (hympi/trace.hpp; Perfetto opens
  // it, `hympi-lab trace` draws it). Needs tracing on (DomainConfig::trace or
  // HYMPI_TRACE_JSON): else UsageError. Writes like write_report.
  void write_trace(const std::string& path, const std::string& name);

  // Sum and root of the sum of squares of a field's local points over ranks
  // (collective): the checksum a user compares between schemes.
  std::array<double, 2> checksum(const Field& field);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hympi
