"""`hympi-lab study --app`: a user's own program (built on hympi's Domain API)
measured under every scheme, and the report's recommendation for it
(issue 29): each point run several times (--app-repeat, default 3) and
ranked only where the runs' ranges do not overlap; every run's named
checksums compared (a scheme that computes another result is shown, and
nothing is recommended); the program's own compiler and flags beside
hympi's; every scheme left out named with its reason, and shared-window run
where the program's ranks share this machine.

Runs examples/heat.c and heat.f90 (build/bin/heat_c, heat_f; MPICH's from
build-mpich/) at 2 ranks x 2 threads; needs the native build (`make test`
builds it and sets HYMPI_REQUIRE_NATIVE=1). To study another program, add
it to APPS: its binary, its arguments (with {scheme} and {threads}), its
kernel name and the fields it names, and what its compiler says."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILDS = {"openmpi": ROOT / "build", "mpich": ROOT / "build-mpich"}


@dataclass(frozen=True)
class App:
    binary: str                 # under BUILD/bin
    args: str                   # with {scheme} and {threads}
    kernel: str                 # user:<the name given to the report call>
    fields: tuple[str, ...]     # the fields its report names
    compiler: str               # a word of its compiler's self-description
    prefix: str = ""            # before the binary (e.g. env VAR={threads})


APPS = {
    "heat_c": App("heat_c", "--grid 24 --steps 5 --scheme {scheme} --threads {threads}", "user:heat",
                  ("u",), "GCC"),
    "heat_f": App("heat_f", "--grid 24 --steps 5 --scheme {scheme} --threads {threads}", "user:heat",
                  ("u",), "GCC"),
    # examples/port: the ported `use mpi` code, as its original takes its
    # threads from OMP_NUM_THREADS (mpirun runs env, env runs it)
    "heat_hympi": App("heat_hympi", "24 24 24 5 {scheme}", "user:heat_port", ("u",), "GCC",
                      prefix="env OMP_NUM_THREADS={threads} "),
}


def built(mpi: str, *names: str) -> bool:
    present = all((BUILDS[mpi] / "bin" / n).is_file() for n in ("hympi",) + names)
    if not present and os.environ.get("HYMPI_REQUIRE_NATIVE") == "1":
        raise RuntimeError(f"{BUILDS[mpi]}/bin lacks hympi or {', '.join(names)} (make build build-mpich)")
    return present


def study(args: list[str], mpi: str = "openmpi", timeout: float = 600) -> subprocess.CompletedProcess:
    extra = ["--mpi", mpi] if mpi != "openmpi" else []
    return subprocess.run([sys.executable, "-m", "hympi_lab.cli", "study", "--quick", "--ranks", "2",
                           "--threads", "2", *extra, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def lines(outdir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (outdir / "results.jsonl").read_text().splitlines()]


def status(outdir: Path) -> dict[str, dict[str, Any]]:
    return {r["point"]: r for r in lines(outdir) if r["record"] == "point"}


def schemes(mpi: str) -> list[dict[str, Any]]:
    """hympi info --json's schemes of the build."""
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    info = subprocess.run([str(BUILDS[mpi] / "bin" / "hympi"), "info", "--json"], capture_output=True,
                          text=True, env=env, check=True)
    return json.loads(info.stdout)["schemes"]


def expected_points(mpi: str) -> set[str]:
    """Pure MPI (4 ranks x 1 thread), then every scheme this build offers,
    shared-window included: the program's 2 ranks share this machine
    (multiple with m = 1 at n = 2)."""
    names = [s["name"] for s in schemes(mpi) if s["available"]]
    return {"solve-app-pure-mpi"} | {f"solve-app-{s}" + ("-m1" if s == "multiple" else "") for s in names}


