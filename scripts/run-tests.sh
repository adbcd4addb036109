#!/usr/bin/env bash
# The test suites as `make test` runs them: in lanes that run at the same
# time, because most of the suites' time is waiting (MPI launches, Slurm's
# time limit, a lost node's timeout), not CPU.
#
#   cluster lane  the tests that bring up the emulated cluster or the Slurm
#                 test cluster, one after another (one such cluster per
#                 machine, fixed names hympi-*): pytest -m cluster, then the
#                 `emulated_cluster` ctest of each build.
#   python lane   every other Python test on PYTEST_WORKERS pytest-xdist
#                 workers (default 2), a module per worker at a time
#                 (--dist loadfile: a module's shared fixture is made once),
#                 the longest modules first (conftest.py, LONGEST_MODULES).
#   ctest lane    ctest in build/ (Open MPI), then in build-mpich/ (MPICH),
#                 CTEST_JOBS tests at a time (default 2; MPICH's waiting
#                 ranks sleep, tests/mpich_idle_wait.c), emulated_cluster
#                 left to the cluster lane.
#
# usage: scripts/run-tests.sh all|python [pytest arguments...]
#   all      the three lanes (make test)
#   python   the cluster and python lanes' pytest runs only (make test-python)
# The python lane prints as it goes; the other lanes' output follows when all
# are done, then one summary line per lane. Exit status: non-zero when any
# lane failed.
set -uo pipefail

what=${1:-all}
shift || true
case "$what" in
    all|python) ;;
    *) echo "run-tests.sh: error: the first argument is 'all' or 'python', not '$what'" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python="$root/.venv/bin/python"
workers=${PYTEST_WORKERS:-2}
ctest_jobs=${CTEST_JOBS:-2}
logs=$(mktemp -d "${TMPDIR:-/tmp}/hympi-tests.XXXXXX")
lane_pids=()

