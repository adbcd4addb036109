// Helpers shared by the scheme files (private to the library).
#pragma once

#include <omp.h>

#include <exception>
#include <stdexcept>

#include "hympi/scheme.hpp"

namespace hympi {
namespace detail {

// An exception must not leave an OpenMP region (the program would
// terminate): each thread runs its work through run(), the first exception
// is kept, and rethrow() raises it after the region on the master thread.
class ErrorSlot {
 public:
  template <typename Fn>
  void run(Fn&& fn) noexcept {
    try {
      fn();
    } catch (...) {
#pragma omp critical(hympi_error_slot)
      if (!error_) error_ = std::current_exception();
    }
  }
  void rethrow() {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::exception_ptr error_;
};

// The region must have the threads the scheme was built for: a scheme with
// reserved threads cannot run correctly on fewer.
inline void require_threads(int wanted) {
  if (omp_get_num_threads() != wanted)
    throw std::runtime_error("OpenMP gave " + std::to_string(omp_get_num_threads()) +
                             " threads, the scheme needs " + std::to_string(wanted));
}

// The library's OpenMP region, in two phases with a barrier between them
// when `barrier` (the same on every thread): first(t), then second(t), on
// each of n threads (t: the thread's number), after checking that OpenMP
// gave n. Every thread reaches the barrier even when its first phase threw;
// the first exception of any thread is rethrown on the caller's thread
// after the region. A barrier inside a phase must be reached by every
// thread, so a phase must not throw before one.
template <typename First, typename Second>
void on_threads(int n, bool barrier, First&& first, Second&& second) {
  ErrorSlot errors;
#pragma omp parallel num_threads(n)
  {
    const int t = omp_get_thread_num();
    errors.run([&] {
      require_threads(n);
      first(t);
    });
    if (barrier) {
#pragma omp barrier
    }
    errors.run([&] { second(t); });
  }
  errors.rethrow();
}

// The same region in one phase: body(t) on each of n threads.
template <typename Body>
void on_threads(int n, Body&& body) {
  on_threads(n, false, body, [](int) {});
}

// A thread's share of the exchange, for schemes where several threads call
// MPI (MPI_THREAD_MULTIPLE): owns(index, message) says which messages are
// this thread's. start_owned posts their receives, packs and sends them;
// finish_owned waits for them, unpacks, and waits for the sends.
template <typename Owns>
void start_owned(ExchangePlan& plan, const FieldList& fields, ThreadTimes& tm, Owns&& owns) {
  auto& msgs = plan.messages();
  for (std::size_t i = 0; i < msgs.size(); ++i)
    if (owns(i, msgs[i])) {
      PhaseTimer c(tm, Phase::Comm);
      plan.post_recv(msgs[i]);
    }
  for (std::size_t i = 0; i < msgs.size(); ++i)
    if (owns(i, msgs[i])) {
      {
        PhaseTimer p(tm, Phase::Pack);
        ExchangePlan::pack(msgs[i], fields);
      }
      PhaseTimer c(tm, Phase::Comm);
      plan.send(msgs[i]);
    }
}

template <typename Owns>
void finish_owned(ExchangePlan& plan, const FieldList& fields, ThreadTimes& tm, Owns&& owns) {
  auto& msgs = plan.messages();
  for (std::size_t i = 0; i < msgs.size(); ++i)
    if (owns(i, msgs[i])) {
      {
        PhaseTimer c(tm, Phase::Comm);
        plan.wait_recv(msgs[i]);
      }
      PhaseTimer u(tm, Phase::Unpack);
      ExchangePlan::unpack(msgs[i], fields);
    }
  for (std::size_t i = 0; i < msgs.size(); ++i)
    if (owns(i, msgs[i])) {
      PhaseTimer c(tm, Phase::Comm);
      plan.wait_send(msgs[i]);
    }
}

// Part `part` of every boundary box, for a thread among `parts`.
inline void compute_boundary_part(const SweepRegions& r, const BoxFn& compute, int parts,
                                  int part, int thread, ThreadTimes& times) {
  PhaseTimer t(times, Phase::ComputeBoundary);
  for (const Box& b : r.boundary) compute(split_box_part(b, parts, part), thread);
}

// The compute phase of the non-overlapping schemes: all threads share the
// interior, then the boundary (timed apart so the model sees both).
inline void compute_all_threads(const SweepRegions& r, const BoxFn& compute, Timers& timers) {
  const int n = static_cast<int>(timers.size());
  on_threads(n, [&](int t) {
    {
      PhaseTimer pt(timers[t], Phase::ComputeInterior);
      compute(split_box_part(r.interior, n, t), t);
    }
    compute_boundary_part(r, compute, n, t, t, timers[t]);
  });
}

// The sweep of the schemes with a fixed reservation (funneled, multiple): in
// one parallel region threads 0..m-1 run communicate(t) while threads
// m..n-1 share the interior; after a barrier all share the boundary.
template <typename Communicate>
void reserved_sweep(const SweepRegions& r, const BoxFn& compute, Timers& timers, int m,
                    Communicate&& communicate) {
  const int n = static_cast<int>(timers.size());
  on_threads(
      n, true,
      [&](int t) {
        if (t < m) {
          communicate(t);
        } else {
          PhaseTimer pt(timers[t], Phase::ComputeInterior);
          compute(split_box_part(r.interior, n - m, t - m), t);
        }
      },
      [&](int t) { compute_boundary_part(r, compute, n, t, t, timers[t]); });
}

}  // namespace detail
}  // namespace hympi
