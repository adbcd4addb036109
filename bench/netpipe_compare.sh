#!/usr/bin/env bash
# Benchmark, not a test: beff's ping-pong bandwidth against NetPIPE's
# (Debian netpipe-openmpi, program NPopenmpi) at the same message sizes, both
# on 2 ranks of this machine under Open MPI, interleaved: R rounds of
# (hympi bench beff, NPopenmpi), then the medians over rounds and the ratios.
# Target (issue 8): within 10 %.
#   bench/netpipe_compare.sh [LMAX_BYTES (default 8000000)] [ROUNDS (default 15)]
# Two figures of hympi per round, since the two tools keep different things:
#   best    the fastest of beff's repetitions (what beff reports, as b_eff's
#           definition takes the best repetition); a repetition times only
#           max(4, loop_count) round trips, so on a noisy machine the best
#           of 5 short windows catches a quiet moment;
#   median  the median repetition;
#   netpipe-like  beff with --pingpong-ms 250 --pingpong-buffers 1 --repeat 3:
#           NetPIPE's method, the best of 3 repetitions that each time as many
#           round trips as fill 250 ms, receiving into the array sent from
#           (warm in cache, as NetPIPE's buffers without -I).
# NetPIPE keeps the fastest of 3 trials, each timing as many round trips as
# fill about a quarter of a second: long windows average the noise out.
# Units: MB/s with MB = 10^6 B. NetPIPE's own "Mbps" column is 2^20 bits/s,
# so its rate is taken from its byte count and time columns instead.
# Ranks are bound one per core when the machine has 2 cores or more.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lmax=${1:-8000000}
rounds=${2:-15}
hympi=$root/build/bin/hympi
[ -x "$hympi" ] || { echo "netpipe_compare: build first (make build)" >&2; exit 2; }
command -v NPopenmpi > /dev/null || { echo "netpipe_compare: NPopenmpi missing (apt-get install netpipe-openmpi)" >&2; exit 2; }
# (before OMP_NUM_THREADS is set: GNU nproc honours it)
if [ "$(nproc)" -ge 2 ]; then
  mpirun=(mpirun.openmpi -n 2 --bind-to core --map-by core)
else
  mpirun=(mpirun.openmpi -n 2 --oversubscribe --bind-to none)
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rows=()
echo "# ping-pong at $lmax bytes, 2 ranks, Open MPI (${mpirun[*]:3}); MB/s, MB = 10^6 B"
printf '# %-6s %14s %14s %14s %14s\n' round "hympi best" "hympi median" "netpipe-like" "NPopenmpi"
for r in $(seq 1 "$rounds"); do
  "${mpirun[@]}" "$hympi" bench beff --lmax "$lmax" --repeat 5 --json "$tmp/beff.json" > /dev/null
  read -r best median < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
(p,) = [x for x in d["results"] if x["kind"] == "pingpong" and x["bytes"] == int(sys.argv[2])]
print(p["bytes"] / p["time_s"]["min"] / 1e6, p["bytes"] / p["time_s"]["median"] / 1e6)' "$tmp/beff.json" "$lmax")
  "${mpirun[@]}" "$hympi" bench beff --lmax "$lmax" --repeat 3 --pingpong-ms 250 --pingpong-buffers 1 \
    --json "$tmp/win.json" > /dev/null
  window=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
(p,) = [x for x in d["results"] if x["kind"] == "pingpong" and x["bytes"] == int(sys.argv[2])]
print(p["bytes"] / p["time_s"]["min"] / 1e6)' "$tmp/win.json" "$lmax")
  (cd "$tmp" && "${mpirun[@]}" NPopenmpi -l "$lmax" -u "$lmax" -p 0 -o "$tmp/np.out" > /dev/null 2>&1)
  n=$(awk -v L="$lmax" '$1 == L { printf "%.6f\n", $1 / $3 / 1e6 }' "$tmp/np.out" | tail -1)
  rows+=("$best $median $window $n")
  printf '  %-6s %14.1f %14.1f %14.1f %14.1f\n' "$r" "$best" "$median" "$window" "$n"
done
printf '%s\n' "${rows[@]}" | python3 -c '
import statistics, sys
rows = [list(map(float, line.split())) for line in sys.stdin if line.strip()]
best, median, window, netpipe = (statistics.median(c) for c in zip(*rows))
rb = statistics.median(b / n for b, _, _, n in rows)
rm = statistics.median(m / n for _, m, _, n in rows)
rw = statistics.median(w / n for _, _, w, n in rows)
ok = lambda r: "within" if abs(r - 1) <= 0.10 else "NOT within"
print(f"# medians over rounds: hympi best {best:.1f}, hympi median {median:.1f}, netpipe-like "
      f"{window:.1f}, NPopenmpi {netpipe:.1f} MB/s")
print(f"# hympi/NetPIPE, median of the rounds\x27 ratios: best {rb:.3f} ({ok(rb)} 10 %), "
      f"median {rm:.3f} ({ok(rm)} 10 %), netpipe-like {rw:.3f} ({ok(rw)} 10 %)")'
