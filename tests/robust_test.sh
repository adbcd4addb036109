#!/usr/bin/env bash
# Issue 9's classes of bad input and faults, at 2 and 4 ranks: every bad input
# exits 2 with one message on rank 0 (never a crash, a hang or a silent pass);
# a run that failed says so in its exit code; result files are complete or
# absent, an earlier one survives a failed write, '-' is stdout and a link is
# followed; an oversubscribed run is flagged; a rank killed mid-run ends the
# job promptly.
#   usage: robust_test.sh HYMPI MPIEXEC "PREFLAGS"   (PREFLAGS ;-separated, as CMake passes lists)
set -u
hympi=$1
mpiexec=$2
IFS=';' read -r -a preflags <<< "${3:-}"
tmp=$(mktemp -d)
mnt=""
cleanup() {
  [ -n "$mnt" ] && umount "$mnt" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"

# Output that must not be in $out.
lacks() {  # lacks NAME TEXT
  grep -qF -- "$2" <<< "$out" && fail "$1: output has '$2'"
}

J=(solve --kernel jacobi --grid 8^3 --iters 2)
# Each class at 2 and 4 ranks (the full message catalogue and the fuzz are
# unit tests, tests/test_options.cpp: no MPI needed to check a message).
for np in 2 4; do
  # 1. Memory checks cover every size, defaults included, before allocating.
  check "$np-overlap-default-nk" 2 "overlap at --nk-loc 16: the grid needs about" "$np" \
    bench overlap --threads 2 --plane 1048576
  # 2. Options that do not apply, and a solver that did not converge.
  check "$np-tol-jacobi" 2 "--tol does not apply to jacobi" "$np" "${J[@]}" --tol 1e-3
  check "$np-cg-not-converged" 3 "cg did not converge" "$np" \
    solve --kernel cg --grid 8^3 --max-iters 3 --json "$tmp/cg$np.json"
  grep -q "converged  NO" <<< "$out" || fail "$np-cg-not-converged: the table does not say so"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; assert r["converged"] is False and r["iterations"] == 3' \
    "$tmp/cg$np.json" || fail "$np-cg-not-converged: JSON lacks \"converged\": false"
  # 3. Messages that say what is wrong: 64-bit parsing, ranges with units.
  check "$np-iters-huge" 2 "--iters 99999999999 is out of range: accepted 0 .. 1073741824 iterations" "$np" \
    solve --kernel jacobi --grid 8^3 --iters 99999999999
  # 6. --version.
  check "$np-version" 0 "hympi 0." "$np" --version
  [ "$np" = 2 ] || continue
  # More of each class at 2 ranks (Open MPI spends ~1.5 s ending a failed job).
  check "$np-grid-overflow" 2 "needs about 1.98e+22 MB per node" "$np" \
    solve --kernel jacobi --grid 1073741824^3
  check "$np-ratio-int-count" 2 "--sizes up to 1073741824 bytes" "$np" \
    bench ratio --sizes 1GiB --ranks-per-node $((np / 2))
  check "$np-threads-beff" 2 "--threads does not apply to benchmark 'beff'" "$np" bench beff --threads 2
  check "$np-lmax-too-large" 2 "--lmax 3GB is out of range: accepted 1 byte .. 1GiB" "$np" bench beff --lmax 3GB
  check "$np-bogus-flag" 2 "unknown option '--bogus-flag'" "$np" "${J[@]}" --bogus-flag 3
  lacks "$np-bogus-flag" "unknown option '3'"
  check "$np-proc-grid" 2 "--proc-grid '1x2': expected three process counts PXxPYxPZ or P^3" "$np" \
    "${J[@]}" --proc-grid 1x2
done
check cg-converged 0 "converged  yes" 2 solve --kernel cg --grid 8^3 --json "$tmp/cgok.json"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["results"][0]["converged"] is True' \
  "$tmp/cgok.json" || fail "cg-converged: JSON lacks \"converged\": true"

# 6. Singular nouns.
check singular 0 "(1 repetition)" 2 "${J[@]}" --threads 1
grep -qF "2 ranks x 1 thread;" <<< "$out" || fail "singular: no '2 ranks x 1 thread;'"

# A wavefront setting from the environment that is not usable is ignored
# with a warning (not refused: each rank reads it, and a refusal on some
# ranks only would leave the others waiting), printed once, not once per
# rank; the run completes. env_warning NAME VALUE WARNING
env_warning() {
  local name=$1 value=$2 warning=$3
  export "$name=$value"
  check "env-$name" 0 "$warning" 2 solve --kernel jacobi --grid 8^3 --iters 4 --halo-depth 2
  grep -qF "checksum" <<< "$out" || fail "env-$name: the run did not complete"
  [ "$(grep -c "$name=" <<< "$out")" = 1 ] ||
    fail "env-$name: the warning is not printed once: $(grep -F HYMPI_WAVEFRONT <<< "$out")"
  unset "$name"
}
env_warning HYMPI_WAVEFRONT_TILE_ROWS 12abc \
  "HYMPI_WAVEFRONT_TILE_ROWS='12abc' is not a number of rows (accepted 1 .. 1000000) on 2 rank(s)"
# Planes per wavefront step: 1 .. 4, the domain's own when unusable.
env_warning HYMPI_WAVEFRONT_PLANES 5 \
  "HYMPI_WAVEFRONT_PLANES='5' is not a number of planes (accepted 1 .. 4) on 2 rank(s); ignored there, the domain's own planes per step"
# The tile height the timed blocks ran with is reported: forced (5 rows, max
# over ranks), measured (a positive height in the JSON), none at depth 1.
export HYMPI_WAVEFRONT_TILE_ROWS=5
check tile-rows-forced 0 "tiles      5 rows per wavefront tile (max over ranks)" 2 \
  solve --kernel rbgs --grid 16^3 --iters 4 --halo-depth 3 --json "$tmp/tiles5.json"
unset HYMPI_WAVEFRONT_TILE_ROWS
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["results"][0]["tuning"]; assert t["tile_rows"] == 5, t' \
  "$tmp/tiles5.json" || fail "tile-rows-forced: JSON tuning.tile_rows is not 5"
check tile-rows-measured 0 "tiles      " 2 solve --kernel jacobi --grid 24x40x16 --iters 6 --halo-depth 3 \
  --json "$tmp/tiles.json"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["results"][0]["tuning"]; assert t["tile_rows"] > 0, t' \
  "$tmp/tiles.json" || fail "tile-rows-measured: JSON tuning.tile_rows is not positive"
check tile-rows-none 0 "checksum" 2 solve --kernel jacobi --grid 8^3 --iters 2 --json "$tmp/tiles0.json"
! grep -qF "rows per wavefront tile" <<< "$out" || fail "tile-rows-none: a tile height at depth 1"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["results"][0]["tuning"]; assert t["tile_rows"] == 0, t' \
  "$tmp/tiles0.json" || fail "tile-rows-none: JSON tuning.tile_rows is not 0"
# No iteration: nothing measured, so no fractions (it said f_comp_non 1).
check no-iterations 0 "fractions  none: no iteration ran" 2 \
  solve --kernel spmv --grid 8^3 --iters 0 --json "$tmp/iters0.json"
python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["results"][0]["fractions"]; assert set(f.values()) == {0.0}, f' \
  "$tmp/iters0.json" || fail "no-iterations: JSON fractions are not all 0"
# OMP_NUM_THREADS that is not a count of ours: a warning (5000 was silently 1;
# libgomp accepts it, and warns only on what it cannot parse); OpenMP's list
# syntax takes its first count; --threads overrides it without a word.
export OMP_NUM_THREADS=5000
check omp-threads-env 0 "OMP_NUM_THREADS='5000' is not a thread count (accepted 1 .. 1024); using 1 thread" 2 "${J[@]}"
check omp-threads-env-given 0 "2 ranks x 1 thread" 2 "${J[@]}" --threads 1
lacks omp-threads-env-given "hympi: warning: OMP_NUM_THREADS"
export OMP_NUM_THREADS="2,1"
check omp-threads-list 0 "2 ranks x 2 threads" 2 "${J[@]}"
unset OMP_NUM_THREADS

# 5 (native side). An oversubscribed run says so on stderr and in its context.
cpus=$(nproc)
check oversubscription 0 "checksum" 2 solve --kernel jacobi --grid 8^3 --scheme funneled --threads 3 \
  --json "$tmp/over.json"
over=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["context"]["oversubscribed"])' "$tmp/over.json")
if [ $((2 * 3)) -gt "$cpus" ]; then
  grep -qF "hympi: warning: oversubscribed: 6 threads share" <<< "$out" || fail "oversubscription: no warning"
  [ "$over" = True ] || fail "oversubscription: context says $over"
