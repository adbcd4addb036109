"""Property test of `report` and `advise` on mutated real study files
(issue 28): a measured study (data/study-4x4-hybrid, 16-core node) and its
masteronly solve records as an `advise` document, with one mutation each
(a key deleted, a value of another JSON type, an extreme number, a line
cut, deleted or doubled). Whatever the mutation:

- no traceback (in-process: an exception would fail the test);
- the exit code is a documented one (cli.py: 0, 1 output, 2 bad input), an
  error is one line "hympi-lab: error: ...";
- the verdict changes only with a stated reason: no run the verdict is
  drawn from vanishes unless it says so ("Drawn without: ..."), and a
  verdict that is not the unmutated study's names why (the spread,
  oversubscription, failed or unfinished runs, one thread per rank, kernels
  that disagree, or for advise a refusal or an uncertainty), or the inputs
  it states changed.

The figures are drawn to a placeholder file (matplotlib's rendering is the
slow part and not what is tested: the data handed to each figure is).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hympi_lab import analysis, cli, plotting

DATA = Path(__file__).resolve().parent / "data"
STUDY = DATA / "study-4x4-hybrid"
CODES = (0, 1, 2)
EXTREMES = [0, -1, -1.5, 1e308, -1e308, 1e-308, 10 ** 30, 2 ** 63, 4097, math.nan, math.inf, -math.inf]
OTHER_TYPES = [None, "x", "", [], {}, True, [1, 2], {"a": 1}]
# Phrases a report verdict that differs from the unmutated one must contain one of.
REPORT_REASONS = ("repetitions overlap", "run-to-run spread", "oversubscribed", "share cores",
                  "failed", "unfinished", "one thread per rank", "depends on the kernel",
                  "no solve runs")
ADVISE_REASONS = ("cannot recommend", "no clear winner")
FIGURES = ("beff", "internode", "ratio", "pack", "overlap", "fig5", "breakdown", "gantt", "projection")


def _placeholder(*args: Any, **kwargs: Any) -> None:
    for outs in args:
        if isinstance(outs, list) and outs and all(isinstance(p, str) and p.endswith(".png") for p in outs):
            for p in outs:
                Path(p).write_bytes(b"\x89PNG\r\n")


@pytest.fixture(autouse=True)
def quick_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in FIGURES:
        monkeypatch.setattr(plotting, name, _placeholder)


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


# --- mutations --------------------------------------------------------------------------

def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys and indexes) inside a JSON value."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            found += paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:8]):
            found += paths(v, prefix + (i,))
    return found


@st.composite
def mutations(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["delete key", "other type", "extreme", "cut line", "delete line",
                                 "double line"]))
    return {"kind": kind, "target": draw(st.integers(0, 10 ** 6)), "path": draw(st.integers(0, 10 ** 6)),
            "value": draw(st.sampled_from(EXTREMES if kind == "extreme" else OTHER_TYPES)),
            "cut": draw(st.floats(0.05, 0.95))}


def mutate_value(doc: Any, m: dict[str, Any]) -> bool:
    """Apply a value mutation inside `doc`; False when it has no such place."""
    every = paths(doc)
    if m["kind"] == "extreme":
        every = [p for p in every if _at(doc, p) is not True and _at(doc, p) is not False
                 and isinstance(_at(doc, p), (int, float))]
    if not every:
        return False
    path = every[m["path"] % len(every)]
    parent = _at(doc, path[:-1])
    if m["kind"] == "delete key":
        if not isinstance(parent, dict):
            return False
        del parent[path[-1]]
    elif m["kind"] == "other type":
        old = parent[path[-1]]
        if type(m["value"]) is type(old):
            return False
        parent[path[-1]] = m["value"]
    else:
        parent[path[-1]] = m["value"]
    return True


def _at(doc: Any, path: tuple) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def mutate_study(d: Path, m: dict[str, Any]) -> None:
    lines = (d / "results.jsonl").read_text().splitlines()
    # one target in 20 is study.json, the rest a line of results.jsonl
    if m["target"] % 20 == 0 and m["kind"] in ("delete key", "other type", "extreme"):
        header = json.loads((d / "study.json").read_text())
        mutate_value(header, m)
        (d / "study.json").write_text(json.dumps(header))
        return
    i = m["target"] % len(lines)
    if m["kind"] == "cut line":
        lines[i] = lines[i][: int(len(lines[i]) * m["cut"])]
    elif m["kind"] == "delete line":
        del lines[i]
    elif m["kind"] == "double line":
        lines.insert(i, lines[i])
    else:
        rec = json.loads(lines[i])
        mutate_value(rec, m)
        lines[i] = json.dumps(rec)
    (d / "results.jsonl").write_text("\n".join(lines) + "\n")


def masteronly_document() -> dict[str, Any]:
    """The study's masteronly solve runs of 4 threads as one `advise` document."""
    recs = [json.loads(ln) for ln in (STUDY / "results.jsonl").read_text().splitlines()]
    mine = [r for r in recs if r["record"] == "result" and r["step"] == "solve"
            and r["result"]["scheme"] == "masteronly" and r["result"]["threads"] == 4]
    return {"context": mine[0]["context"], "results": [r["result"] for r in mine]}


