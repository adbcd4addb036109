"""`hympi-lab study`: the run loop of the whole campaign on this machine or
cluster.

It detects the machine (machine.py), resolves the layout and launcher
(launch.py), plans the runs (plan.py), runs each point (runpoint.py) and
appends every measurement to DIR/results.jsonl (studydir.py) the moment it
exists. A study killed at any point loses nothing already measured;
`--resume DIR` runs only the points still missing. The report is written by
a function the caller passes in (cli.py passes report.write_report), so this
module does not import the report and the report's modules do not import it.

Nothing here prints except through the Progress object and the final summary.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Optional, TextIO

from .errors import (EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_OUTPUT, EXIT_TERMINATED, EXIT_USAGE,
                     InputError, OutputError)
from .launch import (LAUNCHERS, EmulatedCluster, Setting, reads_topology_file, repo_root, resolve_setting,
                     topology_file_works, with_topology_file)
from .machine import Machine, detect_machine, write_topology
from . import buildinfo
from .buildinfo import Info
from .options import NAME_PATTERN, StudyOptions, app_kernel, app_problems
from .plan import LEVELS, Point, build_plan, dropped, estimate_s, kernels_of, name_problems, steps_of
from .results import now_iso
from .runpoint import RunOutcome, point_status_line, run_point, why_run_again
from .slurm import allocation, job_ending
from .studydir import (COMMANDS, RESULTS, STUDY_FILE, STUDY_SCHEMA_VERSION, TOPOLOGY, append_lines,
                       check_outdir, check_room, load_results, load_study, prepare_outdir,
                       rewrite_results, rewrite_study)


# --- progress ----------------------------------------------------------------------

class Progress:
    """A tqdm bar on a terminal; plain lines otherwise (CI, logs)."""

    def __init__(self, total: int, estimate_s: float, out: TextIO):
        self.total, self.done, self.out = total, 0, out
        self.left_s = estimate_s
        self.bar = None
        if out.isatty():
            from tqdm import tqdm
            self.bar = tqdm(total=total, file=out, unit="run", dynamic_ncols=True,
                            bar_format="{desc} {bar} {n_fmt}/{total_fmt} runs [{elapsed}]")

    def start(self, point: Point) -> None:
        if self.bar is not None:
            self.bar.set_description_str(f"{point.step}: {point.label} (about {_clock(self.left_s)} left)")

    def finish(self, point: Point, outcome: RunOutcome, left_s: float) -> None:
        self.done += 1
        self.left_s = left_s
        mark = f"FAILED ({outcome.reason})" if outcome.status != "ok" else (
            f"ok ({outcome.reason})" if outcome.reason else "ok")
        if self.bar is not None:
            self.bar.update(1)
            if mark != "ok":
                self.bar.write(f"  {point.key}: {mark}")
        else:
            print(f"[{self.done}/{self.total}] {point.step}: {point.label}: {mark} "
                  f"({outcome.wall_s:.1f} s; about {_clock(left_s)} left)", file=self.out, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.set_description_str("done")
            self.bar.close()


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}:{seconds % 60:02d}"


# --- the study ---------------------------------------------------------------------

def default_hympi(mpi: str) -> str:
    build = "build" if mpi == "openmpi" else "build-mpich"
    candidate = repo_root() / build / "bin" / "hympi"
    if candidate.is_file():
        return str(candidate)
    found = shutil.which("hympi")
    return found or str(candidate)


def check_options(opts: StudyOptions) -> None:
    """Everything that can be checked before a run starts (exit 2 otherwise)."""
    problems = []
    if opts.level not in LEVELS:
        problems.append(f"unknown level {opts.level!r}")
    if opts.mpi not in LAUNCHERS:
        problems.append(f"--mpi {opts.mpi!r}: expected openmpi or mpich")
    if opts.launcher not in ("", "mpirun", "mpiexec", "srun"):
        problems.append(f"--launcher {opts.launcher!r}: expected mpirun, mpiexec or srun")
    # Which steps and kernels exist is the build's info's to say (checked
    # once it ran: _settle_names); here only what no name can be.
    for flag, names in (("--steps", opts.steps), ("--kernels", opts.kernels)):
        bad = [n for n in names or [] if not NAME_PATTERN.match(n)]
        if bad:
            problems.append(f"{flag}: unknown name(s) {', '.join(map(repr, bad))} (names are lower-case "
                            "letters, digits, '-' and '_')")
    if opts.run_timeout_s < 0:
        problems.append("--run-timeout must be >= 0")
    if not 0 <= opts.app_repeat <= 1000:
        problems.append(f"--app-repeat {opts.app_repeat} is out of range: accepted 1 .. 1000")
    if opts.app:
        problems += app_problems(opts)
        if "solve" not in opts.steps:
            problems.append("--app runs in the solve step: --steps must include solve")
    hympi = opts.hympi
    if not (os.path.isfile(hympi) and os.access(hympi, os.X_OK)):
        problems.append(f"the hympi executable {hympi} is not built or not executable "
                        f"(run 'make build', or give --hympi PATH)")
    if opts.emulated_nodes:
        if opts.emulated_nodes < 2:
            problems.append("--emulated-nodes must be >= 2")
        if os.geteuid() != 0:
            problems.append("--emulated-nodes needs root (network namespaces and tc); run as root "
                            "or leave it out for virtual nodes on this machine")
        missing = [t for t in ("ip", "tc") if not shutil.which(t)]
        if missing:
            problems.append(f"--emulated-nodes needs {' and '.join(missing)} "
                            "(Debian package iproute2)")
        if opts.launcher == "srun" or opts.hostfile:
            problems.append("--emulated-nodes runs on this machine: it takes no --hostfile or srun")
    if problems:
        raise InputError("; ".join(problems))


def _run_info(argv: list[str], env: dict[str, str], timeout_s: float) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout_s,
                              stdin=subprocess.DEVNULL, start_new_session=True)
    except subprocess.TimeoutExpired:
        raise InputError(f"'{shlex.join(argv)}' did not finish in {timeout_s:g} s: "
                         "is the launcher working on this machine?") from None
    except OSError as err:
        raise InputError(f"cannot run {argv[0]}: {err.strerror or err}") from None


def _first_document(stdout: str) -> Optional[dict[str, Any]]:
    """The first JSON document printed, when it is an info document (a
    scheme list); None otherwise."""
    try:
        info, _ = json.JSONDecoder().raw_decode(stdout.lstrip())
    except json.JSONDecodeError:
        return None
    return info if isinstance(info, dict) and isinstance(info.get("schemes"), list) else None


def discover_info(setting: Setting, hympi: str, timeout_s: float) -> Info:
    """What this build offers (schemes, kernels, benchmarks): `hympi info
    --json` at one rank, the whole document."""
    # Through srun at 2 ranks: a PMI plugin of another MPI can start each
    # task as its own 1-rank job that exits 0 (MPICH), seen only in the size.
    probe_ranks = 2 if setting.srun_mpi else 1
    argv = setting.argv(probe_ranks, 1) + [hympi, "info", "--json"]
    env = dict(os.environ)
    env.update(setting.pure_env or setting.env)
    env["OMP_NUM_THREADS"] = "1"
    proc = _run_info(argv, env, timeout_s)
    if proc.returncode != 0 and why_run_again(proc.returncode, proc.stderr + proc.stdout,
                                              lambda: _first_document(proc.stdout) is not None):
        # Open MPI's failure after the whole document was printed, or an srun
        # step that never started: once more, as for a study's run.
        proc = _run_info(argv, env, timeout_s)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        hint = ""
        if setting.srun_mpi:
            # Seen with MpiDefault=none or a plugin of another MPI: "Local
            # abort before MPI_INIT completed" from every rank.
            hint = (f" (srun --mpi={setting.srun_mpi} could not start this build: is {hympi} built "
                    "against the MPI whose PMI plugin that is? SLURM_MPI_TYPE chooses another)")
        raise InputError(f"'{shlex.join(argv)}' failed (exit {proc.returncode}): {' / '.join(tail)}"
                         + hint)
    # The first document: separate 1-rank jobs (see above) print one each.
    info = _first_document(proc.stdout)
    if info is None:
        if probe_ranks > 1 and proc.stdout.count('"schemes"') > 1:
            # The interleaved documents of separate 1-rank jobs (see above).
            info = {"context": {"ranks": 1}}
        else:
            raise InputError(f"'{shlex.join(argv)}' printed no scheme list")
    world = info.get("context", {}).get("ranks") if isinstance(info.get("context"), dict) else None
    if probe_ranks > 1 and world != probe_ranks:
        raise InputError(f"'{shlex.join(argv)}' started {probe_ranks} separate MPI jobs, not one of "
                         f"{probe_ranks} ranks (MPI_COMM_WORLD has {world}): srun --mpi="
                         f"{setting.srun_mpi} does not match this build's MPI; SLURM_MPI_TYPE or "
                         "--mpi (openmpi, mpich) chooses")
    return info


def _settle_names(opts: StudyOptions, info: Info) -> None:
    """--steps and --kernels against the build's info (InputError, exit 2,
    before any other run); then the lists the study runs, resolved."""
    problems = name_problems(opts, info)
    if problems:
        raise InputError("; ".join(problems))
    opts.steps, opts.kernels = steps_of(opts, info), kernels_of(opts, info)


# What cli.py passes as write_report: writes DIR's report, returns its summary.
ReportWriter = Callable[[Path], str]


def run_study(opts: StudyOptions, outdir: Path, resume: bool, out: TextIO,
              write_report: Optional[ReportWriter] = None) -> int:
    """The campaign. Returns 0 when every run succeeded, 1 when some failed,
    4 when results.jsonl or the report could not be written, 130 on Ctrl-C,
    143 on SIGTERM (errors.EXIT_*). The report is written after the runs, by
    `write_report`, when one is given."""
    if not resume and _requeued_into(outdir):
        resume = True
        print(f"hympi-lab study: Slurm requeued job {os.environ.get('SLURM_JOB_ID')} "
              f"(restart {os.environ.get('SLURM_RESTART_COUNT', '?')}); resuming {outdir}",
              file=out, flush=True)
    check_outdir(outdir, resume)  # before anything runs, hympi info included
    loaded: dict[str, Any] = {}
    if resume:
        header = loaded = load_study(outdir)
        # A damaged results file is refused before anything is launched.
        load_results(outdir / RESULTS)
        opts = StudyOptions(**header["options"])
        if not opts.hympi or not os.path.isfile(opts.hympi):
            opts.hympi = default_hympi(opts.mpi)
    else:
        opts.hympi = opts.hympi or default_hympi(opts.mpi)
    check_options(opts)
    machine = detect_machine()
    setting = resolve_setting(opts, machine)
    emulated = EmulatedCluster(opts, setting) if opts.emulated_nodes else None
    info: Info = discover_info(setting, opts.hympi, 60.0) if emulated is None else {}
    if info:
        _settle_names(opts, info)
    header = {"hympi_study": True, "study_schema_version": STUDY_SCHEMA_VERSION,
              "created": now_iso(), "options": asdict(opts), "machine": asdict(machine),
              "setting": asdict(setting), "mpi_library": info.get("context", {}).get("mpi_library", ""),
              "schemes": buildinfo.schemes(info) if info else None,
              "left_out": _left_out(opts, setting, info)}
    prepare_outdir(outdir, header, resume)
    if emulated is None and reads_topology_file(setting, opts):
        setting = _topology_from_file(setting, outdir / TOPOLOGY)
    _record_start(outdir, loaded or header, machine, setting, info, opts)
    try:
        if emulated is not None:
            emulated.up()
            setting = emulated.setting
            info = discover_info(setting, opts.hympi, 120.0)
            _settle_names(opts, info)
            if not resume:
                rewrite_study(outdir, {**header, "options": asdict(opts), "schemes": buildinfo.schemes(info),
                                       "mpi_library": info.get("context", {}).get("mpi_library", ""),
                                       "left_out": _left_out(opts, setting, info)})
        plan = build_plan(opts, setting, info, machine.memory_bytes)
        todo = _points_to_run(outdir, plan, resume)
        estimate = sum(estimate_s(opts.level, pt.step) * pt.repeat for pt in todo)
        _print_plan(out, opts, machine, setting, plan, todo, estimate, outdir, info, resume)
        check_room(outdir, opts.level, len(todo))
        failed = _run_points(opts, setting, todo, estimate, outdir, out)
    finally:
        if emulated is not None:
            emulated.down()
    if isinstance(failed, int):
        return failed  # interrupted, or the disk filled
    code = EXIT_OK
    if failed:
        code = EXIT_FAILED
        print(f"\n{len(failed)} run(s) failed (recorded in {outdir / RESULTS}; "
              f"'--resume {outdir}' runs them again):", file=out)
        for point, outcome in failed:
            first = outcome.stderr_tail.strip().splitlines()[-1:] or [""]
            print(f"  {point.key}: {outcome.reason}: {first[0][:200]}", file=out)
    if write_report is not None:
        try:
            summary = write_report(outdir)
        except (InputError, OutputError) as err:
            print(f"hympi-lab study: the report could not be written: {err}", file=out)
            return EXIT_USAGE if isinstance(err, InputError) else EXIT_OUTPUT
        print(f"\nreport: {outdir / 'report.html'}\n{summary}", file=out, flush=True)
    return code


def _topology_from_file(setting: Setting, path: Path) -> Setting:
    """`setting` with Open MPI reading the machine's topology from `path`,
    written now by lstopo (launch.with_topology_file), where lstopo runs and
    mpirun starts with it; otherwise `setting` as it was, and no file."""
    if write_topology(path):
        trial = with_topology_file(setting, path.resolve())
        if topology_file_works(trial):
            return trial
        path.unlink(missing_ok=True)
    return setting


def _left_out(opts: StudyOptions, setting: Setting, info: Info) -> list[dict[str, str]]:
    """What the plan leaves out, with why, for study.json (the report names
    them); empty until the build's info is known (an emulated cluster)."""
    return [{"what": what, "why": why} for what, why in dropped(opts, setting, info)] if info else []


