"""schemes.py: one table of the schemes' cost models (issue 26, item 1).

The projection and the report's validation read it; a scheme it has no
model for gets "no prediction", never an error; a study's recorded scheme
facts (hympi info --json in study.json) replace the built-in ones."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from hympi_lab import advise, analysis, model, project as pj, schemes
from hympi_lab.errors import InputError

DATA = Path(__file__).resolve().parent / "data"


def inputs(names: tuple[str, ...], threads: int = 4) -> pj.Inputs:
    link = pj.Link(2e-6, 5e9, 0.0, 0.0, "synthetic")
    costs = [pj.Cost("jacobi", s, 1 if s == "multiple" else 0, threads, 4e-9, 0.0, 0.0, 0.0, 1,
                     1e-3, 1e-3, 1e-3, (64, 64, 64), (1, 1, 1), (1, 1, 1), False, 1) for s in names]
    return pj.Inputs(link, link, {}, {"jacobi": costs}, 1, "real", 1, threads)


def old_runs_on(scheme: str, m: int, shape: pj.Shape) -> bool:
    """The hard-coded rule the table replaced."""
    if scheme == "pure-mpi":
        return True
    if scheme in ("funneled", "multiple", "adaptive", "shared-window") and shape.threads < 2:
        return False
    if scheme == "shared-window" and shape.ranks < 2:
        return False
    return m < shape.threads


def test_the_table_keeps_the_old_rules():
    assert pj.DEEP_HALO_SCHEMES == ("pure-mpi", "masteronly", "masteronly-threaded")
    for name, threads, ranks, m in itertools.product(schemes.TABLE, (1, 2, 4), (1, 2), (0, 1, 3)):
        cost = inputs((name,)).costs["jacobi"][0]
        cost = pj.Cost(**{**cost.__dict__, "m": m})
        shape = pj.Shape(ranks * threads, ranks, threads)
        assert pj.runs_on(cost, shape) == old_runs_on(name, m, shape), (name, shape, m)
    assert schemes.label("multiple", 2) == "multiple m=2" and schemes.label("funneled", 1) == "funneled"
    assert schemes.label("pure-mpi", 0) == "pure MPI"


def test_recorded_facts_replace_the_built_in_ones():
    header = json.loads((DATA / "study-2x1" / "study.json").read_text())
    table = schemes.table(header["schemes"])
    # the recorded list agrees with the built-in copy
    for name in ("masteronly", "funneled", "multiple", "shared-window", "partitioned"):
        assert table[name] == schemes.TABLE[name]
    changed = schemes.table([{"name": "funneled", "overlap": False, "min_threads": 3},
                             {"name": "new-scheme", "overlap": True}, "junk", {"no": "name"}])
    assert changed["funneled"].deep_halo and changed["funneled"].threads_needed() == 3
    assert changed["new-scheme"].sweep is None and changed["new-scheme"].epsilon is None
    assert schemes.table(None) == schemes.TABLE


def test_a_scheme_without_a_model_gets_no_prediction():
    inp = inputs(("masteronly", "new-scheme"))
    checks = {c.label: c for c in pj.self_consistency(inp)}
    assert checks["new-scheme"].predicted is None and checks["new-scheme"].error is None
    assert checks["masteronly"].predicted is not None
    series = pj.project(inp, "jacobi", pj.Shape(4, 1, 4), (64, 64, 64), "weak", max_nodes=4, samples=10)
    assert [s.label for s in series] == ["masteronly"]
    doc = pj.document(inp, pj.Request(["jacobi"], pj.Shape(4, 1, 4), (64, 64, 64), ["weak"], 4, 10))
    sc = doc["self_consistency"]
    assert sc["runs"] == 1 and len(sc["checks"]) == 2
    row = next(c for c in sc["checks"] if c["scheme"] == "new-scheme")
    assert row["predicted_s"] is None and row["within_limit"] is None
    assert any("no prediction for new-scheme" in n for n in doc["limits"])
    assert schemes.NO_MODEL in pj.text(doc)
    # only new-scheme: an empty projection, not an error
    only = inputs(("new-scheme",))
    doc = pj.document(only, pj.Request(["jacobi"], pj.Shape(4, 1, 4), (64, 64, 64), ["weak"], 4, 10))
    assert doc["projections"][0]["series"] == [] and doc["self_consistency"]["runs"] == 0


def test_validation_rows_come_from_the_table():
    def run(scheme: str, m: int = 0) -> analysis.SolveRun:
        return analysis.SolveRun(f"solve-jacobi-{scheme}", "jacobi", scheme, schemes.label(scheme, m), m,
                                 4, 4, 1.0, 0.99, 1.01, 1.0, {"f_comm": 0.3, "f_comp_non": 0.1}, {}, "",
                                 None, 0.5)
    runs = {"jacobi": [run("pure-mpi"), run("masteronly"), run("masteronly-threaded"), run("funneled"),
                       run("multiple", 2), run("adaptive"), run("shared-window"), run("partitioned"),
                       run("multiple-own"), run("new-scheme")]}
    rows = {v.label: v for v in analysis.validations(runs)}
    assert set(rows) == {"funneled", "multiple m=2", "adaptive", "shared-window", "partitioned",
                         "multiple-own", "new-scheme"}
    assert rows["funneled"].note == "eq. (3), n = 4, m = 1" and rows["multiple m=2"].note.endswith("m = 2")
    assert rows["adaptive"].note.startswith("upper bound")
    for label in ("multiple-own", "new-scheme"):
        assert rows[label].predicted is None
        assert rows[label].note == "no equation in the papers for this scheme"


def test_a_shared_window_model_without_a_finite_value_is_a_note_not_a_crash():
    # A user's app reported masteronly's time as all communication, none of
    # it inter-node (CI, 2026-11-27: the study's report died dividing by zero).
    def run(scheme: str) -> analysis.SolveRun:
        return analysis.SolveRun(f"solve-app-{scheme}", "user:heat", scheme, scheme, 0, 2, 2, 1.0, 0.99,
                                 1.01, 1.0, {"f_comm": 1.0, "f_comp_non": 0.0}, {}, "", None, 0.0)
    rows = {v.label: v for v in analysis.validations({"user:heat": [run("masteronly"),
                                                                    run("shared-window")]})}
    assert rows["shared-window"].predicted is None
    assert "no finite value" in rows["shared-window"].note
    with pytest.raises(ValueError, match="no finite value"):
        model.epsilon_shared_window(1.0, 0.0, 2, 0.0)
    with pytest.raises(ValueError, match="no finite value"):
        model.epsilon_shared_window(1.0, 0.0, 1, 0.0)
    assert model.epsilon_shared_window(1.0, 0.0, 2, 0.5) == pytest.approx(2.0)
    assert advise.advise(1.0, 0.0, 2, inter_share=0.0).shared_window_bound is None


def test_sweep_time_without_a_model_says_so():
    inp = inputs(("new-scheme",))
    c = inp.costs["jacobi"][0]
    with pytest.raises(InputError, match="no projection model"):
        pj.iteration_time(c, pj.Shape(4, 1, 4), (64, 64, 64), 1, inp)
