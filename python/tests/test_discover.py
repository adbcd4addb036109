"""The study plans from the build's `hympi info --json` (issue 26): a kernel
or benchmark that info lists reaches the plan, a quick study and the report
with no Python edit. data/info.json is `hympi info --json -` of this build
(its context trimmed); the extra kernel and benchmark here are made up.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from hympi_lab import buildinfo, cli, plan, report, study
from hympi_lab.launch import Setting
from hympi_lab.options import StudyOptions

DATA = Path(__file__).resolve().parent / "data"
INFO: dict[str, Any] = json.loads((DATA / "info.json").read_text())
ROOT = Path(__file__).resolve().parents[2]

# A kernel run to a tolerance with temporal blocking, and a threaded
# benchmark on at least 2 ranks: neither is one the Python side knows.
COPY7 = {"name": "copy7", "description": "a made-up kernel", "sweeps_per_iteration": 1,
         "flops_per_point": 1, "bytes_per_point": 16, "bytes_per_point_crs": 0,
         "bytes_per_point_sell": 0, "temporal_blocking": True, "fields": 2, "converges": True,
         "streaming_stores": False, "periodic": "allowed", "periodic_why": ""}
STREAM = {"name": "stream_x", "description": "a made-up <b>benchmark</b>", "min_ranks": 2,
          "min_nodes": 1, "uses_threads": True, "mpi_thread_level": "MPI_THREAD_FUNNELED",
          "options": [{"name": "--size", "meta": "N", "help": "elements", "default": "1000"}]}


def extended(**changes: Any) -> dict[str, Any]:
    info = copy.deepcopy(INFO)
    info["kernels"].append(dict(COPY7))
    info["benchmarks"].append(dict(STREAM, **changes))
    return info


def setting(ranks: int = 2, threads: int = 2, nodes: int = 1, rpn: int = 0) -> Setting:
    return Setting(ranks, threads, 4, nodes, "virtual", rpn, False, [], "", {})


def test_the_recorded_info_lists_what_the_plan_reads():
    assert buildinfo.kernel_names(INFO) == ["jacobi", "rbgs", "spmv", "cg"]
    assert buildinfo.depth_kernels(INFO) == ["jacobi", "rbgs", "spmv"]
    assert [k for k in buildinfo.kernel_names(INFO) if buildinfo.converges(INFO, k)] == ["cg"]
    assert plan.study_steps(INFO) == ["info", "beff", "cyclic3d", "pack", "internode", "ratio",
                                      "overlap", "solve", "depth"]
    # an info from before the benchmarks list: the dedicated ones
    old = {k: v for k, v in INFO.items() if k != "benchmarks"}
    assert plan.study_steps(old) == plan.study_steps(INFO)


def test_an_extra_kernel_and_benchmark_reach_the_plan():
    info = extended()
    assert plan.study_steps(info)[-3:] == ["stream_x", "solve", "depth"]
    points = plan.build_plan(StudyOptions(level="quick", ranks=2, threads=2), setting(rpn=1), info, 0)
    by_key = {pt.key: pt for pt in points}
    bench = by_key["stream-x"]
    assert bench.step == "stream_x" and bench.threads == 2
    assert bench.args == ["bench", "stream_x", "--repeat", "2", "--threads", "2", "--ranks-per-node", "1"]
    # the benchmark runs after the dedicated ones, before the solves
    steps = [pt.step for pt in points]
    assert steps.index("stream_x") > steps.index("overlap") and steps.index("stream_x") < steps.index("solve")
    solve = by_key["solve-copy7-masteronly"]
    assert "--max-iters" in solve.args and "--iters" not in solve.args  # converges
    assert "--iters" in by_key["solve-jacobi-masteronly"].args
    assert {pt.key for pt in points if pt.step == "depth"} == {
        f"depth-{k}-h{h}" for k in ("jacobi", "rbgs", "spmv", "copy7") for h in (1, 3)}


def test_a_kernel_out_of_the_default_study_runs_only_when_asked_for():
    # pipecg's fact in C++ (KernelInfo::default_study): a kernel whose entry
    # says false is not in the default kernel set, but --kernels reaches it.
    info = extended()
    info["kernels"][-1].update(default_study=False, default_study_why="a made-up reason")
    assert buildinfo.default_kernel_names(info) == ["jacobi", "rbgs", "spmv", "cg"]
    default = {pt.key for pt in plan.build_plan(StudyOptions(level="quick", ranks=2, threads=2),
                                                setting(rpn=1), info, 0)}
    assert not any(k.startswith("solve-copy7") for k in default)
    assert "solve-cg-masteronly" in default
    asked = {pt.key for pt in plan.build_plan(StudyOptions(level="quick", ranks=2, threads=2,
                                                           kernels=["copy7"]), setting(rpn=1), info, 0)}
    assert "solve-copy7-masteronly" in asked and "solve-cg-masteronly" not in asked


@pytest.mark.parametrize("changes, layout, why", [
    ({"min_ranks": 4}, {}, "needs 4 ranks, the layout has 2"),
    ({"min_nodes": 2}, {}, "needs 2 nodes, the layout has 1"),
    ({"min_nodes": 2}, {"nodes": 2, "rpn": 1}, ""),
])
def test_a_benchmark_the_layout_cannot_run_is_skipped_with_its_reason(changes, layout, why):
    info, opts = extended(**changes), StudyOptions(level="quick", ranks=2, threads=2)
    skips = plan.benchmark_skips(opts, setting(**layout), info)
    assert [(b["name"], w) for b, w in skips] == [("stream_x", why)]
    keys = {pt.key for pt in plan.build_plan(opts, setting(**layout), info, 0)}
    assert ("stream-x" in keys) == (not why)


def test_a_single_threaded_benchmark_takes_no_threads():
    points = plan.build_plan(StudyOptions(level="default", ranks=2, threads=2, steps=["stream_x"]),
                             setting(), extended(uses_threads=False), 0)
    assert [(pt.args, pt.threads, pt.cores_per_rank) for pt in points] == [
        (["bench", "stream_x", "--repeat", "3"], 1, 2)]


def test_names_are_checked_against_info():
    info = extended()
    opts = StudyOptions(steps=["beff", "nope"], kernels=["copy7", "lu"])
    problems = plan.name_problems(opts, info)
    assert problems[0] == ("--steps: unknown step(s) nope (valid: info, beff, cyclic3d, pack, internode, "
                           "ratio, overlap, stream_x, solve, depth)")
    assert problems[1] == "--kernels: unknown kernel(s) lu (valid: jacobi, rbgs, spmv, cg, copy7)"
    assert plan.name_problems(StudyOptions(steps=["depth"], kernels=["cg"]), info) == [
        "--steps depth runs jacobi, rbgs, spmv and copy7 only: with these --kernels it has nothing to run"]
    assert plan.name_problems(StudyOptions(steps=["stream_x", "depth"], kernels=["copy7"]), info) == []


def test_the_study_refuses_unknown_names_once_info_ran(tmp_path, monkeypatch, capsys):
    if not (ROOT / "build" / "bin" / "hympi").is_file():
        pytest.skip("build/bin/hympi is not built")
    monkeypatch.setattr(study, "discover_info", lambda *a, **k: extended())
    out = tmp_path / "s"
    code = cli.main(["study", "--quick", "--ranks", "2", "--steps", "info,stream-x", "--kernels", "copy7,lu",
                     "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert "unknown step(s) stream-x (valid: info, beff, cyclic3d, pack, internode, ratio, overlap, " \
           "stream_x, solve, depth)" in err
    assert "unknown kernel(s) lu (valid: jacobi, rbgs, spmv, cg, copy7)" in err
    assert not out.exists(), "nothing may be created before the names are known"


# --- the report -----------------------------------------------------------------------

def _line(point: str, step: str, result: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    return {"record": "result", "study_schema_version": 1, "point": point, "step": step,
            "source": f"raw/{point}.json", "context": context, "result": result}


def _point(point: str, step: str, n: int) -> dict[str, Any]:
    return {"record": "point", "study_schema_version": 1, "point": point, "step": step, "label": point,
            "status": "ok", "reason": "", "exit_code": 0, "timed_out": False, "wall_s": 0.5,
            "n_results": n, "ranks": 2, "threads": 1, "meta": {}, "command": "hympi", "binding": "",
            "date": "2026-11-25T03:51:54Z", "stderr_tail": ""}


def add_extras(d: Path) -> None:
    """An info record listing stream_x, two records of it, and copy7 solve runs."""
    lines = [json.loads(t) for t in (d / "results.jsonl").read_text().splitlines()]
    solves = [r for r in lines if r["record"] == "result" and r["step"] == "solve"
              and r["result"]["kernel"] == "jacobi"]
    context = solves[0]["context"]
    extra = [_line("info", "info", {"kind": "info", "benchmarks": [STREAM], "kernels": [COPY7]}, context),
             _point("info", "info", 1),
             _line("stream-x", "stream_x", {"kind": "sample", "size": 1000, "label": "<script>x</script>",
                                           "time_s": {"min": 1.0, "median": 2.0, "max": 3.0},
                                           "lengths": [1, 2]}, context),
             _line("stream-x", "stream_x", {"kind": "summary", "ok": True}, context),
             _point("stream-x", "stream_x", 2)]
    for r in solves:
        point = r["point"].replace("jacobi", "copy7")
        extra += [_line(point, "solve", dict(r["result"], kernel="copy7", tol=1e-8), r["context"]),
                  _point(point, "solve", 1)]
    (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines + extra))


def test_the_report_shows_other_benchmarks_and_unknown_kernels(tmp_path):
    d = tmp_path / "study"
    shutil.copytree(DATA / "study-2x1", d)
    add_extras(d)
    report.write_report(d)
    page = (d / "report.html").read_text()
    numbers = {sid: n for n, (sid, _, _) in enumerate(report.SECTIONS, start=1)}
    assert f'<section id="other"><h2>{len(numbers) + 1}. Other benchmarks</h2>' in page
    assert 'id="other-stream_x"' in page
    assert "a made-up &lt;b&gt;benchmark&lt;/b&gt;" in page and "&lt;script&gt;x&lt;/script&gt;" in page
    assert "<script>" not in page
    assert "<th>time_s.median</th>" in page and "<th>lengths</th>" not in page
    # the made-up kernel is in the breakdown and the advice like a known one
    assert "copy7" in page[page.index('<section id="breakdown">'):page.index('<section id="validation">')]
    assert "copy7" in page[page.index('<section id="recommendation">'):]


def test_the_other_section_is_left_out_when_empty(tmp_path):
    d = tmp_path / "study"
    shutil.copytree(DATA / "study-2x1", d)
    report.write_report(d)
    assert '<section id="other">' not in (d / "report.html").read_text()


def test_a_benchmark_without_a_dedicated_plan_runs_in_a_quick_study(tmp_path, monkeypatch, capsys):
    """pack as if it were new: planned from info alone (hympi bench pack
    with its defaults), measured, recorded and shown under Other benchmarks."""
    if not (ROOT / "build" / "bin" / "hympi").is_file():
        pytest.skip("build/bin/hympi is not built")
    from hympi_lab import sections
    monkeypatch.setattr(plan, "DEDICATED_BENCHMARKS", tuple(b for b in plan.DEDICATED_BENCHMARKS if b != "pack"))
    monkeypatch.setattr(sections, "PRESENTED_STEPS", tuple(s for s in sections.PRESENTED_STEPS if s != "pack"))
    out = tmp_path / "s"
    code = cli.main(["study", "--quick", "--ranks", "2", "--threads", "2", "--steps", "info,pack",
                     "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "# plan: 2 runs (info 1, pack 1)" in text
    log = (out / "commands.log").read_text()
    assert re.search(r"hympi bench pack --repeat 2 --threads 2 (--ranks-per-node \d+ )?--json", log)
    page = (out / "report.html").read_text()
    assert '<section id="other">' in page and 'id="other-pack"' in page
    assert "<th>face_bytes</th>" in page