def _points_to_run(outdir: Path, plan: list[Point], resume: bool) -> list[Point]:
    """The points of `plan` not yet measured. On --resume the results file is
    first rewritten with the complete, successful points only, so that a
    failed point measured again leaves one status line."""
    results_path = outdir / RESULTS
    results, status = load_results(results_path)
    done = {k for k, v in status.items() if v.get("status") == "ok"}
    if resume:
        rewrite_results(results_path, [r for r in results if r["point"] in done],
                        {k: v for k, v in status.items() if k in done})
    return [pt for pt in plan if pt.key not in done]


def _run_points(opts: StudyOptions, setting: Setting, todo: list[Point], estimate: float,
                outdir: Path, out: TextIO) -> "list[tuple[Point, RunOutcome]] | int":
    """Run `todo`, appending each point's lines as it ends. Returns the failed
    points, or the exit code when the study stopped early (130 on Ctrl-C or
    SIGTERM, 4 when results.jsonl could not be written)."""
    timeout_s = opts.run_timeout_s or {"quick": 120.0, "default": 300.0, "full": 1800.0}[opts.level]
    results_path = outdir / RESULTS
    failed: list[tuple[Point, RunOutcome]] = []
    progress = Progress(len(todo), estimate, out)
    # SIGTERM (a batch system's time limit, kill) stops like Ctrl-C: the
    # running MPI job is ended and what was measured stays.
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    spent: dict[str, list[float]] = {}
    in_job = bool(os.environ.get("SLURM_JOB_ID"))
    try:
        for i, point in enumerate(todo):
            progress.start(point)
            outcome = run_point(point, setting, opts.hympi, outdir, timeout_s)
            ending = job_ending(outcome.stderr_tail) if outcome.status != "ok" and in_job else ""
            if ending:
                # Not this point's failure: the allocation is going away.
                # It stays unmeasured, and --resume (or a requeue) runs it.
                progress.close()
                print(f"\nhympi-lab study: the Slurm job is ending ({ending}); what was "
                      f"measured is kept in {results_path}.\nResume with: hympi-lab study "
                      f"--resume {outdir}", file=out, flush=True)
                return EXIT_TERMINATED
            append_lines(results_path, outcome.records +
                         [point_status_line(point, outcome, setting.launch(point.cores_per_rank)[1])])
            spent.setdefault(point.step, []).append(outcome.wall_s)
            # The time left: each step's measured mean so far, the estimate before.
            left = sum((sum(spent[pt.step]) / len(spent[pt.step])) if pt.step in spent
                       else estimate_s(opts.level, pt.step) * pt.repeat for pt in todo[i + 1:])
            progress.finish(point, outcome, left)
            if outcome.status != "ok":
                failed.append((point, outcome))
    except KeyboardInterrupt:
        progress.close()
        terminated = _signal_seen == signal.SIGTERM
        why = ("stopped by SIGTERM (a Slurm time limit, scancel or kill)" if terminated
               else "interrupted")
        print(f"\nhympi-lab study: {why}; what was measured is kept in {results_path}.\n"
              f"Resume with: hympi-lab study --resume {outdir}", file=out, flush=True)
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    except OutputError as err:
        progress.close()
        print(f"\nhympi-lab study: {err}; the points measured before are kept in "
              f"{results_path}.\nFree space, then resume with: hympi-lab study --resume "
              f"{outdir}", file=out, flush=True)
        return EXIT_OUTPUT
    finally:
        signal.signal(signal.SIGTERM, previous)
    progress.close()
    return failed


