// The hybrid schemes of the papers' classification (seed 001 sec. 2), one file
// each behind this interface, registered by name in src/schemes/registry.cpp
// (each file defines `SchemeEntry <file>_entry()`, listed there once).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hympi/box.hpp"
#include "hympi/exchange.hpp"
#include "hympi/field.hpp"
#include "hympi/timing.hpp"

namespace hympi {

struct SchemeInfo {
  std::string name;
  std::string seed_class;   // class in seed 001 sec. 2
  std::string description;
  int thread_level;         // MPI thread level it needs
  bool overlap;             // overlaps communication with computation
  bool takes_reserved;      // accepts --reserved m
  int min_threads;          // fewest threads it can run with
  // Needs at least two ranks on some node (it shares memory between the
  // ranks of a node): refused when every node holds one rank.
  bool needs_node_peers = false;
  // Why this build cannot run it (the MPI library lacks what it needs); empty
  // when it can. Listed by `hympi info`, refused by validate_domain.
  std::string unavailable;
};

struct SchemeParams {
  int threads = 1;   // n
  int reserved = 0;  // m (0 = scheme default)
};

// The boxes of one sweep: every point of `local` must be computed exactly
// once; points of `interior` need no halo value that arrives by message.
// `core` is the rank's own box: `local` equals it, except in the first sweep
// of a temporal block (DomainConfig::depth > 1), which also computes the
// halo points later sweeps of the block read (`local` grown into the halo
// on the sides with a neighbour). An empty `core` means `local`.
struct SweepRegions {
  Box local;
  Box interior;
  std::vector<Box> boundary;  // subtract(local, interior)
  Box core;
  // The update reads the halo's edges and corners (a box stencil): a
  // boundary point then also reads halo values that arrive across the
  // neighbouring faces' pieces, not only its own (multiple-own's slabs).
  bool reads_edges = false;
};

// Computes a box on behalf of a thread (thread id for per-thread partials).
using BoxFn = std::function<void(const Box&, int thread)>;

class Scheme {
 public:
  virtual ~Scheme() = default;
  virtual const SchemeInfo& info() const = 0;
  // How the exchange plan should split x and y faces (see ExchangePlan).
  virtual int face_pieces() const { return 1; }
  // Threads held back from the interior for communication (the papers' m;
  // 0 when every thread computes).
  virtual int reserved_threads() const { return 0; }
  // One sweep: bring the halos of `fields` up to date (the plan is sized for
  // them: ExchangePlan::set_field_count) and call `compute` on every point of
  // regions.local exactly once, after the halo values it reads have arrived.
  // Called by the master thread outside any parallel region; opens its own.
  // Collective over the plan's communicator.
  virtual void sweep(ExchangePlan& plan, const FieldList& fields, const SweepRegions& regions,
                     const BoxFn& compute, Timers& timers) = 0;
};

using SchemeFactory = std::unique_ptr<Scheme> (*)(const SchemeParams&);
struct SchemeEntry {
  SchemeInfo info;
  SchemeFactory make;
};

const std::vector<SchemeEntry>& scheme_registry();
// The entry named `name`, or nullptr. Callers resolve a name once (the CLI
// when it parses --scheme) and pass the entry on (SolveConfig::scheme).
const SchemeEntry* find_scheme(const std::string& name);
// The registered names, in registry order, joined by ", ".
std::string scheme_names();
// The scheme that is pure MPI with one thread (class 1): no overlap, runs
// with one thread, the lowest thread level among such schemes. The default
// of SolveConfig and the baseline of the overlap benchmark.
const SchemeEntry& pure_mpi_scheme();
std::string thread_level_name(int level);

}  // namespace hympi
