/* Preloaded (LD_PRELOAD) into the MPICH test runs only (tests/CMakeLists.txt).
 *
 * Debian's MPICH 4.0.2 (ch4:ucx) waits for a message by calling
 * ucp_worker_progress and its shared-memory progress in a loop that never
 * gives up the core: its thread yield is compiled out (libmpich imports no
 * sched_yield), and MPIR_CVAR_POLLS_BEFORE_YIELD belongs to ch3, not ch4.
 * With 3-4 ranks (times threads) on 2 cores, a waiting rank then spins out its
 * whole time slice while the rank it waits for is not running: test_schemes
 * at 4 ranks x 1 thread took 74 s of wall time and 95 s of CPU time, with
 * this shim 6.6 s and 8 s (measured 2026-11-27, 2 cores shared with other
 * work). A poll that found nothing to do now yields the core, which is what
 * Open MPI's mpi_yield_when_idle does for its runs. What MPI computes or
 * sends is unchanged: the real ucp_worker_progress runs on every call. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*progress_fn)(void*);

unsigned ucp_worker_progress(void* worker) {
  static progress_fn real;
  progress_fn fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
  if (!fn) {
    fn = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    __atomic_store_n(&real, fn, __ATOMIC_RELEASE);
  }
  const unsigned events = fn(worker);
  if (events == 0) sched_yield();
  return events;
}
