#!/usr/bin/env bash
# Benchmark, not a test: halo time of shared-window against funneled and
# masteronly, at a few ranks per node (issue 11). Each layout runs the three
# schemes interleaved for R rounds; each run reports (hympi solve --json)
# the median repetition's per-thread breakdown, max over ranks. The halo
# time of an iteration is the communicating thread's (thread 0's) pack +
# unpack + MPI seconds over the iterations: the whole exchange for all three
# (masteronly's master outside the region, funneled's and shared-window's
# thread 0 inside it). Printed: medians over rounds of halo time and time per
# iteration, and the ratios shared-window / funneled and / masteronly
# (< 1: shared-window's halo is faster).
#
# Taken from the environment (so the lead can size it to the machine):
#   RANKS    ranks per node to try      (default "2 4")
#   NODES    virtual nodes (--ranks-per-node RANKS; total ranks NODES x RANKS)
#                                        (default 1: every face intra-node)
#   THREADS  threads per rank (>= 2: funneled needs one to communicate)  (default 2)
#   GRID     global grid (default 96^3)   ITERS (default 20)   REPEAT (default 3)
#   ROUNDS   rounds (default 3)           KERNEL (default jacobi)
#   HYMPI    the binary (default build/bin/hympi)
#   MPIEXEC  the launcher with its flags (default Open MPI's, oversubscribed, unbound)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ranks=${RANKS:-"2 4"} nodes=${NODES:-1} threads=${THREADS:-2} grid=${GRID:-96^3}
iters=${ITERS:-20} repeat=${REPEAT:-3} rounds=${ROUNDS:-3} kernel=${KERNEL:-jacobi}
hympi=${HYMPI:-$root/build/bin/hympi}
read -r -a mpiexec <<< "${MPIEXEC:-mpirun.openmpi --oversubscribe --bind-to none}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -x "$hympi" ] || { echo "shared_window: build first (make build)" >&2; exit 2; }
[ "$threads" -ge 2 ] || { echo "shared_window: THREADS must be >= 2 (funneled)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
schemes=(shared-window funneled masteronly)

echo "# shared-window vs funneled vs masteronly: $kernel $grid, $iters iterations, median of" \
     "$repeat repetitions per run, $rounds rounds; $nodes node(s), $threads threads per rank"
echo "# $(nproc) cores here; load $(cut -d' ' -f1-3 /proc/loadavg)"
for rpn in $ranks; do
  np=$((nodes * rpn))
  for round in $(seq 1 "$rounds"); do
    for s in "${schemes[@]}"; do
      OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=passive "${mpiexec[@]}" -n "$np" "$hympi" solve \
        --kernel "$kernel" --grid "$grid" --iters "$iters" --repeat "$repeat" --scheme "$s" \
        --threads "$threads" --ranks-per-node "$rpn" --json "$tmp/$rpn-$s-$round.json" \
        > /dev/null < /dev/null
    done
  done
done
python3 - "$tmp" "$ranks" "$rounds" "$nodes" "${schemes[@]}" <<'PY'
import json, statistics, sys
tmp, ranks, rounds, nodes, schemes = sys.argv[1], sys.argv[2].split(), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
def figures(path):
    r = json.load(open(path))["results"][0]
    b = r["breakdown_s"]
    it = r["iters"]
    return ((b["pack"][0] + b["unpack"][0] + b["comm"][0]) / it, r["time_s"]["median"] / it,
            r["bytes_per_exchange"].get("zero_copy", 0))
print(f"{'ranks/node':>10} {'ranks':>5} {'scheme':>14} {'halo us/it':>11} {'time us/it':>11} "
      f"{'zero-copy B':>11} {'halo ratio':>10} {'time ratio':>10}")
for rpn in ranks:
    med = {}
    for s in schemes:
        runs = [figures(f"{tmp}/{rpn}-{s}-{k}.json") for k in range(1, rounds + 1)]
        med[s] = (statistics.median(x[0] for x in runs), statistics.median(x[1] for x in runs), runs[0][2])
    sw = med["shared-window"]
    for s in schemes:
        h, t, z = med[s]
        print(f"{rpn:>10} {int(rpn) * nodes:>5} {s:>14} {h * 1e6:>11.1f} {t * 1e6:>11.1f} {z:>11} "
              f"{sw[0] / h if h else float('nan'):>10.2f} {sw[1] / t if t else float('nan'):>10.2f}")
print("# ratio = shared-window / scheme (halo: thread 0's pack + unpack + MPI per iteration)")
PY
