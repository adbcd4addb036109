"""Running one point of a study: its exact command (logged to commands.log),
the MPI job in its own process group with a time limit, and the result and
status lines it adds to results.jsonl."""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from . import apprepeat
from .atomic import write_atomic
from .errors import OutputError
from .launch import Setting
from .plan import Point
from .results import now_iso
from .slurm import step_not_launched
from .studydir import COMMANDS, RAW, STUDY_SCHEMA_VERSION


@dataclass
class RunOutcome:
    status: str                         # ok | failed
    exit_code: Optional[int]
    timed_out: bool
    wall_s: float
    stderr_tail: str
    records: list[dict[str, Any]]
    reason: str = ""
    command: list[str] = field(default_factory=list)  # the exact argv that ran
    output: str = ""  # the run's own output (its end), for _worth_another_run


class Interrupted(Exception):
    """Ctrl-C or SIGTERM during a run; the child has been ended."""


def point_command(point: Point, setting: Setting, hympi: str, outdir: Path, report: str = "") -> list[str]:
    if point.app:
        # The user's program writes its report where HYMPI_REPORT_JSON says
        # (run_point sets it); {json} names the same file for a --report flag.
        report = report or str(outdir / RAW / point.json_name)
        launcher = setting.argv(point.ranks, point.cores_per_rank)
        if "openmpi" in os.path.basename(launcher[0]) and setting.nodes_kind != "emulated":
            # Open MPI passes only the variables named with -x to remote nodes.
            launcher = launcher[:1] + ["-x", "HYMPI_REPORT_JSON", "-x", "HYMPI_TRACE_JSON"] + launcher[1:]
        return launcher + [w.replace("{json}", report) for w in point.app]
    args = list(point.args)
    args += ["--json", str(outdir / RAW / point.json_name)]
    if point.trace_name:
        args += ["--trace", str(outdir / RAW / point.trace_name)]
    inject = os.environ.get("HYMPI_STUDY_FAIL_POINT", "")
    if inject and re.fullmatch(inject, point.key):
        # For the tests: make exactly this run fail with a usage error.
        args += ["--no-such-option-injected-by-test"]
    return setting.argv(point.ranks, point.cores_per_rank) + [hympi] + args


# Open MPI 4.1 (Debian's 4.1.4 with PMIx 4.2) now and then kills a rank with
# SIGSEGV inside MPI_Finalize, after the run is complete: it unloads its PMIx
# component (mca_pmix_ext3x.so) while an event that component handed to its
# progress thread still waits there, and the thread then jumps into the
# unmapped code. A core dump shows exactly that (the waiting event is an
# OPAL_ERR_MODEL_DECLARED notification, which MPI_Init sends;
# open-mpi/ompi#10117). Seen here in 1 of 1,061 runs of 25 quick studies
# under load, and once each in 3 of 10 `make test` runs (each starts some
# hundreds of Open MPI jobs). Such a run is run once more: the exit codes
# of a rank killed by SIGSEGV or SIGBUS, from mpirun or mpiexec
# (128 + signal) or from a directly started process (-signal).
FINALIZE_CRASH_CODES = frozenset({128 + signal.SIGSEGV, 128 + signal.SIGBUS,
                                  -signal.SIGSEGV, -signal.SIGBUS})

# Open MPI 4.x's mpirun also now and then reports a rank that ran to its end
# as "exiting improperly", with its PID as 0, and exits 1: a 1-rank hello
# world once in 1,000-2,000 runs (open-mpi/ompi#7833), after LAMMPS had
# finished (#9389), with many mpiruns at once (#12607). Seen here in a
# fresh-clone `make test` (2026-11-28): a 2-rank run of heat_c whose report
# was complete, 10 s slower than its siblings. A rank that really exits
# without MPI_Finalize gets the same lines (checked with a program that
# does), so they count only beside a complete result, as the crashes above.
OPEN_MPI_IMPROPER_EXIT = re.compile(r"has exited due to process rank \d+ with PID \d+ on\s+"
                                    r"node \S+ exiting improperly")

# mpirun's line for a rank that a signal killed, e.g. "mpirun.openmpi noticed
# that process rank 0 with PID 0 on node vm exited on signal 11
# (Segmentation fault).", for SIGSEGV and SIGBUS only: the finalize crash
# above, where only the output is at hand (make test's ctest lanes:
# scripts/ctest_once_more.py; the study reads the exit code instead).
OPEN_MPI_RANK_CRASH = re.compile(r"noticed that process rank \d+ with PID \d+ on node \S+ "
                                 r"exited on signal (?:11|7) ")


