#!/usr/bin/env bash
# Benchmark, not a test: this build's `hympi solve` against a baseline build
# (another revision) on the same cases, interleaved: R rounds of (baseline,
# this) per case. Each run reports time_s.median of its --repeat repetitions
# (the iteration loop only, max over ranks); the table gives, per case, the
# medians over rounds and the ratio this/base (1.00 = the same speed, > 1 =
# slower), and the median of the rounds' own ratios.
#   bench/compare_builds.sh --baseline BIN [--rounds R (5)] [--grid G (128^3)]
#                           [--iters T (20)] [--repeat N (3)]
# A baseline: git worktree add /tmp/base REV && cmake -S /tmp/base -B /tmp/base/build \
#   -DMPI_CXX_COMPILER=mpicxx.openmpi && cmake --build /tmp/base/build --target hympi_exe
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=5 grid=128^3 iters=20 repeat=3 baseline=
while [ $# -gt 0 ]; do
  case $1 in
    --baseline) baseline=$2 ;;
    --rounds) rounds=$2 ;;
    --grid) grid=$2 ;;
    --iters) iters=$2 ;;
    --repeat) repeat=$2 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "compare_builds: unknown argument '$1'" >&2; exit 2 ;;
  esac
  [ $# -ge 2 ] || { echo "compare_builds: $1 needs a value" >&2; exit 2; }
  shift 2
done
this=$root/build/bin/hympi
[ -x "$this" ] || { echo "compare_builds: build first (make build)" >&2; exit 2; }
[ -n "$baseline" ] && [ -x "$baseline" ] || { echo "compare_builds: --baseline BIN (an executable hympi) is required" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# kernel format ranks threads scheme
cases=(
  "jacobi stencil 1 1 masteronly"
  "jacobi stencil 2 1 masteronly"
  "jacobi stencil 1 2 funneled"
  "jacobi stencil 1 2 multiple-own"
  "rbgs stencil 2 1 masteronly"
  "spmv stencil 2 1 masteronly"
  "spmv crs 2 1 masteronly"
  "cg stencil 2 1 masteronly"
  "cg crs 1 2 masteronly"
)

run() {  # run BIN OUT kernel format ranks threads scheme
  local bin=$1 out=$2 kernel=$3 format=$4 np=$5 nt=$6 scheme=$7
  local bind=(--bind-to core)
  [ "$nt" -gt 1 ] && bind=(--bind-to none)
  local count=(--iters "$iters")
  [ "$kernel" = cg ] && count=(--max-iters "$iters" --tol 1e-30)
  OMP_NUM_THREADS=$nt mpirun.openmpi -n "$np" --oversubscribe "${bind[@]}" "$bin" solve \
    --kernel "$kernel" --format "$format" --scheme "$scheme" --threads "$nt" --grid "$grid" \
    "${count[@]}" --repeat "$repeat" --json "$out" < /dev/null > /dev/null
}

echo "# hympi solve: this build ($this) vs baseline ($baseline)"
echo "# grid $grid, $iters iterations, $repeat repetitions per run, $rounds interleaved rounds"
printf "%-34s %12s %12s %10s %12s\n" case "base s" "this s" "this/base" "median ratio"
for c in "${cases[@]}"; do
  set -- $c
  for r in $(seq "$rounds"); do
    run "$baseline" "$tmp/base.$r.json" "$@"
    run "$this" "$tmp/this.$r.json" "$@"
  done
  python3 - "$tmp" "$rounds" "$1 $2 ${3}x$4 $5" <<'PY'
import json, statistics, sys
tmp, rounds, label = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def t(kind, r):
    doc = json.load(open(f"{tmp}/{kind}.{r}.json"))
    return doc["results"][0]["time_s"]["median"]
base = [t("base", r) for r in range(1, rounds + 1)]
this = [t("this", r) for r in range(1, rounds + 1)]
ratios = [b2 / b1 for b1, b2 in zip(base, this)]
mb, mt = statistics.median(base), statistics.median(this)
print(f"{label:<34} {mb:12.5f} {mt:12.5f} {mt / mb:10.3f} {statistics.median(ratios):12.3f}")
PY
done
