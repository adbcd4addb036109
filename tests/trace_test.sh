#!/usr/bin/env bash
# hympi solve --trace under MPI (2 ranks): the Chrome Trace Event document
# has a timeline for every (rank, thread), with steps that never overlap on a
# thread and idle events filling the gaps; funneled's thread 0 only
# communicates; masteronly's other threads are idle while thread 0 is in
# MPI; tracing does not change the result; a bad path exits 2 on every rank.
#   usage: trace_test.sh HYMPI MPIEXEC "PREFLAGS"   (PREFLAGS ;-separated, as CMake passes lists)
set -u
hympi=$1
mpiexec=$2
IFS=';' read -r -a preflags <<< "${3:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"

# validate NAME TRACE RANKS THREADS [PYTHON CHECKS]: what every trace must
# satisfy, then the caller's checks (python3, with `per` = {(pid, tid):
# [X events in ts order]} and `d` = the document).
validate() {
  local name=$1 path=$2 ranks=$3 threads=$4 extra=${5:-}
  python3 - "$path" "$ranks" "$threads" "$extra" <<'PY' || fail "$name: trace content"
import json, sys
path, P, n, extra = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
d = json.load(open(path))
o = d["otherData"]
assert d["displayTimeUnit"] == "ms"
assert o["hympi_trace_version"] == 1 and o["repetition"] == "median", o
assert o["ranks"] == P and o["threads"] == n and len(o["loop_elapsed_s"]) == P, o
assert o["context"]["schema_version"] == 1 and o["context"]["ranks"] == P
names = {"compute_interior", "compute_boundary", "pack", "unpack", "comm", "idle"}
meta = {(e["name"], e["pid"], e["tid"]) for e in d["traceEvents"] if e["ph"] == "M"}
per = {}
for e in d["traceEvents"]:
    if e["ph"] == "M":
        continue
    assert e["ph"] == "X" and e["cat"] == "phase" and e["name"] in names, e
    assert e["dur"] >= 0 and e["ts"] >= 0, e
    per.setdefault((e["pid"], e["tid"]), []).append(e)
assert sorted(per) == [(p, t) for p in range(P) for t in range(n)], sorted(per)
eps = 1e-3  # microseconds: the document's rounding
for (p, t), evs in per.items():
    assert ("process_name", p, 0) in meta and ("thread_name", p, t) in meta, (p, t)
    assert [e["ts"] for e in evs] == sorted(e["ts"] for e in evs), (p, t, "not in ts order")
    end = o["loop_elapsed_s"][p] * 1e6
    cursor = 0.0
    for e in evs:
        # No overlap on a thread, no gap of more than 0.5 us (idle fills it).
        assert e["ts"] >= cursor - eps, (p, t, "overlap", e, cursor)
        assert e["ts"] - cursor <= 0.5 + eps, (p, t, "gap", e, cursor)
        cursor = e["ts"] + e["dur"]
    assert abs(cursor - end) <= 0.5 + eps, (p, t, "does not reach the loop end", cursor, end)
    assert any(e["name"] != "idle" for e in evs), (p, t, "no step")
exec(extra)
PY
}

S=(solve --kernel jacobi --grid 24^3 --iters 5 --threads 3)

# funneled: thread 0 is the communication thread, 1 and 2 take the interior.
check funneled-trace 0 "trace      $tmp/funneled.json" 2 "${S[@]}" --scheme funneled --trace "$tmp/funneled.json"
traced_checksum=$(grep '^checksum' <<< "$out")
validate funneled "$tmp/funneled.json" 2 3 '
for p in range(P):
    zero = {e["name"] for e in per[(p, 0)]}
    assert "comm" in zero and "compute_interior" not in zero, (p, zero)
    for t in (1, 2):
        assert "compute_interior" in {e["name"] for e in per[(p, t)]}, (p, t)
'
check funneled-untraced 0 "checksum" 2 "${S[@]}" --scheme funneled
[ "$traced_checksum" = "$(grep '^checksum' <<< "$out")" ] ||
  fail "checksum with --trace ($traced_checksum) differs from without ($(grep '^checksum' <<< "$out"))"

# masteronly: threads 1 and 2 are idle while thread 0 is in MPI.
check masteronly-trace 0 "events" 2 "${S[@]}" --scheme masteronly --repeat 3 --trace "$tmp/masteronly.json"
validate masteronly "$tmp/masteronly.json" 2 3 '
def busy_within(evs, a, b):
    return sum(max(0.0, min(b, e["ts"] + e["dur"]) - max(a, e["ts"])) for e in evs if e["name"] != "idle")
def idle_within(evs, a, b):
    return sum(max(0.0, min(b, e["ts"] + e["dur"]) - max(a, e["ts"])) for e in evs if e["name"] == "idle")
for p in range(P):
    comms = [e for e in per[(p, 0)] if e["name"] == "comm"]
    assert comms, p
    total = sum(e["dur"] for e in comms)
    for t in (1, 2):
        idle = 0.0
        for c in comms:
            a, b = c["ts"], c["ts"] + c["dur"]
            assert busy_within(per[(p, t)], a, b) <= 0.01 * c["dur"] + 2 * eps, (p, t, c)
            idle += idle_within(per[(p, t)], a, b)
        assert idle >= 0.9 * total, (p, t, idle, total)
'

# Every scheme and cg: steps never nest (no overlap on a thread).
for scheme in masteronly-threaded multiple multiple-own adaptive; do
  check "$scheme-trace" 0 "events" 2 solve --kernel jacobi --grid 16^3 --iters 3 --threads 2 \
    --scheme "$scheme" --trace "$tmp/$scheme.json"
  validate "$scheme" "$tmp/$scheme.json" 2 2
done
check cg-trace 0 "events" 2 solve --kernel cg --grid 12^3 --threads 2 --scheme funneled --trace "$tmp/cg.json"
validate cg "$tmp/cg.json" 2 2 '
assert o["kernel"] == "cg" and o["iters"] > 0
assert any(e["name"] == "comm" for e in per[(0, 0)])
'

# Bad input: exit 2 on every rank, one message.
check trace-unwritable 2 "--trace '/nonexistent-dir/t.json': cannot be opened for writing" 2 \
  "${S[@]}" --trace /nonexistent-dir/t.json
check trace-same-as-json 2 "--trace and --json name the same file" 2 "${S[@]}" \
  --trace "$tmp/same.json" --json "$tmp/same.json"
check trace-needs-value 2 "--trace needs a value" 2 "${S[@]}" --trace
check trace-not-for-bench 2 "unknown option '--trace'" 2 bench beff --trace "$tmp/b.json"
check trace-not-for-info 2 "unknown option '--trace'" 2 info --trace "$tmp/i.json"
check trace-help 0 "--trace PATH" 2 solve --help

echo "trace_test: $("$mpiexec" --version 2>&1 | head -1)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
