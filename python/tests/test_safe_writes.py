"""Every file hympi-lab writes goes through atomic.py: a temporary file with
an unpredictable name beside the target (never a symbolic link planted
there), the replaced file's mode kept, and a failure of any kind (a full
disk, a full standard output, a directory given as a file, a file given as
a directory) one line and exit 4 (2 when a study's check refuses it before
any run), no temporary file left and the earlier file kept."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from hympi_lab import atomic
from hympi_lab.cli import main
from hympi_lab.errors import OutputError

DATA = Path(__file__).resolve().parent / "data"
MODEL = ["model", "--n", "8", "--m", "1", "--f-comp-non", "0.2"]
TRACE = {"traceEvents": [{"ph": "X", "name": "comm", "cat": "phase", "pid": 0, "tid": 0, "ts": 0.0,
                          "dur": 30.0},
                         {"ph": "X", "name": "compute_interior", "cat": "phase", "pid": 0, "tid": 0,
                          "ts": 30.0, "dur": 70.0}],
         "otherData": {"hympi_trace_version": 1, "kernel": "jacobi", "scheme": "masteronly",
                       "reserved": 0, "ranks": 1, "threads": 1, "loop_elapsed_s": [1e-4]}}


def writers(tmp: Path, target: str) -> dict[str, list[str]]:
    """One command line per kind of writer, each writing `target` (a path
    under `tmp`): --json of a table command, a plot, a trace's Gantt chart,
    the projection's JSON."""
    (tmp / "pp.csv").write_text("bytes,time_s\n" + "".join(
        f"{n},{1e-5 + n / 3e8}\n" for n in (1, 100, 10000, 1000000)), encoding="utf-8")
    (tmp / "tr.json").write_text(json.dumps(TRACE), encoding="utf-8")
    study = tmp / "study"
    if not study.exists():
        shutil.copytree(DATA / "study-2x1", study)
    png = target if target.endswith((".png", ".svg")) else target + ".png"
    return {"model": MODEL + ["--json", target],
            "fit": ["fit", "hockney", str(tmp / "pp.csv"), "--json", target],
            "advise": ["advise", "--n", "8", "--f-comm", "0.43", "--f-comp-non", "0.2", "--json", target],
            "plot": ["plot", "fig5", "--n", "8", "--m", "1", "-o", png],
            "trace": ["trace", str(tmp / "tr.json"), "-o", png],
            "project": ["project", str(study), "--samples", "10", "--max-nodes", "8", "--json", target]}


def one_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hympi-lab: error: "), err
    assert "Traceback" not in err[0]
    return err[0]


@pytest.fixture
def fixed_names(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """mkstemp's random part made predictable, so a test can plant a link
    at the name it will try first."""
    names = ["first", "second", "third", "fourth"]
    monkeypatch.setattr(tempfile, "_get_candidate_names", lambda: iter(list(names)))
    yield names


# --- the temporary file --------------------------------------------------------------

@pytest.mark.parametrize("how", ["text", "figure"])
def test_a_link_planted_at_the_temporary_name_is_never_followed(
        how: str, tmp_path: Path, fixed_names: list[str]) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious", encoding="utf-8")
    target = tmp_path / "out.png"
    # The name an attacker can predict (the old `target.tmp`) and the one
    # mkstemp tries first here: both links to the victim.
    for name in (f"{target.name}.tmp", f".{target.name}.{fixed_names[0]}.tmp"):
        (tmp_path / name).symlink_to(victim)
    if how == "text":
        atomic.write_atomic(target, "result\n")
        assert target.read_text(encoding="utf-8") == "result\n"
    else:
        atomic.write_with(target, lambda handle: handle.write(b"\x89PNG"))
        assert target.read_bytes() == b"\x89PNG"
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not target.is_symlink()
    # The planted links are left as they were; no temporary file of ours is.
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["victim", "out.png", "out.png.tmp", ".out.png.first.tmp"])


def test_the_temporary_name_is_not_predictable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: (seen.append(os.path.basename(src)), real(src, dst)))
    for _ in range(3):
        atomic.write_atomic(tmp_path / "doc.json", "{}\n")
    assert len(set(seen)) == 3 and all(s.startswith(".doc.json.") and s.endswith(".tmp") for s in seen)