def why_run_again(code: Optional[int], output: str, result_complete: Callable[[], bool]) -> str:
    """Why a failed run (exit `code`, printed `output`) is run once more, ""
    if it is not: Open MPI's failure after the work (a crash in
    MPI_Finalize, or mpirun's improper-exit report) when result_complete()
    says its result is whole, or an srun step that never started
    (slurm.step_not_launched). A program that fails during its run does so
    before it writes its result (hympi's rank 0 writes at the end of the
    run; the file of an earlier run is removed first). The study's runs and
    its `hympi info` probe both ask here."""
    if code in FINALIZE_CRASH_CODES:
        why = (f"died with exit code {code} after writing its complete result (Open MPI's crash "
               "in MPI_Finalize, open-mpi/ompi#10117)")
    elif code == 1 and OPEN_MPI_IMPROPER_EXIT.search(output):
        why = ("exited with code 1 after writing its complete result, a rank reported by mpirun as "
               "\"exiting improperly\" (Open MPI, open-mpi/ompi#7833)")
    else:
        line = step_not_launched(output)
        return f"was never started by srun ('{line}')" if line else ""
    return why if result_complete() else ""


def run_point(point: Point, setting: Setting, hympi: str, outdir: Path, timeout_s: float) -> RunOutcome:
    try:
        if point.app:
            return _run_app(point, setting, outdir, timeout_s)
        argv = point_command(point, setting, hympi, outdir)
        outcome = _run_native(point, setting, outdir, argv, timeout_s, "")
        json_path = outdir / RAW / point.json_name
        why = _worth_another_run(outcome, lambda: _outcome(point, json_path, 0, False, outcome.wall_s,
                                                           outcome.output, timeout_s))
        if why:
            outcome = _run_native(point, setting, outdir, argv, timeout_s, _again_note(why))
            if outcome.status == "ok":
                outcome.reason = f"ran twice: the first run {why}"
    except OSError as err:  # the study directory's disk, not the run
        raise OutputError(f"cannot write in {outdir}: {err.strerror or err}") from None
    outcome.command = argv
    return outcome


def _run_native(point: Point, setting: Setting, outdir: Path, argv: list[str], timeout_s: float,
                note: str) -> RunOutcome:
    """One run of hympi itself; the result and trace files of an earlier run
    go first, so that what is read afterwards is this run's."""
    json_path = outdir / RAW / point.json_name
    trace = outdir / RAW / point.trace_name if point.trace_name else None
    code, timed_out, wall, output = _run_once(point, setting, outdir, argv, timeout_s, [json_path, trace],
                                              {}, note, f"# run{note}" if note else "")
    return _outcome(point, json_path, code, timed_out, wall, output, timeout_s)


def _run_once(point: Point, setting: Setting, outdir: Path, argv: list[str], timeout_s: float,
              stale: list[Optional[Path]], extra: dict[str, str], note: str,
              marker: str) -> tuple[Optional[int], bool, float, str]:
    """One launch of argv for `point`. The files an earlier attempt left
    (`stale`: --resume, or the run before a rerun) go first, so that what is
    read afterwards is this run's; the command goes to commands.log (with
    `note`). With a `marker` line the run's output is appended to the
    point's log after it, else it replaces the log."""
    for path in stale:
        if path is not None:
            path.unlink(missing_ok=True)
    env = _launch(point, setting, outdir, argv, extra, note)
    log_path = outdir / RAW / f"{point.key}.log"
    if marker:
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(marker + "\n")
    return _execute(argv, env, log_path, timeout_s, append=bool(marker))


def _again_note(why: str) -> str:
    return f" (again: the run before {why})"


# A run stopped at the per-run limit after it wrote its whole result: seen
# once in a fresh-clone `make test` (2026-11-28), `hympi bench overlap` at
# 2 ranks x 2 threads on 2 cores under Open MPI 4.1, its table printed and
# its document written, then no exit for 120 s; 60 runs of the same command
# did not repeat it.
HUNG_AFTER_RESULT = ("did not exit after writing its complete result and was stopped at the per-run "
                     "limit (a hang after the work, as in MPI_Finalize)")


def _worth_another_run(outcome: RunOutcome, as_if_clean: Callable[[], RunOutcome]) -> str:
    """why_run_again for a finished run of a point, or HUNG_AFTER_RESULT for
    one stopped at the per-run limit; its result is whole when as_if_clean
    (what _outcome says of its files with exit code 0) is ok."""
    if outcome.status == "ok":
        return ""
    if outcome.timed_out:
        return HUNG_AFTER_RESULT if as_if_clean().status == "ok" else ""
    return why_run_again(outcome.exit_code, outcome.output, lambda: as_if_clean().status == "ok")