# --- the properties ------------------------------------------------------------------------

def check_error(code: int, err: str) -> None:
    assert code in CODES, (code, err)
    if code:
        assert err.startswith("hympi-lab: error: ") and err.count("\n") == 1, err


def report_verdict(out: str) -> str:
    # "wrote DIR/report.html and DIR/results.csv" then the verdict
    return out.split("\n", 1)[1].strip()


def decision(verdict: str) -> str:
    """What the verdict decides: its first clause ('Recommended: X with ...')."""
    return verdict.split(" with ")[0].split(" from ")[0].split(":")[0] + (
        ": " + verdict.split(": ", 1)[1].split(" with ")[0] if verdict.startswith("Recommended") else "")


@pytest.fixture(scope="module")
def baseline() -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "study"
        shutil.copytree(STUDY, d)
        code, out, err = _with_placeholders(["report", str(d)])
        assert code == 0, err
        doc = Path(tmp) / "doc.json"
        doc.write_text(json.dumps(masteronly_document()))
        acode, aout, aerr = _with_placeholders(["advise", str(doc)])
        assert acode == 0, aerr
    return {"report": report_verdict(out), "advise": aout}


def _with_placeholders(argv: list[str]) -> tuple[int, str, str]:
    saved = {name: getattr(plotting, name) for name in FIGURES}
    try:
        for name in FIGURES:
            setattr(plotting, name, _placeholder)
        return run(argv)
    finally:
        for name, fn in saved.items():
            setattr(plotting, name, fn)


def test_the_baselines_are_a_recommendation_and_a_refusal(baseline):
    assert decision(baseline["report"]) == "Recommended: multiple-own"
    assert "recommendation: cannot recommend: idle time dominates" in baseline["advise"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=mutations())
def test_report_of_a_mutated_study(baseline, m):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "study"
        shutil.copytree(STUDY, d)
        mutate_study(d, m)
        code, out, err = run(["report", str(d)])
        points = {s.point for runs in analysis.solve_runs(analysis.load(d)).values() for s in runs} \
            if code == 0 else set()
    check_error(code, err)
    if code == 0:
        verdict = report_verdict(out)
        # no run vanishes unsaid (a deleted line once dropped its point silently)
        assert points == baseline_points() or "Drawn without: " in verdict, (m, verdict)
        assert "None" not in verdict and "nan" not in verdict.split() and "inf" not in verdict.split()
        if decision(verdict) != decision(baseline["report"]):
            assert any(r in verdict for r in REPORT_REASONS), (m, verdict)


def baseline_points() -> set[str]:
    return {s.point for runs in analysis.solve_runs(analysis.load(STUDY)).values() for s in runs}


def advise_lines(out: str) -> tuple[str, str]:
    """(the stated inputs: the header line, the recommendation line)."""
    lines = out.splitlines()
    return lines[0], next(ln for ln in lines if ln.startswith("recommendation: "))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=mutations())
def test_advise_on_a_mutated_document(baseline, m):
    doc = masteronly_document()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "doc.json"
        if m["kind"] in ("cut line", "delete line", "double line"):
            text = json.dumps(doc, indent=1)
            path.write_text(text[: int(len(text) * m["cut"])])
        else:
            mutate_value(doc, m)
            path.write_text(json.dumps(doc))
        code, out, err = run(["advise", str(path)])
    check_error(code, err)
    if code == 0:
        stated, verdict = advise_lines(out)
        base_stated, base_verdict = advise_lines(baseline["advise"])
        assert "None" not in verdict and " nan" not in verdict and " inf" not in verdict
        if verdict.split(":")[1] != base_verdict.split(":")[1]:
            assert any(r in verdict for r in ADVISE_REASONS) or stated != base_stated, (m, verdict)
