#!/usr/bin/env bash
# hympi bench under MPI: every benchmark runs at 2 and 4 ranks with tiny sizes and writes a valid JSON document; the bytes each point
# reports as moved (counted from its MPI send calls) equal the pattern's
# arithmetic; the b_eff summary follows from its points; pack's halos are
# right; bad input exits 2 on every rank with one message.
#   usage: bench_test.sh HYMPI MPIEXEC "PREFLAGS" [full|small]
#   (PREFLAGS ;-separated, as CMake passes lists; "small": beff and cyclic3d,
#   thousands of short messages, at 2 ranks only, for an MPI that spins when
#   oversubscribed; the default is "small" for MPICH's mpiexec, else "full")
set -u
hympi=$1
mpiexec=$2
IFS=';' read -r -a preflags <<< "${3:-}"
size=${4:-}
if [ -z "$size" ]; then
  size=full
  "$mpiexec" --version 2>&1 | grep -qiE "hydra|mpich" && size=small
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CHECK_TIMEOUT=120
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"

# validate NAME JSON NP: the document's checks for its benchmark (python3).
validate() {
  python3 - "$2" "$3" <<'PY' || fail "$1: JSON content"
import json, math, sys
path, P = sys.argv[1], int(sys.argv[2])
d = json.load(open(path))
c = d["context"]
assert c["schema_version"] == 1 and c["ranks"] == P, c
res = d["results"]
assert res and all(r["benchmark"] == res[0]["benchmark"] for r in res)
bench = res[0]["benchmark"]
points = [r for r in res if r["kind"] == "point"]
for r in res:
    if "time_s" in r:
        t = r["time_s"]
        assert 0 < t["min"] <= t["median"] <= t["max"], r

def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))

if bench in ("beff", "cyclic3d"):
    (s,) = [r for r in res if r["kind"] == "summary"]
    L = s["lengths"]
    assert len(L) == 21 and L[:13] == [2**i for i in range(13)] and L[-1] == s["lmax_bytes"], L
    assert all(a <= b for a, b in zip(L, L[1:])), L  # equal when lmax = 4096
    per = 2 if bench == "beff" else 6     # messages each rank sends per exchange
    for r in points:
        assert r["bytes_moved"] == per * r["bytes"] * P, r
        assert close(r["bandwidth_MBps"], r["bytes_moved"] / r["time_s"]["min"] / 1e6), r
    assert len(points) == 3 * 21 * len({r["pattern"] for r in points})
if bench == "beff":
    for key in ["b_eff_MBps", "b_eff_per_process_MBps", "at_lmax_MBps", "pingpong_lmax_MBps", "lmax_bytes"]:
        assert s[key] > 0, key
    pp = [r for r in res if r["kind"] == "pingpong"]
    assert len(pp) == 21 and all(r["bytes_moved"] == 2 * r["bytes"] for r in pp), pp
    assert all(r["round_trips_per_repetition"] >= 4 and r["buffers"] in (1, 2) for r in pp), pp
    # b_eff from the points: best method per length, arithmetic mean over
    # lengths, geometric mean over the patterns of each kind, then of the kinds
    best = {}
    for r in points:
        k = (r["pattern_kind"], r["pattern"], r["bytes"])
        best[k] = max(best.get(k, 0), r["bandwidth_MBps"])
    def gmean(v): return math.exp(sum(map(math.log, v)) / len(v))
    kinds = {}
    for kind in ("ring", "random"):
        pats = sorted({p for (k, p, _) in best if k == kind})
        assert pats, kind
        kinds[kind] = gmean([sum(best[(kind, p, l)] for l in L) / len(L) for p in pats])
        lmax = gmean([best[(kind, p, L[-1])] for p in pats])
        kinds[kind + "_lmax"] = lmax
    assert close(s["b_eff_MBps"], gmean([kinds["ring"], kinds["random"]])), (s, kinds)
    assert close(s["b_eff_per_process_MBps"], s["b_eff_MBps"] / P)
    assert close(s["at_lmax_MBps"], gmean([kinds["ring_lmax"], kinds["random_lmax"]]))
    ring_sizes = sorted(int(r["pattern"][5:]) for r in points if r["pattern"].startswith("ring-"))
    assert ring_sizes[-1] == P, ring_sizes
if bench == "internode":
    for r in points:
        assert r["bytes_moved"] == r["k"] * r["nodes"] * r["bytes"], r
        assert 0 < r["share_of_max"] <= 1
    for s in (r for r in res if r["kind"] == "summary"):
        assert 0 < s["masteronly_share"] <= 1
        ks = [r["k"] for r in points if r["bytes"] == s["bytes"]]
        assert ks == list(range(1, s["ranks_per_node"] + 1)), ks
