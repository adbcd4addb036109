#!/usr/bin/env bash
# Speed benchmark (not a test): hympi kernels against STREAM copy, in one
# invocation. Issue 2's target: jacobi on 256^3, 1 rank, 1 thread, >= 90 % of
# the copy rate; issue 8's: with --halo-depth (default 8), >= 1.5x the
# one-sweep roofline at 1 and 2 ranks.
#   RANKS=2 bench/run_roofline.sh [hympi_roofline options: --grid N --iters T
#                                  --rounds R --threads N --halo-depth H]
# RANKS: a number, or a list run one after the other (default "1 2").
# Each rank is bound to --threads cores of its own (its threads to one core
# each); a rank count whose ranks x threads exceed the cores is not run (an
# oversubscribed run measures the scheduler, not the kernels).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_PROC_BIND=close OMP_PLACES=cores
case ${1:-} in -h|--help) sed -n 2,11p "$0"; exit 0 ;; esac
threads=1
args=("$@")
for ((i = 0; i < ${#args[@]} - 1; i++)); do
  [[ ${args[i]} == --threads ]] && threads=${args[i + 1]}
done
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "run_roofline.sh: --threads needs a positive integer" >&2; exit 2; }
cores=$(nproc)
ran=0
for ranks in ${RANKS:-1 2}; do
  [[ $ranks =~ ^[1-9][0-9]*$ ]] || { echo "run_roofline.sh: RANKS must list positive integers, not '$ranks'" >&2; exit 2; }
  if ((ranks * threads > cores)); then
    echo "# $ranks rank(s) x $threads thread(s) need $((ranks * threads)) cores; this machine has $cores: not run"
    continue
  fi
  # Through cat: mpirun forwards the ranks' output and ignores a failed
  # write (a full disk); cat fails on it, and pipefail passes that on.
  mpirun.openmpi -n "$ranks" --map-by "slot:PE=$threads" --bind-to core \
    -x OMP_PROC_BIND -x OMP_PLACES "$root/build/bin/hympi_roofline" "$@" | cat
  ran=$((ran + 1))
done
((ran > 0)) || { echo "run_roofline.sh: nothing run (every rank count needs more cores than the $cores here)" >&2; exit 2; }