@pytest.mark.parametrize("app_id", list(APPS))
def test_every_scheme_runs_three_times_agrees_and_names_its_build(app_id: str, tmp_path: Path) -> None:
    app = APPS[app_id]
    if not built("openmpi", app.binary):
        pytest.skip(f"build/bin/{app.binary} is not built")
    outdir = tmp_path / "app"
    command = f"{app.prefix}{BUILDS['openmpi'] / 'bin' / app.binary} {app.args}"
    proc = study(["--steps", "solve", "--app", command, "--out", str(outdir)])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    points = status(outdir)
    expected = expected_points("openmpi")
    assert "solve-app-shared-window" in expected
    assert set(points) == expected and all(p["status"] == "ok" for p in points.values())
    assert points["solve-app-pure-mpi"]["ranks"] == 4 and points["solve-app-pure-mpi"]["threads"] == 1
    assert (app.prefix + app.binary + " " + app.args).format(scheme="funneled", threads=2).split(
        app.binary)[1] in points["solve-app-funneled"]["command"]
    assert app.prefix.format(threads=2) in points["solve-app-funneled"]["command"]
    header = json.loads((outdir / "study.json").read_text())
    assert header["options"]["app_repeat"] == 3
    assert "each point run 3 time(s)" in proc.stdout

    records = lines(outdir)
    results = [r["result"] for r in records if r["record"] == "result"]
    assert {r["kernel"] for r in results} == {app.kernel} and all(r["user_kernel"] for r in results)
    by_point = {r["point"]: r["result"] for r in records if r["record"] == "result"}
    for key, rec in by_point.items():
        # three runs, each its own report, merged into min <= median <= max
        assert rec["repeat"] == 3 and len(rec["runs"]) == 3, key
        times = sorted(run["time_s"] for run in rec["runs"])
        assert rec["time_s"] == {"min": times[0], "median": times[1], "max": times[2]}, key
        assert all((outdir / "raw" / f"{key}.run{r}.json").is_file() for r in (1, 2, 3))
        assert [c["field"] for c in rec["checksums"]] == list(app.fields)
    # the schemes' checksums: bit-equal at 2 ranks, pure MPI's (4 ranks) within 1e-12 relative
    u = {key: (rec["checksums"][0]["sum"], rec["checksums"][0]["l2"]) for key, rec in by_point.items()}
    hybrid = {v for k, v in u.items() if k != "solve-app-pure-mpi"}
    assert len(hybrid) == 1
    assert u["solve-app-pure-mpi"][1] == pytest.approx(next(iter(hybrid))[1], rel=1e-12)

    # the program's build, labelled as its own, beside hympi's
    context = next(r["context"] for r in records if r["record"] == "result")
    assert app.compiler in context["app_compiler"] and context["app_flags"]
    assert context["app_flags"] != context["flags"] or context["app_compiler"] != context["compiler"]
    page = (outdir / "report.html").read_text()
    assert f"your program&#39;s compiler / flags ({app.kernel})" in page
    assert "hympi&#39;s compiler / flags" in page
    assert f"All {len(expected)} runs of {app.kernel} agree on {app.fields[0]}: sum " in page
    # schemes this build lacks are named with the reason (partitioned without MPI 4.0)
    missing = [s["name"] for s in schemes("openmpi") if not s["available"]]
    for name in missing:
        assert f"# skipped: scheme {name}: not available in this build and MPI library" in proc.stdout
        assert f"scheme {name}: not available in this build and MPI library" in page
        assert {"what": f"scheme {name}", "why": "not available in this build and MPI library"} in header["left_out"]
    assert f"for your code ({app.kernel})" in page
    assert page.count('id="fig-timeline-') == len(expected)
    assert all((outdir / "raw" / f"{k}.trace.json").is_file() for k in expected)
    # "clearly" only where the ranges of the runs do not overlap (this
    # 2-core machine is oversubscribed at 2 x 2: no ranking at all)
    verdict = re.search(r'id="verdict"[^>]*>([^<]*)<', page)
    assert verdict and ("clearly" not in verdict.group(1) or _separated(by_point, app.kernel))
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "python" / "hympi_lab" / "schemas" / "study-record.schema.json").read_text())
    for line in records:
        jsonschema.validate(line, schema)


def _separated(by_point: dict[str, dict[str, Any]], kernel: str) -> bool:
    """Whether the fastest run's slowest repetition beats the runner-up's fastest."""
    ranked = sorted(by_point.values(), key=lambda r: r["time_s"]["median"])
    return len(ranked) > 1 and ranked[0]["time_s"]["max"] < ranked[1]["time_s"]["min"]


def test_mpich_runs_the_app_with_repeats_and_agreement(tmp_path: Path) -> None:
    if not built("mpich", "heat_c"):
        pytest.skip("build-mpich/bin/heat_c is not built")
    outdir = tmp_path / "mpich"
    command = f"{BUILDS['mpich'] / 'bin' / 'heat_c'} {APPS['heat_c'].args}"
    proc = study(["--steps", "solve", "--app", command, "--app-repeat", "2", "--out", str(outdir)], mpi="mpich")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    points = status(outdir)
    assert set(points) == expected_points("mpich") and all(p["status"] == "ok" for p in points.values())
    assert all(r["result"]["repeat"] == 2 for r in lines(outdir) if r["record"] == "result")
    assert "agree on u: sum " in (outdir / "report.html").read_text()


