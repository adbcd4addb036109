"""figjobs.FigureJobs: figures drawn in forked children, their outcomes
back in the parent as each ends: drawn, a note, OutputError, or a loud
crash."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from hympi_lab.errors import InputError, OutputError
from hympi_lab.figjobs import FigureJobs


def writer(path: Path, text: str):
    def draw() -> None:
        path.write_text(f"{text} {os.getpid()}")
    return draw


def fail_with(err: Exception):
    def draw() -> None:
        raise err
    return draw


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_every_figure_is_drawn_and_reported_once(tmp_path, workers):
    jobs = FigureJobs(workers)
    outcomes: list[tuple[str, object]] = []
    for i in range(7):
        path = tmp_path / f"fig{i}.txt"
        jobs.submit(f"fig{i}", writer(path, f"figure {i}"),
                    lambda note, i=i: outcomes.append((f"fig{i}", note)))
    jobs.finish()
    assert sorted(outcomes) == [(f"fig{i}", None) for i in range(7)]
    pids = set()
    for i in range(7):
        text, pid = (tmp_path / f"fig{i}.txt").read_text().split(" ")[-2:]
        assert text == str(i)
        pids.add(int(pid))
    if workers == 1:
        assert pids == {os.getpid()}
    else:  # drawn in children, one each
        assert os.getpid() not in pids and len(pids) == 7


def test_a_long_figure_does_not_hold_back_the_ones_after_it(tmp_path):
    # Two workers: fig0 waits for fig2's file, which only exists if fig2
    # starts as soon as fig1 ends, not after the oldest (fig0) ends.
    gate = tmp_path / "fig2.txt"

    def waits_for_fig2() -> None:
        deadline = time.monotonic() + 20
        while not gate.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        (tmp_path / "fig0.txt").write_text("saw fig2" if gate.exists() else "gave up")

    jobs = FigureJobs(2)
    ended: list[str] = []
    jobs.submit("fig0", waits_for_fig2, lambda note: ended.append("fig0"))
    jobs.submit("fig1", writer(tmp_path / "fig1.txt", "figure 1"), lambda note: ended.append("fig1"))
    jobs.submit("fig2", writer(gate, "figure 2"), lambda note: ended.append("fig2"))
    jobs.finish()
    assert (tmp_path / "fig0.txt").read_text() == "saw fig2"
    assert ended[0] == "fig1" and sorted(ended) == ["fig0", "fig1", "fig2"]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_figure_that_cannot_be_drawn_is_a_note(tmp_path, workers):
    jobs = FigureJobs(workers)
    notes: list[object] = []
    jobs.submit("a", fail_with(InputError("no points to draw")), notes.append)
    jobs.submit("b", writer(tmp_path / "b.txt", "fine"), notes.append)
    jobs.submit("c", fail_with(ZeroDivisionError("division by zero")), notes.append)
    jobs.finish()
    assert notes == ["no points to draw", None, "division by zero"]


@pytest.mark.parametrize("workers", [1, 2])
def test_an_unwritable_figure_is_output_error(tmp_path, workers):
    jobs = FigureJobs(workers)
    with pytest.raises(OutputError, match="cannot write figures/x.png: disk full"):
        jobs.submit("x", fail_with(OutputError("cannot write figures/x.png: disk full")), print)
        jobs.finish()


def test_a_bug_in_a_child_is_raised_in_the_parent_with_its_traceback(tmp_path):
    jobs = FigureJobs(2)
    jobs.submit("ok", writer(tmp_path / "ok.txt", "fine"), lambda note: None)
    jobs.submit("bug", fail_with(TypeError("unsupported operand")), lambda note: None)
    with pytest.raises(RuntimeError, match=r"(?s)drawing figure bug failed:.*TypeError: unsupported operand"):
        jobs.finish()
    assert jobs.running == []
