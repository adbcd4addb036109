#!/usr/bin/env bash
# install(EXPORT) works: install the build into a temporary prefix, build a
# separate project with find_package(hympi) (the C++ example, heat.c and,
# when the module was built, heat.f90), build heat.c and heat.f90 again with
# plain mpicc/mpif90 and `pkg-config --cflags --libs hympi` as a Makefile
# would, and run each briefly under MPI.
#   usage: find_package_test.sh BUILD_DIR SOURCE_DIR MPI_CXX_COMPILER MPIEXEC "PREFLAGS"
set -euo pipefail
build=$1 src=$2 mpicxx=$3 mpiexec=$4
IFS=';' read -r -a preflags <<< "${5:-}"
# The C and Fortran wrappers of the same MPI (mpicxx.mpich -> mpicc.mpich).
mpicc=${mpicxx/mpicxx/mpicc}
mpif90=${mpicxx/mpicxx/mpif90}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
cmake -S "$src/tests/find_package" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DMPI_CXX_COMPILER="$mpicxx" -DMPI_C_COMPILER="$mpicc" -DMPI_Fortran_COMPILER="$mpif90" \
  -DHYMPI_EXAMPLE_SOURCE="$src/examples/jacobi_example.cpp" \
  -DHYMPI_EXAMPLES_DIR="$src/examples" > "$tmp/configure.log"
cmake --build "$tmp/consumer" > "$tmp/build.log"
passed=0

# run LABEL PROGRAM ARGS...: 2 ranks, 2 threads, must exit 0.
run() {
  local label=$1; shift
  if ! OMP_NUM_THREADS=2 timeout 120 "$mpiexec" -n 2 "${preflags[@]}" "$@" > "$tmp/out" 2>&1; then
    echo "FAIL: $label"; cat "$tmp/out"; exit 1
  fi
  passed=$((passed + 1))
}
run "C++ example (find_package)" "$tmp/consumer/consumer"
run "heat.c (find_package)" "$tmp/consumer/heat_c" --grid 12 --steps 2 --threads 2 --scheme funneled
grep -q "^checksum sum" "$tmp/out" || { echo "FAIL: heat.c printed no checksum"; exit 1; }
installed_f=0
[ -f "$tmp/prefix/include/hympi/fortran/hympi.mod" ] && installed_f=1
if [ "$installed_f" = 1 ]; then
  [ -x "$tmp/consumer/heat_f" ] || { echo "FAIL: heat.f90 not built by the consumer"; exit 1; }
  run "heat.f90 (find_package)" "$tmp/consumer/heat_f" --grid 12 --steps 2 --threads 2
fi

# A Makefile user: the MPI wrapper plus pkg-config, nothing else.
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig"
# shellcheck disable=SC2046  # pkg-config's words are meant to split
"$mpicc" -O2 -o "$tmp/heat_c_pc" "$src/examples/heat.c" $(pkg-config --cflags --libs hympi)
run "heat.c (mpicc + pkg-config)" "$tmp/heat_c_pc" --grid 12 --steps 2 --threads 2
if [ "$installed_f" = 1 ]; then
  (cd "$tmp" && "$mpif90" -O2 -o "$tmp/heat_f_pc" "$src/examples/heat.f90" \
     $(pkg-config --cflags --libs hympi))
  run "heat.f90 (mpif90 + pkg-config)" "$tmp/heat_f_pc" --grid 12 --steps 2 --threads 2
fi
echo "$passed passed, 0 failed"