def _launch(point: Point, setting: Setting, outdir: Path, argv: list[str], extra: dict[str, str],
            note: str) -> dict[str, str]:
    """The run's environment (the launcher's, OMP_NUM_THREADS, `extra`),
    after its command line and the variables it sets went to commands.log."""
    _, _, launch_env = setting.launch(point.cores_per_rank)
    launch_env = {**launch_env, **extra}
    env = dict(os.environ)
    env.update(launch_env)
    env["OMP_NUM_THREADS"] = str(point.threads)
    env_words = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(launch_env.items())
                         if k != "OMP_NUM_THREADS")
    with open(outdir / COMMANDS, "a", encoding="utf-8") as log:
        log.write(f"# {now_iso()} {point.key}{note}\nOMP_NUM_THREADS={point.threads} {env_words} "
                  f"{shlex.join(argv)}\n")
    return env


def _run_app(point: Point, setting: Setting, outdir: Path, timeout_s: float) -> RunOutcome:
    """The user's program, point.repeat times, each run writing its own
    report (raw/KEY.runR.json) and trace; then one document of them all
    (apprepeat.merge: min, median and max time over the runs, the median
    run's phases and trace) as raw/KEY.json. The first run that fails fails
    the point, named."""
    raw, log_path = outdir / RAW, outdir / RAW / f"{point.key}.log"
    docs: list[dict[str, Any]] = []
    wall_total, argv = 0.0, []
    again: list[str] = []
    log_path.write_text("", encoding="utf-8")
    for r in range(1, point.repeat + 1):
        report = raw / f"{point.key}.run{r}.json"
        trace = raw / f"{point.key}.run{r}.trace.json" if point.trace_name else None
        argv = point_command(point, setting, "", outdir, str(report))
        code, timed_out, wall, output = _run_app_once(point, setting, outdir, argv, r, report, trace,
                                                      timeout_s, "")
        wall_total += wall
        outcome = _outcome(point, report, code, timed_out, wall_total, output, timeout_s, trace)
        why = _worth_another_run(outcome, lambda: _outcome(point, report, 0, False, wall_total, output,
                                                           timeout_s, trace))
        if why:
            again.append(f"run {r} {why}")
            code, timed_out, wall, output = _run_app_once(point, setting, outdir, argv, r, report, trace,
                                                          timeout_s, _again_note(why))
            wall_total += wall
            outcome = _outcome(point, report, code, timed_out, wall_total, output, timeout_s, trace)
        if outcome.status != "ok":
            if point.repeat > 1:
                outcome.reason = f"run {r} of {point.repeat}: {outcome.reason}"
            outcome.command = argv
            return outcome
        docs.append(_read_document(report))
    merged, median_run = apprepeat.merge(docs)
    write_atomic(raw / point.json_name, json.dumps(merged, indent=2) + "\n")
    if point.trace_name:
        shutil.copyfile(raw / f"{point.key}.run{median_run + 1}.trace.json", raw / point.trace_name)
    outcome = RunOutcome("ok", 0, False, wall_total, _tail(output),
                         [_result_line(point, merged["context"], rec) for rec in merged["results"]])
    if again:
        outcome.reason = "ran again: " + "; ".join(again)
    outcome.command = argv
    return outcome


def _run_app_once(point: Point, setting: Setting, outdir: Path, argv: list[str], r: int, report: Path,
                  trace: Optional[Path], timeout_s: float,
                  note: str) -> tuple[Optional[int], bool, float, str]:
    """Run r of the user's program, told where to write its report and
    trace; the point's log gathers every run's output."""
    return _run_once(point, setting, outdir, argv, timeout_s, [report, trace],
                     {"HYMPI_REPORT_JSON": str(report), "HYMPI_TRACE_JSON": str(trace or "")},
                     f" (run {r} of {point.repeat}){note}", f"# run {r} of {point.repeat}{note}")


# hympi's own exit codes (README, "Exit codes"), named in a failed run's reason.
HYMPI_EXIT_CODES = {
    1: "the run failed",
    2: "bad input",
    3: "cg did not converge within --max-iters",
    4: "a result file could not be written",
}


def _execute(argv: list[str], env: dict[str, str], log_path: Path, timeout_s: float,
             append: bool = False) -> tuple[Optional[int], bool, float, str]:
    """Runs argv in its own process group with its output in log_path:
    (exit code, timed out, wall seconds, the run's own output: its end)."""
    start = time.monotonic()
    timed_out = False
    with open(log_path, "ab" if append else "wb") as out:
        offset = out.tell()
        # Own process group: a time-out or Ctrl-C ends mpirun and every rank.
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            if not _wait_exit(proc, timeout_s):
                timed_out = True
                _end_group(proc)
        except BaseException:
            _end_group(proc)
            raise
    return proc.returncode, timed_out, time.monotonic() - start, _output_since(log_path, offset)


