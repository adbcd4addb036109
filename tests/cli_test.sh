#!/usr/bin/env bash
# The hympi command line under MPI (2 ranks): every bad input exits 2 on every
# rank within seconds, with one message on rank 0 that says what is wrong;
# --help works; info and solve write valid JSON documents.
#   usage: cli_test.sh HYMPI MPIEXEC "PREFLAGS"   (PREFLAGS ;-separated, as CMake passes lists)
set -u
hympi=$1
mpiexec=$2
IFS=';' read -r -a preflags <<< "${3:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"

S=(solve --kernel jacobi --iters 2)
check zero-dimension 2 "dimension '0'" 2 "${S[@]}" --grid 0x8x8
check negative-dimension 2 "dimension '-4'" 2 "${S[@]}" --grid -4x8x8
check not-a-number 2 "dimension '1.5' is not an integer: accepted 1 .. 1073741824" 2 "${S[@]}" --grid 8x8x1.5
check missing-dimension 2 "three dimensions" 2 "${S[@]}" --grid 10x10
check missing-grid 2 "missing --grid" 2 solve --kernel jacobi
check too-few-points 2 "each needs >= 1 point" 2 "${S[@]}" --grid 1x1x1
check unknown-kernel 2 "valid: jacobi, rbgs, spmv, cg, pipecg" 2 solve --kernel heat --grid 8^3
check unknown-scheme 2 "valid: masteronly, masteronly-threaded, funneled, multiple, multiple-own, adaptive, shared-window, partitioned" 2 "${S[@]}" --grid 8^3 --scheme hybrid
check negative-iters 2 "--iters -1 is out of range: accepted 0 .. 1073741824 iterations" 2 solve --kernel jacobi --grid 8^3 --iters -1
check zero-threads 2 "--threads 0 is out of range: accepted 1 .. 1024 threads" 2 "${S[@]}" --grid 8^3 --threads 0
check reserved-too-many 2 "1 <= m < threads" 2 "${S[@]}" --grid 8^3 --scheme multiple --threads 2 --reserved 2
check reserved-not-taken 2 "takes no --reserved" 2 "${S[@]}" --grid 8^3 --scheme funneled --threads 2 --reserved 1
check funneled-one-thread 2 "needs at least 2 threads" 2 "${S[@]}" --grid 8^3 --scheme funneled --threads 1
check multiple-one-thread 2 "needs at least 2 threads" 2 "${S[@]}" --grid 8^3 --scheme multiple --threads 1
check adaptive-one-thread 2 "needs at least 2 threads" 2 "${S[@]}" --grid 8^3 --scheme adaptive --threads 1
check proc-grid-product 2 "has 3 processes, but there are 2 ranks" 2 "${S[@]}" --grid 8^3 --proc-grid 1x1x3
check ranks-per-node 2 "--ranks-per-node 3 does not divide the 2 ranks" 2 "${S[@]}" --grid 8^3 --ranks-per-node 3
check cg-periodic 2 "cg needs Dirichlet" 2 solve --kernel cg --grid 8^3 --periodic
check rbgs-periodic-odd 2 "needs even NX, NY, NZ" 2 solve --kernel rbgs --grid 8x8x7 --periodic
check too-much-memory 2 "MB per node (2 ranks, halos and row padding included), more than the node's" 2 "${S[@]}" --grid 100000x100000x100000
check unknown-option 2 "unknown option '--fast'" 2 "${S[@]}" --grid 8^3 --fast
check json-unwritable 2 "cannot be opened for writing" 2 "${S[@]}" --grid 8^3 --json /nonexistent-dir/out.json
check unknown-command 2 "unknown command 'run'" 2 run --kernel jacobi
check no-command 2 "no command given" 2
check thread-level 2 "needs MPI_THREAD_MULTIPLE, but the MPI library provided MPI_THREAD_FUNNELED" 2 \
  "${S[@]}" --grid 8^3 --scheme multiple --threads 2 --thread-level funneled
# shared-window needs two ranks on a node; partitioned needs MPI-4 (checked
# where the library lacks it).
check shared-window-alone 2 "every node holds one rank" 2 "${S[@]}" --grid 8^3 --scheme shared-window \
  --ranks-per-node 1
if "$hympi" info --json 2>/dev/null < /dev/null | grep -q "needs MPI 4.0 partitioned"; then
  check partitioned-unavailable 2 "scheme 'partitioned' is not available with this MPI library (needs MPI 4.0 partitioned communication)" \
    2 "${S[@]}" --grid 8^3 --scheme partitioned