_signal_seen = 0


def _raise_interrupt(signum: int, frame: Any) -> None:
    global _signal_seen
    _signal_seen = signum
    raise KeyboardInterrupt


def _requeued_into(outdir: Path) -> bool:
    """True when this Slurm job already ran (part of) the study in `outdir`:
    Slurm requeued it (node failure, scontrol requeue) and the batch script
    starts the same command again, which then continues the study."""
    job = os.environ.get("SLURM_JOB_ID")
    if not job or not (outdir / STUDY_FILE).is_file():
        return False
    try:
        header = json.loads((outdir / STUDY_FILE).read_text(encoding="utf-8"))
        return any(j.get("job_id") == job for j in header.get("slurm_jobs", []))
    except (OSError, ValueError, AttributeError, TypeError):
        return False  # load_study says what is wrong with it, on the normal path


def _record_start(outdir: Path, header: dict[str, Any], machine: Machine, setting: Setting,
                  info: Info, opts: StudyOptions) -> None:
    """The job that runs the study now: a line in commands.log (where a failed
    srun line is read) and, inside Slurm, an entry of study.json's slurm_jobs."""
    alloc = allocation(machine.slurm)
    launcher = shlex.join(setting.argv(setting.ranks, setting.threads))
    where = alloc.describe() if alloc else f"host {machine.host}"
    lines = [f"# {now_iso()} start: {where}; {setting.ranks} ranks x {setting.threads} threads; "
             f"launcher: {launcher} ..."]
    if setting.srun_mpi:
        lines.append(f"# PMI plugin: srun --mpi={setting.srun_mpi} (for the {opts.mpi} build; "
                     "'srun --mpi=list' offers the plugins)")
    if info:
        lines.append(f"# {shlex.join(setting.argv(1, 1) + [opts.hympi, 'info', '--json'])}  "
                     "(what the build offers; ran before this line)")
    try:
        with open(outdir / COMMANDS, "a", encoding="utf-8") as log:
            log.write("\n".join(lines) + "\n")
    except OSError as err:
        raise OutputError(f"cannot write in {outdir}: {err.strerror or err}") from None
    if alloc is not None:
        job = {"job_id": alloc.job_id, "restart_count": alloc.restart_count, "nodes": alloc.nodes,
               "nodelist": alloc.nodelist, "cpus": alloc.cpus, "started": now_iso(),
               "launcher": launcher, "srun_mpi": setting.srun_mpi}
        rewrite_study(outdir, {**header, "slurm_jobs": list(header.get("slurm_jobs", [])) + [job]})


