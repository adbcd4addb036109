"""Only what the data supports (issue 28, items 4 and 6).

- results.jsonl damaged anywhere before its last point line is refused with
  the line (exit 2); only a killed study's unfinished last point is dropped,
  and the verdict and the page say so;
- absurd values in study files, records and advise/project inputs are one
  line and exit 2, never a hang;
- the verdict: no scheme recommended from one thread per rank (the recorded
  2 x 1 studies once read "Recommended: multiple-own"), none when the clear
  winners differ by kernel, and failed runs named in it;
- each section judges its statement (judge.py): model rows inside the
  run-to-run spread are marked, none are judged on an oversubscribed
  machine, `project` projects no kernel whose own runs it misses and clips
  its efficiency bands to 0..1, a one-point "curve" is a table or a
  sentence, an outlier bar is cut and labelled;
- no None, nan or inf in any report's text.

The studies are the recorded ones in data/ (measurements, see its README).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import signal
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable

import pytest

from hympi_lab import advise, analysis, cli, cli_args, judge, project as pj, report

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parents[2]
ONE_THREAD = ["study-2x1", "study-2x1-depth", "study-emulated-2x1", "study-emulated-2x1-depth"]
HYBRID = "study-4x4-hybrid"
# Words that must never reach a report's text.
NON_NUMBERS = re.compile(r"\b(None|nan|NaN|inf|Infinity)\b")


def copy(tmp_path: Path, name: str = HYBRID) -> Path:
    dst = tmp_path / name
    shutil.copytree(DATA / name, dst)
    return dst


def lines_of(d: Path) -> list[str]:
    return (d / "results.jsonl").read_text().splitlines()


def write_lines(d: Path, lines: list[str]) -> None:
    (d / "results.jsonl").write_text("\n".join(lines) + "\n")


def verdict(d: Path) -> str:
    st = analysis.load(d)
    return analysis.recommendation(st, analysis.kernel_advice(analysis.solve_runs(st), st.oversubscribed),
                                   analysis.fits(st))


def refused(args: list[str], capsys) -> str:
    with no_hang(120):
        code = cli.main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("hympi-lab: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


class no_hang:
    """Fails the test instead of hanging when the code under it loops on an absurd value."""

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds

    def __enter__(self) -> None:
        def alarm(*_: Any) -> None:
            raise AssertionError(f"still running after {self.seconds} s: a hang")
        self.old = signal.signal(signal.SIGALRM, alarm)
        signal.alarm(self.seconds)

    def __exit__(self, *_: Any) -> None:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.old)


def page_text(path: Path) -> str:
    """The visible text of a report page (what a reader sees, alt texts included)."""
    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.parts: list[str] = []
            self.skip = 0

        def handle_starttag(self, tag: str, attrs: list[tuple[str, Any]]) -> None:
            self.skip += tag == "style"
            self.parts += [v for k, v in attrs if k == "alt" and v]

        def handle_endtag(self, tag: str) -> None:
            self.skip -= tag == "style"

        def handle_data(self, data: str) -> None:
            if not self.skip:
                self.parts.append(data)

    parser = Text()
    parser.feed(path.read_text())
    return "\n".join(parser.parts)


# --- item 4: a damaged line mid-file is refused with its line ------------------------------

def _first(lines: list[str], record: str, after: int = 0) -> int:
    """Index of the first line of kind `record` ('result'/'point') from `after`."""
    return next(i for i, ln in enumerate(lines) if i >= after and json.loads(ln)["record"] == record)


def _damage(kind: str, lines: list[str]) -> tuple[list[str], int, str]:
    """(damaged lines, the line number the error names, what it says)."""
    mid = len(lines) // 2
    res = _first(lines, "result", mid)
    point = _first(lines, "point", res)
    if kind == "not JSON":
        lines[res] = lines[res][: len(lines[res]) // 2]
        return lines, res + 1, "a damaged line (not JSON"
    if kind == "no record":
        lines.insert(res, "42")
        return lines, res + 1, "expected an object, got 42"
    if kind == "unknown record":
        lines.insert(res, json.dumps({"record": "note", "study_schema_version": 1, "point": "x", "step": "solve"}))
        return lines, res + 1, "record: expected one of"
    if kind == "deleted result":
        del lines[point - 1]
        return lines, point, "result line(s)"
    if kind == "deleted point":
        key = json.loads(lines[point])["point"]
        del lines[point]
        # the error names the first result of the point that lost its point line
        return lines, 1 + next(i for i, ln in enumerate(lines) if json.loads(ln)["point"] == key), \
            "that no point line closes"
    if kind == "duplicated result":
        lines.insert(res, lines[res])
        return lines, point + 2, "result line(s)"
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["not JSON", "no record", "unknown record", "deleted result",
                                  "deleted point", "duplicated result"])
@pytest.mark.parametrize("command", ["report", "project"])
def test_a_line_damaged_mid_file_is_refused_with_its_number(tmp_path, capsys, command, kind):
    d = copy(tmp_path, "study-2x1-depth")
    lines, number, said = _damage(kind, lines_of(d))
    write_lines(d, lines)
    err = refused([command, str(d)], capsys)
    assert f"results.jsonl line {number}: " in err and said in err, err
    assert not (d / "report.html").exists()


def test_an_unfinished_last_point_is_left_out_and_said(tmp_path, capsys):
    """A study killed while it ran a point: whole result lines and a torn last line."""
    d = copy(tmp_path)
    lines = lines_of(d)
    extra = json.loads(lines[_first(lines, "result", len(lines) // 2)])
    extra["point"] = "solve-jacobi-extra"
    write_lines(d, lines + [json.dumps(extra), '{"record": "point", "poi'])
    assert analysis.load(d).unfinished == ("solve-jacobi-extra",)
    with no_hang(300):
        assert cli.main(["report", str(d)]) == 0
    out = capsys.readouterr().out
    assert "Drawn without: 1 unfinished point(s) at the end of results.jsonl" in out
    assert "solve-jacobi-extra" in out and "--resume measures them" in out
    assert "ends with 1 unfinished point(s)" in page_text(d / "report.html")


def test_a_tail_that_is_no_result_line_is_damage(tmp_path, capsys):
    d = copy(tmp_path, "study-2x1-depth")
    lines = lines_of(d)
    write_lines(d, lines + ['{"what": 1}', '{"record": "result", "poi'])
    assert refused(["report", str(d)], capsys).endswith(
        f"results.jsonl line {len(lines) + 1}: a damaged line (neither a result nor a point line of a study)")


def test_a_failed_run_is_named_in_the_verdict(tmp_path):
    d = copy(tmp_path)
    lines = lines_of(d)
    # the rbgs multiple-own run (the clear winner) failed: its results go, its point says why
    keep = []
    for ln in lines:
        rec = json.loads(ln)
        if rec["point"] == "solve-rbgs-multiple-own":
            if rec["record"] == "result":
                continue
            rec.update(status="failed", n_results=0, exit_code=1, reason="exit code 1")
            ln = json.dumps(rec)
        keep.append(ln)
    write_lines(d, keep)
    before, after = verdict(DATA / HYBRID), verdict(d)
    assert before.startswith("Recommended: multiple-own")
    assert not after.startswith("Recommended: multiple-own")
    assert after.endswith("Drawn without: 1 run(s) failed and are left out (solve-rbgs-multiple-own).")


# --- item 4: absurd values ---------------------------------------------------------------

@pytest.mark.parametrize("edit, expected", [
    (lambda h: h["setting"].update(threads=1e30), "setting.threads: expected a whole number in 1..1024, got 1e+30"),
    (lambda h: h["setting"].update(ranks=10 ** 30), "setting.ranks: expected a whole number in 1..4194304"),
    (lambda h: h["setting"].update(cores=-4), "setting.cores: expected a whole number in 1..4194304, got -4"),
    (lambda h: h["options"].update(threads=10 ** 30), "options.threads"),
])
@pytest.mark.parametrize("command", ["report", "project"])
def test_absurd_values_in_study_json_are_refused(tmp_path, capsys, command, edit, expected):
    d = copy(tmp_path, "study-2x1-depth")
    header = json.loads((d / "study.json").read_text())
    edit(header)
    (d / "study.json").write_text(json.dumps(header))
    assert expected in refused([command, str(d)], capsys)


@pytest.mark.parametrize("path, value, expected", [
    ("result.threads", 10 ** 30, "result.threads: expected a whole number in 1..1024"),
    ("result.threads", 1e30, "result.threads: expected a whole number in 1..1024, got 1e+30"),
    ("context.ranks", 10 ** 30, "context.ranks: expected a whole number in 1..4194304"),
    ("result.time_s.min", -1.0, "result.time_s.min: expected a positive finite number, got -1.0"),
    ("result.grid", [10 ** 30, 1, 1], "result.grid"),
    ("result.halo_depth", 10 ** 30, "result.halo_depth: expected a whole number in 1..64"),
])
def test_absurd_values_in_records_are_refused(tmp_path, capsys, path, value, expected):
    d = copy(tmp_path, "study-2x1-depth")
    lines = lines_of(d)
    i = next(i for i, ln in enumerate(lines) if json.loads(ln)["step"] == "depth"
             and json.loads(ln)["record"] == "result")
    rec = json.loads(lines[i])
    *parents, name = path.split(".")
    node = rec
    for part in parents:
        node = node[part]
    node[name] = value
    lines[i] = json.dumps(rec)
    write_lines(d, lines)
    for command in ("report", "project"):
        err = refused([command, str(d)], capsys)
        assert f"results.jsonl line {i + 1}: " in err and expected in err, err


def masteronly_document(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> str:
    """A result document of the hybrid study's masteronly jacobi run (4 threads), edited."""
    rec = next(json.loads(ln) for ln in lines_of(DATA / HYBRID)
               if '"solve-jacobi-masteronly"' in ln and '"record":"result"' in ln.replace(" ", ""))
    doc = {"context": rec["context"], "results": [rec["result"]]}
    edit(doc)
    path = tmp_path / "masteronly.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("edit, expected", [
    (lambda d: d["results"][0].update(threads=10 ** 30), "threads per process; at most 4096"),
    (lambda d: d["results"][0]["time_s"].update(median=-1.0), "time_s must be positive finite numbers"),
    (lambda d: d["results"][0]["breakdown_s"].update(idle=[1e308] * 4), "idle times (1e+308, ...) are no seconds"),
    (lambda d: d["context"].update(thread_affinity=[["0-1000000000000"]] * 4), "names CPU 1000000000000"),
])
def test_absurd_values_in_advise_documents_are_refused(tmp_path, capsys, edit, expected):
    """10^30 threads and a mask of 10^12 CPUs made advise loop for ever; a
    negative time turned 'cannot recommend' into a ranking; idle times of
    1e308 printed 'inf%'."""
    base = masteronly_document(tmp_path, lambda d: None)
    assert cli.main(["advise", base]) == 0
    assert "recommendation: cannot recommend: idle time dominates" in capsys.readouterr().out
    assert expected in refused(["advise", masteronly_document(tmp_path, edit)], capsys)


