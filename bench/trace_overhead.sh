#!/usr/bin/env bash
# Benchmark, not a test: what `hympi solve --trace` costs. The same solve runs
# without and with --trace, interleaved (R rounds of: off, on), for each
# layout; each run reports the median of its --repeat repetitions (time_s,
# the iteration loop only, max over ranks); the table gives the medians over
# rounds, their ratio on/off (1.00 = no overhead) and the median of the
# rounds' own ratios.
#   bench/trace_overhead.sh [--rounds R (5)] [--grid G (96^3)] [--iters T (20)]
#                           [--scheme S (masteronly)] [--repeat N (3)] [--baseline BIN]
# --baseline BIN: a hympi built from a revision without the trace code (e.g.
# 85228d3); it runs in every round too, and "off/base" shows what the trace
# code costs when tracing is off.
# Layouts: 2 ranks x 1 thread, 1 rank x 2 threads (Open MPI, oversubscribed).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=5 grid=96^3 iters=20 scheme=masteronly repeat=3 baseline=
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2 ;;
    --grid) grid=$2 ;;
    --iters) iters=$2 ;;
    --scheme) scheme=$2 ;;
    --repeat) repeat=$2 ;;
    --baseline) baseline=$2 ;;
    *) echo "trace_overhead: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift 2
done
hympi=$root/build/bin/hympi
[ -x "$hympi" ] || { echo "trace_overhead: build first (make build)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median_time() {  # JSON -> time_s.median of its one record
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["time_s"]["median"])' "$1"
}

echo "# hympi solve --kernel jacobi --grid $grid --iters $iters --scheme $scheme --repeat $repeat"
echo "# $rounds interleaved rounds (off, on / on, off); seconds = median over rounds of each run's median"
printf '# %-16s %12s %12s %8s %14s %12s %9s\n' layout "off [s]" "on [s]" "on/off" "round ratios" \
  "base [s]" "off/base"
for layout in 2x1 1x2; do
  np=${layout%x*}
  nt=${layout#*x}
  off=()
  on=()
  base=()
  run=(mpirun.openmpi -n "$np" --oversubscribe --bind-to none "$hympi" solve --kernel jacobi
       --grid "$grid" --iters "$iters" --scheme "$scheme" --threads "$nt" --repeat "$repeat")
  for r in $(seq 1 "$rounds"); do
    # Alternate which goes first (off, on / on, off) so that a drift of the
    # machine within a round does not favour either.
    modes=$([ $((r % 2)) = 1 ] && echo "off on" || echo "on off")
    [ -n "$baseline" ] && modes=$([ $((r % 2)) = 1 ] && echo "base $modes" || echo "$modes base")
    for mode in $modes; do
      if [ "$mode" = base ]; then
        base_run=("${run[@]}")
        base_run[6]=$baseline  # the executable
        "${base_run[@]}" --json "$tmp/base.json" > /dev/null
        base+=("$(median_time "$tmp/base.json")")
      elif [ "$mode" = off ]; then
        "${run[@]}" --json "$tmp/off.json" > /dev/null
        off+=("$(median_time "$tmp/off.json")")
      else
        "${run[@]}" --json "$tmp/on.json" --trace "$tmp/trace.json" > /dev/null
        on+=("$(median_time "$tmp/on.json")")
      fi
    done
  done
  python3 - "$np ranks x $nt thr" "${off[*]}" "${on[*]}" "${base[*]}" <<'PY'
import statistics, sys
offs = [float(x) for x in sys.argv[2].split()]
ons = [float(x) for x in sys.argv[3].split()]
bases = [float(x) for x in sys.argv[4].split()]
off, on = statistics.median(offs), statistics.median(ons)
rounds = statistics.median(b / a for a, b in zip(offs, ons))
line = f"  {sys.argv[1]:<16} {off:12.6f} {on:12.6f} {on / off:8.3f} {rounds:14.3f}"
if bases:
    b = statistics.median(bases)
    line += f" {b:12.6f} {off / b:9.3f}"
print(line)
PY
done
