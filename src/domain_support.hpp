// What the Domain (the user-kernel API) owns of MPI, OpenMP and timing,
// which the solver driver above it reuses (private to the library). Nothing
// here knows the solver or a kernel.
#pragma once

#include <mpi.h>
#include <omp.h>

#include <array>
#include <vector>

#include "hympi/error.hpp"
#include "hympi/timing.hpp"

namespace hympi {
namespace detail {

// A duplicate of the caller's communicator that returns error codes (so that
// HYMPI_CHECK_MPI sees them) and is freed on every path.
class OwnedComm {
 public:
  explicit OwnedComm(MPI_Comm parent) {
    HYMPI_CHECK_MPI(MPI_Comm_dup(parent, &comm_));
    HYMPI_CHECK_MPI(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  }
  ~OwnedComm() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
  }
  OwnedComm(const OwnedComm&) = delete;
  OwnedComm& operator=(const OwnedComm&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// Sets the OpenMP settings hympi's parallel regions rely on (no dynamic
// adjustment, `threads` threads for regions without a num_threads clause)
// for its own lifetime only, and gives the caller's back on every path.
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

// Sum over threads of a per-thread partial, padded so threads do not share
// cache lines while accumulating.
struct alignas(64) Partial {
  double value = 0;
};

// Per thread: seconds per phase (timing.hpp order), then idle.
using PhaseRow = std::array<double, kPhaseCount + 1>;

// Collective: per thread and phase (then idle = local_time - busy), max over
// ranks.
std::vector<PhaseRow> breakdown_max(const Timers& timers, double local_time, MPI_Comm comm);

// Fractions of the wall time T on the critical path (the model's inputs for
// masteronly runs): communication = the busiest communicating thread's
// pack + MPI + unpack; overlappable = the slowest thread's interior work;
// the rest cannot overlap (boundary, vector updates, region overheads).
struct Fractions {
  double comm = 0, comp_non = 0, comp_overlap = 0;
};
Fractions critical_fractions(const std::vector<PhaseRow>& breakdown, double T);

// One thread's event log, on a cache line of its own: threads append to
// their logs at the same time, and the vectors' end pointers would otherwise
// share lines.
struct alignas(64) TraceLog {
  std::vector<TraceEvent> events;
};

// Collective. Every rank's timeline on rank 0 (empty elsewhere), times made
// relative to each rank's loop start t0.
std::vector<RankTrace> gather_trace(const std::vector<TraceLog>& logs, double t0, double elapsed,
                                    MPI_Comm comm);

}  // namespace detail
}  // namespace hympi
