// The kernel interface: one file per kernel under src/kernels/, listed once
// in HYMPI_KERNEL_LIST (kernels.hpp). A kernel declares what it is and costs
// (KernelInfo), runs its iteration loop under any scheme, and points at its
// frozen serial reference. The solver is a generic driver over this table.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "hympi/exchange.hpp"
#include "hympi/kernels.hpp"
#include "hympi/scheme.hpp"
#include "hympi/solver.hpp"
#include "hympi/timing.hpp"

namespace hympi {

// Times the iteration loop only: allocation and initialisation are set-up.
// start() is collective (a barrier, so that all ranks begin together).
struct LoopClock {
  MPI_Comm comm;
  double t0 = 0, elapsed = 0;
  void start();
  void stop() { elapsed = now() - t0; }
};

// What one repetition's run gets from the driver.
struct KernelRun {
  MPI_Comm comm;              // the solver's own duplicate
  const SolveConfig& cfg;
  const LocalDomain& domain;
  ExchangePlan& plan;
  Scheme& scheme;
  const SweepRegions& regions;
  const CrsMatrix* crs;       // the stored matrix (format crs), else nullptr
  int threads;
};

struct KernelOutcome {
  Field field;                // the local result
  int iterations = 0;         // iterations done
  double residual = 0;        // converging kernels: final relative residual
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const KernelInfo& info() const = 0;
  // One repetition: set up the fields, then run the iterations between
  // clock.start() and clock.stop(), every sweep through run.scheme.
  // Collective over run.comm; called by the master thread outside any
  // parallel region.
  virtual KernelOutcome run(const KernelRun& run, Timers& timers, LoopClock& clock) const = 0;
  // The frozen serial reference of the same problem on the whole grid.
  virtual ReferenceResult reference(const ReferenceProblem& problem) const = 0;
};

// Every kernel, in HYMPI_KERNEL_LIST order.
const std::vector<const Kernel*>& kernels();
const Kernel* kernel_named(const std::string& name);
const Kernel& kernel_for(KernelKind kind);

}  // namespace hympi
