// Facts for the JSON context block of result documents
// (docs/json-schema.md), gathered the same way by the hympi command line and
// a user's Domain report.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace hympi {

constexpr int kContextSchemaVersion = 1;

// Where each thread of each rank runs: the CPU it ran on (sched_getcpu) and
// the CPUs it may run on (its affinity mask). Collective; valid on rank 0.
// Also whether a real host runs more threads (over all its ranks) than its
// ranks' affinity masks hold CPUs: timings then measure waiting, not the
// scheme. host_threads/host_cpus: the most oversubscribed host's figures.
struct ThreadPlacement {
  std::vector<std::vector<int>> cpu;               // [rank][thread]
  std::vector<std::vector<std::string>> affinity;  // [rank][thread], e.g. "0-3"
  bool oversubscribed = false;
  int host_threads = 0, host_cpus = 0;
};
// "hympi: warning: ..." for an oversubscribed run, "" otherwise.
std::string oversubscription_warning(const ThreadPlacement& p);
ThreadPlacement gather_thread_placement(MPI_Comm comm, int threads);

std::string mpi_library_version();   // the first line of MPI_Get_library_version
std::string mpi_standard_version();  // e.g. "3.1"

}  // namespace hympi
