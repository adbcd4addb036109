"""A study directory with damaged contents: `report`, `project` and
`study --resume` refuse it with one line naming the file, line and field
(exit 2), never a traceback, a hang or a recommendation from bad numbers.

The studies are copies of the recorded ones in data/ (measurements of this
project's 2-core machine), with one value changed; no MPI run is needed.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from hympi_lab import cli, project as pj, report, study, studydir

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parents[2]


def copy(tmp_path: Path, name: str = "study-2x1-depth") -> Path:
    dst = tmp_path / name
    shutil.copytree(DATA / name, dst)
    return dst


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    *parents, name = path.split(".")
    for part in parents:
        data = data[part]
    data[name] = value


def edit_records(d: Path, step: str, edit: Callable[[dict[str, Any]], None]) -> int:
    """edit(record) on every result record of `step`; returns the line
    number of the first (the one an error names)."""
    first = 0
    lines = []
    for number, line in enumerate((d / "results.jsonl").read_text().splitlines(), start=1):
        rec = json.loads(line)
        if rec["record"] == "result" and rec["step"] == step:
            edit(rec)
            first = first or number
        lines.append(json.dumps(rec))
    (d / "results.jsonl").write_text("\n".join(lines) + "\n")
    return first


def edit_header(d: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    header = json.loads((d / "study.json").read_text())
    edit(header)
    (d / "study.json").write_text(json.dumps(header))


def refused(args: list[str], capsys) -> str:
    """The one error line of a command that must exit 2."""
    code = cli.main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("hympi-lab: error: ") and err.count("\n") == 1, err
    return err.strip()


# --- F3: damaged result records --------------------------------------------------------

@pytest.mark.parametrize("step, path, value, expected", [
    ("solve", "result.time_s.median", 0, "result.time_s.median: expected a positive finite number, got 0"),
    ("solve", "result.time_s.median", -1.0, "result.time_s.median: expected a positive finite number, got -1.0"),
    ("solve", "result.time_s.median", math.nan, "result.time_s.median: expected a positive finite number, got NaN"),
    ("solve", "result.time_s.max", math.inf, "result.time_s.max: expected a positive finite number, got Infinity"),
    ("solve", "result.time_s", None, "result.time_s: expected an object, got null"),
    ("solve", "result.threads", 0, "result.threads: expected a whole number in 1..1024, got 0"),
    ("solve", "result.threads", 1e308, "result.threads: expected a whole number in 1..1024, got 1e+308"),
    ("solve", "result.threads", "2", 'result.threads: expected a whole number in 1..1024, got "2"'),
    ("solve", "result.scheme", [], "result.scheme: expected a string, got []"),
    ("solve", "result.fractions.f_comm", None, "result.fractions.f_comm: expected a fraction between 0 and 1, got null"),
    ("solve", "result.breakdown_s.comm", 0.5,
     "result.breakdown_s.comm: expected a list of numbers >= 0 (seconds per thread), got 0.5"),
    ("solve", "result.breakdown_s.comm", ["x"],
     'result.breakdown_s.comm: expected a list of numbers >= 0 (seconds per thread), got ["x"]'),
    ("solve", "context.ranks", {}, "context.ranks: expected a whole number in 1..4194304, got {}"),
    ("solve", "result.node_block", [1, 0, 1], "result.node_block: expected a list of 3 whole numbers >= 1, got [1, 0, 1]"),
    ("solve", "result.breakdown_s", {},
     "result.breakdown_s.compute_interior: expected a list of numbers >= 0 (seconds per thread), got nothing"),
    ("depth", "result.halo_depth", -1, "result.halo_depth: expected a whole number in 1..64, got -1"),
    ("depth", "result.halo_depth", math.nan, "result.halo_depth: expected a whole number in 1..64, got NaN"),
    ("beff", "result.time_s.median", "x", 'result.time_s.median: expected a positive finite number, got "x"'),
    ("internode", "result.k", 0, "result.k: expected a whole number in 1..4194304, got 0"),
])
@pytest.mark.parametrize("command", ["report", "project"])
def test_a_damaged_record_is_refused_with_its_line_and_field(tmp_path, capsys, command, step, path, value,
                                                             expected):
    d = copy(tmp_path)
    line = edit_records(d, step, lambda rec: set_path(rec, path, value))
    err = refused([command, str(d)], capsys)
    assert err == f"hympi-lab: error: {d / 'results.jsonl'} line {line}: {expected}"
    assert not (d / "report.html").exists()


def test_resume_refuses_a_damaged_record_before_it_runs_anything(tmp_path, capsys):
    d = copy(tmp_path)
    before = (d / "results.jsonl").read_text()
    line = edit_records(d, "solve", lambda rec: set_path(rec, "result.threads", 0))
    damaged = (d / "results.jsonl").read_text()
    assert refused(["study", "--resume", str(d)], capsys).endswith(
        f"results.jsonl line {line}: result.threads: expected a whole number in 1..1024, got 0")
    assert (d / "results.jsonl").read_text() == damaged != before  # nothing rewritten or lost
    assert not (d / "commands.log").exists()


def test_a_missing_field_is_named(tmp_path, capsys):
    d = copy(tmp_path)
    line = edit_records(d, "solve", lambda rec: rec["result"].pop("kernel"))
    assert refused(["report", str(d)], capsys).endswith(
        f"results.jsonl line {line}: result.kernel: expected a string, got nothing")


def test_a_huge_halo_depth_is_refused_without_hanging(tmp_path):
    """One depth record at halo depth 10^8 made `project` loop over the depth
    (and 1e308 threads made `report` hang): a subprocess with a time limit."""
    d = copy(tmp_path)
    line = edit_records(d, "depth", lambda rec: set_path(rec, "result.halo_depth", 100000000))
    for command in ("project", "report"):
        proc = subprocess.run([sys.executable, "-m", "hympi_lab.cli", command, str(d)], capture_output=True,
                              text=True, timeout=60, cwd=ROOT, env=dict(os.environ))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert proc.stderr == (f"hympi-lab: error: {d / 'results.jsonl'} line {line}: result.halo_depth: "
                               "expected a whole number in 1..64, got 100000000\n")


@pytest.mark.parametrize("threads, reserved, expected", [
    (2, 0, "result.reserved: expected a whole number in 1..1, got 0"),
    (4, 4, "result.reserved: expected a whole number in 1..3, got 4"),
    (4, None, "result.reserved: expected a whole number in 1..3, got nothing"),
    (1, 1, "result.threads: expected 2 or more for scheme multiple, got 1"),
])
def test_multiple_reserves_some_but_not_all_threads(threads, reserved, expected):
    """eq. (3) divides by m and n - m: a multiple run's m must lie in 1..n-1."""
    result = {"kind": "solve", "kernel": "jacobi", "scheme": "multiple", "threads": threads,
              "time_s": {"min": 1.0, "median": 1.0, "max": 1.0}}
    if reserved is not None:
        result["reserved"] = reserved
    # a whole results.jsonl line: the recorded study's first solve record, with this result
    line = next(r for r in map(json.loads, (DATA / "study-2x1" / "results.jsonl").read_text().splitlines())
                if r["step"] == "solve" and r["record"] == "result")
    rec = dict(line, result=result, context=dict(line["context"], threads_per_rank=threads))
    with pytest.raises(study.InputError) as err:
        studydir.check_result_record(rec, "results.jsonl line 7")
    assert str(err.value) == f"results.jsonl line 7: {expected}"
    studydir.check_result_record(dict(rec, result=dict(result, threads=4, reserved=3),
                                      context=dict(line["context"], threads_per_rank=4)), "ok")


