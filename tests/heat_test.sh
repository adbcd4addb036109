#!/usr/bin/env bash
# examples/heat.c (C API) and examples/heat.f90 (Fortran module) give the
# serial reference's checksum (tests/heat_reference.c, no MPI; 1e-10) under
# every scheme. The matrix is a representative subset of ranks 1-4 x threads
# 1-3 x schemes, to keep this test under a minute per MPI on 2 cores: every
# scheme at 2 ranks x 2 threads and 3 ranks x 3 threads (a scheme whose
# min_threads is above the count is skipped there), masteronly at 1 and 4
# ranks x 1 thread, and periodic at 2 x 2 (masteronly, adaptive) and 4 x 3
# (funneled) -- for each language. Then bad input: exit 2, one line.
#   usage: heat_test.sh REFERENCE HYMPI MPIEXEC "PREFLAGS" HEAT_C [HEAT_F]
set -uo pipefail
ref=$1 hympi=$2 mpiexec=$3
IFS=';' read -r -a preflags <<< "${4:-}"
apps=("$5")
[ -n "${6:-}" ] && apps+=("$6")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

# Schemes this build offers, with their thread needs: name min_threads available.
schemes=$("$hympi" info --json 2>/dev/null | python3 -c '
import json, sys
for s in json.load(sys.stdin)["schemes"]:
    print(s["name"], s["min_threads"], int(s["available"]))') || {
  echo "FAIL: hympi info --json"; exit 1; }

# compare OUT REF LABEL: the checksum lines' two numbers agree to 1e-10
# (relative, or absolute below 1: the sum may be near zero).
compare() {
  if python3 - "$1" "$2" <<'PY'
import sys
def numbers(path):
    for line in open(path):
        if line.startswith("checksum sum"):
            w = line.split()
            return [float(w[2]), float(w[4])]
    return []
a, b = numbers(sys.argv[1]), numbers(sys.argv[2])
ok = len(a) == len(b) == 2 and all(abs(x - y) <= 1e-10 * max(abs(x), abs(y), 1.0) for x, y in zip(a, b))
sys.exit(0 if ok else 1)
PY
  then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $3"; cat "$1"; cat "$2"; fi
}

run() {  # run APP NP THREADS SCHEME PERIODIC
  local app=$1 np=$2 nt=$3 scheme=$4 periodic=$5
  local label="$(basename "$1") $4 np=$2 nt=$3 periodic=$5"
  local extra=() grid=(12 10 9)
  [ "$periodic" = 1 ] && extra=(--periodic) && grid=(12 10 8)
  [ -f "$tmp/ref-$periodic" ] || "$ref" "${grid[@]}" 3 "$periodic" > "$tmp/ref-$periodic"
  if ! OMP_NUM_THREADS=$nt timeout 120 "$mpiexec" -n "$np" "${preflags[@]}" "$app" \
      --grid "${grid[@]}" --steps 3 --scheme "$scheme" --threads "$nt" "${extra[@]}" \
      < /dev/null > "$tmp/out" 2> "$tmp/err"; then
    failed=$((failed + 1)); echo "FAIL: $label exited non-zero"; cat "$tmp/err"; return
  fi
  compare "$tmp/out" "$tmp/ref-$periodic" "$label"
}

for app in "${apps[@]}"; do
  while read -r name min_threads available; do
    [ "$available" = 1 ] || continue
    for layout in "2 2" "3 3"; do
      set -- $layout
      [ "$2" -ge "$min_threads" ] && run "$app" "$1" "$2" "$name" 0
    done
  done <<< "$schemes"
  run "$app" 1 1 masteronly 0
  run "$app" 4 1 masteronly 0
  run "$app" 2 2 masteronly 1
  run "$app" 2 2 adaptive 1
  run "$app" 4 3 funneled 1
done

# Bad input: non-zero exit (2), one line naming the problem, on every rank.
bad() {  # bad APP LABEL EXPECTED_TEXT ARGS...
  local app=$1 label="$(basename "$1") $2" expect=$3; shift 3
  OMP_NUM_THREADS=1 timeout 60 "$mpiexec" -n 2 "${preflags[@]}" "$app" "$@" \
    < /dev/null > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ $rc -ne 0 ] && grep -q -- "$expect" "$tmp/err" && [ "$(grep -c "heat_" "$tmp/err")" = 1 ]; then
    passed=$((passed + 1))
  else failed=$((failed + 1)); echo "FAIL: $label (exit $rc)"; cat "$tmp/err"; fi
}
for app in "${apps[@]}"; do
  bad "$app" "unknown scheme" "unknown scheme 'nosuch' (one of: masteronly" --scheme nosuch
  bad "$app" "bad grid" "bad value for --grid: 0" --grid 0
  bad "$app" "bad steps" "bad value for --steps: x" --steps x
  bad "$app" "unknown option" "unknown option --nosuch" --nosuch 1
  bad "$app" "funneled with 1 thread" "needs at least 2 threads" --scheme funneled --threads 1
done

# The report for hympi-lab study --app (--report PATH).
for app in "${apps[@]}"; do
  if OMP_NUM_THREADS=2 timeout 60 "$mpiexec" -n 2 "${preflags[@]}" "$app" --grid 16 --steps 3 \
      --threads 2 --report "$tmp/report.json" < /dev/null > /dev/null 2>&1 && python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["kernel"] == "user:heat" and r["iters"] == 3 and r["threads"] == 2, r
' "$tmp/report.json"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $app report"; fi
  rm -f "$tmp/report.json"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
