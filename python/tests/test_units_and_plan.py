"""Options mean what they say: byte counts read the same by hympi and
hympi-lab (docs/units.md), a range stated one way, and every run the study
plan leaves out named with its reason."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from hympi_lab import plan
from hympi_lab.cli import main
from hympi_lab.cli_args import message_size
from hympi_lab.launch import Setting
from hympi_lab.options import StudyOptions

ROOT = Path(__file__).resolve().parents[2]
INFO = json.loads((Path(__file__).resolve().parent / "data" / "info.json").read_text())
HYMPI = ROOT / "build" / "bin" / "hympi"
# Refused by both: no number, a sign, a space, an unknown unit, not whole bytes.
BAD = ["", "MB", "-1", "+3", "8 MB", "8XB", "1.5B", "1e", "1.2.3", "e6", "1e-1", "0"]


def units_table() -> dict[str, int]:
    """docs/units.md's examples: `written` -> bytes."""
    text = (ROOT / "docs" / "units.md").read_text(encoding="utf-8")
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^\| `([^`]+)` \| (\d+) \|$", text, re.M)}


def test_the_documented_examples_are_read_by_hympi_lab() -> None:
    table = units_table()
    assert {"1k", "1KiB", "1.5MB", "1e6"} <= set(table)
    for written, expected in table.items():
        assert message_size(written) == expected, written
    for bad in BAD:
        with pytest.raises(argparse.ArgumentTypeError):
            message_size(bad)


def _hympi_sizes(sizes: str) -> str:
    """hympi's complaint about `bench internode --sizes SIZES` (a stray
    option makes the parse fail on its own, so nothing runs)."""
    if not HYMPI.is_file():
        if os.environ.get("HYMPI_REQUIRE_NATIVE"):
            pytest.fail(f"{HYMPI} is not built")
        pytest.skip(f"{HYMPI} is not built")
    proc = subprocess.run([str(HYMPI), "bench", "internode", "--sizes", sizes, "--no-such-option"],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 2, proc.stderr
    return proc.stderr


def test_the_documented_examples_are_read_by_hympi() -> None:
    err = _hympi_sizes(",".join(units_table()))
    assert "--sizes" not in err and "--no-such-option" in err, err
    for bad in BAD[1:]:  # hympi reads an empty --sizes item as a missing one: its own message
        assert "--sizes" in _hympi_sizes(bad), bad


def test_model_hockney_takes_the_same_forms(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", "hockney", "--b-inf-mbps", "1000", "--t-lat-us", "0", "--bytes", "1k", "1KiB",
                 "1.5MB", "1e6", "--json", "-"]) == 0
    sizes = [p["bytes"] for p in json.loads(capsys.readouterr().out)["results"][0]["points"]]
    assert sizes == [1000, 1024, 1500000, 1000000]


@pytest.mark.parametrize("argv, message", [
    (["plot", "fig5", "--n", "8", "--m", "1", "--f-comp-non", "1.5", "-o", "x.png"],
     "--f-comp-non 1.5 is out of range: accepted 0 <= f < 1"),
    (["model", "hockney", "--b-inf-mbps", "1e12", "--t-lat-us", "1", "--bytes", "1"],
     "'1e12' is out of range: accepted 1e-06 .. 1e+09 MB/s"),
    (["project", "x", "--max-nodes", "0"], "'0' is out of range: accepted 1 .. 16384"),
    (["model", "halo", "--box", "0x4x4", "--b-inf-mbps", "1", "--t-lat-us", "1"],
     "'0x4x4' is out of range: accepted 1 .. 1073741824 points per dimension"),
])
def test_ranges_are_stated_one_way(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


# --- what the plan leaves out, and why ----------------------------------------------------

def setting(ranks: int, threads: int, nodes: int = 1, rpn: int = 0) -> Setting:
    return Setting(ranks, threads, ranks * threads, nodes, "virtual", rpn, False, [], "", {})


def test_every_step_the_plan_drops_is_named_with_its_reason() -> None:
    opts = StudyOptions(level="default", ranks=32, threads=1)
    dropped = dict(plan.dropped(opts, setting(32, 1), INFO))
    assert dropped["step internode"].startswith("needs 2 nodes, the layout has 1")
    assert dropped["step ratio"].startswith("needs 2 nodes, the layout has 1")
    assert dropped["step overlap"] == "needs 2 threads per rank, the layout has 1 (--threads 2)"
    # grid 128 over 32 ranks: 4 points a rank, so depth 8 is left out, 1, 2 and 4 run
    assert dropped["depth step, --halo-depth 8"] == "deeper than a rank's box (128 points over 32 ranks)"
    assert "depth step, --halo-depth 4" not in dropped
    assert dropped["scheme funneled"] == "needs 2 threads per rank, the layout has 1"
    # Exactly what the plan lacks: nothing dropped without a line, no line for what runs.
    points = plan.build_plan(opts, setting(32, 1), INFO, 0)
    steps = {pt.step for pt in points}
    assert not {"internode", "ratio", "overlap"} & steps
    assert {pt.meta.get("depth") for pt in points if pt.step == "depth"} == {1, 2, 4}
    assert "funneled" not in {pt.meta.get("scheme") for pt in points}


def test_a_layout_that_runs_everything_drops_nothing_it_was_asked_for() -> None:
    opts = StudyOptions(level="quick", ranks=2, threads=2, steps=["overlap", "solve"])
    dropped = plan.dropped(opts, setting(2, 2, nodes=2, rpn=1), INFO)
    # shared-window needs two ranks on a node; hympi's own runs split this
    # machine into virtual nodes of one rank
    why = ("needs ranks that share a node; this machine is split into 2 virtual nodes of 1 rank "
           "for hympi's own runs (--ranks-per-node)")
    assert all(what.startswith("scheme ") for what, _ in dropped), dropped
    assert ("scheme shared-window", why) in dropped


def test_shared_window_runs_for_an_app_whose_ranks_share_this_machine() -> None:
    """A user's program gets no --ranks-per-node: its 2 ranks on this one
    machine share a real node, so shared-window runs for it (issue 29), while
    hympi's own runs on 2 virtual nodes of 1 rank leave it out, saying why."""
    shared = next(s for s in INFO["schemes"] if s.get("needs_node_peers"))
    app = StudyOptions(level="quick", ranks=2, threads=2, steps=["solve"], kernels=["jacobi"],
                       app="/bin/true {scheme} {threads}", app_repeat=3)
    one_machine = setting(2, 2, nodes=2, rpn=1)
    assert plan.scheme_skip_reason(shared, one_machine, app=True) == ""
    assert plan.scheme_skip_reason(shared, one_machine).startswith("needs ranks that share a node")
    points = {pt.key: pt for pt in plan.build_plan(app, one_machine, INFO, 0)}
    assert f"solve-app-{shared['name']}" in points
    assert f"solve-jacobi-{shared['name']}" not in points
    assert all(pt.repeat == 3 for k, pt in points.items() if k.startswith("solve-app-"))
    assert all(pt.repeat == 1 for k, pt in points.items() if not k.startswith("solve-app-"))
    dropped = dict(plan.dropped(app, one_machine, INFO))
    # named once per kind of run when their reasons differ
    assert dropped[f"scheme {shared['name']} (built-in kernels)"].startswith("needs ranks that share a node")
    assert f"scheme {shared['name']} (--app)" not in dropped
    # real nodes of one rank each: left out for the app too, with the layout named
    real = Setting(2, 2, 4, 2, "real", 0, False, [], "", {})
    assert plan.scheme_skip_reason(shared, real, app=True) == (
        "needs ranks that share a node; this layout puts 1 rank per node (2 ranks on 2 real nodes)")
