#!/usr/bin/env bash
# examples/user_kernel (a user's two-field smoother on the Domain API) under
# every scheme gives the serial reference's checksums (relative 1e-10):
# every scheme at 2 ranks x 2 threads and 3 ranks x 3 threads, every rank
# count 1-4 with masteronly, Dirichlet and periodic; then its bad input
# exits 2 with one line.
#   usage: user_kernel_test.sh USER_KERNEL REFERENCE HYMPI MPIEXEC "PREFLAGS"
set -uo pipefail
app=$1 ref=$2 hympi=$3 mpiexec=$4
IFS=';' read -r -a preflags <<< "${5:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

# Schemes this build offers, with their thread needs: name min_threads.
schemes=$("$hympi" info --json 2>/dev/null | python3 -c '
import json, sys
for s in json.load(sys.stdin)["schemes"]:
    print(s["name"], s["min_threads"], int(s["available"]))') || {
  echo "FAIL: hympi info --json"; exit 1; }

# compare OUT REF LABEL: the three checksum lines agree to 1e-10 relative.
compare() {
  if python3 - "$1" "$2" <<'PY'
import sys
def numbers(path):
    vals = []
    for line in open(path):
        if line.startswith(("u sum", "v sum", "change")):
            vals += [float(x) for x in line.split()[1:] if x[0] in "-0123456789"]
    return vals
a, b = numbers(sys.argv[1]), numbers(sys.argv[2])
ok = len(a) == len(b) == 5 and all(abs(x - y) <= 1e-10 * max(abs(x), abs(y), 1e-300) for x, y in zip(a, b))
sys.exit(0 if ok else 1)
PY
  then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $3"; cat "$1"; fi
}

run() {  # run NP THREADS SCHEME PERIODIC
  local np=$1 nt=$2 scheme=$3 periodic=$4 label="$3 np=$1 nt=$2 periodic=$4"
  local extra=() grid=12x10x9
  [ "$periodic" = 1 ] && extra=(--periodic) && grid=12x10x8
  "$ref" ${grid//x/ } 4 "$periodic" > "$tmp/ref"
  if ! OMP_NUM_THREADS=$nt timeout 120 "$mpiexec" -n "$np" "${preflags[@]}" "$app" \
      --grid "$grid" --steps 4 --scheme "$scheme" --threads "$nt" "${extra[@]}" < /dev/null > "$tmp/out" 2> "$tmp/err"; then
    failed=$((failed + 1)); echo "FAIL: $label exited non-zero"; cat "$tmp/err"; return
  fi
  compare "$tmp/out" "$tmp/ref" "$label"
}

while read -r name min_threads available; do
  [ "$available" = 1 ] || continue
  for layout in "2 2" "3 3"; do
    set -- $layout
    [ "$2" -ge "$min_threads" ] || continue
    run "$1" "$2" "$name" 0
  done
  [ 2 -ge "$min_threads" ] && run 2 2 "$name" 1
done <<< "$schemes"
for np in 1 3 4; do run "$np" 1 masteronly 0; done

# Bad input: exit 2, one line naming the problem, on every rank.
bad() {  # bad LABEL EXPECTED_TEXT ARGS...
  local label=$1 expect=$2; shift 2
  OMP_NUM_THREADS=1 timeout 60 "$mpiexec" -n 2 "${preflags[@]}" "$app" "$@" < /dev/null > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ $rc -ne 0 ] && grep -q -- "$expect" "$tmp/err"; then passed=$((passed + 1))
  else failed=$((failed + 1)); echo "FAIL: $label (exit $rc)"; cat "$tmp/err"; fi
}
bad "unknown scheme" "unknown scheme 'nosuch'" --scheme nosuch
bad "bad grid" "bad value '0' for --grid" --grid 0
bad "funneled with 1 thread" "needs at least 2 threads" --scheme funneled --threads 1

# The report for hympi-lab study --app: HYMPI_REPORT_JSON is honoured (local
# launches pass the environment on).
if OMP_NUM_THREADS=2 HYMPI_REPORT_JSON="$tmp/report.json" timeout 60 "$mpiexec" -n 2 "${preflags[@]}" \
    "$app" --grid 16 --steps 3 --scheme masteronly --threads 2 < /dev/null > /dev/null 2>&1; then
  if python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); r = d["results"][0]
assert r["kernel"] == "user:smoother" and r["iters"] == 3 and r["threads"] == 2, r
assert len(r["breakdown_s"]["comm"]) == 2 and r["time_s"]["median"] > 0
' "$tmp/report.json"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: report"; fi
else
  failed=$((failed + 1)); echo "FAIL: run with HYMPI_REPORT_JSON"
fi

# The trace of the timed loop: HYMPI_TRACE_JSON gives every thread of every
# rank a timeline (Chrome Trace Event JSON, as hympi solve --trace writes).
if OMP_NUM_THREADS=2 HYMPI_REPORT_JSON="$tmp/r2.json" HYMPI_TRACE_JSON="$tmp/trace.json" timeout 60 \
    "$mpiexec" -n 2 "${preflags[@]}" "$app" --grid 16 --steps 3 --scheme funneled --threads 2 \
    < /dev/null > /dev/null 2>&1 && python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); o = d["otherData"]
assert o["kernel"] == "user:smoother" and o["scheme"] == "funneled" and o["iters"] == 3, o
assert o["ranks"] == 2 and o["threads"] == 2 and len(o["loop_elapsed_s"]) == 2, o
x = [e for e in d["traceEvents"] if e["ph"] == "X"]
assert {(e["pid"], e["tid"]) for e in x} == {(0, 0), (0, 1), (1, 0), (1, 1)}
assert any(e["name"] == "comm" for e in x) and any(e["name"] == "compute_interior" for e in x)
' "$tmp/trace.json"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: trace"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