fi
check all-at-once 2 "--iters -3 is out of range" 2 solve --kernel jacobi --grid 8^3 --iters -3 --threads 0 --scheme nope
grep -qF -- "--threads 0 is out of range" <<< "$out" && grep -qF "unknown scheme" <<< "$out" ||
  fail "all-at-once: not every problem reported"
check bad-format 2 "--format 'dense'" 2 solve --kernel spmv --grid 8^3 --format dense
check sell-on-jacobi 2 '--format does not apply to jacobi (only to spmv, cg, pipecg)' 2 solve --kernel jacobi --grid 8^3 --format sell
check value-missing 2 "--iters needs a value" 2 solve --kernel jacobi --grid 8^3 --iters
# Streaming stores: the kernels and formats that have them; the same result
# as cached stores to the last bit; auto streams nothing on a small grid.
# A build without them (not x86) refuses --stores streaming, and says so.
check stores-bad 2 "--stores 'fast': expected auto, cached or streaming" 2 solve --kernel jacobi --grid 8^3 --stores fast
run 1 solve --kernel jacobi --grid 8^3 --iters 1 --stores streaming
if grep -qF "this build has no streaming stores" <<< "$out"; then
  check stores-unavailable 2 "this build has no streaming stores" 2 solve --kernel jacobi --grid 8^3 --stores streaming
else
  check stores-cg 2 "--stores streaming applies only to the one-sweep loop (--halo-depth 1, format stencil) of: jacobi, spmv" \
    2 solve --kernel cg --grid 8^3 --stores streaming
  check stores-sell 2 "--stores streaming applies only" 2 solve --kernel spmv --format sell --grid 8^3 --stores streaming
  check stores-deep 2 "--stores streaming applies only" 2 solve --kernel jacobi --grid 8^3 --halo-depth 2 --stores streaming
  check stores-streaming 0 "stores     streaming (--stores streaming)" 2 solve --kernel spmv --grid 21x10x9 --iters 3 \
    --stores streaming --json "$tmp/st.json"
  check stores-auto 0 "stores     cached (--stores auto)" 2 solve --kernel spmv --grid 21x10x9 --iters 3 --json "$tmp/sa.json"
  python3 - "$tmp/st.json" "$tmp/sa.json" <<'PY' || fail "stores content"
import json, sys
(st,) = json.load(open(sys.argv[1]))["results"]
(au,) = json.load(open(sys.argv[2]))["results"]
assert (st["stores"], st["stores_requested"]) == ("streaming", "streaming"), st["stores"]
assert (au["stores"], au["stores_requested"]) == ("cached", "auto"), au["stores"]
assert st["checksum"] == au["checksum"] and st["l2"] == au["l2"], (st["checksum"], au["checksum"])
PY
fi
# Temporal blocking: depth range, kernels and formats that have it, a halo
# deeper than the local box.
check halo-depth-zero 2 "--halo-depth 0 is out of range: accepted 1 .. 64 layers" 2 "${S[@]}" --grid 8^3 --halo-depth 0
check halo-depth-cg 2 "--halo-depth 2 (temporal blocking) applies only to: jacobi, rbgs, spmv, in format stencil (cg is not one)" \
  2 solve --kernel cg --grid 8^3 --halo-depth 2
# rbgs: H colours per exchange (10 colours in 5 iterations: blocks of 3, 3, 3, 1).
check halo-depth-rbgs 0 "halo depth 3: 4 exchanges for 5 iterations of 2 sweeps" 2 solve --kernel rbgs --grid 8^3 --iters 5 --halo-depth 3
check halo-depth-rbgs-too-deep 2 "--halo-depth 5 needs at least 5 points per rank along z, but 8 points over 2 processes give 4" \
  2 solve --kernel rbgs --grid 8^3 --halo-depth 5
check halo-depth-crs 2 "applies only to: jacobi, rbgs, spmv, in format stencil" 2 solve --kernel spmv --format crs --grid 8^3 --halo-depth 2
check halo-depth-too-deep 2 "--halo-depth 5 needs at least 5 points per rank along z, but 8 points over 2 processes give 4" \
  2 "${S[@]}" --grid 8^3 --halo-depth 5

check main-help 0 "usage: hympi <command>" 2 --help
check solve-help 0 "usage: hympi solve" 2 solve --help
check info-help 0 "usage: hympi info" 2 info --help
check info-text 0 "multiple-own" 2 info --threads 2
check pure-mpi 0 "= pure MPI (class 1)" 2 solve --kernel jacobi --grid 8^3 --threads 1

# info --json: the schemes list as docs/json-schema.md describes it.
check info-json 0 "" 2 info --json "$tmp/info.json" --ranks-per-node 1
python3 - "$tmp/info.json" <<'PY' || fail "info-json content"
import json, sys
d = json.load(open(sys.argv[1]))
names = [s["name"] for s in d["schemes"]]
assert names == ["masteronly", "masteronly-threaded", "funneled", "multiple", "multiple-own", "adaptive",
                 "shared-window", "partitioned"], names
