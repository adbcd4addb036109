#!/usr/bin/env bash
# ThreadSanitizer run of the exchange and scheme tests (make tsan builds them
# in build-tsan/ with clang and LLVM's libomp). Archer, LLVM's OpenMP tool,
# makes OpenMP's synchronisation visible to TSan; MPI is not instrumented, so
# reports from inside it are suppressed (scripts/tsan.supp). What remains is ours.
# Open MPI only: the partitioned scheme (MPICH) is not in this run. TSan sees
# threads, not processes: shared-window's cross-process window accesses are
# outside its view (their ordering is the Win_sync + barrier protocol).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
archer=$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | tail -1)
[ -n "$archer" ] || { echo "tsan: libarcher.so not found (package libomp-dev)" >&2; exit 1; }
export OMP_TOOL_LIBRARIES=$archer
export TSAN_OPTIONS="suppressions=$root/scripts/tsan.supp ignore_noninstrumented_modules=1 halt_on_error=1 exitcode=66 report_signal_unsafe=0"
mpirun=(mpirun.openmpi --oversubscribe --bind-to none)
status=0
for np in 1 2; do
  "${mpirun[@]}" -n $np -x TSAN_OPTIONS -x OMP_TOOL_LIBRARIES -x OMP_NUM_THREADS=3 "$root/build-tsan/bin/test_exchange" || status=1
  "${mpirun[@]}" -n $np -x TSAN_OPTIONS -x OMP_TOOL_LIBRARIES -x OMP_NUM_THREADS=3 "$root/build-tsan/bin/test_schemes" \
    --decompositions default || status=1
done
# shared-window on 2 virtual nodes of 2 ranks: window faces and messages at once.
"${mpirun[@]}" -n 4 -x TSAN_OPTIONS -x OMP_TOOL_LIBRARIES -x OMP_NUM_THREADS=2 "$root/build-tsan/bin/test_schemes" \
  --decompositions default --scheme shared-window || status=1
[ $status = 0 ] && echo "tsan: no data races reported in hympi code" || echo "tsan: FAILED (see reports above)"
exit $status
