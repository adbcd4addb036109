"""Copy a study directory keeping only what `hympi-lab project` reads.

    python prune_study.py SRC DST [KERNELS]

Keeps study.json whole, and of results.jsonl the ping-pong (beff), internode,
solve and depth (temporal blocking) records with their point lines (n_results recounted); drops the
b_eff patterns, raw/ and the traces. KERNELS (comma-separated) keeps only the
solve and depth runs of those kernels. The numbers kept are untouched.
"""

import json
import shutil
import sys
from pathlib import Path

KEEP = {("beff", "pingpong"), ("internode", "point"), ("internode", "summary"), ("solve", "solve"),
        ("depth", "solve")}


def main(src: Path, dst: Path, kernels: str = "") -> None:
    wanted = set(kernels.split(",")) if kernels else None
    dst.mkdir(parents=True, exist_ok=False)
    shutil.copy(src / "study.json", dst / "study.json")
    out, kept = [], 0
    for line in (src / "results.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["record"] == "result":
            kernel = rec["result"].get("kernel")
            if (rec["step"], rec["result"].get("kind")) in KEEP and (
                    wanted is None or rec["step"] not in ("solve", "depth") or kernel in wanted):
                out.append(line)
                kept += 1
        elif rec["record"] == "point":
            if kept:
                rec["n_results"] = kept
                out.append(json.dumps(rec, sort_keys=True))
            kept = 0
    (dst / "results.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), *sys.argv[3:4])
