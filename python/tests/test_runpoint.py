"""run_point and discover_info against a stand-in for hympi: a run that
dies of SIGSEGV after writing its complete result (Open MPI 4.1's crash in
MPI_Finalize, open-mpi/ompi#10117), or exits 1 after it with mpirun's report
of a rank "exiting improperly" (open-mpi/ompi#7833), is run once more, and
so is a run whose srun step never started; any other crash or failure fails
the point (or, for `hympi info`, the study, as bad input)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hympi_lab.errors import InputError
from hympi_lab.launch import Setting
from hympi_lab.plan import Point
from hympi_lab.runpoint import run_point
from hympi_lab.study import discover_info
from hympi_lab.studydir import COMMANDS, RAW

# mpirun.openmpi's lines (4.1.4) for a rank that exits without MPI_Finalize,
# as Open MPI also prints them now and then for a rank that finished.
IMPROPER_EXIT = """--------------------------------------------------------------------------
mpirun.openmpi has exited due to process rank 1 with PID 0 on
node vm exiting improperly. There are three reasons this could occur:

1. this process did not call "init" before exiting, but others in
the job did. This can cause a job to hang indefinitely while it waits
for all processes to call "init". By rule, if one process calls "init",
then ALL processes must call "init" prior to termination.

2. this process called "init", but exited without calling "finalize".
By rule, all processes that call "init" MUST call "finalize" prior to
exiting or it will be considered an "abnormal termination"

3. this process called "MPI_Abort" or "orte_abort" and the mca parameter
orte_create_session_dirs is set to false. In this case, the run-time cannot
detect that the abort call was an abnormal termination. Hence, the only
error message you will receive is this one.

This may have caused other processes in the application to be
terminated by signals sent by mpirun.openmpi (as reported here).

