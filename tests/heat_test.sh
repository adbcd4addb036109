#!/usr/bin/env bash
# examples/heat.c and heat.f90 (the C API and the Fortran module) under every
# scheme give the serial reference's checksum (relative 1e-10): every scheme
# at 2 ranks x 2 threads and 3 ranks x 3 threads, periodic at 2 x 2, every
# rank count 1-4 with masteronly; temporal blocking (--halo-depth 3, 4 steps:
# blocks of 3 and 1 through hympi_sweep_block) prints the checksum of the
# same run at depth 1 to the last digit, under schemes with and without
# overlap; then bad input exits 2 with one line.
#   usage: heat_test.sh HYMPI REFERENCE MPIEXEC "PREFLAGS" APP...
set -uo pipefail
hympi=$1 ref=$2 mpiexec=$3
IFS=';' read -r -a preflags <<< "${4:-}"
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

schemes=$("$hympi" info --json 2>/dev/null < /dev/null | python3 -c '
import json, sys
for s in json.load(sys.stdin)["schemes"]:
    print(s["name"], s["min_threads"], int(s["available"]))') || { echo "FAIL: hympi info --json"; exit 1; }

compare() {  # compare OUT REF LABEL
  if python3 - "$1" "$2" <<'PY'
import sys
def numbers(path):
    for line in open(path):
        if line.startswith("checksum"):
            words = line.split()
            return [float(words[2]), float(words[4])]
    return []
a, b = numbers(sys.argv[1]), numbers(sys.argv[2])
sys.exit(0 if len(a) == len(b) == 2 and all(abs(x - y) <= 1e-10 * max(abs(x), abs(y), 1e-300)
                                            for x, y in zip(a, b)) else 1)
PY
  then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $3"; cat "$1"; fi
}

run() {  # run APP NP THREADS SCHEME PERIODIC
  local app=$1 np=$2 nt=$3 scheme=$4 periodic=$5
  local label="$(basename "$app") $scheme np=$np nt=$nt periodic=$periodic" extra=() grid=12x10x9
  [ "$periodic" = 1 ] && extra=(--periodic) && grid=12x10x8
  "$ref" ${grid//x/ } 4 "$periodic" > "$tmp/ref"
  if ! OMP_NUM_THREADS=$nt timeout 120 "$mpiexec" -n "$np" "${preflags[@]}" "$app" --grid "$grid" \
      --steps 4 --scheme "$scheme" --threads "$nt" "${extra[@]}" < /dev/null > "$tmp/out" 2> "$tmp/err"; then
    failed=$((failed + 1)); echo "FAIL: $label exited non-zero"; cat "$tmp/err"; return
  fi
  compare "$tmp/out" "$tmp/ref" "$label"
  cp "$tmp/out" "$tmp/depth1-$(basename "$app")-$np-$nt-$scheme-$periodic"
}

depth() {  # depth APP NP THREADS SCHEME PERIODIC: --halo-depth 3 against run's depth 1
  local app=$1 np=$2 nt=$3 scheme=$4 periodic=$5
  local label="$(basename "$app") --halo-depth 3 $scheme np=$np nt=$nt periodic=$periodic" extra=() grid=12x10x9
  local one="$tmp/depth1-$(basename "$app")-$np-$nt-$scheme-$periodic"
  [ "$periodic" = 1 ] && extra=(--periodic) && grid=12x10x8
  [ -f "$one" ] || { failed=$((failed + 1)); echo "FAIL: $label: no depth-1 run of it"; return; }
  if ! OMP_NUM_THREADS=$nt timeout 120 "$mpiexec" -n "$np" "${preflags[@]}" "$app" --grid "$grid" \
      --steps 4 --halo-depth 3 --scheme "$scheme" --threads "$nt" "${extra[@]}" < /dev/null \
      > "$tmp/out3" 2> "$tmp/err"; then
    failed=$((failed + 1)); echo "FAIL: $label exited non-zero"; cat "$tmp/err"; return
  fi
  if grep -q "^checksum" "$one" && cmp -s "$one" "$tmp/out3"; then
    passed=$((passed + 1))
  else failed=$((failed + 1)); echo "FAIL: $label: not depth 1's checksum"; cat "$one" "$tmp/out3"; fi
}

bad() {  # bad APP LABEL EXPECTED_TEXT ARGS...
  local app=$1 label="$(basename "$1") $2" expect=$3; shift 3
  OMP_NUM_THREADS=1 timeout 60 "$mpiexec" -n 2 "${preflags[@]}" "$app" "$@" < /dev/null > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$expect" "$tmp/err" && ! grep -q "MPI_ABORT" "$tmp/err"; then
    passed=$((passed + 1))
  else failed=$((failed + 1)); echo "FAIL: $label (exit $rc)"; cat "$tmp/err"; fi
}

for app in "$@"; do
  while read -r name min_threads available; do
    [ "$available" = 1 ] || continue
    for layout in "2 2" "3 3"; do
      set -- $layout
      [ "$2" -ge "$min_threads" ] && run "$app" "$1" "$2" "$name" 0
    done
    [ 2 -ge "$min_threads" ] && run "$app" 2 2 "$name" 1
  done <<< "$schemes"
  for np in 1 4; do run "$app" "$np" 1 masteronly 0; done
  # Configurations run above at depth 1 (without and with overlap, periodic).
  depth "$app" 4 1 masteronly 0
  depth "$app" 3 3 funneled 0
  depth "$app" 2 2 multiple-own 1
  depth "$app" 2 2 shared-window 0
  bad "$app" "unknown scheme" "unknown scheme 'nosuch'" --scheme nosuch
  bad "$app" "bad grid" "bad value for --grid" --grid 0
  bad "$app" "funneled with 1 thread" "needs at least 2 threads" --scheme funneled --threads 1
  bad "$app" "unknown option" "unknown option --bogus" --bogus 1
  if OMP_NUM_THREADS=1 timeout 60 "$mpiexec" -n 2 "${preflags[@]}" "$app" --help < /dev/null \
      > "$tmp/help" 2>&1 && grep -q "^usage: .*--halo-depth H" "$tmp/help"; then passed=$((passed + 1))
  else failed=$((failed + 1)); echo "FAIL: $(basename "$app") --help"; fi
  # An unwritable report: the checksum still prints, exit code 4.
  OMP_NUM_THREADS=1 timeout 60 "$mpiexec" -n 2 "${preflags[@]}" "$app" --grid 8 --steps 2 \
      --report /nonexistent-dir/r.json < /dev/null > "$tmp/out" 2> "$tmp/err"
  rc=$?
  if [ $rc -eq 4 ] && grep -q "^checksum" "$tmp/out" && grep -q "cannot write /nonexistent-dir/r.json" "$tmp/err"
  then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $(basename "$app") unwritable report (exit $rc)"; cat "$tmp/err"; fi
  bad "$app" "halo depth 0" "bad value for --halo-depth (1..64): 0" --halo-depth 0
  bad "$app" "halo deeper than a rank's box" "\`depth\` 7 needs at least 7 points per rank along x" \
      --grid 12x10x9 --halo-depth 7
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