for s in d["schemes"]:
    assert s["mpi_thread_level"].startswith("MPI_THREAD_") and isinstance(s["overlap"], bool)
    assert isinstance(s["takes_reserved"], bool) and s["class"]
assert [k["name"] for k in d["kernels"]] == ["jacobi", "rbgs", "spmv", "cg", "pipecg"]
assert [k["name"] for k in d["kernels"] if k["converges"]] == ["cg", "pipecg"]
assert [k["name"] for k in d["kernels"] if k["temporal_blocking"]] == ["jacobi", "rbgs", "spmv"]
assert {k["periodic"] for k in d["kernels"]} <= {"allowed", "even-sizes", "forbidden"}
b = {x["name"]: x for x in d["benchmarks"]}
assert list(b) == ["beff", "cyclic3d", "internode", "ratio", "overlap", "pack"], list(b)
assert b["internode"]["min_nodes"] == 2 and b["pack"]["uses_threads"]
assert [o["name"] for o in b["beff"]["options"]][0] == "--lmax" and b["beff"]["options"][0]["default"]
c = d["context"]
assert c["schema_version"] == 1 and c["ranks"] == 2 and c["nodes"]["kind"] == "virtual"
assert len(c["thread_cpus"]) == 2 and c["thread_level_provided"].startswith("MPI_THREAD_")
PY

# solve --json: one record with the keys the model reads.
check solve-json 0 "checksum" 2 solve --kernel cg --grid 9x8x7 --scheme funneled --threads 2 --repeat 3 \
  --json "$tmp/solve.json"
python3 - "$tmp/solve.json" <<'PY' || fail "solve-json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["context"]["schema_version"] == 1 and d["context"]["threads_per_rank"] == 2
(r,) = d["results"]
for key in ["kernel", "scheme", "grid", "iters", "iterations", "residual", "checksum", "l2", "time_s",
            "mlups", "breakdown_s", "fractions", "bytes_per_exchange"]:
    assert key in r, key
assert r["kernel"] == "cg" and r["scheme"] == "funneled" and r["grid"] == [9, 8, 7]
assert r["reserved"] == 1 and r["threads"] == 2
assert r["residual"] < 1e-8 and r["iterations"] > 0
t = r["time_s"]
assert 0 < t["min"] <= t["median"] <= t["max"]
assert len(r["breakdown_s"]["comm"]) == 2
f = r["fractions"]
assert abs(f["f_comm"] + f["f_comp_non"] + f["f_comp_overlap"] - 1) < 1e-9
PY

# Temporal blocking: the same field as one exchange per iteration, to the
# last bit; the exchange count and the deeper faces (with edges and corners)
# in the record and the table.
check halo-depth-1 0 "checksum" 2 solve --kernel jacobi --grid 12x10x9 --periodic --iters 7 --json "$tmp/d1.json"
check halo-depth-3 0 "halo depth 3: 3 exchanges for 7 iterations" 2 solve --kernel jacobi --grid 12x10x9 \
  --periodic --iters 7 --halo-depth 3 --json "$tmp/d3.json"
python3 - "$tmp/d1.json" "$tmp/d3.json" <<'PY' || fail "halo-depth content"
import json, sys
(one,) = json.load(open(sys.argv[1]))["results"]
(deep,) = json.load(open(sys.argv[2]))["results"]
assert one["checksum"] == deep["checksum"] and one["l2"] == deep["l2"], (one["checksum"], deep["checksum"])
assert one["halo_depth"] == 1 and one["exchanges"] == 7
assert deep["halo_depth"] == 3 and deep["exchanges"] == 3 and deep["iters"] == 7
# Periodic: each rank has a neighbour (itself along x and y) across all 6
# faces at depth 1, and across all 26 faces, edges and corners at depth 3.
b1 = one["bytes_per_exchange"]["intra_node"] + one["bytes_per_exchange"]["inter_node"]
b3 = deep["bytes_per_exchange"]["intra_node"] + deep["bytes_per_exchange"]["inter_node"]
m1 = one["messages_per_exchange"]["intra_node"] + one["messages_per_exchange"]["inter_node"]
m3 = deep["messages_per_exchange"]["intra_node"] + deep["messages_per_exchange"]["inter_node"]
assert m3 == 26 * 2 and m1 == 6 * 2, (m1, m3)
assert b3 > 3 * b1, (b1, b3)
PY

echo "cli_test: $("$mpiexec" --version 2>&1 | head -1)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
