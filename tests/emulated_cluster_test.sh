#!/usr/bin/env bash
# Emulated cluster (scripts/emulated-cluster): `hympi bench internode` across
# 2 network-namespace nodes joined by 1 Gbit/s links must measure a per-node
# bandwidth for large messages between 70 % and 105 % of the shaped rate
# (125 MB/s, MB = 10^6 B), from the best of 5 repetitions. Skipped (exit 77) when not root or when this
# machine cannot host the cluster (no ip netns, tc, unshare ...).
#   usage: emulated_cluster_test.sh HYMPI openmpi|mpich
set -u
hympi=$1
mpi=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cluster=$root/scripts/emulated-cluster
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the emulated cluster needs root (network namespaces, tc)"
  exit 77
fi
if ! why=$("$cluster" check 2>&1); then
  echo "SKIP: this machine cannot host the emulated cluster: $why"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
size=16000000
# --timeout: MPICH 4.0.2 with UCX over TCP can hang in MPI_Finalize after the
# results are written (docs/emulated-cluster.md); the JSON decides.
"$cluster" session --nodes 2 --cpus-per-node 1 --link 1gbit --mpi "$mpi" --timeout 180 -- \
  "$hympi" bench internode --sizes "$size" --repeat 5 --json "$tmp/internode.json"
rc=$?
if [ ! -s "$tmp/internode.json" ]; then
  echo "FAIL: internode wrote no JSON (launcher exit $rc)"
  echo "0 passed, 1 failed"
  exit 1
fi
[ "$rc" -ne 0 ] && echo "WARNING: launcher exit $rc after the JSON was written (see docs/emulated-cluster.md)"
python3 - "$tmp/internode.json" "$size" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
size = int(sys.argv[2])
assert doc["context"]["nodes"]["count"] == 2 and doc["context"]["nodes"]["kind"] == "real", doc["context"]["nodes"]
points = [r for r in doc["results"] if r.get("kind") == "point" and r.get("k") == 1 and r.get("bytes") == size]
assert points, "no k = 1 point at the large size"
p = points[0]
# The best repetition, as b_eff takes it: another job stealing the CPU for a
# moment slows one repetition, not the link.
bw = p["bytes_moved"] / p["time_s"]["min"] / p["nodes"] / 1e6
shaped = 125.0  # 1 Gbit/s in MB/s
share = bw / shaped
print(f"internode across 2 emulated nodes, 1 Gbit/s links: best {bw:.1f} MB/s per node "
      f"(median {p['bandwidth_per_node_MBps']:.1f}) = {100 * share:.0f} % of {shaped} MB/s")
ok = 0.70 <= share <= 1.05
print("1 passed, 0 failed" if ok else "0 passed, 1 failed")
sys.exit(0 if ok else 1)
PY
