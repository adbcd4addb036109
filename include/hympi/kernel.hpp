// The kernel interface: one file per kernel under src/kernels/, listed once
// in HYMPI_KERNEL_LIST (kernels.hpp). A kernel declares what it is and costs
// (KernelInfo), runs its iteration loop under any scheme through the public
// user-kernel API (hympi::Domain, domain.hpp: the same API a user's own
// kernel uses), and points at its frozen serial reference. The solver is a
// generic driver over this table.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "hympi/domain.hpp"
#include "hympi/kernels.hpp"
#include "hympi/solver.hpp"

namespace hympi {

// What one repetition's run gets from the driver.
struct KernelRun {
  const SolveConfig& cfg;
  Domain& domain;             // decomposition, scheme, sweeps, clock
  StoredMatrix matrix;        // the stored matrix (format crs or sell), else none
  // How a one-sweep loop writes its output array (kernels with
  // KernelInfo::streaming_stores; the solver's streaming_stores_for).
  Stores stores = Stores::Cached;
};

struct KernelOutcome {
  Field field;                // the local result
  int iterations = 0;         // iterations done
  double residual = 0;        // converging kernels: final relative residual
  // Set-up before start_clock that tuned the timed loop (temporal blocking:
  // Domain::tune_block, the wavefront tile height): blocks run and this
  // rank's seconds. 0 when nothing was tuned (not needed, or remembered
  // from an earlier run of the same shape).
  int tuning_blocks = 0;
  double tuning_s = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const KernelInfo& info() const = 0;
  // One repetition: set up the fields, then run the iterations between
  // run.domain.start_clock() and stop_clock() (allocation and initialisation
  // are set-up), every sweep through run.domain. Collective; called by the
  // master thread outside any parallel region.
  virtual KernelOutcome run(const KernelRun& run) const = 0;
  // The frozen serial reference of the same problem on the whole grid.
  virtual ReferenceResult reference(const ReferenceProblem& problem) const = 0;
};

// Every kernel, in HYMPI_KERNEL_LIST order.
const std::vector<const Kernel*>& kernels();
const Kernel* kernel_named(const std::string& name);
const Kernel& kernel_for(KernelKind kind);

}  // namespace hympi