def test_advise_bounds_threads_as_its_flag_does():
    assert advise.MAX_THREADS == cli_args.MAX_THREADS


@pytest.mark.parametrize("args, expected", [
    (["--n", "1e30", "--f-comm", "0.2", "--f-comp-non", "0.1"], "argument --n: not a whole number"),
    (["--n", str(10 ** 30), "--f-comm", "0.2", "--f-comp-non", "0.1"], "must be at most 4096 threads"),
    (["--n", "4", "--f-comm", "-0.2", "--f-comp-non", "0.1"], "f_comm -0.2 is out of range: accepted 0 .. 1"),
    (["--n", "4", "--comm-ratio", "1e300", "--non-ratio", "1e300", "--nk-loc", "1e300"], "overflows"),
])
def test_absurd_advise_flags_are_refused(capsys, args, expected):
    assert expected in refused(["advise", *args], capsys)


@pytest.mark.parametrize("args, expected", [
    (["--ranks", str(10 ** 18), "--grid", "1073741824^3"], "is out of range: accepted 1 .. 65536 cores per node"),
    (["--cores-per-node", str(10 ** 21), "--grid", "1073741824^3"], "is out of range: accepted 1 .. 65536 cores per node"),
    (["--ranks", "2", "--threads", "5000"], "1 .. 1024 threads"),
    (["--max-nodes", str(10 ** 20)], "--max-nodes: '100000000000000000000' is out of range: accepted 1 .. 16384"),
    (["--grid", "1e30x1x1"], "expected NXxNYxNZ"),
    (["--samples", str(10 ** 12)], "--samples: '1000000000000' is out of range: accepted 10 .. 100000"),
])
def test_absurd_project_requests_are_refused_without_hanging(capsys, args, expected):
    """--ranks 10^18 on a 2^30-cube grid factored its decomposition for hours."""
    assert expected in refused(["project", str(DATA / "study-2x1-depth"), *args], capsys)