def _read_document(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        doc = json.load(handle)
    return doc if isinstance(doc, dict) else {}


def _outcome(point: Point, json_path: Path, code: Optional[int], timed_out: bool, wall: float,
             output: str, timeout_s: float, app_trace: Optional[Path] = None) -> RunOutcome:
    """What one finished run says: failed (and why), or ok with its records."""
    outcome = _judge(point, json_path, code, timed_out, wall, _tail(output), timeout_s, app_trace)
    outcome.output = output
    return outcome


def _judge(point: Point, json_path: Path, code: Optional[int], timed_out: bool, wall: float,
           tail: str, timeout_s: float, app_trace: Optional[Path]) -> RunOutcome:
    if timed_out:
        return RunOutcome("failed", code, True, wall, tail, [],
                          f"exceeded the per-run limit of {timeout_s:g} s")
    if code != 0:
        why = HYMPI_EXIT_CODES.get(code, "") if not point.app else ""
        return RunOutcome("failed", code, False, wall, tail, [],
                          f"exit code {code}" + (f" ({why})" if why else ""))
    if point.app and not json_path.exists():
        return RunOutcome("failed", code, False, wall, tail, [],
                          "the app wrote no report: call hympi_report_json (C, Fortran) or "
                          "Domain::write_report (C++) after the timed loop; the study sets "
                          "HYMPI_REPORT_JSON to the path")
    try:
        doc = _read_document(json_path)
    except (OSError, json.JSONDecodeError) as err:
        return RunOutcome("failed", code, False, wall, tail, [], f"no readable JSON document: {err}")
    context = doc.get("context", {})
    world = context.get("ranks")
    if not point.app and isinstance(world, int) and world != point.ranks:
        # Seen under srun with a PMI plugin of another MPI: MPICH starts
        # every task as its own 1-rank job and exits 0.
        return RunOutcome("failed", code, False, wall, tail, [],
                          f"the run's MPI_COMM_WORLD has {world} rank(s), not {point.ranks}: the "
                          "launcher started separate jobs (a PMI plugin that does not match the MPI?)")
    if point.app and not apprepeat.one_result(doc):
        return RunOutcome("failed", code, False, wall, tail, [],
                          "the app's report holds no solve result (results[0] with kind, kernel and "
                          "time_s, as hympi_report_json writes it)")
    records = []
    if point.step == "info":
        rest = {k: v for k, v in doc.items() if k != "context"}
        records.append(_result_line(point, context, {"kind": "info", **rest}))
    else:
        for rec in doc.get("results", []):
            records.append(_result_line(point, context, rec))
    trace = app_trace if point.app else (point.trace_name and json_path.parent / point.trace_name)
    if trace and not trace.exists():
        return RunOutcome("failed", code, False, wall, tail, [], "the run wrote no trace")
    return RunOutcome("ok", code, False, wall, tail, records)


def _result_line(point: Point, context: dict[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
    line = {"record": "result", "study_schema_version": STUDY_SCHEMA_VERSION, "point": point.key,
            "step": point.step, "source": f"{RAW}/{point.json_name}", "context": context,
            "result": rec}
    if point.trace_name:
        line["trace"] = f"{RAW}/{point.trace_name}"
    return line


def _wait_exit(proc: subprocess.Popen, timeout_s: float) -> bool:
    """Waits for proc's exit, up to timeout_s: True if it exited. Through a
    pidfd, woken the moment it exits: Popen.wait(timeout) polls with sleeps
    of up to 50 ms, about 1.3 s over a default study's 54 runs."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # before Linux 5.3, or not Linux
        try:
            proc.wait(timeout=timeout_s)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout_s)
    finally:
        os.close(pidfd)
    if not ready:
        return False
    proc.wait()
    return True


def _end_group(proc: subprocess.Popen) -> None:
    """SIGTERM the run's process group, SIGKILL after 3 s: within a batch
    system's KillWait (Slurm's test cluster: 5 s), so the study still says
    what it kept before its own SIGKILL."""
    for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _output_since(path: Path, offset: int, limit: int = 65536) -> str:
    """What a run added to its log from `offset` on: its last `limit` bytes."""
    try:
        with open(path, "rb") as log:
            size = log.seek(0, os.SEEK_END)
            log.seek(max(offset, size - limit))
            return log.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _tail(output: str, lines: int = 15, chars: int = 2000) -> str:
    return "\n".join(output.rstrip().splitlines()[-lines:])[-chars:]


def point_status_line(point: Point, outcome: RunOutcome, binding: str) -> dict[str, Any]:
    return {"record": "point", "study_schema_version": STUDY_SCHEMA_VERSION, "point": point.key,
            "step": point.step, "label": point.label, "status": outcome.status,
            "n_results": len(outcome.records), "command": shlex.join(outcome.command), "binding": binding,
            "ranks": point.ranks, "threads": point.threads, "wall_s": round(outcome.wall_s, 4),
            "exit_code": outcome.exit_code, "timed_out": outcome.timed_out,
            "reason": outcome.reason, "stderr_tail": outcome.stderr_tail if outcome.status != "ok" else "",
            "date": now_iso(), "meta": point.meta}
