#!/usr/bin/env bash
# An installed hympi is usable from outside the tree: install the build into
# a temporary prefix; a separate CMake project finds it (find_package(hympi))
# and builds the C++ example, heat.c and (with the Fortran module) heat.f90;
# a Makefile-style build of heat.c (and heat.f90) with the MPI compiler
# wrappers and `pkg-config --cflags --libs hympi`; each runs under MPI and
# the C, Fortran and pkg-config builds print the same checksum.
#   usage: find_package_test.sh BUILD_DIR SOURCE_DIR MPI_CXX_COMPILER MPIEXEC "PREFLAGS"
#                               MPI_C_COMPILER MPI_Fortran_COMPILER HYMPI_FORTRAN(ON|OFF)
set -euo pipefail
build=$1 src=$2 mpicxx=$3 mpiexec=$4
IFS=';' read -r -a preflags <<< "${5:-}"
mpicc=$6 mpifort=${7:-} fortran=${8:-OFF}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
want_fortran=OFF
case "$fortran" in ON|on|1|TRUE|true) want_fortran=ON ;; esac
cmake -S "$src/tests/find_package" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DMPI_CXX_COMPILER="$mpicxx" -DMPI_C_COMPILER="$mpicc" -DMPI_Fortran_COMPILER="$mpifort" \
  -DCONSUMER_FORTRAN=$want_fortran -DHYMPI_EXAMPLE_SOURCE="$src/examples/jacobi_example.cpp" \
  -DHYMPI_EXAMPLES_DIR="$src/examples" > "$tmp/configure.log"
cmake --build "$tmp/consumer" > "$tmp/build.log"
run() { OMP_NUM_THREADS=2 timeout 120 "$mpiexec" -n 2 "${preflags[@]}" "$@" < /dev/null; }
# same LINE1 LINE2: two checksum lines agree to 1e-12 (builds with other
# flags may contract to FMA differently: the last digits may differ).
same() {
  python3 -c 'import sys; a, b = (l.split() for l in sys.argv[1:]); assert abs(float(a[2]) - float(b[2])) <= 1e-12 * abs(float(a[2])) and abs(float(a[4]) - float(b[4])) <= 1e-12 * abs(float(a[4])), (a, b)' "$1" "$2"
}
passed=0
run "$tmp/consumer/consumer" > /dev/null && passed=$((passed + 1))
heat=(--grid 16 --steps 3 --scheme funneled --threads 2)
expected=$(run "$tmp/consumer/consumer_heat_c" "${heat[@]}")
passed=$((passed + 1))
if [ "$want_fortran" = ON ]; then
  got=$(run "$tmp/consumer/consumer_heat_f" "${heat[@]}")
  same "$expected" "$got"
  passed=$((passed + 1))
fi

# Makefile users: the MPI wrappers and pkg-config, nothing else.
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib64/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig"
"$mpicc" "$src/examples/heat.c" $(pkg-config --cflags --libs hympi) -o "$tmp/heat_pc"
same "$expected" "$(run "$tmp/heat_pc" "${heat[@]}")"
passed=$((passed + 1))
if [ "$want_fortran" = ON ]; then
  (cd "$tmp" && "$mpifort" "$src/examples/heat.f90" $(pkg-config --cflags --libs hympi) -o "$tmp/heat_pcf")
  run "$tmp/heat_pcf" "${heat[@]}" > /dev/null
  passed=$((passed + 1))
fi
echo "$passed passed, 0 failed"
