// The scheme registry: a new scheme is a new file plus one line here.
#include <mpi.h>

#include "hympi/scheme.hpp"

namespace hympi {

const std::vector<SchemeEntry>& scheme_registry() {
  static const std::vector<SchemeEntry> entries = {
      masteronly_entry(),   masteronly_threaded_entry(), funneled_entry(),
      multiple_entry(),     multiple_own_entry(),        adaptive_entry(),
  };
  return entries;
}

const SchemeEntry* find_scheme(const std::string& name) {
  for (const auto& e : scheme_registry())
    if (e.info.name == name) return &e;
  return nullptr;
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
