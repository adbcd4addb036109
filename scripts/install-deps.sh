#!/usr/bin/env bash
# Installs the Debian packages hympi needs, skipping what is installed.
# Extra package names on the command line are added (make tsan: clang libomp-dev);
# the word "slurm" stands for Debian's Slurm and munge, which scripts/slurm-cluster
# runs (make test installs them).
# As root: one apt-get update, then a non-interactive install of what is
# missing. Otherwise: prints the exact apt-get line and exits 1.
set -euo pipefail

extra=()
for a in "$@"; do
  case $a in
    slurm) extra+=(slurmctld slurmd slurm-client munge) ;;   # scripts/slurm-cluster
    *) extra+=("$a") ;;
  esac
done

packages=(
  g++ gfortran make cmake git pkg-config python3 python3-venv
  openmpi-bin libopenmpi-dev      # Open MPI (mpirun.openmpi, mpicxx.openmpi)
  mpich libmpich-dev              # MPICH (mpiexec.mpich, mpicxx.mpich)
  hwloc libhwloc-dev              # topology tools (hwloc-ls, hwloc-bind)
  nlohmann-json3-dev              # JSON output
  libgtest-dev                    # unit tests
  ${extra[@]+"${extra[@]}"}
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

line="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing Debian packages: ${missing[*]}" >&2
  echo "install-deps: run as root: $line" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