if bench == "ratio":
    for r in points:
        n, c, L = r["nodes"], r["ranks_per_node"], r["bytes"]
        assert n * c == P
        assert r["pure"]["bytes_moved"] == (2 if c > 1 else 1) * L * P, r
        assert r["hybrid"]["bytes_moved"] == n * c * L and r["hybrid_bytes"] == c * L, r
        assert close(r["ratio"], r["hybrid"]["time_s"]["median"] / r["pure"]["time_s"]["median"])
if bench == "overlap":
    n = c["threads_per_rank"]
    want = ["masteronly", "funneled"] + ["multiple"] * (n - 1) + ["adaptive"]
    for nk in sorted({r["nk_loc"] for r in points}):
        rs = [r for r in points if r["nk_loc"] == nk]
        assert [r["scheme"] for r in rs] == want, rs
        assert [r["reserved"] for r in rs if r["scheme"] == "multiple"] == list(range(1, n))
        for r in rs:
            for key in ["epsilon", "threads", "f_comm", "f_comp_non", "f_comp_overlap", "x_comm", "x_non",
                        "x_overlap"]:
                assert key in r, key
            e = r["epsilon"]
            assert 0 < e["min"] <= e["median"] <= e["max"], r
            assert abs(r["f_comm"] + r["f_comp_non"] + r["f_comp_overlap"] - 1) < 1e-9
            # eq. (14)'s costs give back the masteronly time per iteration
            T = rs[0]["time_s"]["median"] / r["iters"]
            model = r["plane"] ** 2 * (r["x_comm"] + (r["x_non"] + r["x_overlap"]) * nk)
            assert close(T, model), (T, model)
            # the spmv halo per rank: two k planes of plane^2 doubles and, the
            # grid being periodic and uncut in i and j, four plane x nk_loc faces
            bx = r["bytes_per_exchange"]
            assert bx["intra_node"] + bx["inter_node"] == P * 8 * (2 * r["plane"] ** 2 + 4 * r["plane"] * nk), bx
        assert rs[0]["epsilon"]["median"] == 1
if bench == "pack":
    (s,) = [r for r in res if r["kind"] == "summary"]
    assert s["halos_ok"] is True
    n = c["threads_per_rank"]
    for r in points:
        assert r["halos_ok"] is True, r
        assert r["bytes_moved"] == P * 6 * r["n"] ** 2 * 8, r
        assert r["messages"] == P * 6, r
    for f in {r["n"] for r in points}:
        got = sorted((r["method"], r["threads"]) for r in points if r["n"] == f)
        assert got == sorted([("datatype", 1), ("library", 1), ("sendrecv", 1)] + [("pack", t) for t in range(1, n + 1)]), got
print("ok", bench, P, len(res))
PY
}

bench() {  # bench NAME NP ARGS...: run, expect exit 0, validate the document
  local name=$1 np=$2 t0=$SECONDS
  shift 2
  local json="$tmp/$name.json"
  rm -f "$json"
  check "$name" 0 "# hympi bench" "$np" bench "$@" --json "$json"
  [ -f "$json" ] && validate "$name" "$json" "$np"
  echo "  $name: $((SECONDS - t0)) s"
}

export OMP_NUM_THREADS=2
bench beff-np2 2 beff --lmax 65536 --repeat 2
# NetPIPE's method: round trips filling 5 ms per repetition, one warm buffer.
bench beff-np2-window 2 beff --lmax 16kB --repeat 2 --pingpong-ms 5 --pingpong-buffers 1
bench cyclic3d-np2 2 cyclic3d --lmax 4KiB --repeat 2
bench cyclic3d-np2-8k 2 cyclic3d --lmax 8KiB --repeat 1
bench internode-np2 2 internode --ranks-per-node 1 --sizes 64kB,1000 --repeat 2
bench ratio-np2 2 ratio --ranks-per-node 1 --sizes 1000,64kB --repeat 2
bench overlap-np2 2 overlap --threads 2 --plane 6 --nk-loc 1,3 --iters 2 --repeat 2
bench pack-np2 2 pack --threads 2 --faces 3,8 --repeat 2
bench pack-np1 1 pack --threads 1 --faces 5 --repeat 1
if [ "$size" = full ]; then
  bench beff-np3 3 beff --lmax 16kB --repeat 1
  bench beff-np4 4 beff --lmax 65536 --repeat 2
  bench cyclic3d-np4 4 cyclic3d --lmax 8kB --repeat 1
