"""The `hympi-lab` command line: numbers, JSON keys, bad input, figures."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from hympi_lab import __version__, model, results
from hympi_lab.cli import main

from conftest import document

PAPER = ["--n", "8", "--m", "1", "--f-comp-non", "0.2"]


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    """The one result record of `hympi-lab ARGV --json -` (stdout holds only the JSON)."""
    assert main(argv + ["--json", "-"]) == 0
    out = capsys.readouterr().out
    document = json.loads(out)
    assert document["context"]["schema_version"] == 1 and len(document["results"]) == 1
    return document["results"][0]


# --- model --------------------------------------------------------------------

def test_model_json_keys_and_worked_example(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["model", *PAPER, "--f-comm", "0.43"])
    for key in ("epsilon", "eps_max", "f_comm_best", "f_comm_equiv", "eps_min", "m_min"):
        assert key in data
    assert data["kind"] == "model"
    assert round(data["eps_max"], 2) == 1.60
    assert round(data["f_comm_best"], 2) == 0.43
    assert data["f_comm_equiv"] == pytest.approx(0.10)
    assert round(data["eps_min"], 2) == 0.90
    assert data["epsilon"] == pytest.approx(model.epsilon(0.43, 0.2, 8, 1))
    assert data["m_min"] == pytest.approx(0.43 / 0.80)


def test_model_without_f_comm_leaves_epsilon_empty(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["model", *PAPER])
    assert data["epsilon"] is None and data["m_min"] is None
    assert data["eps_max"] == pytest.approx(model.eps_max(0.2, 8, 1))


def test_model_table_on_stdout_and_json_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    assert main(["model", *PAPER, "--f-comm", "0.1", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# hympi-lab model")
    assert "eps_max" in out and "1.5957" in out
    assert json.loads(path.read_text())["results"][0]["epsilon"] == pytest.approx(1.0)


@pytest.mark.parametrize("argv, kind", [
    (["model", *PAPER, "--f-comm", "0.43"], "model"),
    (["model", "hockney", "--b-inf-mbps", "300", "--t-lat-us", "10", "--bytes", "1MB"], "model hockney"),
    (["model", "ratio", "--b-ratio", "3", "--s-ratio", "2"], "model ratio"),
    (["model", "cpu-seconds", "--n", "4", "--t-comm", "1", "--beta", "1=0.5"], "model cpu-seconds"),
    (["model", "eq14", "--comm-ratio", "4.57", "--non-ratio", "0.17", "--n", "8", "--m", "1"], "model eq14"),
    (["model", "halo", "--box", "64x48x32", "--t-lat-us", "2", "--b-inf-mbps", "5000"], "model halo"),
    (["advise", "--n", "8", "--f-comm", "0.43", "--f-comp-non", "0.2"], "advise"),
])
def test_json_document_reads_back_with_load_document(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                     argv: list[str], kind: str) -> None:
    path = tmp_path / "out.json"
    assert main([*argv, "--json", str(path)]) == 0
    doc = results.load_document(str(path))
    ctx = doc.context
    assert ctx["schema_version"] == 1 and ctx["tool"] == "hympi-lab"
    assert ctx["hympi_version"] == __version__
    assert isinstance(ctx["git_revision"], str) and ctx["git_revision"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", ctx["date"])
    assert ctx["hosts"] == [socket.gethostname()]
    assert ctx["command"] == shlex.join(["hympi-lab", *argv, "--json", str(path)])
    assert "mpi_library" not in ctx and "ranks" not in ctx  # no MPI run: absent, not guessed
    assert len(doc.results) == 1 and doc.results[0]["kind"] == kind
    # the table still goes to stdout with a file
    assert capsys.readouterr().out.startswith("# ")


def test_fit_document_reads_back(capsys: pytest.CaptureFixture[str], write_text: Callable[[str, str], str],
                                 tmp_path: Path) -> None:
    points = write_text("pp.csv", "bytes,time_s\n" + "\n".join(
        f"{n},{1e-5 + n / 3e8}" for n in (1, 100, 10000, 1000000)) + "\n")
    path = tmp_path / "fit.json"
    assert main(["fit", "hockney", points, "--json", str(path)]) == 0
    record = results.load_document(str(path)).results[0]
    assert record["kind"] == "fit hockney" and record["model"] == "hockney"
    assert record["params"]["b_inf"]["value"] == pytest.approx(3e8, rel=1e-6)


def test_git_revision_outside_a_checkout_is_unknown(tmp_path: Path) -> None:
    assert results.git_revision(tmp_path) == "unknown"


def test_model_kaiser_baden_view(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["model", "--kb-c", str(8 / 15), "--p", "8"])
    kb = data["kaiser_baden"]
    assert kb["C_best"] == pytest.approx(8 / 15) and kb["gain_best"] == pytest.approx(15 / 8)
    assert kb["gain"] == pytest.approx(15 / 8) and kb["gain_possible"] is True
    data = run_json(capsys, ["model", "--kb-c", "0.1", "--p", "8"])
    assert data["kaiser_baden"]["gain_possible"] is False and data["kaiser_baden"]["T"] > 1


def test_model_hockney(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["model", "hockney", "--b-inf-mbps", "300", "--t-lat-us", "10",
                             "--bytes", "10KiB", "1MB"])
    first, second = data["points"]
    assert first["bytes"] == 10240 and round(first["bandwidth_MBps"]) == 232
    assert second["bytes"] == 1_000_000
    assert first["time_s"] == pytest.approx(10e-6 + 10240 / 300e6)


@pytest.mark.parametrize("argv, expected", [
    (["--b-mpp", "5299", "--b-hybrid", "1535"], 1.73),
    (["--b-mpp", "16624", "--b-hybrid", "5565"], 1.49),
    (["--b-mpp", "5000", "--b-hybrid", "1604"], 1.56),
    (["--b-mpp", "18458", "--b-hybrid", "5638"], 1.64),
    (["--b-ratio", "3.45"], 1.73),
])
def test_model_ratio_table_1(capsys: pytest.CaptureFixture[str], argv: list[str], expected: float) -> None:
    data = run_json(capsys, ["model", "ratio", *argv, "--s-ratio", "2"])
    assert abs(data["T_hybrid_over_T_MPP"] - expected) <= 0.005


def test_model_cpu_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["model", "cpu-seconds", "--n", "16", "--t-comm", "1",
                             "--beta", "1=0.28", "4=0.883"])
    assert round(data["masteronly_cpu_s"]) == 57
    assert round(data["overlap_cpu_s"]["4"], 1) == 4.5
    assert data["pure_mpi_cpu_s"] == 16


def test_model_eq14(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["model", "eq14", "--comm-ratio", "4.57", "--non-ratio", str(1 / 6),
                             "--n", "8", "--m", "1", "--nk-loc", "4", "32", "64"])
    assert data["nk_cross"] == pytest.approx(32, abs=0.05)
    eps = {p["nk_loc"]: p["epsilon"] for p in data["points"]}
    assert eps[4] > 1 > eps[64] and eps[32] == pytest.approx(1, abs=1e-3)


def test_model_eq14_without_communication(capsys: pytest.CaptureFixture[str]) -> None:
    # a = 0: no crossing and no peak; epsilon = (b + 1) / (b + n/(n-m)) everywhere. The
    # text said 'epsilon = 1 at nk_loc = 0, peak ... at nk_loc = 0'.
    assert main(["model", "eq14", "--comm-ratio", "0", "--non-ratio", "0.2", "--n", "4",
                 "--m", "1"]) == 0
    out = capsys.readouterr().out
    assert "no communication: epsilon = 0.7826 at every nk_loc" in out
    assert "epsilon = 1 at nk_loc" not in out


# --- fit ------------------------------------------------------------------------

def overlap_records(a: float, b: float, ms: tuple[int, ...], noise: float, seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    records = []
    for m in ms:
        for nk in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256):
            eps = model.eq14_epsilon(nk, a, b, 8, m) * (1 + noise * rng.standard_normal())
            records.append({"kind": "point", "benchmark": "overlap",
                            "scheme": "funneled" if m == 1 else "multiple", "reserved": m,
                            "threads": 8, "nk_loc": nk, "epsilon": {"min": eps, "median": eps, "max": eps}})
        records.append({"kind": "point", "benchmark": "overlap", "scheme": "masteronly", "reserved": 0,
                        "threads": 8, "nk_loc": 4, "epsilon": {"min": 1, "median": 1, "max": 1}})
    return records


def test_fit_eq14_from_documents(capsys: pytest.CaptureFixture[str], write_json: Callable[..., str]) -> None:
    first = write_json(document(overlap_records(4.57, 1 / 6, (1,), 0.02, 1)))
    second = write_json(document(overlap_records(4.57, 1 / 6, (2,), 0.02, 2)))
    data = run_json(capsys, ["fit", "eq14", first, second])
    a = data["params"]["comm_ratio"]
    assert data["n_points"] == 28 and data["n"] == 8
    assert abs(a["value"] - 4.57) < 3 * a["sigma"]
    assert "nk_cross_m1" in data["params"] and "nk_cross_m2" in data["params"]


def test_fit_eq14_from_csv_with_fixed_ratio(capsys: pytest.CaptureFixture[str],
                                            write_text: Callable[[str, str], str]) -> None:
    nk = np.array([1, 2, 4, 8, 16, 32, 64, 128])
    eps = model.eq14_epsilon(nk, 4.57, 1 / 6, 8, 1)
    path = write_text("pts.csv", "nk_loc,epsilon\n" + "".join(f"{k},{float(e)!r}\n" for k, e in zip(nk, eps)))
    assert main(["fit", "eq14", path, "--n", "8", "--m", "1", "--fix-non-ratio", str(1 / 6)]) == 0
    out = capsys.readouterr().out
    assert "comm_ratio   4.5700" in out and "(fixed)" in out


def test_fit_hockney_from_csv(capsys: pytest.CaptureFixture[str], write_text: Callable[[str, str], str]) -> None:
    lengths = [8, 1024, 10240, 102400, 1048576]
    rows = "".join(f"{n},{model.hockney_time(n, 10e-6, 300e6)!r}\n" for n in lengths)
    path = write_text("pp.csv", "bytes,time_s\n" + rows)
    data = run_json(capsys, ["fit", "hockney", path])
    assert data["params"]["b_inf"]["value"] == pytest.approx(300e6, rel=1e-9)
    assert data["params"]["T_lat"]["value"] == pytest.approx(10e-6, rel=1e-9)


# --- advise ----------------------------------------------------------------------

def test_advise_from_flags(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["advise", "--n", "8", "--f-comm", "0.43", "--f-comp-non", "0.2"])
    assert data["best"] == {"scheme": "funneled", "m": 1, "epsilon": pytest.approx(model.epsilon(0.43, 0.2, 8, 1))}
    assert data["runner_up"]["scheme"] == "multiple" and data["runner_up"]["m"] == 2
    # without an uncertainty no winner is claimed
    assert data["clear_winner"] is False and data["margin"] > 0 and data["refused"] == []
    sure = run_json(capsys, ["advise", "--n", "8", "--f-comm", "0.43", "--f-comp-non", "0.2",
                             "--f-comm-err", "0.01", "--f-comp-non-err", "0.01"])
    assert sure["clear_winner"] is True


def test_advise_says_no_clear_winner(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advise", "--n", "8", "--f-comm", "0.16", "--f-comp-non", "0.2",
                 "--f-comm-err", "0.08"]) == 0
    out = capsys.readouterr().out
    assert "recommendation: no clear winner" in out


def test_advise_from_solve_records(capsys: pytest.CaptureFixture[str], write_json: Callable[..., str]) -> None:
    records = [{"kind": "solve", "scheme": "masteronly", "threads": 8,
                "fractions": {"f_comm": f, "f_comp_non": 0.05, "f_comp_overlap": 0.95 - f}}
               for f in (0.69, 0.70, 0.71)]
    records.append({"kind": "solve", "scheme": "funneled", "threads": 8,
                    "fractions": {"f_comm": 0.1, "f_comp_non": 0.1, "f_comp_overlap": 0.8}})
    data = run_json(capsys, ["advise", write_json(document(records))])
    assert data["f_comm"] == pytest.approx(0.70) and data["f_comm_err"] == pytest.approx(0.01)
    assert (data["best"]["scheme"], data["best"]["m"]) == ("multiple", 2)
    assert data["clear_winner"] is True


def test_advise_from_overlap_points(capsys: pytest.CaptureFixture[str], write_json: Callable[..., str]) -> None:
    path = write_json(document(overlap_records(4.57, 1 / 6, (1, 2), 0.01, 3)))
    small = run_json(capsys, ["advise", path, "--nk-loc", "4"])
    assert small["best"]["scheme"] == "funneled" and small["clear_winner"] is True
    large = run_json(capsys, ["advise", path, "--nk-loc", "256"])
    assert large["best"]["scheme"] == "masteronly"
    # at the crossover the two are within the fit's uncertainty
    cross = run_json(capsys, ["advise", path, "--nk-loc", "32"])
    assert cross["clear_winner"] is False


def test_advise_from_eq14_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["advise", "--n", "8", "--comm-ratio", "4.57", "--non-ratio", str(1 / 6),
                             "--nk-loc", "8", "--comm-ratio-err", "0.1"])
    fc, fn, _ = model.eq14_fractions(8, 4.57, 1 / 6)
    assert data["f_comm"] == pytest.approx(fc) and data["f_comp_non"] == pytest.approx(fn)
    assert data["best"]["scheme"] == "funneled"


# --- plot --------------------------------------------------------------------------

def test_plot_fig5_png_and_svg(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    png, svg = tmp_path / "fig5.png", tmp_path / "fig5.svg"
    assert main(["plot", "fig5", "--n", "8", "--m", "1", "-o", str(png), "-o", str(svg)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in svg.read_text()
    assert "wrote" in capsys.readouterr().out


def test_plot_eq14_with_fitted_points(tmp_path: Path, write_json: Callable[..., str]) -> None:
    path = write_json(document(overlap_records(4.57, 1 / 6, (1,), 0.02, 4)))
    out = tmp_path / "eq14.svg"
    assert main(["plot", "eq14", "--points", path, "-o", str(out)]) == 0
    assert "<svg" in out.read_text()


def test_plot_eq14_from_ratios_as_png(tmp_path: Path) -> None:
    out = tmp_path / "fig6.png"
    assert main(["plot", "eq14", "--comm-ratio", "4.57", "--non-ratio", str(1 / 6),
                 "--n", "8", "--m", "1", "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_matplotlib_only_in_the_plotting_module() -> None:
    code = ("import sys, hympi_lab.cli, hympi_lab.model, hympi_lab.fit, hympi_lab.advise, "
            "hympi_lab.results; sys.exit('matplotlib' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
    sources = Path(__file__).resolve().parent.parent / "hympi_lab"
    importers = sorted(p.name for p in sources.glob("*.py") if "import matplotlib" in p.read_text())
    assert importers == ["plotting.py"]


# --- bad input: exit code 2, one line on stderr, never a traceback --------------

BAD_INPUT: list[tuple[str, Callable[[Callable[..., str], Callable[[str, str], str]], list[str]]]] = [
    ("fraction above 1", lambda j, t: ["model", "--n", "8", "--m", "1", "--f-comp-non", "1.2"]),
    ("negative fraction", lambda j, t: ["model", "--n", "8", "--m", "1", "--f-comp-non", "0.2", "--f-comm", "-0.1"]),
    ("sum above 1", lambda j, t: ["model", "--n", "8", "--m", "1", "--f-comp-non", "0.6", "--f-comm", "0.5"]),
    ("m equals n", lambda j, t: ["model", "--n", "8", "--m", "8", "--f-comp-non", "0.2"]),
    ("m above n", lambda j, t: ["model", "--n", "4", "--m", "6", "--f-comp-non", "0.2"]),
    ("m zero", lambda j, t: ["model", "--n", "8", "--m", "0", "--f-comp-non", "0.2"]),
    ("n one", lambda j, t: ["model", "--n", "1", "--m", "1", "--f-comp-non", "0.2"]),
    ("n not a number", lambda j, t: ["model", "--n", "eight", "--m", "1", "--f-comp-non", "0.2"]),
    ("fraction not a number", lambda j, t: ["model", "--n", "8", "--m", "1", "--f-comp-non", "x"]),
    ("fraction nan", lambda j, t: ["model", "--n", "8", "--m", "1", "--f-comp-non", "nan"]),
    ("missing model flags", lambda j, t: ["model", "--n", "8"]),
    ("no model flags", lambda j, t: ["model"]),
    ("kb c out of range", lambda j, t: ["model", "--kb-c", "1.5", "--p", "8"]),
    ("kb p too small", lambda j, t: ["model", "--kb-c", "0.5", "--p", "1"]),
    ("hockney missing flag", lambda j, t: ["model", "hockney", "--b-inf-mbps", "300", "--bytes", "8"]),
    ("hockney bad size", lambda j, t: ["model", "hockney", "--b-inf-mbps", "300", "--t-lat-us", "1", "--bytes", "10 parsecs"]),
    ("hockney zero bandwidth", lambda j, t: ["model", "hockney", "--b-inf-mbps", "0", "--t-lat-us", "1", "--bytes", "8"]),
    ("ratio without bandwidths", lambda j, t: ["model", "ratio", "--s-ratio", "2"]),
    ("cpu-seconds without beta(1)", lambda j, t: ["model", "cpu-seconds", "--n", "16", "--t-comm", "1", "--beta", "4=0.9"]),
    ("cpu-seconds bad beta", lambda j, t: ["model", "cpu-seconds", "--n", "16", "--t-comm", "1", "--beta", "1=1.5"]),
    ("eq14 m >= n", lambda j, t: ["model", "eq14", "--comm-ratio", "4", "--non-ratio", "0.1", "--n", "2", "--m", "2"]),
    ("unknown subcommand", lambda j, t: ["studdy"]),
    ("fit missing file", lambda j, t: ["fit", "hockney", "/nonexistent/pp.json"]),
    ("fit wrong schema", lambda j, t: ["fit", "eq14", j(document([], schema_version=2))]),
    ("fit not json", lambda j, t: ["fit", "eq14", t("x.json", "hello")]),
    ("fit no context", lambda j, t: ["fit", "hockney", j({"results": []})]),
    ("fit no points", lambda j, t: ["fit", "eq14", j(document([]))]),
    ("fit csv without n", lambda j, t: ["fit", "eq14", t("p.csv", "nk_loc,epsilon\n1,1.2\n")]),
    ("fit csv non-number", lambda j, t: ["fit", "hockney", t("h.csv", "bytes,time_s\n8,fast\n")]),
    ("fit too few points", lambda j, t: ["fit", "hockney", t("h.csv", "bytes,time_s\n8,1e-5\n")]),
    ("advise no source", lambda j, t: ["advise", "--n", "8"]),
    ("advise two sources", lambda j, t: ["advise", "--n", "8", "--f-comm", "0.1", "--f-comp-non", "0.1", "--comm-ratio", "4"]),
    ("advise stray flag", lambda j, t: ["advise", "--n", "8", "--f-comm", "0.1", "--f-comp-non", "0.1", "--nk-loc", "8"]),
    ("advise missing n", lambda j, t: ["advise", "--f-comm", "0.1", "--f-comp-non", "0.1"]),
    ("advise bad fractions", lambda j, t: ["advise", "--n", "8", "--f-comm", "0.7", "--f-comp-non", "0.7"]),
    ("advise wrong schema", lambda j, t: ["advise", j(document([], schema_version="1"))]),
    ("advise no masteronly records", lambda j, t: ["advise", j(document([]))]),
    ("plot bad format", lambda j, t: ["plot", "fig5", "--n", "8", "--m", "1", "-o", "fig.pdf"]),
    ("plot m >= n", lambda j, t: ["plot", "fig5", "--n", "8", "--m", "9", "-o", "fig.png"]),
    ("plot eq14 without ratios", lambda j, t: ["plot", "eq14", "--n", "8", "--m", "1", "-o", "fig.png"]),
    ("fit hockney on overlap points", lambda j, t: [
        "fit", "hockney", j(document([{"kind": "point", "benchmark": "overlap"}]))]),
    ("fit eq14 on solve records", lambda j, t: [
        "fit", "eq14", j(document([{"kind": "solve", "scheme": "masteronly"}]))]),
]


@pytest.mark.parametrize("name, make_argv", BAD_INPUT, ids=[b[0] for b in BAD_INPUT])
def test_bad_input_exits_2_with_one_line(name: str, make_argv: Any, capsys: pytest.CaptureFixture[str],
                                         write_json: Callable[..., str],
                                         write_text: Callable[[str, str], str],
                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a plot that wrongly succeeded would land here
    argv = make_argv(write_json, write_text)
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hympi-lab: error: ")
    assert "Traceback" not in err
    assert not list(tmp_path.glob("fig.*"))


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--help"], ["model", "--help"], ["model", "hockney", "--help"], ["model", "ratio", "--help"],
                 ["model", "cpu-seconds", "--help"], ["model", "eq14", "--help"], ["fit", "--help"],
                 ["fit", "eq14", "--help"], ["fit", "hockney", "--help"], ["advise", "--help"],
                 ["plot", "--help"], ["plot", "fig5", "--help"], ["plot", "eq14", "--help"]):
        assert main(argv) == 0
        assert "usage: hympi-lab" in capsys.readouterr().out


def console_script() -> str:
    """The installed `hympi-lab`: next to this interpreter, else on PATH."""
    beside = Path(sys.executable).parent / "hympi-lab"
    if beside.exists():
        return str(beside)
    found = shutil.which("hympi-lab")
    if found is None:
        pytest.fail("the hympi-lab console script is not installed (run scripts/setup-python.sh)")
    return found


def test_console_script_bad_input_and_success(write_json: Callable[..., str]) -> None:
    script = console_script()
    env = dict(os.environ, PYTHONWARNINGS="error")
    bad = subprocess.run([script, "advise", write_json(document([], schema_version=7))],
                         capture_output=True, text=True, env=env, check=False)
    assert bad.returncode == 2
    assert bad.stderr.startswith("hympi-lab: error: ") and "schema_version 7" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr
    usage = subprocess.run([script, "model", "--n", "8", "--m", "one"], capture_output=True, text=True,
                           env=env, check=False)
    assert usage.returncode == 2 and len(usage.stderr.strip().splitlines()) == 1
    good = subprocess.run([script, "model", *PAPER, "--json", "-"], capture_output=True, text=True,
                          env=env, check=False)
    assert good.returncode == 0, good.stderr
    assert round(json.loads(good.stdout)["results"][0]["eps_max"], 2) == 1.60


# --- output files: atomic, symlinks followed, a failed write is exit 4 ------------

MODEL = ["model", "--n", "8", "--m", "1", "--f-comp-non", "0.2"]


def test_a_file_without_the_records_a_fit_needs_says_what_it_holds(
        capsys: pytest.CaptureFixture[str], write_json: Callable[..., str]) -> None:
    path = write_json(document([{"kind": "point", "benchmark": "overlap"}]))
    assert main(["fit", "hockney", path]) == 2
    assert capsys.readouterr().err.strip() == (
        f"hympi-lab: error: {path} holds no ping-pong records (records of kind point (overlap)); "
        "`hympi bench beff` writes them")


def test_unwritable_json_path_exits_4_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(MODEL + ["--json", "/nonexistent/dir/out.json"]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["hympi-lab: error: cannot write /nonexistent/dir/out.json: No such file or directory"]


@pytest.mark.parametrize("kind", ["json", "png"])
def test_a_failed_write_keeps_the_earlier_file_and_leaves_no_partial(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import errno
    import os
    target = tmp_path / f"out.{kind}"
    target.write_bytes(b"earlier good result")
    argv = (MODEL + ["--json", str(target)] if kind == "json"
            else ["plot", "fig5", "--n", "8", "--m", "1", "-o", str(target)])

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full_disk)
    assert main(argv) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"hympi-lab: error: cannot write {target}: No space left on device"]
    assert target.read_bytes() == b"earlier good result"
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


def test_json_and_plot_follow_a_symlink(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, argv in (("doc.json", MODEL + ["--json"]),
                       ("fig.png", ["plot", "fig5", "--n", "8", "--m", "1", "-o"])):
        real = tmp_path / ("real-" + name)
        link = tmp_path / name
        link.symlink_to(real)
        assert main(argv + [str(link)]) == 0
        assert link.is_symlink() and real.stat().st_size > 0
    capsys.readouterr()


def test_json_dash_writes_only_json_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(MODEL + ["--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"][0]["kind"] == "model"


def test_model_halo_divides_latency_by_depth(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["model", "halo", "--box", "64x48x32", "--t-lat-us", "2",
                             "--b-inf-mbps", "5000", "--depth", "1", "4"])
    one, four = data["depths"]
    assert one["messages"] == 6 and four["messages"] == 26
    assert one["latency_s"] == pytest.approx(6 * 2e-6)
    assert four["latency_s"] == pytest.approx(26 * 2e-6 / 4)
    assert main(["model", "halo", "--box", "8x8x4", "--t-lat-us", "2", "--b-inf-mbps", "5000",
                 "--depth", "5"]) == 2
    assert "deeper than the box 8x8x4" in capsys.readouterr().err
    assert main(["model", "halo", "--box", "8x8x4", "--t-lat-us", "2", "--b-inf-mbps", "5000",
                 "--depth", "0"]) == 2


def test_a_full_standard_output_is_one_line_and_exit_4():
    """Help, version and a command's table written to /dev/full: one error
    line, exit 4, no traceback (argparse alone would exit 0 silently)."""
    import subprocess
    import sys
    for args in (["--help"], ["--version"], ["model", "eq14", "--help"],
                 ["model", "ratio", "--b-ratio", "2", "--s-ratio", "1"]):
        with open("/dev/full", "w") as full:
            proc = subprocess.run([sys.executable, "-m", "hympi_lab.cli", *args], stdout=full,
                                  stderr=subprocess.PIPE, text=True, timeout=60)
        assert proc.returncode == 4, (args, proc.stderr)
        assert proc.stderr.strip() == "hympi-lab: error: cannot write to standard output: No space left on device", (args, proc.stderr)
