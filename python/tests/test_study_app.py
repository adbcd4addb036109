"""`hympi-lab study --app`: a user's own program (built on hympi's Domain API)
measured under every scheme, and the report's recommendation for it.

Runs examples/heat.c (build/bin/heat_c) at 2 ranks x 2 threads; needs the
native build (`make test` builds it and sets HYMPI_REQUIRE_NATIVE=1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAT = ROOT / "build" / "bin" / "heat_c"
HYMPI = ROOT / "build" / "bin" / "hympi"

if not (HEAT.is_file() and HYMPI.is_file()):
    if os.environ.get("HYMPI_REQUIRE_NATIVE") == "1":
        raise RuntimeError(f"{HEAT} or {HYMPI} is not built (make build)")
    pytest.skip("build/bin/heat_c is not built", allow_module_level=True)


def study(args: list[str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hympi_lab.cli", "study", "--quick", "--ranks", "2",
                           "--threads", "2", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


def status(outdir: Path) -> dict[str, dict[str, Any]]:
    lines = [json.loads(x) for x in (outdir / "results.jsonl").read_text().splitlines()]
    return {r["point"]: r for r in lines if r["record"] == "point"}


def test_the_study_measures_a_users_program_under_every_scheme(tmp_path: Path) -> None:
    outdir = tmp_path / "app"
    app = f"{HEAT} --grid 24 --steps 5 --scheme {{scheme}} --threads {{threads}}"
    proc = study(["--steps", "solve", "--app", app, "--out", str(outdir)])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    points = status(outdir)
    info = subprocess.run([str(HYMPI), "info", "--json"], capture_output=True, text=True,
                          env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1",
                               "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}, check=True)
    # 2 ranks make 2 virtual nodes of one rank: no scheme that shares a
    # node's memory between ranks (shared-window) can run there.
    schemes = [s["name"] for s in json.loads(info.stdout)["schemes"]
               if s["available"] and not s.get("needs_node_peers")]
    # pure MPI (4 ranks x 1 thread), then every scheme (multiple with m = 1 at n = 2)
    expected = {"solve-app-pure-mpi"} | {f"solve-app-{s}" + ("-m1" if s == "multiple" else "")
                                         for s in schemes}
    assert set(points) == expected and all(p["status"] == "ok" for p in points.values())
    assert points["solve-app-pure-mpi"]["ranks"] == 4 and points["solve-app-pure-mpi"]["threads"] == 1
    assert "--scheme funneled --threads 2" in points["solve-app-funneled"]["command"]
    records = [json.loads(x) for x in (outdir / "results.jsonl").read_text().splitlines()]
    results = [r["result"] for r in records if r["record"] == "result"]
    assert {r["kernel"] for r in results} == {"user:heat"} and all(r["user_kernel"] for r in results)
    # the user's reports carry the same context block as hympi's own documents
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "python" / "hympi_lab" / "schemas" / "study-record.schema.json").read_text())
    for line in records:
        jsonschema.validate(line, schema)
    # every scheme's trace was written (HYMPI_TRACE_JSON) and the report draws them
    assert all((outdir / "raw" / f"{k}.trace.json").is_file() for k in expected)
    page = (outdir / "report.html").read_text()
    assert "for your code (user:heat)" in page
    assert page.count('id="fig-timeline-') == len(expected)
    # built-in kernels do not run unless asked for
    assert not any(k.startswith("solve-jacobi") for k in points)


def test_an_app_that_writes_no_report_is_a_failed_point(tmp_path: Path) -> None:
    silent = tmp_path / "silent"
    silent.write_text("#!/bin/sh\nexit 0\n")
    silent.chmod(0o755)
    outdir = tmp_path / "silent-study"
    proc = study(["--steps", "solve", "--app", f"{silent} {{scheme}} {{threads}}", "--no-report",
                  "--out", str(outdir)])
    assert proc.returncode == 1
    points = status(outdir)
    assert points and all(p["status"] == "failed" for p in points.values())
    assert all(p["reason"].startswith("the app wrote no report: call hympi_report_json")
               for p in points.values())


@pytest.mark.parametrize("app, message", [
    ("mpirun -n 2 {heat} --scheme {{scheme}} --threads {{threads}}",
     "--app: give your program without a launcher ('mpirun')"),
    ("{heat} --threads {{threads}}", "--app must contain {scheme}"),
    ("{heat} --scheme {{scheme}} --threads {{threads}} --grid {{size}}", "unknown placeholder(s) {size}"),
    ("/nonexistent/app {{scheme}} {{threads}}", "--app: /nonexistent/app is not an executable program"),
])
def test_bad_app_commands_exit_2_with_one_line(app: str, message: str, tmp_path: Path) -> None:
    proc = study(["--steps", "solve", "--app", app.format(heat=HEAT), "--out", str(tmp_path / "x")])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and message in err[0], proc.stderr
    assert not (tmp_path / "x").exists()