# --- item 6: the verdict ---------------------------------------------------------------

@pytest.mark.parametrize("name", ONE_THREAD)
def test_one_thread_per_rank_recommends_no_scheme(name):
    """With one thread per rank every hybrid scheme is pure MPI: the recorded
    2 x 1 studies read 'Recommended: multiple-own' from 1.2x differences
    between implementations of the same thing."""
    text = verdict(DATA / name)
    assert text.startswith("No scheme recommendation from 2 ranks x 1 threads: with one thread per rank")
    assert "Recommended" not in text and "Run the study with --threads 2 or more" in text


def test_a_hybrid_study_recommends_its_clear_winner():
    text = verdict(DATA / HYBRID)
    assert text.startswith("Recommended: multiple-own with 4 ranks x 4 threads (best, clearly separated, "
                           "for 1 of 2 kernels). jacobi: multiple-own, 1.47x pure MPI")


def test_clear_winners_that_differ_by_kernel_give_no_single_recommendation():
    """default-4x4 (16 cores): rbgs clearly multiple-own, spmv clearly funneled."""
    text = verdict(ROOT / "docs" / "reference-studies" / "default-4x4")
    assert text.startswith("No single recommendation with 4 ranks x 4 threads: the clear winner depends "
                           "on the kernel (rbgs: multiple-own, spmv: funneled).")


