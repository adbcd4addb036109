#!/usr/bin/env bash
# The main job for now: `hympi solve` of every kernel under every scheme on
# this machine, one comparison table. Every run's JSON document is kept under
# results/demo-<UTC time>/ (a new folder each time, nothing overwritten).
#
#   scripts/demo.sh [--ranks P] [--threads N] [--grid G] [--iters T]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hympi=$root/build/bin/hympi
ranks=2 threads=2 grid=48^3 iters=20
while [ $# -gt 0 ]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --grid) grid=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "demo: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$hympi" ] || { echo "demo: $hympi is not built (run: make build)" >&2; exit 1; }

out=$root/results/demo-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
# Oversubscription is normal here: a small machine runs P x N threads on fewer cores.
mpirun=(mpirun.openmpi --oversubscribe --bind-to none -n "$ranks")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

# The schemes this build offers that can run at this layout (shared-window
# needs two ranks on a node).
schemes=$("$hympi" info --json | python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(sys.stdin)["schemes"] if s["available"] and (int(sys.argv[1]) > 1 or not s["needs_node_peers"])))' "$ranks")
echo "# hympi demo: $ranks ranks x $threads threads, grid $grid, $iters iterations; JSON in $out"
failed=0
for kernel in jacobi rbgs spmv cg; do
  for scheme in $schemes; do
    # cg iterates to its tolerance: --iters does not apply to it.
    count=(--iters "$iters")
    [ "$kernel" = cg ] && count=()
    args=(solve --kernel "$kernel" --grid "$grid" "${count[@]}" --scheme "$scheme"
          --threads "$threads" --repeat 3 --json "$out/$kernel-$scheme.json")
    if ! "${mpirun[@]}" "$hympi" "${args[@]}" > "$out/$kernel-$scheme.log" 2>&1; then
      echo "demo: $kernel under $scheme failed; see $out/$kernel-$scheme.log" >&2
      failed=1
    fi
  done
done

python3 - "$out" <<'PY'
import glob, json, os, sys
rows = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    r = json.load(open(path))["results"][0]
    rows.append(r)
ref = {r["kernel"]: r["l2"] for r in rows if r["scheme"] == "masteronly"}
print(f"# {'kernel':<7} {'scheme':<20} {'class':<7} {'l2':>24} {'vs masteronly':>13} "
      f"{'median s':>10} {'MLUP/s':>9} {'f_comm':>7}")
order = {"jacobi": 0, "rbgs": 1, "spmv": 2, "cg": 3}
for r in sorted(rows, key=lambda r: (order[r["kernel"]], r["scheme"] != "masteronly", r["scheme"])):
    base = ref.get(r["kernel"])
    diff = abs(r["l2"] - base) / abs(base) if base else float("nan")
    print(f"  {r['kernel']:<7} {r['scheme']:<20} {r['scheme_class']:<7} {r['l2']:>24.17g} {diff:>13.1e} "
          f"{r['time_s']['median']:>10.4f} {r['mlups']:>9.1f} {r['fractions']['f_comm']:>7.3f}")
PY
exit $failed