def test_a_record_s_threads_are_its_run_s(tmp_path, capsys):
    """A solve record of a 1-thread run that says 1024 threads would be
    judged as a hybrid run: refused against its context."""
    d = copy(tmp_path)
    line = edit_records(d, "solve", lambda rec: set_path(rec, "result.threads", 1024))
    assert refused(["report", str(d)], capsys).endswith(
        f"results.jsonl line {line}: result.threads: expected the run's threads per rank "
        "(context.threads_per_rank = 1), got 1024")


def test_a_failed_point_has_no_results(tmp_path, capsys):
    """(the schema's rule: a point marked failed with its results kept would
    be left out of the verdict and drawn in the figures)"""
    d = copy(tmp_path)
    lines = (d / "results.jsonl").read_text().splitlines()
    number = next(i for i, ln in enumerate(lines, start=1) if json.loads(ln)["record"] == "point")
    rec = json.loads(lines[number - 1])
    rec.update(status="failed", exit_code=1, reason="exit code 1")
    lines[number - 1] = json.dumps(rec)
    (d / "results.jsonl").write_text("\n".join(lines) + "\n")
    assert refused(["report", str(d)], capsys).endswith(
        f"results.jsonl line {number}: n_results: expected 0, got 21")


def test_a_damaged_record_of_an_unfinished_point_is_dropped_like_a_torn_line(tmp_path):
    """A point counts only with its status line (a killed study); its records
    are not read, so damage there is no error, as a torn line is none."""
    d = copy(tmp_path)
    path = d / "results.jsonl"
    kept, _ = studydir.load_results(path)
    bad = dict(kept[0], point="unfinished", result=dict(kept[0]["result"], time_s=0))
    path.write_text(path.read_text() + json.dumps(bad) + "\n" + '{"record": "point", "poi')
    results, status = studydir.load_results(path)
    assert len(results) == len(kept) and "unfinished" not in status


