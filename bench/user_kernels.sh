#!/usr/bin/env bash
# Speed benchmark (not a test): users' kernels with temporal blocking. The
# examples heat_c (C API) and heat_f (Fortran module) run at halo depth 1
# and at --depth H (default 8) on the same grid, interleaved, --rounds
# times; each prints MLUP/s at both depths (median and range over rounds),
# the ratio depth H / depth 1 (median and range of each round's pair) and
# whether the two checksums agree to the last digit (exit 1 when they do
# not). user_kernel (C++ API) runs at depth 1 only: its update couples two
# fields, and sweep_block blocks one pair.
#   RANKS="1 2" bench/user_kernels.sh [--grid N|NXxNYxNZ] [--steps S]
#       [--depth H] [--rounds R] [--bin DIR] [--mpiexec PATH]
# Defaults: grid 256, 48 steps, depth 8, 3 rounds, bin build/bin, mpiexec
# mpirun.openmpi (an MPICH mpiexec with build-mpich/bin). One thread per
# rank, each rank bound to a core; a rank count above the cores is not run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_PROC_BIND=close OMP_PLACES=cores OMP_NUM_THREADS=1
die() { echo "user_kernels.sh: $*" >&2; exit 2; }

grid=256 steps=48 depth=8 rounds=3 bin=$root/build/bin mpiexec=mpirun.openmpi
while (($#)); do
  case $1 in
    -h|--help) sed -n 2,14p "$0"; exit 0 ;;
    --grid|--steps|--depth|--rounds|--bin|--mpiexec)
      (($# >= 2)) || die "$1 needs a value"
      case $1 in
        --grid) grid=$2 ;; --steps) steps=$2 ;; --depth) depth=$2 ;;
        --rounds) rounds=$2 ;; --bin) bin=$2 ;; --mpiexec) mpiexec=$2 ;;
      esac
      shift 2 ;;
    *) die "unknown option '$1' (--help lists them)" ;;
  esac
done
[[ $grid =~ ^[1-9][0-9]*(x[1-9][0-9]*x[1-9][0-9]*)?$ ]] || die "--grid needs N or NXxNYxNZ, not '$grid'"
[[ $steps =~ ^[1-9][0-9]*$ ]] || die "--steps needs a positive integer, not '$steps'"
[[ $depth =~ ^[1-9][0-9]*$ ]] && ((depth >= 2 && depth <= 64)) || die "--depth needs 2..64, not '$depth'"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds needs a positive integer, not '$rounds'"
for app in heat_c heat_f user_kernel; do
  [ -x "$bin/$app" ] || die "$bin/$app is not built (make build; --bin DIR for another build)"
done
command -v "$mpiexec" > /dev/null || die "no MPI launcher '$mpiexec'"
# Each rank on a core of its own (as bench/run_roofline.sh). The version
# text first, then grep: under pipefail, grep -q closing the pipe early
# would make the launcher's SIGPIPE fail the test now and then.
version=$("$mpiexec" --version 2>&1 || true)
if grep -qiE "hydra|mpich" <<< "$version"; then
  bind=(-bind-to core)
else
  bind=(--map-by slot:PE=1 --bind-to core -x OMP_PROC_BIND -x OMP_PLACES -x OMP_NUM_THREADS)
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
records=$tmp/records  # ranks app depth round mlups checksum-file

# run RANKS APP DEPTH ROUND: one run, its rate from the report JSON.
run() {
  local ranks=$1 app=$2 d=$3 round=$4 extra=()
  local out=$tmp/$app-$ranks-$d-$round
  ((d > 1)) && extra=(--halo-depth "$d")
  if ! "$mpiexec" -n "$ranks" "${bind[@]}" "$bin/$app" --grid "$grid" --steps "$steps" \
      --threads 1 "${extra[@]}" --report "$out.json" < /dev/null > "$out.txt" 2> "$out.err"; then
    echo "user_kernels.sh: $app at $ranks rank(s), depth $d failed:" >&2
    cat "$out.err" >&2
    exit 1
  fi
  local mlups
  mlups=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["results"][0]["mlups"])' \
    "$out.json") || { echo "user_kernels.sh: $app wrote no readable report" >&2; exit 1; }
  # The checksum lines (heat: "checksum ...", user_kernel: "u sum", "v sum",
  # "change"), compared as printed.
  grep -E "^(checksum|u sum|v sum|change)" "$out.txt" > "$out.sum" || true
  echo "$ranks $app $d $round $mlups $out.sum" >> "$records"
}