def test_a_layout_with_more_threads_than_cores_is_oversubscribed_whatever_the_flag(tmp_path):
    d = copy(tmp_path)
    header = json.loads((d / "study.json").read_text())
    header["setting"]["cores"] = 8  # 4 x 4 threads on 8 cores, flag still false
    (d / "study.json").write_text(json.dumps(header))
    st = analysis.load(d)
    assert st.setting["oversubscribed"] is False and st.oversubscribed
    assert verdict(d).startswith("No recommendation: this machine cannot separate the schemes. The study "
                                 "ran 16 threads (4 ranks x 4 threads) on 8 cores")


# --- item 6: each section's judgement ---------------------------------------------------------

def test_compare_marks_a_difference_inside_the_spread_and_judges_nothing_oversubscribed():
    assert judge.compare(None, 1.0, 0.1, 0.05).text(0.05) == "-"
    assert judge.compare(1.2, 1.0, 0.3, 0.05).text(0.05) == "+20 % (inside the spread)"
    assert judge.compare(1.2, 1.0, 0.1, 0.05).verdict == "misses"
    assert judge.compare(1.03, 1.0, 0.01, 0.05).verdict == "within"
    over = judge.compare(1.091, 0.002678, 0.4, 0.05, oversubscribed=True)
    assert over.error is None and over.text(0.05) == "not judged (oversubscribed)"
    assert judge.compare(1.0, math.nan, 0.1, 0.05).text(0.05) == "not judged (no finite numbers)"


def test_the_validation_rows_say_what_the_spread_allows():
    st = analysis.load(DATA / HYBRID)
    rows = {(v.kernel, v.label): v for v in analysis.validations(analysis.solve_runs(st))}
    # rbgs funneled: +3 % against a 25 % spread; jacobi funneled +65 % against 7 %
    assert rows[("rbgs", "funneled")].judged.text(0.05) == "+3 % (inside the spread)"
    assert rows[("jacobi", "funneled")].judged.verdict == "misses"
    over = analysis.validations(analysis.solve_runs(st), oversubscribed=True)
    assert all(v.judged.error is None for v in over)