def test_a_damaged_point_line_is_refused(tmp_path, capsys):
    d = copy(tmp_path)
    lines = (d / "results.jsonl").read_text().splitlines()
    number = next(i for i, ln in enumerate(lines, start=1) if json.loads(ln)["record"] == "point")
    rec = json.loads(lines[number - 1])
    rec["meta"] = "pure-mpi"
    lines[number - 1] = json.dumps(rec)
    (d / "results.jsonl").write_text("\n".join(lines) + "\n")
    assert refused(["project", str(d)], capsys).endswith(
        f"results.jsonl line {number}: meta: expected an object, got \"pure-mpi\"")


def test_the_undamaged_study_still_reports(tmp_path):
    d = copy(tmp_path)
    # one thread per rank: every scheme is pure MPI, so no scheme is recommended
    assert report.write_report(d).startswith("No scheme recommendation from 2 ranks x 1 threads")


# --- F4: study.json options -----------------------------------------------------------

@pytest.mark.parametrize("options, expected", [
    (None, "options: expected an object, got null"),
    ([], "options: expected an object, got []"),
    ({}, "options: missing level, mpi, launcher, hympi, hostfile, ranks, threads, emulated_nodes, link, "
         "steps, run_timeout_s, kernels (a study.json written by 'hympi-lab study' holds them all)"),
])
def test_resume_refuses_options_that_are_not_a_study_s(tmp_path, capsys, options, expected):
    d = copy(tmp_path)
    edit_header(d, lambda h: h.update(options=options))
    assert refused(["study", "--resume", str(d)], capsys) == f"hympi-lab: error: {d / 'study.json'}: {expected}"


@pytest.mark.parametrize("key, value, expected", [
    ("level", None, "options: missing level (a study.json"),
    ("steps", 5, "options.steps: expected a list of step names, or null, got 5"),
    ("threads", -2, "options.threads: expected a whole number in 0..1024, got -2"),
    ("run_timeout_s", "1", 'options.run_timeout_s: expected a finite number >= 0, got "1"'),
    ("colour", "blue", "options: unknown option(s) colour"),
])
def test_resume_refuses_a_missing_unknown_or_mistyped_option(tmp_path, capsys, key, value, expected):
    d = copy(tmp_path)

    def edit(h: dict[str, Any]) -> None:
        if value is None:
            del h["options"][key]
        else:
            h["options"][key] = value
    edit_header(d, edit)
    assert expected in refused(["study", "--resume", str(d)], capsys)


def test_options_added_later_may_be_absent(tmp_path):
    """app, app_name and app_repeat came after the first studies: absent, they mean no
    program of the user's, so those studies still load."""
    d = copy(tmp_path)
    edit_header(d, lambda h: [h["options"].pop(k, None) for k in studydir.OPTIONAL_OPTIONS])
    assert studydir.load_study(d)["options"]["level"] == "default"


def test_every_study_option_is_checked():
    fields = {f for f in study.StudyOptions.__dataclass_fields__}
    assert set(studydir.OPTION_NAMES) == fields  # the options study.schema.json describes


# --- F5: the setting block and oversubscription ------------------------------------------

@pytest.mark.parametrize("edit, expected", [
    (lambda h: h.pop("setting"), "setting: expected an object, got nothing"),
    (lambda h: h.pop("machine"), "machine: expected an object, got nothing"),
    (lambda h: h["setting"].update(ranks=0), "setting.ranks: expected a whole number in 1..4194304, got 0"),
    (lambda h: h["setting"].pop("oversubscribed"), "setting.oversubscribed: expected true or false, got nothing"),
])
@pytest.mark.parametrize("command", ["report", "project"])
def test_a_study_json_without_its_setting_is_refused(tmp_path, capsys, command, edit, expected):
    d = copy(tmp_path)
    edit_header(d, edit)
    assert refused([command, str(d)], capsys) == f"hympi-lab: error: {d / 'study.json'}: {expected}"