cleanup() {
    for pid in "${lane_pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$logs"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# pytest exits 5 when it selected no test (a -k that matches none of a lane).
pytest_ok() { "$python" -m pytest "$@"; local rc=$?; [ "$rc" -eq 0 ] || [ "$rc" -eq 5 ]; }

# Each ctest suite runs through scripts/ctest_once_more.py: a test that
# failed only with Open MPI 4.1's failure after the work (a rank killed in
# MPI_Finalize, or reported as exiting improperly:
# python/hympi_lab/runpoint.py) runs once more, as the study's runs do, and
# the lane's output says so.
once_more=("$python" "$root/scripts/ctest_once_more.py")

cluster_lane() {
    local status=0
    pytest_ok -q -m cluster python/tests "$@" || status=1
    if [ "$what" = all ]; then
        (cd build && PATH=$ctest_path "${once_more[@]}" --output-on-failure -R '^emulated') || status=1
        (cd build-mpich && PATH=$ctest_path "${once_more[@]}" --output-on-failure -R '^emulated') || status=1
    fi
    return "$status"
}

ctest_lane() {
    local status=0
    export PATH=$ctest_path
    echo "---- ctest, Open MPI (build/) ----"
    (cd build && with_topology openmpi $batch "${once_more[@]}" --output-on-failure -j "$ctest_jobs" \
        -E '^emulated') || status=1
    echo "---- ctest, MPICH (build-mpich/) ----"
    (cd build-mpich && with_topology mpich "${once_more[@]}" --output-on-failure -j "$ctest_jobs" \
        -E '^emulated') || status=1
    return "$status"
}

# The test scripts' python3 (JSON, comparisons: some hundreds of calls) is
# the environment's (.venv/bin first on PATH): a python3 that is a pyenv shim
# costs 0.16 CPU-s more per call in the shell scripts it runs, and the heat
# test took 14.6 s and 14 CPU-s against 19.6 s and 19 (2026-11-28).
ctest_path="$root/.venv/bin:$PATH"

# Open MPI's suite runs under SCHED_BATCH, whose woken threads do not preempt
# the one that woke them. Open MPI 4.1's MPI_Wait in a THREAD_MULTIPLE run
# (ompi_request_default_wait) wakes a waiting thread, which then spins until
# its waker clears a flag; preempted on a shared core, the waker cannot, and
# the spin lasts the rest of a time slice: a third of test_schemes' CPU time
# (perf). The suite took 105 s and 180 CPU-s against 126 s and 217 CPU-s,
# alone on the 2 cores (2026-11-28). MPICH's suite does not: its ranks'
# idle-wait sleeps (tests/mpich_idle_wait.c) would each wait out a time slice
# to run again, and its heat test took 87 s against 19 s.
batch=""
command -v chrt >/dev/null && chrt --batch 0 true 2>/dev/null && batch="chrt --batch 0"

# Every launch reads the machine's topology with hwloc, in mpirun and in each
# rank. The ctest lane, which runs on this machine alone, reads it from the
# file lstopo writes below, of this machine, now: Open MPI (and mpirun's PMIx
# server) through the two variables that the study sets for its own Open MPI
# runs on one machine (launch.with_topology_file, which gives the figures),
# MPICH through hwloc's HWLOC_XMLFILE: its ctest suite took 149 CPU-s against
# 172 (2026-11-28, this 2-core VM). So the python lane needs nothing; the
# cluster lane's nodes probe for themselves, as users' runs there do.
topology="$logs/topology.xml"
lstopo-no-graphics --of xml "$topology" 2>/dev/null || topology=""
# with_topology openmpi|mpich COMMAND...: COMMAND with the topology file, if any.
with_topology() {
    local mpi=$1; shift
    if [ -z "$topology" ]; then "$@"
    elif [ "$mpi" = openmpi ]; then
        OMPI_MCA_hwloc_base_topo_file=${OMPI_MCA_hwloc_base_topo_file:-$topology} \
            PMIX_MCA_pmix_hwloc_topo_file=${PMIX_MCA_pmix_hwloc_topo_file:-$topology} "$@"
    else HWLOC_XMLFILE=${HWLOC_XMLFILE:-$topology} HWLOC_THISSYSTEM=1 "$@"
    fi
}

# Open MPI 4.1 picks ob1 on a machine without a UCX network device, but only
# after the ucx PML has probed for one: 0.2-0.3 s of each of the suites'
# hundreds of launches (tests/CMakeLists.txt sets the same for ctest).
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}

cd "$root"
start=$(date +%s)
# Each lane in its own process group (set -m), so that an interrupt stops all
# of a lane's children.
set -m
(cluster_lane "$@"; echo $? >"$logs/cluster.rc"; echo $(( $(date +%s) - start )) >"$logs/cluster.s") \
    >"$logs/cluster.log" 2>&1 &
lane_pids+=($!)
if [ "$what" = all ]; then
    (ctest_lane; echo $? >"$logs/ctest.rc"; echo $(( $(date +%s) - start )) >"$logs/ctest.s") \
        >"$logs/ctest.log" 2>&1 &
    lane_pids+=($!)
fi
set +m

pytest_ok -q -n "$workers" --dist loadfile --no-loadscope-reorder -m "not cluster" python/tests "$@"
echo $? >"$logs/python.rc"
echo $(( $(date +%s) - start )) >"$logs/python.s"
wait "${lane_pids[@]}" 2>/dev/null
lane_pids=()

status=0
lanes=(python cluster)
[ "$what" = all ] && lanes+=(ctest)
for lane in cluster ctest; do
    [ -f "$logs/$lane.log" ] || continue
    echo "---- the $lane lane ----"
    cat "$logs/$lane.log"
done
for lane in "${lanes[@]}"; do
    rc=$(cat "$logs/$lane.rc" 2>/dev/null || echo 1)
    [ "$rc" -eq 0 ] && verdict=passed || { verdict=FAILED; status=1; }
    echo "run-tests.sh: $lane lane $verdict in $(cat "$logs/$lane.s" 2>/dev/null || echo '?') s"
done
exit "$status"
