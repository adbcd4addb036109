#!/usr/bin/env bash
# A hympi study inside a Slurm allocation: every kernel under every scheme,
# the benchmarks and the report, on the nodes of this job.
#
#   sbatch examples/slurm-study.sh        (from the repository root, after 'make build python')
#
# Adjust the #SBATCH lines to your cluster (options on sbatch's command line
# override them): two or more nodes so that the inter-node benchmarks
# (internode, ratio) measure the real network; one task per NUMA domain with
# its cores as threads is the hybrid layout the papers measure. The study
# takes its ranks and threads from the allocation (SLURM_NTASKS,
# SLURM_CPUS_PER_TASK) and launches every run itself with srun: the PMI plugin
# that matches the build's MPI (pmix for Open MPI, pmi2 for MPICH, or
# SLURM_MPI_TYPE) and --cpu-bind=cores. The exact srun lines, the job and its
# nodes are in DIR/commands.log (docs/study.md, "On your cluster").
#
# Where your cluster differs, set (e.g. sbatch --export=ALL,HYMPI_MPI=mpich ...):
#   HYMPI_MPI         openmpi (default) or mpich: the MPI your hympi build uses
#   HYMPI_HYMPI       the hympi executable (default: build/ or build-mpich/ here)
#   HYMPI_LAB         the hympi-lab command (default: .venv/bin/hympi-lab here)
#   HYMPI_STUDY_OUT   the study directory (default: results/study-<job id>)
#   HYMPI_STUDY_ARGS  more study options, e.g. "--quick" or "--steps solve"
#
# Time limit: Slurm sends SIGTERM, then SIGKILL after KillWait; the study keeps
# every finished point and exits 143. Continue it in a new job with
#   sbatch --export=ALL,HYMPI_STUDY_ARGS="--resume results/study-<jobid>" examples/slurm-study.sh
# (--resume takes no other options). A job Slurm requeues (--requeue, a node
# failure) starts this script again with the same job id and DIR, and the
# study resumes by itself.
#SBATCH --job-name=hympi-study
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00
#SBATCH --requeue
#SBATCH --output=hympi-study-%j.out
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-.}"

lab=${HYMPI_LAB:-.venv/bin/hympi-lab}
read -r -a extra <<<"${HYMPI_STUDY_ARGS:-}"
for word in "${extra[@]}"; do
  if [[ $word == --resume ]]; then
    # A continued study keeps the options it was started with.
    exec "$lab" study "${extra[@]}"
  fi
done
args=(--launcher srun --mpi "${HYMPI_MPI:-openmpi}" --out "${HYMPI_STUDY_OUT:-results/study-$SLURM_JOB_ID}")
[[ -n ${HYMPI_HYMPI:-} ]] && args+=(--hympi "$HYMPI_HYMPI")
# exec: the study itself receives Slurm's SIGTERM at the time limit.
exec "$lab" study "${args[@]}" "${extra[@]}"