def test_runs_that_say_they_were_oversubscribed_get_no_recommendation(tmp_path):
    """The setting says 'not oversubscribed', the runs' own context blocks
    say they were: no recommendation, and the projection says so."""
    d = copy(tmp_path)
    st = report.load(d)
    assert report.recommendation(st, report.kernel_advice(report.solve_runs(st)),
                                 report.fits(st)).startswith("No scheme recommendation")
    edit_records(d, "solve", lambda rec: rec["context"].update(oversubscribed=True))
    st = report.load(d)
    assert st.setting["oversubscribed"] is False and st.oversubscribed
    verdict = report.recommendation(st, report.kernel_advice(report.solve_runs(st)), report.fits(st))
    assert verdict.startswith("No recommendation: this machine cannot separate the schemes. Its runs say "
                              "they were oversubscribed (their context blocks), so threads shared cores")
    assert "Temporal blocking" not in verdict
    assert any("oversubscribed" in a for a in pj.load_inputs(d).assumptions)


# --- F10: the worst rank of a large node ---------------------------------------------------

def brute_force_bytes(grid, node_grid, block, periodic):
    """(inter, intra) halo bytes of the worst rank at depth 1, visiting every rank."""
    parts = [n * b for n, b in zip(node_grid, block)]
    local = [-(-g // p) for g, p in zip(grid, parts)]
    best = (0, 0)
    for coords in ((x, y, z) for x in range(parts[0]) for y in range(parts[1]) for z in range(parts[2])):
        inter = intra = 0
        for d in range(3):
            face = pj.VALUE_BYTES * math.prod(local[e] for e in range(3) if e != d)
            for side in (-1, 1):
                g = coords[d] + side
                if parts[d] < 2 or (not periodic and not 0 <= g < parts[d]):
                    continue
                other_node = (g % parts[d]) // block[d] != coords[d] // block[d]
                if other_node:
                    inter += face
                else:
                    intra += face
        best = max(best, (inter, intra))
    return best


@pytest.mark.parametrize("grid, node_grid, block, periodic", [
    ((60, 40, 30), (2, 3, 1), (4, 5, 3), False),
    ((60, 40, 30), (3, 1, 2), (1, 6, 2), True),
    ((17, 33, 9), (1, 1, 1), (7, 2, 3), False),
    ((64, 64, 64), (4, 4, 4), (2, 2, 2), False),
])
def test_the_worst_rank_is_that_of_visiting_every_rank(grid, node_grid, block, periodic):
    geo = pj.worst_rank(grid, node_grid, block, periodic)
    assert (geo.bytes_inter, geo.bytes_intra) == brute_force_bytes(grid, node_grid, block, periodic)


def test_many_ranks_per_node_project_in_seconds(tmp_path, capsys):
    """2000 ranks per node took 62 s (every rank of a node visited per node
    count and sample); now the worst rank costs the same for any count.
    CPU seconds of this process, not wall time: a busy machine (the test
    lanes run side by side) stretches the wall clock, not the work."""
    import time

    d = copy(tmp_path, "study-2x1")
    start = time.process_time()
    assert cli.main(["project", str(d), "--ranks", "10000", "--threads", "1", "--grid", "512^3"]) == 0
    assert time.process_time() - start < 20
    assert "carried to 10000" in capsys.readouterr().out


def test_an_empty_step_or_kernel_list_is_refused(tmp_path, capsys):
    """'--steps ""' is not 'all steps': it is refused before anything runs."""
    from hympi_lab import cli
    for flag, value in (("--steps", ""), ("--steps", ","), ("--kernels", "")):
        out = tmp_path / f"s{len(value)}{flag}"
        assert cli.main(["study", "--quick", flag, value, "--out", str(out)]) == 2
        assert f"{flag} {value!r}: an empty list" in capsys.readouterr().err
        assert not out.exists()


def test_a_results_file_is_checked_again_once_its_bytes_change(tmp_path, monkeypatch):
    """The report loads results.jsonl twice; the second load reuses the first
    one's checks only while the file holds the same bytes."""
    d = copy(tmp_path)
    path = d / "results.jsonl"
    checked = []
    real = studydir.load_results_checked
    monkeypatch.setattr(studydir, "load_results_checked", lambda p: checked.append(p) or real(p))
    first, _ = studydir.load_results(path)
    again, _ = studydir.load_results(path)
    assert again == first and again is not first and len(checked) == 1
    again[0]["result"]["time_s"] = "changed"  # a copy: the next load is untouched
    assert studydir.load_results(path)[0] == first
    # The same size, a value the meaning checks refuse (median above max).
    line = edit_records(d, "solve", lambda r: r["result"]["time_s"].update(median=9.0, max=1.0))
    with pytest.raises(study.InputError, match=f"line {line}: result.time_s"):
        studydir.load_results(path)