fi
bench internode-np4 4 internode --ranks-per-node 2 --sizes 100kB --repeat 2
bench ratio-np4 4 ratio --ranks-per-node 2 --sizes 1000,100kB --repeat 2
bench overlap-np4 4 overlap --threads 3 --plane 4 --nk-loc 2 --iters 2 --repeat 1
bench pack-np4 4 pack --threads 2 --faces 4,7 --repeat 2
bench ratio-round-robin 4 ratio --ranks-per-node 2 --rank-order round-robin --sizes 4kB --repeat 1

# The human table says which nodes these were.
check virtual-nodes 0 "2 virtual nodes" 2 bench ratio --ranks-per-node 1 --sizes 1000 --repeat 1
check real-nodes 0 "1 real node" 2 bench pack --faces 2 --repeat 1

# Bad input: one message, exit 2 on every rank.
check beff-one-rank 2 "needs at least 2 ranks, but runs on 1" 1 bench beff --lmax 4096
check internode-one-node 2 "needs at least 2 nodes, but runs on 1" 2 bench internode
check ratio-one-node 2 "needs at least 2 nodes" 2 bench ratio --ranks-per-node 2
check lmax-small 2 "--lmax 4000 is below 4 kB" 2 bench beff --lmax 4kB
check pingpong-buffers 2 "--pingpong-buffers 3 is out of range" 2 bench beff --pingpong-buffers 3
check pingpong-ms-on-cyclic3d 2 "unknown option '--pingpong-ms'" 2 bench cyclic3d --pingpong-ms 5
check lmax-large 2 "above the memory cap" 2 bench beff --lmax 1GB
check lmax-bad 2 "--lmax '8XB'" 2 bench cyclic3d --lmax 8XB
check sizes-empty 2 "--sizes is empty" 2 bench internode --ranks-per-node 1 --sizes ""
check sizes-bad 2 "'2MBx' is not a byte count" 2 bench internode --ranks-per-node 1 --sizes 1MB,2MBx
check sizes-zero 2 "'0' is out of range: accepted 1 byte" 2 bench ratio --ranks-per-node 1 --sizes 0
check unknown-benchmark 2 "unknown benchmark 'bw' (valid: beff, cyclic3d, internode, ratio, overlap, pack)" 2 bench bw
check no-benchmark 2 "missing benchmark name (valid: beff" 2 bench --repeat 2
check ranks-per-node 2 "--ranks-per-node 3 does not divide the 2 ranks" 2 bench beff --ranks-per-node 3
check overlap-one-thread 2 "needs --threads >= 2" 2 bench overlap --threads 1
check nk-loc-bad 2 "--nk-loc '2,x'" 2 bench overlap --threads 2 --nk-loc 2,x
check unknown-option 2 "unknown option '--fast'" 2 bench beff --fast
check json-unwritable 2 "cannot be opened for writing" 2 bench pack --json /nonexistent-dir/out.json
# A rank that fails mid-run takes the others down (MPI_Abort), none hangs.
export HYMPI_TEST_FAIL_RANK=1
run 2 bench ratio --ranks-per-node 1 --sizes 1000 --repeat 1 --json "$tmp/fail.json"
unset HYMPI_TEST_FAIL_RANK
if [ "$rc" = 124 ]; then
  fail "rank-fails: hung"
elif [ "$rc" = 0 ] || ! grep -qF "hympi: error on rank 1: failing on purpose" <<< "$out" || [ -e "$tmp/fail.json" ]; then
  fail "rank-fails: exit $rc, no document expected; output: $(head -c 400 <<< "$out")"
else
  passed=$((passed + 1))
fi
check bench-help 0 "internode" 2 bench --help
check beff-help 0 "--lmax BYTES" 2 bench beff --help

# The roofline benchmark (make bench) at 2 ranks on a tiny grid: every row,
# the blocked and in-cache cases and the traffic model, finite numbers.
roofline=$(dirname "$hympi")/hympi_roofline
if [ -x "$roofline" ]; then
  out=$(timeout 120 "$mpiexec" -n 2 "${preflags[@]}" "$roofline" --grid 24 --iters 3 --rounds 1 \
        --halo-depth 2 2>&1)
  rc=$?
  if [ "$rc" != 0 ]; then
    fail "roofline: exit $rc: $(head -c 400 <<< "$out")"
  elif ! python3 - "$out" <<'PY'; then
import math, sys
table, model = sys.argv[1].split("# traffic model", 1)
rows = {l.split()[0]: l.split()[1:] for l in table.splitlines() if l.startswith("  ")}
model_rows = {l.split()[0]: l.split()[1:] for l in model.splitlines() if l.startswith("  ")}
assert set(model_rows) == {"jacobi-cached", "stencil-cached", "spmv-crs", "spmv-sell", "rbgs",
                           "jacobi-depth-2", "spmv-depth-2"}, model_rows
