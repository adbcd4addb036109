"""scripts/ctest_once_more.py (make test's ctest lane) against the real
ctest, on a small CMake project whose tests fail as asked: a test that
failed only with Open MPI's report of a rank killed by SIGSEGV (its crash
in MPI_Finalize) or of a rank exiting improperly runs once more and its
second run decides; a test that failed any other way, or beside such a
test, runs nothing again."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ctest_once_more.py"

# The lines mpirun.openmpi 4.1.4 printed for the finalize crash in a
# fresh-clone make test (2026-11-28), and the start of its improper-exit report.
CRASH = ("mpirun.openmpi noticed that process rank 0 with PID 0 on node vm exited on signal 11 "
         "(Segmentation fault).")
IMPROPER = ("mpirun.openmpi has exited due to process rank 1 with PID 0 on\n"
            "node vm exiting improperly. There are three reasons this could occur:")

pytestmark = pytest.mark.skipif(shutil.which("ctest") is None or shutil.which("cmake") is None,
                                reason="needs cmake and ctest")


def project(tmp_path: Path, tests: dict[str, str]) -> Path:
    """A CMake project with one test per entry, each a Python program; its
    configured build directory. Each program counts its runs in runs-NAME."""
    src = tmp_path / "src"
    src.mkdir()
    lines = ["cmake_minimum_required(VERSION 3.16)", "project(once_more NONE)", "enable_testing()"]
    for name, body in tests.items():
        program = src / f"{name}.py"
        program.write_text(
            "import pathlib, sys\n"
            f"runs = pathlib.Path({str(tmp_path / ('runs-' + name))!r})\n"
            "run = int(runs.read_text()) + 1 if runs.exists() else 1\n"
            "runs.write_text(str(run))\n" + body)
        lines.append(f'add_test(NAME {name} COMMAND "{sys.executable}" "{program}")')
    (src / "CMakeLists.txt").write_text("\n".join(lines) + "\n")
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(src), "-B", str(build)], check=True, capture_output=True)
    return build


def once_more(build: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--output-on-failure"], cwd=build,
                          capture_output=True, text=True, timeout=120)


def runs(tmp_path: Path, name: str) -> int:
    return int((tmp_path / f"runs-{name}").read_text())


def fails_first(report: str) -> str:
    """A program that fails its first run with `report` on stderr, then passes."""
    return f"if run == 1:\n    print({report!r}, file=sys.stderr)\n    sys.exit(1)\n"


def test_a_finalize_crash_runs_once_more_and_its_second_run_decides(tmp_path):
    build = project(tmp_path, {"crashes_once": fails_first(CRASH), "passes": ""})
    done = once_more(build)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "crashes_once failed only with Open MPI's report" in done.stdout
    assert runs(tmp_path, "crashes_once") == 2 and runs(tmp_path, "passes") == 1


def test_an_improper_exit_runs_once_more(tmp_path):
    build = project(tmp_path, {"exits_improperly_once": fails_first(IMPROPER)})
    done = once_more(build)
    assert done.returncode == 0, done.stdout + done.stderr
    assert runs(tmp_path, "exits_improperly_once") == 2


def test_a_second_crash_fails(tmp_path):
    build = project(tmp_path, {"always_crashes": f"print({CRASH!r}, file=sys.stderr)\nsys.exit(1)\n"})
    done = once_more(build)
    assert done.returncode != 0
    assert runs(tmp_path, "always_crashes") == 2


def test_another_failure_runs_nothing_again(tmp_path):
    build = project(tmp_path, {"wrong_checksum": "print('FAIL: checksum 1.0 vs 2.0')\nsys.exit(1)\n",
                               "crashes_once": fails_first(CRASH)})
    done = once_more(build)
    assert done.returncode != 0
    assert "wrong_checksum failed otherwise: nothing run again" in done.stdout
    assert runs(tmp_path, "wrong_checksum") == 1 and runs(tmp_path, "crashes_once") == 1


@pytest.mark.parametrize("report", [
    # Another signal (a rank killed by SIGKILL: a timeout, the OOM killer).
    CRASH.replace("signal 11 (Segmentation fault)", "signal 9 (Killed)"),
    # The crash as MPICH reports it: not Open MPI's finalize crash.
    "BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\nKILLED BY SIGNAL: 11 (Segmentation fault)",
])
def test_other_reports_run_nothing_again(tmp_path, report):
    build = project(tmp_path, {"fails": fails_first(report)})
    done = once_more(build)
    assert done.returncode != 0
    assert runs(tmp_path, "fails") == 1
