"""What the study's tests share: `hympi-lab` run as a user runs it, and the
records of a study directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# A short study of every kind of step: 2 ranks x 2 threads, one kernel.
STUDY_OPTS = ["--quick", "--ranks", "2", "--threads", "2", "--kernels", "jacobi",
              "--steps", "info,beff,pack,overlap,solve", "--no-report"]


def run_cli(args: list[str], env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "hympi_lab.cli", *args], capture_output=True,
                          text=True, env=full_env, timeout=timeout, cwd=ROOT)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def point_keys(outdir: Path) -> set[str]:
    return {r["point"] for r in lines(outdir / "results.jsonl") if r["record"] == "point"}


def wait_for_points(outdir: Path, count: int, timeout_s: float = 120) -> None:
    """Until a running study has recorded `count` points (or timeout_s passed)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        path = outdir / "results.jsonl"
        if path.exists() and path.read_text().count('"record":"point"') >= count:
            return
        time.sleep(0.05)
