"""The study of a user's app (issue 29) without running one: the runs of a
point merged into min/median/max (apprepeat.py), a ranking that says
"clearly" only for repeated runs whose ranges do not overlap
(analysis.separated), and the check that every run computed the same
fields (agreement.py), with the report's verdict refusing to recommend when
they do not."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import pytest

from hympi_lab import agreement, analysis, apprepeat
from hympi_lab.analysis import SolveRun, Study


def report(time_s: float, sums: dict[str, tuple[float, float]], phase: float = 0.0) -> dict[str, Any]:
    """A user's report of one run, as hympi_report_json_fields writes it."""
    return {"context": {"ranks": 2, "time": time_s},
            "results": [{"kind": "solve", "kernel": "user:heat", "scheme": "funneled", "threads": 2,
                         "time_s": {"min": time_s, "median": time_s, "max": time_s}, "repeat": 1,
                         "mlups": 100.0 / time_s, "breakdown_s": {"pack": [phase]},
                         "checksums": [{"field": f, "sum": s, "l2": l} for f, (s, l) in sums.items()]}]}


def test_the_runs_of_a_point_become_min_median_max_with_the_median_runs_phases() -> None:
    docs = [report(3.0, {"u": (1.0, 2.0)}, phase=30), report(1.0, {"u": (1.0, 2.0)}, phase=10),
            report(2.0, {"u": (1.0, 2.0)}, phase=20)]
    assert all(apprepeat.one_result(d) for d in docs)
    merged, mid = apprepeat.merge(docs)
    rec = merged["results"][0]
    assert mid == 2 and merged["context"]["time"] == 2.0
    assert rec["time_s"] == {"min": 1.0, "median": 2.0, "max": 3.0}
    assert rec["repeat"] == 3 and rec["breakdown_s"] == {"pack": [20]}
    assert rec["mlups"] == pytest.approx(50.0)
    assert [r["time_s"] for r in rec["runs"]] == [3.0, 1.0, 2.0]
    assert rec["runs"][0]["checksums"] == [{"field": "u", "sum": 1.0, "l2": 2.0}]
    # an even count: the faster middle run stands for the point, the median is the mean
    merged, mid = apprepeat.merge(docs[:2])
    assert mid == 1 and merged["results"][0]["time_s"]["median"] == 2.0


@pytest.mark.parametrize("doc", [{}, {"results": []}, {"results": [{"kernel": "user:x"}]},
                                 {"results": [{"kernel": "user:x", "time_s": {"median": "1"}}]},
                                 {"results": [report(1, {})["results"][0]] * 2}])
def test_a_report_without_one_solve_result_is_refused(doc: dict[str, Any]) -> None:
    assert not apprepeat.one_result(doc)


def run(label: str, low: float, high: float, repeat: int) -> SolveRun:
    return SolveRun(f"solve-app-{label}", "user:heat", label, label, 0, 2, 2, (low + high) / 2, low, high,
                    1.0, {}, {}, "", repeat=repeat)


@pytest.mark.parametrize("best, other, clearly", [
    (run("a", 1.0, 1.1, 3), run("b", 1.2, 1.3, 3), True),      # ranges apart
    (run("a", 1.0, 1.25, 3), run("b", 1.2, 1.3, 3), False),    # ranges overlap
    (run("a", 1.0, 1.0, 1), run("b", 2.0, 2.0, 1), False),     # one run each: no range at all
    (run("a", 1.0, 1.1, 3), None, False),
])
def test_clearly_only_for_repeated_runs_whose_ranges_do_not_overlap(
        best: SolveRun, other: Optional[SolveRun], clearly: bool) -> None:
    assert analysis.separated(best, other) is clearly
    advice = analysis.kernel_advice({"user:heat": [r for r in (best, other) if r]})
    text = analysis.advice_part(advice[0])
    assert ("clearly" in text.replace("not separated", "")) is clearly
    if other is not None and best.repeat == 1:
        assert "one run each: no range to compare" in text