else
  lacks oversubscription "oversubscribed"
  [ "$over" = False ] || fail "oversubscription: context says $over on $cpus CPUs"
fi

# Threads pinned one CPU each (OMP_PLACES): the rank's CPUs are the union of
# its threads' masks, not the master's one CPU (a false alarm seen on 16 cores).
if [ "$cpus" -ge 2 ]; then
  OMP_PROC_BIND=close OMP_PLACES=cores check pinned-not-oversubscribed 0 "checksum" 1 \
    solve --kernel jacobi --grid 8^3 --scheme funneled --threads 2
  lacks pinned-not-oversubscribed "oversubscribed"
fi

# 4. Result files: '-' is stdout (only the document there), a link is
# followed, and a failed write keeps the earlier file and leaves no partial one.
json_only() {  # json_only NAME ARGS...: stdout is one JSON document
  local name=$1
  shift
  if ! timeout 60 "$mpiexec" -n 2 "${preflags[@]}" "$hympi" "$@" 2> "$tmp/stderr" > "$tmp/stdout"; then
    fail "$name: exit code $? ($(head -c 300 "$tmp/stderr"))"
  elif ! python3 -c 'import json,sys; assert "context" in json.load(open(sys.argv[1]))' "$tmp/stdout"; then
    fail "$name: stdout is not one JSON document: $(head -c 300 "$tmp/stdout")"
  else
    passed=$((passed + 1))
  fi
}
json_only stdout-solve "${J[@]}" --json -
json_only stdout-bench bench beff --lmax 4KiB --repeat 1 --json -
json_only stdout-info info --json -
mkdir -p "$tmp/real"
ln -s "$tmp/real/target.json" "$tmp/link.json"
check symlink 0 "checksum" 2 "${J[@]}" --json "$tmp/link.json"
[ -L "$tmp/link.json" ] || fail "symlink: the link was replaced"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/real/target.json" 2> /dev/null ||
  fail "symlink: the link's target holds no JSON document"