cores=$(env -u OMP_NUM_THREADS nproc)  # nproc obeys OMP_NUM_THREADS (set above)
ran=0
for ranks in ${RANKS:-1 2}; do
  [[ $ranks =~ ^[1-9][0-9]*$ ]] || die "RANKS must list positive integers, not '$ranks'"
  if ((ranks > cores)); then
    echo "# $ranks rank(s) need $ranks cores; this machine has $cores: not run"
    continue
  fi
  for ((round = 1; round <= rounds; round++)); do
    for app in heat_c heat_f user_kernel; do
      run "$ranks" "$app" 1 "$round"
      [ "$app" = user_kernel ] || run "$ranks" "$app" "$depth" "$round"
    done
  done
  ran=$((ran + 1))
done
((ran > 0)) || die "nothing run (every rank count needs more cores than the $cores here)"

echo "# user kernels: grid $grid, $steps steps, depth $depth against depth 1, $rounds round(s)" \
  "interleaved, $(basename "$mpiexec"), one thread per rank bound to a core, $(date -u '+%Y-%m-%d %H:%M UTC')"
python3 - "$records" "$depth" <<'PY'
import statistics, sys
from collections import defaultdict
path, depth = sys.argv[1], int(sys.argv[2])
rate = defaultdict(dict)      # (ranks, app, depth) -> {round: MLUP/s}
sums = defaultdict(dict)      # (ranks, app, depth) -> {round: checksum text}
for line in open(path):
    ranks, app, d, rnd, mlups, sumfile = line.split()
    key = (int(ranks), app, int(d))
    rate[key][int(rnd)] = float(mlups)
    sums[key][int(rnd)] = open(sumfile).read()

def spread(values, digits=None):
    # Rates in whole MLUP/s, but with two decimals where that would round a
    # rate to 0 or 1 (the smoke test's tiny grid).
    if digits is None:
        digits = 0 if min(values) >= 100 else 2
    f = f"{{:.{digits}f}}"
    return f"{f.format(statistics.median(values))} ({f.format(min(values))}-{f.format(max(values))})"

print(f"{'ranks':>5}  {'example':<12} {'depth 1 MLUP/s':>20} {f'depth {depth} MLUP/s':>20} "
      f"{f'depth {depth} / 1':>18}  checksums")
bad = []
for ranks, app, d in sorted(k for k in rate if k[2] == 1):
    one = rate[(ranks, app, 1)]
    blocked = rate.get((ranks, app, depth))
    if blocked is None:
        print(f"{ranks:>5}  {app:<12} {spread(list(one.values())):>20} {'-':>20} {'-':>18}  "
              "(depth 1 only: two coupled fields)")
        continue
    ratios = [blocked[r] / one[r] for r in one if r in blocked]
    texts = set(sums[(ranks, app, 1)].values()) | set(sums[(ranks, app, depth)].values())
    same = len(texts) == 1 and texts != {""}
    if not same:
        bad.append(f"{app} at {ranks} rank(s)")
    print(f"{ranks:>5}  {app:<12} {spread(list(one.values())):>20} {spread(list(blocked.values())):>20} "
          f"{spread(ratios, 2):>18}  {'equal to the last digit' if same else 'DIFFER'}")
if bad:
    print("user_kernels.sh: depth 1 and depth", depth, "printed different checksums:", ", ".join(bad),
          file=sys.stderr)
    sys.exit(1)
PY
