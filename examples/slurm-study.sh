#!/usr/bin/env bash
# A hympi study inside a Slurm allocation: every kernel under every scheme,
# the benchmarks and the report, on the nodes of this job.
#
#   sbatch examples/slurm-study.sh            (from the repository root, after 'make build python')
#
# Adjust the #SBATCH lines to your cluster: two or more nodes so that the
# inter-node benchmarks (internode, ratio) measure the real network; one
# task per NUMA domain and its cores as threads is the hybrid layout the
# papers measure. hympi-lab launches every run itself with srun and the
# binding below; the exact commands are in DIR/commands.log.
#SBATCH --job-name=hympi-study
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00
#SBATCH --output=hympi-study-%j.out
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-.}"

# hympi must be built against the MPI that srun launches (PMI/PMIx support).
# --mpi names the library the build uses (openmpi or mpich).
.venv/bin/hympi-lab study \
  --launcher srun --mpi openmpi \
  --ranks "$SLURM_NTASKS" --threads "$SLURM_CPUS_PER_TASK" \
  --out "results/study-$SLURM_JOB_ID"
# A study cut off by the time limit keeps what it measured: submit again with
#   .venv/bin/hympi-lab study --resume results/study-<jobid>
