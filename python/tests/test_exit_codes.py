"""docs/exit-codes.md is the one table of exit codes: each code it gives a
command is driven here from that command with a real input (hympi needs
build/bin/hympi; without it those cases skip, or fail under
HYMPI_REQUIRE_NATIVE=1), the code constants of both sources match it, and
both --help texts and the README point to it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from hympi_lab import errors

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "docs" / "exit-codes.md"
HYMPI = ROOT / "build" / "bin" / "hympi"


def documented() -> dict[str, set[int]]:
    """{"hympi": codes, "hympi-lab": codes}: a cell in parentheses ("(none)")
    means the command does not use the code."""
    rows = [line.split("|")[1:-1] for line in TABLE.read_text(encoding="utf-8").splitlines()
            if re.match(r"\|\s*\d+\s*\|", line)]
    out: dict[str, set[int]] = {"hympi": set(), "hympi-lab": set()}
    for cells in rows:
        code = int(cells[0])
        for name, cell in (("hympi", cells[2]), ("hympi-lab", cells[3])):
            if not cell.strip().startswith("("):
                out[name].add(code)
    return out


def lab(*args: str, env: dict[str, str] | None = None, stdout: object = subprocess.PIPE,
        timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hympi_lab.cli", *args], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})},
                          timeout=timeout, cwd=ROOT)


def native(*args: str, limit_kib: int = 0) -> subprocess.CompletedProcess:
    """hympi started alone (a singleton MPI process)."""
    if not HYMPI.is_file():
        if os.environ.get("HYMPI_REQUIRE_NATIVE"):
            pytest.fail(f"{HYMPI} is not built")
        pytest.skip(f"{HYMPI} is not built")
    pre = (lambda: __import__("resource").setrlimit(__import__("resource").RLIMIT_AS,
                                                    (limit_kib << 10, limit_kib << 10))) if limit_kib else None
    return subprocess.run([str(HYMPI), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OMP_NUM_THREADS": "1"}, preexec_fn=pre, cwd=ROOT)


def failing_hympi(tmp_path: Path, action: str) -> Path:
    """A hympi whose study 'info' point (not the discovery's 'info --json')
    does `action`: the study's run then fails or takes long, for real."""
    wrapper = tmp_path / "hympi"
    wrapper.write_text("#!/bin/sh\n"
                       f'if [ "$1" = info ] && [ "$2" = --threads ]; then {action}; fi\n'
                       f'exec "{HYMPI}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return wrapper


def one_line(proc: subprocess.CompletedProcess, prog: str) -> None:
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr
    assert len([ln for ln in lines if ln.startswith(f"{prog}: error")]) == 1, proc.stderr


# --- each code, from each command ----------------------------------------------------

def lab_0(tmp_path: Path) -> None:
    assert lab("model", "--n", "8", "--m", "1", "--f-comp-non", "0.2").returncode == 0


def lab_1(tmp_path: Path) -> None:
    native("--version")  # skips without the build
    proc = lab("study", "--quick", "--ranks", "2", "--threads", "1", "--steps", "info", "--no-report",
               "--hympi", str(failing_hympi(tmp_path, "exit 1")), "--out", str(tmp_path / "s"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 run(s) failed" in proc.stdout


def lab_2(tmp_path: Path) -> None:
    proc = lab("model", "--n", "8", "--m", "9", "--f-comp-non", "0.2")
    assert proc.returncode == 2
    one_line(proc, "hympi-lab")


def lab_4(tmp_path: Path) -> None:
    proc = lab("model", "--n", "8", "--m", "1", "--f-comp-non", "0.2", "--json", str(tmp_path))
    assert proc.returncode == 4, proc.stderr
    one_line(proc, "hympi-lab")
    with open("/dev/full", "w") as full:
        assert lab("--version", stdout=full).returncode == 4


def lab_130(tmp_path: Path) -> None:
    _stopped_study(tmp_path, signal.SIGINT, 130)


def lab_143(tmp_path: Path) -> None:
    _stopped_study(tmp_path, signal.SIGTERM, 143)


def _stopped_study(tmp_path: Path, signum: int, code: int) -> None:
    """A study stopped by `signum` while its run takes long: exit `code`."""
    native("--version")
    proc = subprocess.Popen(
        [sys.executable, "-m", "hympi_lab.cli", "study", "--quick", "--ranks", "2", "--threads", "1",
         "--steps", "info", "--no-report", "--hympi", str(failing_hympi(tmp_path, "sleep 60")),
         "--out", str(tmp_path / "s")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        # SIGINT back to its default in the child: a test run started as a
        # background job (`make test &`) ignores SIGINT, the child inherits
        # that, and Python then installs no KeyboardInterrupt handler (the
        # study rightly respects an ignored SIGINT). As in test_study.py.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "s" / "raw").is_dir() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)  # into the run
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, out + err
    assert "Resume with: hympi-lab study --resume" in out


def native_0(tmp_path: Path) -> None:
    assert native("info").returncode == 0


def native_1(tmp_path: Path) -> None:
    # 400 MiB of address space: MPI starts, the 256^3 fields (~270 MB)
    # passed the check against physical memory, and their allocation fails.
    proc = native("solve", "--kernel", "jacobi", "--grid", "256^3", "--iters", "1", "--threads", "1",
                  limit_kib=400 << 10)
    assert proc.returncode == 1, proc.stderr
    assert "hympi: error on rank 0" in proc.stderr


def native_2(tmp_path: Path) -> None:
    proc = native("solve", "--kernel", "jacobi", "--grid", "8^3", "--tol", "1e-3")
    assert proc.returncode == 2
    one_line(proc, "hympi")


def native_3(tmp_path: Path) -> None:
    proc = native("solve", "--kernel", "cg", "--grid", "8^3", "--max-iters", "3", "--threads", "1",
                  "--json", str(tmp_path / "cg.json"))
    assert proc.returncode == 3 and "cg did not converge" in proc.stderr
    assert '"converged": false' in (tmp_path / "cg.json").read_text()


def native_4(tmp_path: Path) -> None:
    proc = native("info", "--json", "/dev/full")
    assert proc.returncode == 4 and "cannot write /dev/full: No space left on device" in proc.stderr
    one_line(proc, "hympi")


CASES: dict[tuple[str, int], Callable[[Path], None]] = {
    ("hympi-lab", 0): lab_0, ("hympi-lab", 1): lab_1, ("hympi-lab", 2): lab_2, ("hympi-lab", 4): lab_4,
    ("hympi-lab", 130): lab_130, ("hympi-lab", 143): lab_143,
    ("hympi", 0): native_0, ("hympi", 1): native_1, ("hympi", 2): native_2, ("hympi", 3): native_3,
    ("hympi", 4): native_4,
}


def test_every_documented_code_has_a_case_and_no_case_is_undocumented() -> None:
    table = documented()
    assert {k for k in CASES} == {(prog, code) for prog, codes in table.items() for code in codes}


@pytest.mark.parametrize("prog, code", sorted(CASES))
def test_each_code_from_each_command(prog: str, code: int, tmp_path: Path) -> None:
    CASES[(prog, code)](tmp_path)


def test_the_constants_of_both_sources_are_the_table() -> None:
    table = documented()
    assert {errors.EXIT_OK, errors.EXIT_FAILED, errors.EXIT_USAGE, errors.EXIT_OUTPUT,
            errors.EXIT_INTERRUPTED, errors.EXIT_TERMINATED} == table["hympi-lab"]
    main_cpp = (ROOT / "app" / "main.cpp").read_text(encoding="utf-8")
    native_codes = {int(v) for v in re.findall(r"constexpr int kExit\w+ = (\d+);", main_cpp)}
    # 1 is MPI_Abort's code there (a failure after the start), not a constant.
    assert native_codes | {1} == table["hympi"]


def test_the_help_texts_and_the_readme_point_to_the_table() -> None:
    assert "docs/exit-codes.md" in lab("--help").stdout
    assert "docs/exit-codes.md" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/exit-codes.md" in native("--help").stdout
