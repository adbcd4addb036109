# hympi: the commands the README gives. Each installs what is missing first
# (Debian packages as root, the Python environment) and builds what is not built.
#
#   make study   the main job: hympi-lab study on this machine, then the report's path
#                and its recommendation (STUDY_ARGS="--quick" etc. are passed on)
#   make test    every test: C++ against Open MPI and MPICH, the Python package
#   make build   build/bin/hympi against Open MPI (build-mpich/ for MPICH: make build-mpich)
#   make bench   speed against the STREAM-copy roofline, then users' kernels at halo
#                depth 1 and 8 (bench/user_kernels.sh; bench/README.md)
#   make bench-peers  hympi against PETSc side by side (installs python3-petsc4py;
#                RANKS="1 2 4" and PEERS_ARGS="--rounds 5" are passed on)
#   make tsan    ThreadSanitizer build of the exchange and scheme tests, run
#   make asan    AddressSanitizer + UBSan build of the tests and hympi, run
#   make check-all  make test, then make tsan and make asan (too long for CI's 20 minutes)
#   make demo    every kernel under every scheme, one table (a quick smoke test)
.PHONY: all deps deps-test build build-mpich python study test test-ready native-builds test-openmpi test-mpich test-python demo bench bench-peers tsan asan check-all clean

JOBS ?= 2
# Sources compiled in unity batches (CMake's CMAKE_UNITY_BUILD): a fresh build
# took 280 CPU-s against 336 one file at a time (Open MPI, -O3, 2 cores).
UNITY := -DCMAKE_UNITY_BUILD=ON
OMPI_FLAGS := $(UNITY) -DMPI_CXX_COMPILER=mpicxx.openmpi -DMPI_C_COMPILER=mpicc.openmpi \
  -DMPI_Fortran_COMPILER=mpif90.openmpi -DMPIEXEC_EXECUTABLE=/usr/bin/mpirun.openmpi \
  "-DMPIEXEC_PREFLAGS=--oversubscribe;--bind-to;none"
MPICH_FLAGS := $(UNITY) -DMPI_CXX_COMPILER=mpicxx.mpich -DMPI_C_COMPILER=mpicc.mpich \
  -DMPI_Fortran_COMPILER=mpif90.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich \
  -DHYMPI_TEST_DECOMPOSITIONS=default
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1

all: build

deps:
	@bash scripts/install-deps.sh

# Each build runs JOBS compilers of its own (MAKEFLAGS emptied: under the
# make -j 2 of test-ready its make would otherwise warn that it leaves that
# make's job slots).
build: deps
	@[ -f build/CMakeCache.txt ] || cmake -S . -B build $(OMPI_FLAGS)
	@MAKEFLAGS= cmake --build build -j $(JOBS)

define build_mpich
	@[ -f build-mpich/CMakeCache.txt ] || cmake -S . -B build-mpich $(MPICH_FLAGS)
	@MAKEFLAGS= cmake --build build-mpich -j $(JOBS)
endef
build-mpich: deps
	$(build_mpich)

# The report test opens the study's report in headless Chromium; the Slurm
# test (python/tests/test_slurm_cluster.py) runs Debian's Slurm and munge.
deps-test:
	@bash scripts/install-deps.sh chromium slurm

python: deps
	@bash scripts/setup-python.sh

STUDY_ARGS ?=
study: build python
	@.venv/bin/hympi-lab study $(STUDY_ARGS)

# Each suite runs two tests at a time: most of its time is launch latency,
# not CPU (Open MPI, under the same load: 335 s with -j 1, 204 s with -j 2).
# MPICH's waiting ranks sleep (tests/mpich_idle_wait.c), so its suite gains as
# much: 89 s with -j 2 against 142 s with -j 1, alone on the 2 cores, about
# 150 CPU-s either way. Tests that need the machine to themselves are
# RUN_SERIAL (tests/CMakeLists.txt).
CTEST_JOBS ?= 2
test-openmpi: build
	cd build && ctest --output-on-failure -j $(CTEST_JOBS)

test-mpich: build-mpich
	cd build-mpich && ctest --output-on-failure -j $(CTEST_JOBS)

# The study tests run the real native build: a missing one fails, not skips.
# As root the Slurm cluster test (scripts/slurm-cluster) must run too.
# The Python suite: the cluster tests (one at a time) beside the others
# (PYTEST_WORKERS pytest-xdist workers, default 2): scripts/run-tests.sh.
TEST_ENV = HYMPI_REQUIRE_NATIVE=1 HYMPI_REQUIRE_SLURM=$$([ "$$(id -u)" -eq 0 ] && echo 1 || echo 0)
test-python: build build-mpich python deps-test
	$(TEST_ENV) bash scripts/run-tests.sh python

# Every suite, in three lanes at once (cluster tests, Python tests, ctest of
# both builds), each to its end even when another fails; fails if any did.
test: test-ready
	@$(TEST_ENV) CTEST_JOBS=$(CTEST_JOBS) bash scripts/run-tests.sh all

# What `make test` needs: every package first (deps-test, so that the checks
# below only read), then the Python environment made while the two builds
# compile one after the other. pip works on one core (30 s and 32 CPU-s for
# a fresh .venv), and the builds keep both busy: in a fresh clone's
# `make test` the three took 112-125 s (3 runs) against 137-151 s (2 runs)
# one after another (2026-11-28). Both builds at once as well (make -j 4)
# took 308-342 s against 299-317 s on an older machine: not kept.
test-ready: deps-test
	@$(MAKE) --no-print-directory -j 2 python native-builds

native-builds: build
	$(build_mpich)

demo: build
	@bash scripts/demo.sh

# One thread per rank at 1 and 2 ranks, then one rank with a thread per core
# (the hybrid case: the wavefront's threads share a rank's cache).
bench: build
	@bash bench/run_roofline.sh
	@RANKS=1 bash bench/run_roofline.sh --threads $$(nproc)
	@bash bench/user_kernels.sh

# PETSc (Debian's, through petsc4py and the system python3) is installed
# only here, never for the tests.
PEERS_ARGS ?=
bench-peers: build
	@bash scripts/install-deps.sh python3-petsc4py
	@/usr/bin/python3 bench/peers.py $(PEERS_ARGS)

# clang with LLVM's libomp: its Archer tool tells ThreadSanitizer about
# OpenMP's barriers (GCC's libgomp is invisible to it: false reports).
tsan: deps
	@bash scripts/install-deps.sh clang libomp-dev
	@[ -f build-tsan/CMakeCache.txt ] || cmake -S . -B build-tsan $(OMPI_FLAGS) -DHYMPI_TSAN=ON \
	  -DCMAKE_CXX_COMPILER=clang++ -DHYMPI_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
	@cmake --build build-tsan -j $(JOBS) --target test_exchange test_schemes
	@bash scripts/tsan.sh

# GCC's own sanitizers (libgomp needs no OpenMP tool for ASan/UBSan).
asan: deps
	@[ -f build-asan/CMakeCache.txt ] || cmake -S . -B build-asan $(OMPI_FLAGS) -DHYMPI_ASAN=ON \
	  -DHYMPI_BUILD_BENCH=OFF -DHYMPI_FORTRAN=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
	@cmake --build build-asan -j $(JOBS) --target test_exchange test_schemes test_domain test_options test_unit hympi_exe
	@bash scripts/asan.sh

check-all:
	@status=0; \
	$(MAKE) --no-print-directory test || status=1; \
	$(MAKE) --no-print-directory tsan || status=1; \
	$(MAKE) --no-print-directory asan || status=1; \
	exit $$status

clean:
	rm -rf build build-mpich build-tsan build-asan
