"""Faults during a study, and what the study keeps (issue 9): a rank that
dies in the middle of a run, Ctrl-C or SIGTERM, a disk without room or one
that fills up. The MPI job ends promptly, every whole point is kept, and the
study says in one line what happened and how to resume.

Faults are injected by wrappers given as --hympi (a rank killed with
SIGKILL as it starts, a disk filled before a run) and by signals."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from study_cli import STUDY_OPTS, lines, point_keys, run_cli, wait_for_points

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


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_ends_the_run_keeps_results_and_says_how_to_resume(tmp_path, sig):
    outdir = tmp_path / "stopped"
    # SIGINT back to its default in the child: a test run started as a
    # background job (`make test &`, nohup) ignores SIGINT, the child inherits
    # that, and Python then installs no KeyboardInterrupt handler at all (the
    # study respects an ignored SIGINT, as nohup asks).
    child = subprocess.Popen([sys.executable, "-m", "hympi_lab.cli", "study", *STUDY_OPTS,
                              "--out", str(outdir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, cwd=ROOT,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wait_for_points(outdir, 2)
    child.send_signal(sig)
    out, err = child.communicate(timeout=60)
    # docs/exit-codes.md: 130 for Ctrl-C, 143 for SIGTERM
    assert child.returncode == (143 if sig == signal.SIGTERM else 130), out + err
    assert f"Resume with: hympi-lab study --resume {outdir}" in out
    assert len(point_keys(outdir)) >= 2
    # no rank of the interrupted run is left behind
    time.sleep(0.5)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(outdir) not in ps


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_a_disk_without_room_for_the_study_is_refused_before_any_run(tmp_path):
    """On a 300 kB tmpfs the study's runs do not fit: the check before the
    runs says so (exit 2), nothing is measured, no temporary file is left."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(mnt)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        outdir = mnt / "s"
        proc = run_cli(["study", "--quick", "--ranks", "2", "--threads", "2",
                        "--steps", "info,beff,pack", "--out", str(outdir)])
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert re.search(r"MiB free, the study's 3 runs and report need up to \d+ MiB", proc.stderr)
        assert "Traceback" not in proc.stderr and not (outdir / "results.jsonl").exists()
        assert not list(mnt.rglob("*.tmp"))
    finally:
        subprocess.run(["umount", str(mnt)])


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
@pytest.mark.parametrize("fill_at", ["info", "pack"])
def test_a_disk_filled_during_the_study_stops_it_cleanly_and_keeps_whole_points(tmp_path, fill_at):
    """Another program fills the disk while the study runs (here: a hympi
    that fills it before its run of `fill_at`): the study says so in one
    line, exits 4, keeps whole points only and leaves no temporary file.
    Filled before the first point, results.jsonl cannot take its lines: the
    study stops with its --resume line. Filled before the last, its run
    fails (hympi cannot write its document), its status line still fits,
    and the report cannot be written."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mnt)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    words = ("info --threads" if fill_at == "info" else "bench pack").split()
    wrapper = tmp_path / "hympi"
    wrapper.write_text("#!/bin/sh\n"
                       f'if [ "$1" = {words[0]} ] && [ "$2" = {words[1]} ]; then '
                       f'cat /dev/zero > "{mnt}/filler" 2>/dev/null; fi\n'
                       f'exec "{ROOT / "build" / "bin" / "hympi"}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    try:
        outdir = mnt / "s"
        proc = run_cli(["study", "--quick", "--ranks", "2", "--threads", "1", "--steps", "info,pack",
                        "--hympi", str(wrapper), "--out", str(outdir)])
        assert proc.returncode == 4, proc.stdout + proc.stderr
        assert "No space left on device" in proc.stdout and "Traceback" not in proc.stderr
        if fill_at == "info":
            assert f"resume with: hympi-lab study --resume {outdir}" in proc.stdout
        else:
            assert "the report could not be written: cannot write" in proc.stdout
            status = {r["point"]: r["status"] for r in lines(outdir / "results.jsonl") if r["record"] == "point"}
            assert status == {"info": "ok", "pack": "failed"}
        lines(outdir / "results.jsonl")  # every line whole JSON
        assert not list(mnt.rglob("*.tmp"))
    finally:
        subprocess.run(["umount", str(mnt)])
