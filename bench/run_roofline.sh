#!/usr/bin/env bash
# Speed benchmark (not a test): hympi kernels against STREAM copy, in one
# invocation. Issue 2's target: jacobi on 256^3, 1 rank, 1 thread, >= 90 % of
# the copy rate; issue 8's: with --halo-depth (default 8), >= 1.5x the
# one-sweep roofline at 1 and 2 ranks.
#   RANKS=2 bench/run_roofline.sh [hympi_roofline options: --grid N --iters T
#                                  --rounds R --threads N --halo-depth H]
# RANKS: a number, or a list run one after the other (default "1 2").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for ranks in ${RANKS:-1 2}; do
  mpirun.openmpi -n "$ranks" --bind-to core "$root/build/bin/hympi_roofline" "$@"
done
