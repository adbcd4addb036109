#!/usr/bin/env bash
# examples/port: heat_orig (z slabs, MPI_Sendrecv, !$omp) and heat_hympi
# (its hympi port) print the same sum and l2 norm, to the last printed
# digit, under several schemes, at 1-3 ranks (3 ranks split the 10 z planes
# unevenly, 4 + 3 + 3) and 1-3 threads; heat_hympi's report is a JSON
# document of the run (kernel, scheme, threads, ranks, steps, grid).
#   usage: port_test.sh HEAT_ORIG HEAT_HYMPI MPIEXEC "PREFLAGS"
set -uo pipefail
orig=$1 port=$2 mpiexec=$3
IFS=';' read -r -a preflags <<< "${4:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
args=(13 11 10 6)  # NX NY NZ STEPS

numbers() { grep '^sum ' "$1"; }

check() {  # check NP THREADS SCHEME
  local np=$1 nt=$2 scheme=$3 label="np=$1 nt=$2 $3"
  if ! OMP_NUM_THREADS=$nt timeout 120 "$mpiexec" -n "$np" "${preflags[@]}" "$orig" "${args[@]}" \
      < /dev/null > "$tmp/orig" 2> "$tmp/err"; then
    failed=$((failed + 1)); echo "FAIL: heat_orig $label exited non-zero"; cat "$tmp/err"; return
  fi
  if ! OMP_NUM_THREADS=$nt timeout 120 "$mpiexec" -n "$np" "${preflags[@]}" "$port" "${args[@]}" \
      "$scheme" "$tmp/report.json" < /dev/null > "$tmp/port" 2> "$tmp/err"; then
    failed=$((failed + 1)); echo "FAIL: heat_hympi $label exited non-zero"; cat "$tmp/err"; return
  fi
  if [ -n "$(numbers "$tmp/orig")" ] && [ "$(numbers "$tmp/orig")" = "$(numbers "$tmp/port")" ] &&
     python3 - "$tmp/report.json" "$np" "$nt" "$scheme" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["results"][0]
want = {"kernel": "user:heat", "scheme": sys.argv[4], "threads": int(sys.argv[3]), "iters": 6,
        "exchanges": 6, "grid": [13, 11, 10]}
got = {key: r.get(key) for key in want}
ok = got == want and doc["context"].get("ranks") == int(sys.argv[2])
if not ok:
    print("report:", got, "ranks", doc["context"].get("ranks"))
sys.exit(0 if ok else 1)
PY
  then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); echo "FAIL: $label"; cat "$tmp/orig" "$tmp/port"
  fi
}

check 1 1 masteronly
check 2 2 funneled
check 3 2 multiple-own
check 3 3 adaptive
check 2 3 shared-window
check 3 1 masteronly
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
