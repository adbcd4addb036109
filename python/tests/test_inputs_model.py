"""Absurd inputs to trace, advise, fit and model: one clear error (exit 2),
never an out-of-memory, a traceback, nan printed as an answer, invalid JSON,
or more confidence from more uncertainty."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hympi_lab import advise, fit
from hympi_lab.cli import main
from hympi_lab.errors import InputError


def _bad(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run, expect exit 2 with exactly one error line; return that line."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hympi-lab: error: "), err
    return err[0]


# --- F2: trace ---------------------------------------------------------------

def _trace() -> dict[str, Any]:
    """Two ranks of two threads, as hympi solve --trace writes them."""
    events: list[dict[str, Any]] = []
    for pid in (0, 1):
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                       "args": {"name": f"rank {pid} (host)"}})
        events += [{"ph": "X", "name": "comm", "cat": "phase", "pid": pid, "tid": 0, "ts": 0.0, "dur": 30.0},
                   {"ph": "X", "name": "compute_interior", "cat": "phase", "pid": pid, "tid": 0,
                    "ts": 30.0, "dur": 70.0},
                   {"ph": "X", "name": "idle", "cat": "phase", "pid": pid, "tid": 1, "ts": 0.0, "dur": 30.0},
                   {"ph": "X", "name": "compute_interior", "cat": "phase", "pid": pid, "tid": 1,
                    "ts": 30.0, "dur": 70.0}]
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"hympi_trace_version": 1, "kernel": "jacobi", "scheme": "masteronly",
                          "reserved": 0, "ranks": 2, "threads": 2, "loop_elapsed_s": [1e-4, 1e-4]}}


def _run_trace(tmp_path: Path, data: dict[str, Any]) -> list[str]:
    path = tmp_path / "tr.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return ["trace", str(path), "-o", str(tmp_path / "g.png")]


def test_a_good_trace_is_drawn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_run_trace(tmp_path, _trace())) == 0
    out = capsys.readouterr().out
    assert "jacobi under masteronly: 2 ranks x 2 threads: comm 15 %, compute_interior 70 %, idle 15 %" in out
    assert (tmp_path / "g.png").stat().st_size > 0


def test_a_thread_id_beyond_the_declared_threads_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Every tid 10^9: sized by max(tid) + 1, the timeline needed 24 GB.
    data = _trace()
    for ev in data["traceEvents"]:
        ev["tid"] = 1000000000
    line = _bad(_run_trace(tmp_path, data), capsys)
    assert line.endswith("traceEvents[1] has tid 1000000000, outside the 2 threads the trace "
                         "declares (otherData.threads: tids 0 .. 1)")
    assert not (tmp_path / "g.png").exists()


def test_a_rank_id_beyond_the_declared_ranks_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _trace()
    data["traceEvents"][2]["pid"] = 5
    assert _bad(_run_trace(tmp_path, data), capsys).endswith(
        "traceEvents[2] has pid 5, outside the 2 ranks the trace declares (otherData.ranks: pids 0 .. 1)")


def test_ids_of_a_trace_that_declares_no_counts_are_capped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _trace()
    del data["otherData"]
    data["traceEvents"][3]["tid"] = 1000000000
    assert _bad(_run_trace(tmp_path, data), capsys).endswith(
        "traceEvents[3] has tid 1000000000, outside 0 .. 1023 (the trace declares no "
        "otherData.threads; at most 1024 threads)")


@pytest.mark.parametrize("key, value, message", [
    ("threads", 10 ** 9, "otherData.threads 1000000000 is out of range: accepted whole numbers 1 .. 1024"),
    ("ranks", 0, "otherData.ranks 0 is out of range: accepted whole numbers 1 .. 1048576"),
    ("threads", "2", "otherData.threads '2' is out of range: accepted whole numbers 1 .. 1024"),
])
def test_absurd_declared_counts_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            key: str, value: Any, message: str) -> None:
    data = _trace()
    data["otherData"][key] = value
    assert _bad(_run_trace(tmp_path, data), capsys).endswith(message)


@pytest.mark.parametrize("key, value, message", [
    # "comm nan %" was printed for a NaN duration ...
    ("dur", float("nan"), "traceEvents[1] has dur nan: microseconds must be finite and in 0 .. 1e+12"),
    # ... and "0 %" for every phase once ts = 1e300 swallowed the durations.
    ("ts", 1e300, "traceEvents[1] has ts 1e+300: microseconds must be finite and in 0 .. 1e+12"),
    ("ts", -1.0, "traceEvents[1] has ts -1.0: microseconds must be finite and in 0 .. 1e+12"),
    ("dur", -5.0, "traceEvents[1] has dur -5.0: microseconds must be finite and in 0 .. 1e+12"),
    ("ts", "12", "traceEvents[1] has ts '12': not a number"),
    ("pid", float("inf"), "traceEvents[1] has pid inf: not a whole number"),
    ("tid", 1.5, "traceEvents[1] has tid 1.5: not a whole number"),
])
def test_non_finite_or_absurd_times_and_ids_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: Any, message: str) -> None:
    data = _trace()
    data["traceEvents"][1][key] = value
    assert _bad(_run_trace(tmp_path, data), capsys).endswith(message)


def test_a_trace_without_any_duration_is_refused(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    data = _trace()
    for ev in data["traceEvents"]:
        if ev["ph"] == "X":
            ev["dur"] = 0.0
    assert _bad(_run_trace(tmp_path, data), capsys).endswith("every event of the trace has zero duration")


def test_wide_ranks_draw_fewer_ranks_than_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 600 threads per rank: two ranks would be 1200 rows, over the figure's
    # height limit; one rank is drawn and the title says so.
    data = _trace()
    data["otherData"]["threads"] = 600
    data["traceEvents"][3]["tid"] = 599
    assert main(_run_trace(tmp_path, data) + ["--max-ranks", "2"]) == 0
    assert "2 ranks x 600 threads" in capsys.readouterr().out


# --- F6: advise's uncertainty box --------------------------------------------

def _advise(err: float) -> advise.Advice:
    return advise.advise_input(advise.from_fractions(8, 0.3, 0.2, err, err))


def test_a_huge_uncertainty_gives_no_clear_winner(capsys: pytest.CaptureFixture[str]) -> None:
    # The box f +- 10 kept only its centre and recommended funneled "for sure".
    assert main(["advise", "--f-comm", "0.3", "--f-comp-non", "0.2", "--n", "8",
                 "--f-comm-err", "10", "--f-comp-non-err", "10"]) == 0
    out = capsys.readouterr().out
    assert "recommendation: no clear winner: within the uncertainty" in out
    assert "funneled (m = 1): predicted" not in out


@pytest.mark.parametrize("err", [10.0, 1e200, 1e308])
def test_the_box_is_clamped_to_the_valid_fractions(err: float) -> None:
    samples = advise.box_samples(0.3, err, 0.2, err)
    fcs, fns = [s[0] for s in samples], [s[1] for s in samples]
    assert (min(fcs), max(fcs), min(fns), max(fns)) == (0.0, 1.0, 0.0, 1.0)
    assert (0.3, 0.2) in samples and all(fc + fn <= 1 + 1e-9 for fc, fn in samples)
    result = _advise(err)
    assert not result.clear_winner and result.verdict.startswith("no clear winner: within the uncertainty")
    assert result.margin_range is not None and np.isfinite(result.margin_range).all()
    assert result.margin_range[0] < 0  # some sample makes another scheme win


def test_more_uncertainty_is_never_more_certain() -> None:
    errs = np.concatenate([np.logspace(-4, 1, 60), [1e200, 1e308]])
    clear = [_advise(float(e)).clear_winner for e in errs]
    assert clear[0] and not clear[-1]
    first_unclear = clear.index(False)
    assert not any(clear[first_unclear:]), errs[first_unclear:][np.array(clear[first_unclear:])]
    # Where the flip is: 0.05 is still clear, 0.5 is not.
    assert _advise(0.05).clear_winner and not _advise(0.5).clear_winner


@pytest.mark.parametrize("fc, fn, n", [(0.02, 0.2, 8), (0.1, 0.1, 16)])
def test_an_error_on_f_comp_non_alone_is_monotone_near_the_corner(fc: float, fn: float, n: int) -> None:
    # Near f_comm + f_comp_non = 1 the plain grid lost its top row to the
    # domain filter, so a larger error was clear again.
    clear = [advise.advise_input(advise.from_fractions(n, fc, fn, 0.0, float(e))).clear_winner
             for e in np.linspace(0.5, 1.0, 41)]
    assert clear[0] and False in clear
    assert not any(clear[clear.index(False):])


def test_a_non_finite_error_is_refused_by_the_api() -> None:
    with pytest.raises(InputError, match=r"the uncertainty of f_comm must be a finite number >= 0 \(got inf\)"):
        advise.box_samples(0.3, float("inf"), 0.2, 0.0)


def test_overflowing_eq14_inputs_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert _bad(["advise", "--comm-ratio", "1e308", "--non-ratio", "1e308", "--nk-loc", "1e308",
                 "--n", "8"], capsys).endswith(
        "eq. (14) overflows at nk_loc = 1e+308 with x_comm/x_overlap = 1e+308 and "
        "x_non/x_overlap = 1e+308: give values of a realistic size")
    assert _bad(["advise", "--comm-ratio", "1e308", "--non-ratio", "1", "--comm-ratio-err", "1e308",
                 "--nk-loc", "1", "--n", "8"], capsys).endswith(
        "x_comm/x_overlap 1e+308 with the uncertainty 1e+308 is not a finite range: "
        "give values of a realistic size")


# --- F7: eq. (14) fit at one nk_loc -------------------------------------------

def test_fit_eq14_at_one_depth_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "one.csv"
    path.write_text("nk_loc,epsilon\n1,0.9\n1,0.9\n1,0.9\n", encoding="utf-8")
    assert _bad(["fit", "eq14", str(path), "--n", "8", "--m", "1"], capsys) == (
        "hympi-lab: error: eq. (14) fit needs at least 3 points at 2 or more distinct nk_loc "
        "values (got 3 point(s) at 1 nk_loc value(s))")


def test_fit_eq14_with_fixed_b_needs_two_depths_too() -> None:
    # With b fixed, one depth still leaves two values of a (one on each side of the peak).
    with pytest.raises(InputError, match=r"needs at least 2 points at 2 or more distinct nk_loc values "
                       r"\(got 4 point\(s\) at 1 nk_loc value\(s\)\)"):
        fit.fit_eq14([16, 16, 16, 16], [1.1, 1.2, 1.1, 1.2], 8, 1, non_ratio=1 / 6)


def test_fit_eq14_at_two_depths_still_fits() -> None:
    result = fit.fit_eq14([8, 8, 64, 64], [1.35, 1.37, 0.96, 0.98], 8, 1)
    assert result.n_points == 4 and result.dof == 2
    assert np.isfinite(result.params["comm_ratio"].sigma)


# --- F8: model results that are not finite ----------------------------------

def test_a_denormal_bandwidth_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # It gave "time_s": Infinity, which is not JSON.
    assert _bad(["model", "hockney", "--b-inf-mbps", "1e-320", "--t-lat-us", "1", "--bytes", "100",
                 "--json", "-"], capsys) == (
        "hympi-lab: error: argument --b-inf-mbps: '1e-320' is out of range: accepted 1e-06 .. 1e+09 "
        "MB/s (1 B/s .. 1 PB/s) (see 'hympi-lab model hockney --help')")


def test_latency_and_size_ranges(capsys: pytest.CaptureFixture[str]) -> None:
    assert "'1e300' is out of range: accepted 0 .. 1e+09 us (1000 s)" in _bad(
        ["model", "halo", "--box", "8^3", "--b-inf-mbps", "100", "--t-lat-us", "1e300"], capsys)
    # 400 digits overflowed the float: OverflowError traceback.
    assert "is out of range: accepted 1 .. 1e+18 bytes" in _bad(
        ["model", "hockney", "--b-inf-mbps", "1", "--t-lat-us", "1", "--bytes", "1" + "0" * 400], capsys)
    assert "argument --n: must be at most 4096 threads: '1" in _bad(
        ["model", "--n", "1" + "0" * 400, "--m", "1", "--f-comp-non", "0.1"], capsys)


def test_eq14_at_an_overflowing_depth_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # It printed "epsilon nan" with numpy RuntimeWarnings, exit 0.
    argv = ["model", "eq14", "--comm-ratio", "1", "--non-ratio", "1", "--n", "2", "--m", "1",
            "--nk-loc", "1e308"]
    assert _bad(argv, capsys) == (
        "hympi-lab: error: model eq14: points[0].epsilon comes out as nan, not a finite number: the "
        "inputs are out of the range the model can evaluate (hympi-lab model eq14 --comm-ratio 1 "
        "--non-ratio 1 --n 2 --m 1 --nk-loc 1e308)")


@pytest.mark.parametrize("argv, where", [
    (["model", "ratio", "--b-mpp", "1e308", "--b-hybrid", "1e-308", "--s-ratio", "1"], "b_ratio comes out as inf"),
    (["model", "cpu-seconds", "--n", "2", "--t-comm", "1e308", "--beta", "1=1e-300"],
     "pure_mpi_cpu_s comes out as inf"),
])
def test_overflowing_model_results_are_refused(capsys: pytest.CaptureFixture[str], argv: list[str],
                                               where: str, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    line = _bad(argv + ["--json", str(out)], capsys)
    assert f"{argv[0]} {argv[1]}: {where}, not a finite number" in line
    assert not out.exists()


def test_eq14_without_communication_reports_the_limit_at_the_peak(capsys: pytest.CaptureFixture[str]) -> None:
    # a = 0 puts the peak at nk_loc = 0, where eq. (14) is 0/0; epsilon is
    # (b + 1) / (b + n/(n-m)) at every depth: 1.5 / (0.5 + 2) = 0.6.
    assert main(["model", "eq14", "--comm-ratio", "0", "--non-ratio", "0.5", "--n", "2", "--m", "1",
                 "--json", "-"]) == 0
    record = json.loads(capsys.readouterr().out)["results"][0]
    assert record["eps_peak"] == pytest.approx(0.6)
    assert [p["epsilon"] for p in record["points"]] == pytest.approx([0.6] * 9)


def test_json_documents_hold_no_nan_or_infinity(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", "hockney", "--b-inf-mbps", "1e-6", "--t-lat-us", "1e9", "--bytes", "1000000000000000000",
                 "--json", "-"]) == 0
    text = capsys.readouterr().out

    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in the document")

    record = json.loads(text, parse_constant=refuse)["results"][0]
    assert record["points"][0]["time_s"] == pytest.approx(1e18 + 1e3)