# A device is written in place, never replaced by a renamed file: /dev/full
# gives the full-disk error and stays a character device.
check dev-full 4 "cannot write /dev/full: No space left on device" 2 "${J[@]}" --json /dev/full
[ -c /dev/full ] || fail "dev-full: /dev/full is no longer a character device"
# A directory given as a file, a file given as a directory: refused before the run.
check json-is-dir 2 "--json '$tmp': is a directory" 2 "${J[@]}" --json "$tmp"
check json-under-file 2 "--json '$tmp/cgok.json/x.json': cannot be opened for writing ($tmp/cgok.json is not a directory)" 2 \
  "${J[@]}" --json "$tmp/cgok.json/x.json"
check trace-under-file 2 "--trace '$tmp/cgok.json/t.json': cannot be opened for writing" 2 \
  "${J[@]}" --trace "$tmp/cgok.json/t.json"

# The table on standard output on a full disk, hympi started alone (under
# mpirun, mpirun itself writes the ranks' output and drops a failed write):
# exit 4 with the reason, for each command; a --json file is still written.
for cmd in "${J[*]} --json $tmp/table-full.json" "info" "bench pack --faces 8 --repeat 1"; do
  # shellcheck disable=SC2086
  err=$(timeout 60 "$hympi" $cmd 2>&1 > /dev/full)
  rc=$?
  if [ "$rc" = 4 ] && grep -qF "hympi: error: cannot write to standard output: " <<< "$err"; then
    passed=$((passed + 1))
  else
    fail "stdout-full ($cmd): exit $rc: $(head -c 300 <<< "$err")"
  fi