# The blocked cases' model rows, each after the tile height it ran with.
import re
tiles = dict(re.findall(r"^# (\S+): tiles of ([1-9][0-9]*) rows, [0-9.]+ B of memory traffic per update$",
                        model, re.M))
assert set(tiles) == {"jacobi-depth-2", "spmv-depth-2"}, tiles
for name, cols in model_rows.items():
    assert all(math.isfinite(float(c)) and float(c) > 0 for c in cols), (name, cols)
for name in ["stream-copy", "jacobi", "jacobi-cached", "stencil-cached", "spmv-crs", "spmv-sell",
             "jacobi-depth-2", "spmv-depth-2", "jacobi-in-cache", "crs-in-cache", "rbgs",
             "rbgs-depth-2", "rbgs-in-cache"]:
    assert name in rows, name
# Each blocked kernel over its depth-1 run, per round: a finite ratio, not
# negative. It may print as 0.00 (two decimals): a fresh-clone make test
# printed "spmv-depth-2 over spmv-stencil ... median 0.00x" when a run of
# these microsecond solves lost its core to the other lanes for a while.
blocked = dict(re.findall(r"^# (\S+)-2 over \S+, per round: median ([0-9.]+)x", sys.argv[1], re.M))
assert set(blocked) == {"jacobi-depth", "spmv-depth", "rbgs-depth"}, blocked
assert all(math.isfinite(float(v)) and float(v) >= 0 for v in blocked.values()), blocked
# The last column says how each case stored its output; on 24^3 points
# --stores auto gives cached stores, the *-cached cases always do.
for name, cols in rows.items():
    assert cols[-1] in ("cached", "streaming"), (name, cols)
    if name != "stream-copy-nt":
        assert cols[-1] == "cached", (name, cols)
    # Finite and not negative; a ratio may print as 0.000 when the case ran
    # slowly beside other work (the test lanes share the cores), its rate not.
    numbers = [float(c) for c in cols[:-1] if c != "-"]
    assert all(math.isfinite(v) and v >= 0 for v in numbers), (name, cols)
    assert numbers and numbers[0] > 0, (name, cols)
assert "2 rank(s)" in sys.argv[1] and "traffic model" in sys.argv[1]
PY
    fail "roofline: table (whole output, the assertion above): $out"
  else
    passed=$((passed + 1))
  fi
  out=$(timeout 60 "$mpiexec" -n 1 "${preflags[@]}" "$roofline" --halo-depth 65 2>&1)
  rc=$?
  [ "$rc" = 2 ] && grep -qF "halo-depth above 64" <<< "$out" && passed=$((passed + 1)) ||
    fail "roofline-bad-depth: exit $rc: $(head -c 300 <<< "$out")"
  out=$(timeout 60 "$roofline" --help 2>&1)
  rc=$?
  [ "$rc" = 0 ] && grep -qF "usage: hympi_roofline" <<< "$out" && passed=$((passed + 1)) ||
    fail "roofline-help: exit $rc: $(head -c 300 <<< "$out")"
  # A table it cannot write (a full disk) fails, on one rank started alone.
  out=$(timeout 60 "$roofline" --grid 8 --iters 1 --rounds 1 2>&1 > /dev/full)
  rc=$?
  [ "$rc" = 1 ] && grep -qF "could not write the table" <<< "$out" && passed=$((passed + 1)) ||
    fail "roofline-full-disk: exit $rc: $(head -c 300 <<< "$out")"
fi

# make bench's script refuses what it would oversubscribe or cannot read,
# before any mpirun.
script=$(dirname "$0")/../bench/run_roofline.sh
out=$(RANKS=100000 bash "$script" 2>&1)
rc=$?
[ "$rc" = 2 ] && grep -qF "not run" <<< "$out" && grep -qF "nothing run" <<< "$out" &&
  passed=$((passed + 1)) || fail "run_roofline-too-many-ranks: exit $rc: $(head -c 300 <<< "$out")"
for bad in "--threads abc" "--threads 0"; do
  out=$(RANKS=1 bash "$script" $bad 2>&1)
  rc=$?
  [ "$rc" = 2 ] && grep -qF "positive integer" <<< "$out" && passed=$((passed + 1)) ||
    fail "run_roofline $bad: exit $rc: $(head -c 300 <<< "$out")"
done

echo "bench_test: $("$mpiexec" --version 2>&1 | head -1)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
