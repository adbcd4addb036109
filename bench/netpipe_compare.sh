#!/usr/bin/env bash
# Benchmark, not a test: beff's ping-pong bandwidth at Lmax against NetPIPE's
# (Debian netpipe-openmpi, program NPopenmpi) at the same message size, both
# on 2 ranks of this machine under Open MPI, interleaved: R rounds of
# (hympi bench beff, NPopenmpi), then the medians and their ratio. The target
# (issue 4): within 15 %.
#   bench/netpipe_compare.sh [LMAX_BYTES (default 8000000)] [ROUNDS (default 5)]
# Units: MB/s with MB = 10^6 B. NetPIPE's own "Mbps" column is 2^20 bits/s,
# so its rate is taken from its byte count and time columns instead.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lmax=${1:-8000000}
rounds=${2:-5}
hympi=$root/build/bin/hympi
[ -x "$hympi" ] || { echo "netpipe_compare: build first (make build)" >&2; exit 2; }
command -v NPopenmpi > /dev/null || { echo "netpipe_compare: NPopenmpi missing (apt-get install netpipe-openmpi)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mpirun=(mpirun.openmpi -n 2 --oversubscribe --bind-to none)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hy=()
np=()
echo "# ping-pong at $lmax bytes, 2 ranks, Open MPI; MB/s, MB = 10^6 B"
printf '# %-6s %14s %14s\n' round "hympi beff" "NPopenmpi"
for r in $(seq 1 "$rounds"); do
  "${mpirun[@]}" "$hympi" bench beff --lmax "$lmax" --repeat 5 --json "$tmp/beff.json" > /dev/null
  h=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([x for x in d["results"] if x["kind"]=="summary"][0]["pingpong_lmax_MBps"])' "$tmp/beff.json")
  (cd "$tmp" && "${mpirun[@]}" NPopenmpi -l "$lmax" -u "$lmax" -p 0 -o "$tmp/np.out" > /dev/null 2>&1)
  n=$(awk -v L="$lmax" '$1 == L { printf "%.6f\n", $1 / $3 / 1e6 }' "$tmp/np.out" | tail -1)
  hy+=("$h")
  np+=("$n")
  printf '  %-6s %14.1f %14.1f\n' "$r" "$h" "$n"
done
python3 - "${hy[*]}" "${np[*]}" <<'PY'
import statistics, sys
h = statistics.median(map(float, sys.argv[1].split()))
n = statistics.median(map(float, sys.argv[2].split()))
ratio = h / n
print(f"# medians: hympi beff ping-pong {h:.1f} MB/s, NPopenmpi {n:.1f} MB/s, ratio {ratio:.3f}"
      f" ({'within' if abs(ratio - 1) <= 0.15 else 'NOT within'} 15 %)")
PY