done
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/table-full.json" 2> /dev/null ||
  fail "stdout-full: the --json file was not written"

# A full disk: a small tmpfs, filled (needs root; skipped with the reason).
if [ "$(id -u)" = 0 ] && mkdir -p "$tmp/full" && mount -t tmpfs -o size=64k tmpfs "$tmp/full" 2> /dev/null; then
  mnt="$tmp/full"
  for what in solve bench info trace; do
    echo '{"earlier": true}' > "$mnt/$what.json"
  done
  dd if=/dev/zero of="$mnt/filler" bs=4k count=64 2> /dev/null
  # Full to the last block: the check before the run predicts the write
  # (exit 2, nothing ran), for each command and at 4 ranks too.
  check full-solve-before 2 "--json '$mnt/solve.json': cannot be written ($mnt: No space left on device)" 2 \
    "${J[@]}" --json "$mnt/solve.json"
  lacks full-solve-before "checksum"
  check full-solve-before-4-ranks 2 "--json '$mnt/solve.json': cannot be written" 4 "${J[@]}" \
    --json "$mnt/solve.json"
  check full-bench-before 2 "--json '$mnt/bench.json': cannot be written" 2 \
    bench beff --lmax 4KiB --repeat 1 --json "$mnt/bench.json"
  check full-trace-before 2 "--trace '$mnt/trace.json': cannot be written" 2 "${J[@]}" \
    --json "$tmp/ok.json" --trace "$mnt/trace.json"
  # One 4 KiB page left: the check passes; the solve document (under 4 KiB)
  # is written, the larger ones do not fit: exit 4 after the run.
  truncate -s -4096 "$mnt/filler"
  check full-bench 4 "cannot write $mnt/bench.json: No space left on device" 2 \
    bench beff --lmax 4KiB --repeat 1 --json "$mnt/bench.json"
  check full-info 4 "cannot write $mnt/info.json: No space left on device" 2 info --json "$mnt/info.json"
  check full-trace 4 "cannot write $mnt/trace.json: No space left on device" 2 "${J[@]}" \
    --json "$tmp/ok.json" --trace "$mnt/trace.json"
  check full-solve-fits 0 "checksum" 2 "${J[@]}" --json "$mnt/solve.json"
  grep -q '"checksum"' "$mnt/solve.json" || fail "full-solve-fits: solve.json is not the new document"
  for what in bench info trace; do
    grep -q earlier "$mnt/$what.json" || fail "full-$what: the earlier file was not kept"
  done
  left=$(find "$mnt" -name '*.tmp*' -o -empty -type f | head -3)
  [ -z "$left" ] || fail "full disk: left behind: $left"
  lacks full-trace "MPI_ABORT"
  umount "$mnt" && mnt=""
else
  echo "SKIP full-disk: needs root and a tmpfs mount (uid $(id -u))"
fi
left=$(find "$tmp" -name '*.tmp*' | head -3)
[ -z "$left" ] || fail "left behind: $left"

# A sample of the fuzz through mpirun (the full fuzz, 20000 command lines, is
# in-process: tests/test_options.cpp): random options and values, exit 0, 2
# or 3 only, within the time limit, and each problem on one line.
RANDOM=20261124
pushd "$tmp" > /dev/null  # a random --json PATH lands here
names=(--kernel --grid --iters --threads --scheme --format --tol --max-iters --repeat --json --proc-grid
       --ranks-per-node --rank-order --periodic --bogus "" --lmax)