def test_a_0600_file_stays_0600_and_a_new_file_gets_the_umask_default(tmp_path: Path) -> None:
    private = tmp_path / "private.json"
    private.write_text("old", encoding="utf-8")
    private.chmod(0o600)
    atomic.write_atomic(private, "new")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and private.read_text() == "new"
    old = os.umask(0o027)
    try:
        atomic.write_atomic(tmp_path / "fresh.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "fresh.json").stat().st_mode) == 0o640


@pytest.mark.parametrize("command", ["model", "fit", "advise", "plot", "trace", "project"])
def test_every_command_keeps_the_mode_of_the_file_it_replaces(
        command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = writers(tmp_path, str(tmp_path / "out.json"))[command]
    target = Path(argv[-1])
    target.write_text("earlier", encoding="utf-8")
    target.chmod(0o600)
    assert main(argv) == 0, capsys.readouterr().err
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and target.stat().st_size > len("earlier")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    capsys.readouterr()


def test_a_failing_writer_leaves_no_temporary_file(tmp_path: Path) -> None:
    def broken(handle: io.BufferedWriter) -> None:
        handle.write(b"half")
        raise OSError(28, "No space left on device")

    (tmp_path / "f.png").write_bytes(b"earlier")
    with pytest.raises(OutputError, match="cannot write .*f.png: No space left on device"):
        atomic.write_with(tmp_path / "f.png", broken)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.png"]
    assert (tmp_path / "f.png").read_bytes() == b"earlier"


# --- wrong kinds of path ---------------------------------------------------------------

@pytest.mark.parametrize("command", ["model", "fit", "advise", "plot", "trace", "project"])
def test_a_directory_given_as_a_file_is_exit_4(command: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    argv = writers(tmp_path, str(tmp_path / "adir.png"))[command]
    Path(argv[-1]).mkdir()
    assert main(argv) == 4
    assert one_error(capsys) == f"hympi-lab: error: cannot write {argv[-1]}: is a directory"


@pytest.mark.parametrize("command", ["model", "fit", "advise", "plot", "trace", "project"])
def test_a_file_given_as_a_directory_is_exit_4(command: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    argv = writers(tmp_path, str(tmp_path / "afile" / "out.png"))[command]
    assert main(argv) == 4
    assert one_error(capsys) == f"hympi-lab: error: cannot write {argv[-1]}: Not a directory"


@pytest.mark.parametrize("argv, message", [
    (["report", "{file}"], "{file}: not a study directory"),
    (["project", "{file}"], "{file}: not a study directory"),
    (["study", "--quick", "--out", "{file}"], "--out {file}: not a directory"),
    (["study", "--resume", "{file}"], "--resume {file}: not a directory"),
])
def test_a_file_given_as_a_study_directory_is_exit_2(argv: list[str], message: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    argv = [a.replace("{file}", str(afile)) for a in argv]
    assert main(argv) == 2
    assert message.replace("{file}", str(afile)) in one_error(capsys)


# --- a full standard output, for every command -------------------------------------------

@pytest.mark.parametrize("command", ["model", "fit", "advise", "plot", "trace", "project", "report",
                                     "study"])
def test_a_full_standard_output_is_exit_4(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    argvs = writers(tmp_path, str(tmp_path / "out.json"))
    argvs["report"] = ["report", "--help"]  # its table is one line after a long run: --help says as much
    argvs["study"] = ["study", "--help"]
    full = open("/dev/full", "w", encoding="utf-8")
    try:
        with capsys.disabled():
            monkeypatch.setattr(sys, "stdout", full)
            err = io.StringIO()
            monkeypatch.setattr(sys, "stderr", err)
            code = main(argvs[command])
            monkeypatch.undo()
    finally:
        try:
            full.close()
        except OSError:
            pass
    assert code == 4, err.getvalue()
    assert err.getvalue() == "hympi-lab: error: cannot write to standard output: No space left on device\n"


# --- a full disk, for every command --------------------------------------------------------

@pytest.fixture
def full_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs (a test study fits), filled up by fill(): root only."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
                      capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(directory: Path) -> None:
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


@pytest.mark.parametrize("command", ["model", "fit", "advise", "plot", "trace", "project"])
def test_a_full_disk_is_exit_4_and_keeps_the_earlier_file(
        command: str, tmp_path: Path, full_tmpfs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = writers(tmp_path, str(full_tmpfs / "out.json"))[command]
    target = Path(argv[-1])
    target.write_text("earlier", encoding="utf-8")
    fill(full_tmpfs)
    assert main(argv) == 4
    assert one_error(capsys) == f"hympi-lab: error: cannot write {target}: No space left on device"
    assert target.read_text(encoding="utf-8") == "earlier"
    assert sorted(p.name for p in full_tmpfs.iterdir()) == sorted(["filler", target.name])


def test_report_on_a_full_disk_is_exit_4(full_tmpfs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = full_tmpfs / "study"
    shutil.copytree(DATA / "study-2x1", study)
    fill(full_tmpfs)
    assert main(["report", str(study)]) == 4
    assert one_error(capsys).endswith("No space left on device")
    assert not list(full_tmpfs.rglob("*.tmp"))


def test_a_study_on_a_full_disk_is_refused_before_any_run(
        full_tmpfs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The check before the runs creates and flushes a file where the study
    will write: no measuring followed by 'cannot write'. (hympi need not be
    built: the directory is checked before the executable is looked at.)"""
    fill(full_tmpfs)
    outdir = full_tmpfs / "study"
    assert main(["study", "--quick", "--steps", "info", "--out", str(outdir)]) == 2
    line = one_error(capsys)
    assert line.startswith(f"hympi-lab: error: --out {outdir}") and "No space left on device" in line
    assert not list(full_tmpfs.rglob("*.tmp"))
