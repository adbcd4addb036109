#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer run (make asan builds the
# tests and hympi in build-asan/ with GCC): the exchange, scheme and Domain
# tests at 1-3 ranks, the option fuzz, and hympi itself on good and bad
# input. MPI is not instrumented; leak checking covers hympi's allocations
# (the MPI libraries' own one-time allocations are suppressed, scripts/asan.supp).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$root/build-asan/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
# Full stacks on malloc (slower): leaks inside MPI are then named by their
# library and suppressed; a leak of ours would show.
export ASAN_OPTIONS="detect_leaks=1 fast_unwind_on_malloc=0 abort_on_error=0 exitcode=67 detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=$root/scripts/asan.supp print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1 exitcode=68"
# Open MPI unloads its plugins at MPI_Finalize: their leaks would be
# "<unknown module>", which no suppression can name. Kept loaded, they are.
export OMPI_MCA_mca_base_component_disable_dlclose=1
mpirun=(mpirun.openmpi --oversubscribe --bind-to none -x ASAN_OPTIONS -x LSAN_OPTIONS -x UBSAN_OPTIONS
        -x OMPI_MCA_mca_base_component_disable_dlclose)
status=0
run() {
  echo "asan: $*"
  "$@" > /tmp/asan-run.log 2>&1 || { status=1; tail -40 /tmp/asan-run.log; }
}
run "$bin/test_options"
run "$bin/test_unit"
for np in 1 2 3; do
  run "${mpirun[@]}" -n $np -x OMP_NUM_THREADS=2 "$bin/test_exchange"
  run "${mpirun[@]}" -n $np -x OMP_NUM_THREADS=2 "$bin/test_schemes" --decompositions default
  run "${mpirun[@]}" -n $np -x OMP_NUM_THREADS=2 "$bin/test_domain"
done
for kernel in jacobi rbgs spmv cg; do
  run "${mpirun[@]}" -n 2 "$bin/hympi" solve --kernel "$kernel" --grid 12x10x9 --scheme multiple-own \
    --threads 3 --json /tmp/asan-solve.json --trace /tmp/asan-trace.json
done
run "${mpirun[@]}" -n 2 "$bin/hympi" bench pack --threads 2 --faces 8,16 --repeat 1
run "${mpirun[@]}" -n 2 "$bin/hympi" bench overlap --threads 2 --plane 8 --nk-loc 1,2 --iters 2 --repeat 1
run "${mpirun[@]}" -n 2 "$bin/hympi" bench beff --lmax 4KiB --repeat 1
# Bad input must exit 2, cleanly, under the sanitizers too.
for bad in "solve --kernel jacobi --grid 1073741824^3" "solve --kernel cg --grid 8^3 --iters 99999999999" \
           "bench overlap --threads 2 --plane 1048576" "solve --kernel jacobi --grid 8^3 --bogus 3"; do
  echo "asan: bad input: hympi $bad"
  set +e
  # shellcheck disable=SC2086
  "${mpirun[@]}" -n 2 "$bin/hympi" $bad > /tmp/asan-run.log 2>&1
  code=$?
  set -e
  [ "$code" = 2 ] || { status=1; echo "exit code $code, expected 2"; tail -20 /tmp/asan-run.log; }
done
[ $status = 0 ] && echo "asan: no memory errors, leaks or undefined behaviour reported in hympi code" ||
  echo "asan: FAILED (see reports above)"
exit $status