values=(jacobi cg spmv 8^3 6x5x4 0 -1 2 99999999999 1e-3 2GB crs funneled "" "８" - x 1x2 round-robin)
for i in $(seq 1 6); do
  args=(solve)
  [ $((RANDOM % 3)) = 0 ] && args=(bench beff)
  for _ in 1 2 3 4; do
    args+=("${names[RANDOM % ${#names[@]}]}" "${values[RANDOM % ${#values[@]}]}")
  done
  run 2 "${args[@]}"
  case $rc in
    0 | 2 | 3) passed=$((passed + 1)) ;;
    *) fail "fuzz-$i: exit code $rc for: hympi ${args[*]}" ;;
  esac
  if [ "$rc" = 2 ] && grep -q "hympi: errors:" <<< "$out"; then
    # Several problems: one "  - " line each, nothing else between them.
    bad=$(sed -n '/hympi: errors:/,/^[^ ]/p' <<< "$out" | grep -vc "^  - \|hympi: errors:\|^---\|^$")
    [ "$bad" -le 1 ] || fail "fuzz-$i: a problem over several lines: hympi ${args[*]}"
  fi
done
popd > /dev/null

# Faults: a rank SIGKILLed mid-run ends the job within seconds, for solve and
# every benchmark (runs far longer than the test if nothing stopped them).
kill_mid_run() {  # kill_mid_run NAME ARGS...
  local name=$1 tag="$tmp/kill-$1.json" pid victim start
  shift
  setsid "$mpiexec" -n 2 "${preflags[@]}" "$hympi" "$@" --json "$tag" > "$tmp/kill.log" 2>&1 &
  pid=$!
  victim=""
  for _ in $(seq 1 100); do  # up to 10 s for the ranks to start
    victim=$(pgrep -f -- "$tag" | while read -r p; do
      [ "$(cat /proc/"$p"/comm 2> /dev/null)" = hympi ] && echo "$p"; done | tail -1)
    [ -n "$victim" ] && break
    sleep 0.1
  done
  if [ -z "$victim" ]; then
    fail "kill-$name: no rank found to kill"
    kill -9 -- -"$pid" 2> /dev/null
    return
  fi
  # Mid-run: the rank has spent 0.3 s of CPU time (its MPI_Init takes a few
  # hundredths), however loaded the machine; a fixed 1.5 s of wall time gave
  # a rank under load less, and cost 2 ranks x 1.5 s of CPU per case alone.
  local ticks cpu
  ticks=$(getconf CLK_TCK)
  for _ in $(seq 1 300); do  # up to 15 s
    cpu=$(awk '{print $14 + $15}' /proc/"$victim"/stat 2> /dev/null) || break
    [ -n "$cpu" ] && [ "$cpu" -ge $((ticks * 3 / 10)) ] && break
    sleep 0.05
  done
  kill -9 "$victim"
  start=$SECONDS
  for _ in $(seq 1 300); do
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2> /dev/null; then
    fail "kill-$name: the job still runs 30 s after a rank was killed"
    kill -9 -- -"$pid" 2> /dev/null
  fi
  wait "$pid"
  local code=$?
  if [ "$code" = 0 ] || [ "$code" = 2 ]; then
    fail "kill-$name: exit code $code after a rank was killed: $(grep -m1 'hympi: error' "$tmp/kill.log")"
  else
    passed=$((passed + 1))
    echo "kill-$name: ended $((SECONDS - start)) s after the kill, exit code $code"
  fi
}
kill_mid_run solve solve --kernel jacobi --grid 64^3 --iters 1000000
kill_mid_run beff bench beff --lmax 64kB --repeat 100000
kill_mid_run cyclic3d bench cyclic3d --lmax 64kB --repeat 100000
kill_mid_run internode bench internode --ranks-per-node 1 --sizes 1MB --repeat 100000
kill_mid_run ratio bench ratio --ranks-per-node 1 --sizes 1MB --repeat 100000
kill_mid_run pack bench pack --faces 512 --repeat 100000
kill_mid_run overlap bench overlap --threads 2 --plane 24 --nk-loc 4 --iters 100000

echo "robust_test: $("$mpiexec" --version 2>&1 | head -1)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