def test_bar_cap_cuts_only_outliers():
    assert judge.bar_cap([1.0, 1.2, 0.9, 1.1]) is None
    assert judge.bar_cap([0.25, 0.3, 92.0, 0.35, 96.0, 0.6, 0.4]) == pytest.approx(1.5 * 0.6)
    assert judge.bar_cap([1.0, 500.0]) is None  # two bars: nothing to call the norm
    assert judge.one_point([[1, 1], [4]]) and not judge.one_point([[1, 2]])
    assert judge.num(None) == judge.num(math.nan) == judge.num(math.inf) == "-"


def test_project_carries_only_the_runs_it_reproduces(tmp_path):
    """Doubling the measured times of rbgs's multiple-own run (its phase
    costs unchanged) makes the model miss it: that scheme gets no series and
    no crossover; the runs it reproduces are still projected."""
    d = copy(tmp_path)
    lines = lines_of(d)
    for i, ln in enumerate(lines):
        rec = json.loads(ln)
        if rec["point"] == "solve-rbgs-multiple-own" and rec["record"] == "result":
            rec["result"]["time_s"] = {k: 2 * v for k, v in rec["result"]["time_s"].items()}
            lines[i] = json.dumps(rec)
    write_lines(d, lines)
    before = pj.document(pj.load_inputs(DATA / HYBRID), pj.default_request(pj.load_inputs(DATA / HYBRID)))
    inputs = pj.load_inputs(d)
    doc = pj.document(inputs, pj.default_request(inputs))
    for old, new in zip(before["projections"], doc["projections"]):
        if new["kernel"] != "rbgs":
            assert new == old
            continue
        assert "multiple-own" in new["left_out"] and "multiple-own" not in old["left_out"]
        schemes = {s["scheme"] for s in new["series"]}
        assert "multiple-own" not in schemes and "multiple-own" in {s["scheme"] for s in old["series"]}
        assert all("multiple-own" not in (x["from"], x["to"]) for x in new["crossovers"])
    assert "not projected (the model misses their own runs): masteronly-threaded, funneled, multiple-own" \
        in pj.text(doc)


def test_nothing_is_projected_from_an_oversubscribed_study_or_a_kernel_it_always_misses():
    inputs = pj.load_inputs(DATA / HYBRID)
    checks = pj.self_consistency(inputs)
    assert pj.withheld("jacobi", checks) == ""
    assert pj.withheld("jacobi", checks, oversubscribed=True).startswith("the study was oversubscribed")
    missing = [pj.Check("cg", "funneled", 1.0, 3.0, 0.1), pj.Check("cg", "pure MPI", 1.0, 0.2, 0.1)]
    assert pj.withheld("cg", missing) == ("the model misses all 2 of cg's measured runs by more than 15 %, "
                                         "so it is not carried to other node counts")
    judged = pj.document(inputs, pj.default_request(inputs))["self_consistency"]
    assert judged["not_judged"] == "" and judged["within"] >= 1
    doc = pj.document(replace(inputs, oversubscribed=True), pj.default_request(inputs))
    assert all(p["series"] == [] and p["crossovers"] == [] and p["withheld"] for p in doc["projections"])
    text = pj.text(doc)
    assert "time per iteration" not in text and "fastest changes" not in text
    # Nor are its own runs judged, in the document itself: `hympi-lab project`
    # and the report print the measured and predicted times, no error.
    sc = doc["self_consistency"]
    assert sc["not_judged"].startswith("the study was oversubscribed") and sc["within"] is None
    assert sc["runs"] == judged["runs"] and all(c["within_limit"] is None for c in sc["checks"])
    assert [c["error"] for c in sc["checks"]] == [c["error"] for c in judged["checks"]]
    assert f"self-consistency: {sc['runs']} measured runs predicted, not judged: the study was" in text
    checks = text.split("\n\n")[0].splitlines()[1:]
    assert len(checks) == len(sc["checks"]) and all("not judged" in c for c in checks)
    assert re.search(r"[+-]\s*\d+ %", "\n".join(checks)) is None and "<- outside" not in text


