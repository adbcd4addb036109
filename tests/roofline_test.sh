#!/usr/bin/env bash
# hympi_roofline runs at 2 ranks on a small grid and prints its table and
# traffic model, the blocked cases' rows with the tile height they ran with.
#   usage: roofline_test.sh HYMPI_ROOFLINE MPIEXEC "PREFLAGS"   (PREFLAGS ;-separated)
set -u
roofline=$1
mpiexec=$2
IFS=';' read -r -a preflags <<< "${3:-}"
fail() { echo "FAIL: $*"; exit 1; }
out=$("$mpiexec" -n 2 "${preflags[@]}" "$roofline" --grid 32 --iters 2 --rounds 1 2>&1) ||
  fail "exit status $?: $out"
echo "$out"
for row in stream-copy jacobi-depth-8 spmv-depth-8 jacobi-in-cache rbgs-in-cache; do
  grep -qE "^  $row +[0-9.-]" <<< "$out" || fail "no table row for $row"
done
for blocked in jacobi-depth-8 spmv-depth-8; do
  grep -qE "^# $blocked: tiles of [1-9][0-9]* rows, [0-9.]+ B of memory traffic per update$" <<< "$out" ||
    fail "no tile height and traffic line for $blocked"
  # its model row: in-cache, memory-only, model, overlapped, measured/model
  grep -qE "^  $blocked( +[0-9]+\.[0-9]+){5}$" <<< "$out" || fail "no traffic model row for $blocked"
done
echo "roofline_test: ok"
