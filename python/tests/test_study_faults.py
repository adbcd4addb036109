"""A rank that dies in the middle of a study's run: the MPI job ends
promptly, the study records the point as failed with its exit code, goes on
with the other points, and exits 1 (issue 9, faults).

The fault is injected by a wrapper given as --hympi: rank 1 of every `bench
pack` run is killed with SIGKILL as it starts, while rank 0 runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HYMPI = ROOT / "build" / "bin" / "hympi"

if not HYMPI.is_file():
    if os.environ.get("HYMPI_REQUIRE_NATIVE") == "1":
        raise RuntimeError(f"{HYMPI} is not built (make build)")
    pytest.skip("build/bin/hympi is not built", allow_module_level=True)


def test_a_killed_rank_ends_its_run_and_the_study_goes_on(tmp_path: Path) -> None:
    wrapper = tmp_path / "hympi"
    wrapper.write_text(
        "#!/bin/sh\n"
        "rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}\n"
        'if [ "$rank" = 1 ] && [ "$1" = bench ] && [ "$2" = pack ]; then kill -9 $$; fi\n'
        f'exec "{HYMPI}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    outdir = tmp_path / "study"
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "hympi_lab.cli", "study", "--quick", "--ranks", "2", "--threads", "2",
         "--steps", "info,pack,beff", "--hympi", str(wrapper), "--no-report", "--out", str(outdir)],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    elapsed = time.monotonic() - started
    assert proc.returncode == 1, proc.stdout + proc.stderr
    status = {r["point"]: r for r in map(json.loads, (outdir / "results.jsonl").read_text().splitlines())
              if r["record"] == "point"}
    assert status["pack"]["status"] == "failed" and status["pack"]["exit_code"] != 0
    assert not status["pack"]["timed_out"]
    assert status["info"]["status"] == "ok" and status["beff"]["status"] == "ok"
    assert "1 run(s) failed" in proc.stdout
    assert elapsed < 120, f"the study took {elapsed:.0f} s"