@pytest.mark.parametrize("name", ["study-2x1", HYBRID])
def test_efficiency_bands_lie_in_0_to_1(name):
    inputs = pj.load_inputs(DATA / name)
    doc = pj.document(inputs, pj.default_request(inputs))
    edges = [v for p in doc["projections"] for s in p["series"]
             for v in s["efficiency_low"] + s["efficiency_high"] if v is not None]
    assert edges and all(0.0 <= v <= 1.0 for v in edges)


def test_a_negative_latency_fit_is_taken_as_zero():
    from hympi_lab import fit
    from hympi_lab.project_inputs import _latency

    notes: list[str] = []
    assert _latency(fit.Param(-2.1e-6, 8.8e-6), notes) == 0.0
    assert "negative latency (-2.1 +- 8.8 us)" in notes[0]
    assert _latency(fit.Param(7e-7, 1e-7), []) == 7e-7


# --- no None, nan or inf in a report --------------------------------------------------------

@pytest.mark.parametrize("name", ["study-2x1", HYBRID])
def test_no_none_nan_or_inf_in_a_report(tmp_path, name):
    d = copy(tmp_path, name)
    text = report.write_report(d)
    page = page_text(d / "report.html")
    assert not NON_NUMBERS.search(text) and not NON_NUMBERS.search(page), NON_NUMBERS.findall(page)


def test_an_undetermined_eq14_fit_draws_no_curve(tmp_path, monkeypatch):
    """The quick study's figure drew the fit's curve with 'crossover nk_loc =
    223' in its legend while its caption said the fit was not determined."""
    from hympi_lab import plotting, sections

    drawn: list[Any] = []
    monkeypatch.setattr(plotting, "overlap", lambda series, n, fit, outputs: drawn.append(fit)
                        or Path(outputs[0]).write_bytes(b"\x89PNG"))
    point = {"step": "overlap", "context": {}, "result": {"kind": "point", "scheme": "funneled",
             "threads": 2, "nk_loc": 4.0, "epsilon": {"min": 1.0, "median": 1.1, "max": 1.2}}}
    other = json.loads(json.dumps(point))
    other["result"]["nk_loc"] = 16.0
    study = analysis.Study(tmp_path, {}, [point, other], {})
    (tmp_path / "figures").mkdir()
    for fit, expected in [({"value": 5.9, "sigma": 3.5}, (5.9, 11.9)), ({"value": 1e-3, "sigma": 40.0}, None)]:
        eq14 = {"params": {"comm_ratio": fit, "non_ratio": {"value": 11.9, "sigma": 6.4}}, "rms_residual": 0.2}
        ctx = sections.Ctx(study, tmp_path, {"eq14": eq14}, {}, [], "", plotting, None)
        sections.overlap(ctx)
        assert drawn[-1] == expected


def test_an_undetermined_hockney_fit_draws_no_curve(tmp_path, monkeypatch):
    from hympi_lab import plotting, sections

    drawn: list[Any] = []
    monkeypatch.setattr(plotting, "beff", lambda patterns, pp, hockney, outputs: drawn.append(hockney)
                        or Path(outputs[0]).write_bytes(b"\x89PNG"))
    point = {"step": "beff", "context": {}, "result": {"kind": "point", "pattern": "ring-2", "bytes": 8,
                                                     "bandwidth_MBps": 10.0}}
    study = analysis.Study(tmp_path, {}, [point], {})
    (tmp_path / "figures").mkdir()
    b_inf = {"value": 1.3e8, "sigma": 7e7}
    for lat, expected in [({"value": 7e-7, "sigma": 1e-7}, (7e-7, 1.3e8)), ({"value": -2.1e-6, "sigma": 8.8e-6}, None)]:
        fit = {"hockney": {"params": {"T_lat": lat, "b_inf": b_inf, "n_half": {"value": 91.0, "sigma": 1.0}}}}
        sections.beff(sections.Ctx(study, tmp_path, fit, {}, [], "", plotting, None))
        assert drawn[-1] == expected