def study(records: list[tuple[str, str, int, list[dict[str, Any]], list[list[dict[str, Any]]]]]) -> Study:
    """A study of (point, scheme, ranks, checksums, checksums of each run) records of user:heat."""
    results, status = [], {}
    for point, scheme, ranks, sums, runs in records:
        rec = {"kind": "solve", "kernel": "user:heat", "scheme": "masteronly" if scheme == "pure-mpi" else scheme,
               "threads": 1 if scheme == "pure-mpi" else 2, "grid": [24, 24, 24],
               "proc_grid": [ranks, 1, 1], "reserved": 1 if scheme == "multiple" else 0, "time_s": {"min": 1, "median": 1, "max": 1}, "repeat": len(runs) or 1,
               "checksums": sums, "runs": [{"checksums": c} for c in runs]}
        results.append({"record": "result", "point": point, "step": "solve", "context": {"ranks": ranks},
                        "result": rec})
        status[point] = {"status": "ok", "step": "solve", "meta": {"scheme": scheme}}
    return Study(Path("."), {"setting": {}}, results, status)


def u(s: float, l2: float) -> list[dict[str, Any]]:
    return [{"field": "u", "sum": s, "l2": l2}]


def test_every_scheme_agrees_bit_for_bit_within_a_decomposition_and_to_1e12_across() -> None:
    s, l2 = 12.345678901234567, 40.0
    other_order = s + 4e-13  # pure MPI: 4 ranks sum in another order (1e-13 of the sum's scale sqrt(N) l2)
    checks, silent = agreement.check(study([
        ("solve-app-funneled", "funneled", 2, u(s, l2), [u(s, l2)] * 3),
        ("solve-app-masteronly", "masteronly", 2, u(s, l2), [u(s, l2)] * 3),
        ("solve-app-pure-mpi", "pure-mpi", 4, u(other_order, l2), [u(other_order, l2)] * 3)]))
    assert not silent and len(checks) == 1
    c = checks[0]
    assert c.agree and c.reference == "masteronly" and c.decompositions == 2
    assert 0 < c.largest <= agreement.RELATIVE_TOLERANCE
    assert c.text().startswith("All 3 runs of user:heat agree on u: sum 12.3456789012346, l2 40")


def test_a_scheme_that_computes_another_result_is_named_with_the_difference() -> None:
    s, l2 = 12.345678901234567, 40.0
    st = study([("solve-app-masteronly", "masteronly", 2, u(s, l2), [u(s, l2)] * 3),
                # the same decomposition: one bit is a disagreement
                ("solve-app-funneled", "funneled", 2, u(s * (1 + 1e-15), l2), [u(s * (1 + 1e-15), l2)] * 3),
                # another decomposition, beyond 1e-12
                ("solve-app-pure-mpi", "pure-mpi", 4, u(s + 1e-6, l2), [u(s + 1e-6, l2)] * 3),
                # repeated runs of one point that differ
                ("solve-app-multiple", "multiple", 2, u(s, l2), [u(s, l2), u(s, l2 + 1e-9), u(s, l2)])])
    checks, _ = agreement.check(st)
    text = checks[0].text()
    assert not checks[0].agree and text.startswith("The runs of user:heat DISAGREE on u: ")
    assert ("funneled: sum 12.345678901234582, l2 40 against masteronly's 12.345678901234567, 40 "
            "(same decomposition" in text)
    # 1e-6 against a sum's scale sqrt(24^3) x 40
    assert "pure MPI: sum 12.345679901234567, l2 40 (relative difference 2.1e-10)" in text
    assert "the 3 runs of multiple m=1 gave 2 different checksums" in text
    advice = analysis.kernel_advice(analysis.solve_runs(st))
    verdict = agreement.guard("Recommended for your code (user:heat): funneled ...", st, advice, checks)
    assert verdict.startswith("No recommendation for your code (user:heat): its runs do not compute the same "
                              "result: u of user:heat (funneled: sum")
    assert "Recommended" not in verdict


def test_a_program_without_checksums_is_told_how_to_report_them() -> None:
    checks, silent = agreement.check(study([("solve-app-masteronly", "masteronly", 2, [], [])]))
    assert checks == [] and silent == ["user:heat"]
    assert "hympi_report_json_fields" in agreement.silent_text("user:heat")
    assert agreement.guard("verdict", study([]), [], checks) == "verdict"