def _print_plan(out: TextIO, opts: StudyOptions, machine: Machine, setting: Setting,
                plan: list[Point], todo: list[Point], estimate: float, outdir: Path,
                info: Info, resume: bool) -> None:
    info_context = info.get("context", {})
    caches = ", ".join(f"{k} {v // 1024} KiB" for k, v in sorted(machine.caches.items())) or "unknown"
    steps: dict[str, int] = {}
    for pt in todo:
        steps[pt.step] = steps.get(pt.step, 0) + 1
    lines = [
        f"# hympi-lab study ({opts.level}) -> {outdir}",
        f"# machine: {machine.host}, {machine.cores} cores, {machine.numa_domains} NUMA domain(s), "
        f"caches {caches}, {machine.memory_bytes / 1e9:.1f} GB ({machine.hwloc})"
        + (f"; Slurm job {machine.slurm.get('SLURM_JOB_ID', '?')}" if machine.slurm else ""),
        f"# MPI: {info_context.get('mpi_library', opts.mpi)}; launcher {setting.launcher[0]}",
        f"# layout: {setting.ranks} ranks x {setting.threads} threads on {setting.nodes} "
        f"{setting.nodes_kind} node(s); binding: {setting.binding}"
        + (f"; pure-MPI runs ({setting.ranks * setting.threads} ranks): {setting.pure_binding}"
           if setting.threads > 1 and setting.pure_binding else ""),
    ]
    if setting.oversubscribed:
        lines.append(f"# NOTE: {setting.ranks * setting.threads} threads on {setting.cores} cores: "
                     "oversubscribed, timings cannot separate the schemes")
    if resume:
        lines.append(f"# resume: {len(plan) - len(todo)} of {len(plan)} points already measured, skipped")
    for what, why in dropped(opts, setting, info):
        lines.append(f"# skipped: {what}: {why}")
    if opts.app:
        repeat = opts.app_repeat or 1
        lines.append(f"# --app: {app_kernel(opts)}, each point run {repeat} time(s) (--app-repeat); "
                     "a scheme counts as faster only where the runs' ranges do not overlap")
    lines.append(f"# plan: {len(todo)} runs ("
                 + ", ".join(f"{s} {c}" for s, c in steps.items()) + f"), about {_clock(estimate)}")
    print("\n".join(lines), file=out, flush=True)
