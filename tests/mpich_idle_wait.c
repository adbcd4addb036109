/* Preloaded (LD_PRELOAD) into the MPICH test runs (tests/CMakeLists.txt), so
 * that a rank waiting for a message gives its core to the ranks that have
 * work: the tests run 3-4 ranks (times threads) on 2 cores.
 *
 * Debian's MPICH 4.0.2 (ch4:ucx) waits by calling ucp_worker_progress and
 * its shared-memory progress in a loop that never gives up the core: its
 * thread yield is compiled out (libmpich imports no sched_yield), and
 * MPIR_CVAR_POLLS_BEFORE_YIELD belongs to ch3, not ch4. This file wraps
 * ucp_worker_progress: a poll that found nothing is an idle poll. test_schemes
 * at 4 ranks x 1 thread took 74 s of wall time and 95 s of CPU time without
 * it, 6.6 s and 8 s with a sched_yield per idle poll.
 *
 * A sched_yield alone still keeps the core busy when nothing else on it is
 * runnable at that instant, and costs a system call per poll: at 4 ranks x 3
 * threads the yielding ranks burnt 22-47 s of CPU (mostly system time) in
 * one 15-35 s test, CPU that the other test lanes of `make test` wanted. So a
 * wait that has found nothing for a while sleeps: the first kYieldPolls idle
 * polls of a wait yield, every later one sleeps kNapNs. The same test then
 * took 6-10 s of CPU and less wall time; ctest of the schemes_np4, heat,
 * box_stencil and exchange tests 60.6 s and 44 CPU-s against 98.5 s and 107
 * CPU-s (2026-11-27, 2 cores shared with a build). A wait is a run of idle
 * polls less than kNewWaitNs apart. What MPI computes or sends is unchanged;
 * only how soon a waiting rank polls again is (at most kNapNs plus the
 * kernel's timer slack later).
 *
 * Open MPI yields by itself (mpi_yield_when_idle); the same sleep in place of
 * its sched_yield was tried: 17 % less CPU but 20 % more wall time for its
 * tests, so it is not used there. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <time.h>

enum { kYieldPolls = 32 };
static const long kNapNs = 20000;       /* 20 us */
static const long kNewWaitNs = 200000;  /* 200 us without an idle poll */

static long elapsed_ns(const struct timespec* from, const struct timespec* to) {
  return (to->tv_sec - from->tv_sec) * 1000000000L + (to->tv_nsec - from->tv_nsec);
}

/* One idle poll of this thread's wait: yield, or sleep once the wait is long. */
static void idle_poll(void) {
  static __thread unsigned idle_polls;
  static __thread struct timespec last_idle;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (elapsed_ns(&last_idle, &now) > kNewWaitNs) idle_polls = 0;
  last_idle = now;
  if (++idle_polls <= kYieldPolls) {
    sched_yield();
  } else {
    const struct timespec nap = {0, kNapNs};
    nanosleep(&nap, NULL);
  }
}

typedef unsigned (*progress_fn)(void*);

unsigned ucp_worker_progress(void* worker) {
  static progress_fn real;
  progress_fn fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
  if (!fn) {
    fn = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    __atomic_store_n(&real, fn, __ATOMIC_RELEASE);
  }
  const unsigned events = fn(worker);
  if (events == 0) idle_poll();
  return events;
}