You can avoid this message by specifying -quiet on the mpirun.openmpi command line.
--------------------------------------------------------------------------
"""

# A stand-in for `hympi solve ... --json PATH`: counts its runs in
# runs.txt beside PATH's folder, writes a result (or not), then fails on the
# runs the plan names: "after" dies of SIGSEGV with its result written,
# "before" without it; "improper" exits 1 with mpirun's improper-exit lines
# after its result, "improper-before" before it; "exit1-after" exits 1
# after its result with no such lines. "not-launched" prints srun's words
# for a step that never started and exits 1; "ending" adds the words of a
# job that is ending. "hang-after" sleeps past the per-run limit after its
# result, "hang-before" before it.
FAKE = r'''
import json, os, signal, sys, time
from pathlib import Path
IMPROPER = os.environ["FAKE_IMPROPER"]
args = sys.argv[1:]
# hympi's own run names its file with --json; a user's program is told by the study.
json_path = Path(args[args.index("--json") + 1] if "--json" in args else os.environ["HYMPI_REPORT_JSON"])
count_file = json_path.parent.parent / "runs.txt"
run = int(count_file.read_text()) + 1 if count_file.exists() else 1
count_file.write_text(str(run))
plan = json.loads(os.environ["FAKE_PLAN"])   # one entry per run: "ok", "after", "before"
what = plan[min(run, len(plan)) - 1]
if what == "before":
    os.kill(os.getpid(), signal.SIGSEGV)
if what == "hang-before":
    time.sleep(60)
if what == "improper-before":
    sys.stderr.write(IMPROPER)
    sys.exit(1)
if what in ("not-launched", "ending"):
    if what == "ending":
        sys.stderr.write("srun: error: Unable to create step for job 11: Job/step already completing or completed\n")
    sys.stderr.write("srun: error: task 0 launch failed: Unspecified error\n"
                     "srun: StepId=11.4 aborted before step completely launched.\n")
    sys.exit(1)
json_path.write_text(json.dumps({"context": {"ranks": 2},
                                 "results": [{"kind": "solve", "kernel": "user:heat",
                                              "time_s": 0.5 + run if "--json" in args
                                              else {"median": 0.5 + run}}]}))
print("result written")
sys.stdout.flush()
if what == "after":
    os.kill(os.getpid(), signal.SIGSEGV)
if what == "hang-after":
    time.sleep(60)
if what == "improper":
    sys.stderr.write(IMPROPER)
if what in ("improper", "exit1-after"):
    sys.exit(1)
'''


def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plan: list[str], app_repeat: int = 0,
        timeout_s: float = 60):
    fake = tmp_path / "fake_hympi.py"
    fake.write_text(f"#!{sys.executable}\n" + FAKE)
    fake.chmod(0o755)
    outdir = tmp_path / "study"
    (outdir / RAW).mkdir(parents=True)
    monkeypatch.setenv("FAKE_PLAN", json.dumps(plan))
    monkeypatch.setenv("FAKE_IMPROPER", IMPROPER_EXIT)
    # The launcher word and its rank count are dropped; the stand-in runs directly.
    launcher = [sys.executable, "-c", "import os, sys; os.execv(sys.argv[3], sys.argv[3:])", "-n"]
    setting = Setting(2, 1, 2, 1, "real", 0, False, launcher, "none", {})
    point = Point("solve-jacobi-masteronly", "solve", ["solve", "--kernel", "jacobi"], 2, 1,
                  "solve-jacobi-masteronly.json", cores_per_rank=1)
    if app_repeat:  # a user's program (--app), run app_repeat times
        point = Point("solve-app-masteronly", "solve", [], 2, 1, "solve-app-masteronly.json",
                      cores_per_rank=1, app=[str(fake), "--scheme", "masteronly"], repeat=app_repeat)
    outcome = run_point(point, setting, str(fake), outdir, timeout_s=timeout_s)
    runs = int((outdir / "runs.txt").read_text())
    return outcome, runs, outdir


def test_a_crash_after_the_complete_result_runs_the_point_again(tmp_path, monkeypatch):
    outcome, runs, outdir = run(tmp_path, monkeypatch, ["after", "ok"])
    assert runs == 2
    assert outcome.status == "ok" and outcome.exit_code == 0
    assert "ran twice" in outcome.reason and "ompi#10117" in outcome.reason
    # The second run's result, not the first's.
    assert [r["result"]["time_s"] for r in outcome.records] == [2.5]
    log = (outdir / RAW / "solve-jacobi-masteronly.log").read_text()
    assert log.count("result written") == 2 and "# run (again" in log
    assert (outdir / COMMANDS).read_text().count("fake_hympi.py") == 2


def test_a_hang_after_the_complete_result_runs_the_point_again(tmp_path, monkeypatch):
    outcome, runs, outdir = run(tmp_path, monkeypatch, ["hang-after", "ok"], timeout_s=3)
    assert runs == 2
    assert outcome.status == "ok" and "ran twice" in outcome.reason and "per-run limit" in outcome.reason
    assert [r["result"]["time_s"] for r in outcome.records] == [2.5]


@pytest.mark.parametrize("plan", [["hang-before", "ok"], ["hang-after", "hang-after"]])
def test_a_hang_before_the_result_or_twice_fails(tmp_path, monkeypatch, plan):
    outcome, runs, _ = run(tmp_path, monkeypatch, plan, timeout_s=3)
    assert outcome.status == "failed" and outcome.timed_out
    assert "per-run limit of 3 s" in outcome.reason
    assert runs == (1 if plan[0] == "hang-before" else 2)


def test_an_improper_exit_after_the_complete_result_runs_the_point_again(tmp_path, monkeypatch):
    outcome, runs, outdir = run(tmp_path, monkeypatch, ["improper", "ok"])
    assert runs == 2
    assert outcome.status == "ok" and outcome.exit_code == 0
    assert "ran twice" in outcome.reason and "exiting improperly" in outcome.reason
    assert "ompi#7833" in outcome.reason
    assert [r["result"]["time_s"] for r in outcome.records] == [2.5]
    log = (outdir / RAW / "solve-jacobi-masteronly.log").read_text()
    assert "# run (again: the run before exited with code 1 after writing its complete result" in log


def test_an_srun_step_that_never_started_runs_again(tmp_path, monkeypatch):
    outcome, runs, outdir = run(tmp_path, monkeypatch, ["not-launched", "ok"])
    assert runs == 2 and outcome.status == "ok"
    assert outcome.reason == ("ran twice: the first run was never started by srun "
                              "('srun: error: task 0 launch failed: Unspecified error')")
    assert "(again: the run before was never started by srun" in (outdir / COMMANDS).read_text()


@pytest.mark.parametrize("plan, runs_made", [
    (["not-launched", "not-launched"], 2),  # launched once more only
    (["ending", "ok"], 1),                  # the job is ending: the study stops (slurm.job_ending)
])
def test_a_step_that_never_starts_twice_or_in_an_ending_job_fails(tmp_path, monkeypatch, plan, runs_made):
    outcome, runs, _ = run(tmp_path, monkeypatch, plan)
    assert runs == runs_made and outcome.status == "failed" and outcome.exit_code == 1


@pytest.mark.parametrize("plan, why", [
    # No result: a rank that failed during the run.
    (["improper-before", "ok"], "exit code 1 (the run failed)"),
    # A result but no improper-exit report: hympi's own failure (exit 1).
    (["exit1-after", "ok"], "exit code 1 (the run failed)"),
])
def test_exit_code_1_without_both_signs_fails_without_running_again(tmp_path, monkeypatch, plan, why):
    outcome, runs, _ = run(tmp_path, monkeypatch, plan)
    assert runs == 1
    assert outcome.status == "failed" and outcome.reason == why


def test_the_failed_runs_tail_is_its_own_output(tmp_path, monkeypatch):
    # Run 2 of a user's program is never started, twice; the tail holds the
    # last attempt's two lines, not run 1's (the log's last lines would).
    outcome, runs, outdir = run(tmp_path, monkeypatch, ["ok", "not-launched", "not-launched"],
                                app_repeat=2)
    assert runs == 3 and outcome.status == "failed"
    assert outcome.stderr_tail == ("srun: error: task 0 launch failed: Unspecified error\n"
                                   "srun: StepId=11.4 aborted before step completely launched.")
    assert (outdir / RAW / "solve-app-masteronly.log").read_text().count("result written") == 1


def test_a_crash_before_the_result_fails_without_running_again(tmp_path, monkeypatch):
    outcome, runs, _ = run(tmp_path, monkeypatch, ["before", "ok"])
    assert runs == 1
    assert outcome.status == "failed" and outcome.exit_code == -11
    assert outcome.reason == "exit code -11"


def test_a_point_that_crashes_twice_fails(tmp_path, monkeypatch):
    outcome, runs, _ = run(tmp_path, monkeypatch, ["after", "after"])
    assert runs == 2
    assert outcome.status == "failed" and outcome.exit_code == -11
    assert outcome.records == []


def test_a_clean_run_runs_once_with_no_note(tmp_path, monkeypatch):
    outcome, runs, _ = run(tmp_path, monkeypatch, ["ok"])
    assert runs == 1
    assert outcome.status == "ok" and outcome.reason == ""


def test_a_users_program_that_crashes_after_its_report_runs_that_run_again(tmp_path, monkeypatch):
    # Three runs; the second dies after its report and runs once more.
    outcome, runs, outdir = run(tmp_path, monkeypatch, ["ok", "after", "ok", "ok"], app_repeat=3)
    assert runs == 4
    assert outcome.status == "ok"
    assert outcome.reason.startswith("ran again: run 2 died with exit code -11 after writing")
    merged = json.loads((outdir / RAW / "solve-app-masteronly.json").read_text())["results"][0]
    # Runs 1, 3 and 4 of the program: the crashed run's report is not among them.
    assert [r["time_s"] for r in merged["runs"]] == [1.5, 3.5, 4.5]
    log = (outdir / RAW / "solve-app-masteronly.log").read_text()
    assert "# run 2 of 3 (again: the run before died with exit code -11" in log


def test_a_users_program_that_crashes_before_its_report_fails(tmp_path, monkeypatch):
    outcome, runs, _ = run(tmp_path, monkeypatch, ["ok", "before", "ok"], app_repeat=3)
    assert runs == 2
    assert outcome.status == "failed" and outcome.reason == "run 2 of 3: exit code -11"


# `hympi info --json`, which the study runs first to learn the build's
# schemes: the same crash after the document was printed runs it once more.
INFO_FAKE = r'''
import json, os, signal, sys
from pathlib import Path
count = Path(os.environ["FAKE_COUNT"])
run = int(count.read_text()) + 1 if count.exists() else 1
count.write_text(str(run))
plan = json.loads(os.environ["FAKE_PLAN"])
what = plan[min(run, len(plan)) - 1]
if what == "before":
    os.kill(os.getpid(), signal.SIGSEGV)
if what == "not-launched":
    sys.stderr.write("srun: StepId=11.0 aborted before step completely launched.\n")
    sys.exit(1)
print(json.dumps({"context": {"ranks": 1}, "schemes": [{"name": "masteronly"}], "run": run}))
sys.stdout.flush()
if what == "after":
    os.kill(os.getpid(), signal.SIGSEGV)
if what == "improper":
    sys.stderr.write(os.environ["FAKE_IMPROPER"])
    sys.exit(1)
'''


def discover(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plan: list[str]):
    fake = tmp_path / "fake_info.py"
    fake.write_text(f"#!{sys.executable}\n" + INFO_FAKE)
    fake.chmod(0o755)
    monkeypatch.setenv("FAKE_PLAN", json.dumps(plan))
    monkeypatch.setenv("FAKE_COUNT", str(tmp_path / "runs.txt"))
    monkeypatch.setenv("FAKE_IMPROPER", IMPROPER_EXIT)
    launcher = [sys.executable, "-c", "import os, sys; os.execv(sys.argv[3], sys.argv[3:])", "-n"]
    setting = Setting(2, 1, 2, 1, "real", 0, False, launcher, "none", {})
    return lambda: discover_info(setting, str(fake), 60), tmp_path / "runs.txt"


@pytest.mark.parametrize("failure", ["after", "improper", "not-launched"])
def test_info_that_fails_after_its_document_runs_again(tmp_path, monkeypatch, failure):
    probe, runs = discover(tmp_path, monkeypatch, [failure, "ok"])
    info = probe()
    assert info["run"] == 2 and runs.read_text() == "2"


@pytest.mark.parametrize("plan, runs_made", [(["before", "ok"], "1"), (["after", "after"], "2")])
def test_info_that_crashes_before_its_document_or_twice_is_bad_input(tmp_path, monkeypatch, plan, runs_made):
    probe, runs = discover(tmp_path, monkeypatch, plan)
    with pytest.raises(InputError, match=r"failed \(exit -11\)"):
        probe()
    assert runs.read_text() == runs_made
