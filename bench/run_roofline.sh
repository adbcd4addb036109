#!/usr/bin/env bash
# Speed benchmark (not a test): hympi kernels against STREAM copy on one rank.
# Issue 2's target: jacobi on 256^3, 1 rank, 1 thread, >= 90 % of the copy rate.
#   bench/run_roofline.sh [hympi_roofline options: --grid N --iters T --rounds R --threads N]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exec mpirun.openmpi -n 1 --bind-to core "$root/build/bin/hympi_roofline" "$@"
