// The scheme registry: a new scheme is a new file under src/schemes/ that
// defines `SchemeEntry <name>_entry()`, plus its line in the list below (in
// the order the CLI and `info` list schemes). CMake checks at configure time
// that every file defining an entry is listed.
#include <mpi.h>

#include <stdexcept>

#include "hympi/scheme.hpp"

#define HYMPI_SCHEME_LIST(X) \
  X(masteronly)              \
  X(masteronly_threaded)     \
  X(funneled)                \
  X(multiple)                \
  X(multiple_own)            \
  X(adaptive)                \
  X(shared_window)           \
  X(partitioned)

namespace hympi {

#define HYMPI_SCHEME_DECLARE(file) SchemeEntry file##_entry();
HYMPI_SCHEME_LIST(HYMPI_SCHEME_DECLARE)
#undef HYMPI_SCHEME_DECLARE

const std::vector<SchemeEntry>& scheme_registry() {
#define HYMPI_SCHEME_ENTRY(file) file##_entry(),
  static const std::vector<SchemeEntry> entries = {HYMPI_SCHEME_LIST(HYMPI_SCHEME_ENTRY)};
#undef HYMPI_SCHEME_ENTRY
  return entries;
}

const SchemeEntry* find_scheme(const std::string& name) {
  for (const auto& e : scheme_registry())
    if (e.info.name == name) return &e;
  return nullptr;
}

std::string scheme_names() {
  std::string s;
  for (const auto& e : scheme_registry()) s += (s.empty() ? "" : ", ") + e.info.name;
  return s;
}

const SchemeEntry& pure_mpi_scheme() {
  const SchemeEntry* best = nullptr;
  for (const auto& e : scheme_registry())
    if (!e.info.overlap && e.info.min_threads == 1 &&
        (!best || e.info.thread_level < best->info.thread_level))
      best = &e;
  if (!best) throw std::logic_error("no registered scheme runs as pure MPI");
  return *best;
}

std::string thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "unknown thread level " + std::to_string(level);
  }
}

}  // namespace hympi