def test_a_scheme_that_computes_another_result_is_shown_and_not_recommended(tmp_path: Path) -> None:
    """A wrapper around heat_c that changes u's checksum in funneled's
    reports (rank 0, after the run): the report says the runs disagree, in
    a warning, names funneled and by how much, and recommends nothing."""
    if not built("openmpi", "heat_c"):
        pytest.skip("build/bin/heat_c is not built")
    wrapper = tmp_path / "heat_wrong"
    wrapper.write_text(f"""#!/bin/sh
{BUILDS['openmpi'] / 'bin' / 'heat_c'} "$@" || exit $?
case " $* " in
  *" --scheme funneled "*)
    if [ "${{OMPI_COMM_WORLD_RANK:-0}}" = 0 ]; then
      exec {sys.executable} -c 'import json, sys
d = json.load(open(sys.argv[1])); c = d["results"][0]["checksums"][0]; c["sum"] += 1e-6
json.dump(d, open(sys.argv[1], "w"))' "$HYMPI_REPORT_JSON"
    fi;;
esac
""")
    wrapper.chmod(0o755)
    outdir = tmp_path / "wrong"
    proc = study(["--steps", "solve", "--app", f"{wrapper} {APPS['heat_c'].args}", "--app-name", "heat",
                  "--app-repeat", "2", "--out", str(outdir)])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    page = (outdir / "report.html").read_text()
    warning = re.search(r'<p class="warn"[^>]*>(The runs of user:heat DISAGREE on u: [^<]*)<', page)
    assert warning, page[-5000:]
    assert "funneled: sum " in warning.group(1) and "relative difference" in warning.group(1)
    # only funneled: pure MPI and the other schemes agree with masteronly
    assert "pure MPI:" not in warning.group(1) and "multiple" not in warning.group(1)
    summary = "No recommendation for your code (user:heat): its runs do not compute the same result"
    assert summary in page and summary in proc.stdout
    assert "Recommended" not in proc.stdout


def test_an_app_that_writes_no_report_is_a_failed_point(tmp_path: Path) -> None:
    if not built("openmpi"):
        pytest.skip("build/bin/hympi is not built")
    silent = tmp_path / "silent"
    silent.write_text("#!/bin/sh\nexit 0\n")
    silent.chmod(0o755)
    outdir = tmp_path / "silent-study"
    proc = study(["--steps", "solve", "--app", f"{silent} {{scheme}} {{threads}}", "--no-report",
                  "--out", str(outdir)])
    assert proc.returncode == 1
    points = status(outdir)
    assert points and all(p["status"] == "failed" for p in points.values())
    # the first of the 3 runs fails the point, named
    assert all(p["reason"].startswith("run 1 of 3: the app wrote no report: call hympi_report_json")
               for p in points.values())


@pytest.mark.parametrize("app, message", [
    ("mpirun -n 2 {heat} --scheme {{scheme}} --threads {{threads}}",
     "--app: give your program without a launcher ('mpirun')"),
    ("{heat} --threads {{threads}}", "--app must contain {scheme}"),
    ("{heat} --scheme {{scheme}} --threads {{threads}} --grid {{size}}", "unknown placeholder(s) {size}"),
    ("/nonexistent/app {{scheme}} {{threads}}", "--app: /nonexistent/app is not an executable program"),
])
def test_bad_app_commands_exit_2_with_one_line(app: str, message: str, tmp_path: Path) -> None:
    if not built("openmpi", "heat_c"):
        pytest.skip("build/bin/heat_c is not built")
    proc = study(["--steps", "solve", "--app", app.format(heat=BUILDS["openmpi"] / "bin" / "heat_c"),
                  "--out", str(tmp_path / "x")])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and message in err[0], proc.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("args, message", [
    (["--app-repeat", "2"], "--app-repeat repeats the runs of --app: give --app too"),
    (["--app", "/bin/true {scheme} {threads}", "--app-repeat", "0"], "--app-repeat: '0' is out of range: accepted 1 .. 1000"),
])
def test_app_repeat_is_checked(args: list[str], message: str, tmp_path: Path) -> None:
    proc = study(["--steps", "solve", *args, "--out", str(tmp_path / "x")])
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "x").exists()
