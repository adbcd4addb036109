#!/usr/bin/env bash
# install(EXPORT) works: install the build into a temporary prefix, build a
# separate project with find_package(hympi), run it under MPI.
#   usage: find_package_test.sh BUILD_DIR SOURCE_DIR MPI_CXX_COMPILER MPIEXEC "PREFLAGS"
set -euo pipefail
build=$1 src=$2 mpicxx=$3 mpiexec=$4
IFS=';' read -r -a preflags <<< "${5:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
cmake -S "$src/tests/find_package" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DMPI_CXX_COMPILER="$mpicxx" -DHYMPI_EXAMPLE_SOURCE="$src/examples/jacobi_example.cpp" > "$tmp/configure.log"
cmake --build "$tmp/consumer" > "$tmp/build.log"
OMP_NUM_THREADS=2 timeout 120 "$mpiexec" -n 2 "${preflags[@]}" "$tmp/consumer/consumer"
echo "1 passed, 0 failed"
