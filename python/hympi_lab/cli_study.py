"""`hympi-lab study`, `report`, `project` and `trace`: the commands that run
and read a study directory or a trace. They orchestrate and draw; their work
lives in study.py, report.py, project.py and trace.py, imported (with
matplotlib) only when the command runs."""

from __future__ import annotations

import argparse
import os
from typing import TextIO

from .cli_args import Subparsers, add_json, add_outputs, grid, int_in, positive, positive_int
from .cli_output import emit, null_non_finite
from .errors import InputError


def _add_study_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", metavar="DIR", help="a study directory (hympi-lab study --out DIR)")


# --- study ------------------------------------------------------------------

def add_study(sub: Subparsers) -> None:
    """`study`."""
    p = sub.add_parser("study", help="run the whole campaign here and write the report",
                       description="Runs hympi info, the benchmarks (beff, cyclic3d, pack, internode, "
                       "ratio), the overlap sweep, every kernel under every scheme (with thread "
                       "traces) and the kernels with temporal blocking (--halo-depth) on this "
                       "machine or allocation, appending each measurement to "
                       "DIR/results.jsonl as it is made, then fits the model and writes "
                       "DIR/report.html. Exit 0: all runs succeeded; 1: some failed (listed); "
                       "2: bad input; 4: a file could not be written; 130: interrupted by Ctrl-C, "
                       "143: stopped by SIGTERM (a Slurm time limit or scancel); resume either with "
                       "--resume DIR. Inside a Slurm job that was requeued, the same --out DIR resumes "
                       "by itself (docs/exit-codes.md).")
    p.add_argument("--out", metavar="DIR", help="new study directory (default results/study-<UTC time>)")
    p.add_argument("--resume", metavar="DIR", help="continue the study in DIR: run only what is missing")
    level = p.add_mutually_exclusive_group()
    level.add_argument("--quick", action="store_true", help="small sizes (a smoke test: well under a minute of runs, then the report)")
    level.add_argument("--full", action="store_true", help="the papers' sizes (long)")
    p.add_argument("--mpi", choices=("openmpi", "mpich"), help="MPI library of the hympi build (default openmpi)")
    p.add_argument("--launcher", choices=("mpirun", "mpiexec", "srun"),
                   help="launcher (default: the MPI library's mpirun)")
    p.add_argument("--hympi", metavar="PATH", help="the hympi executable (default build/bin/hympi, "
                   "build-mpich/bin/hympi with --mpi mpich)")
    p.add_argument("--hostfile", metavar="F", help="hosts to run on (mpirun/mpiexec); one node per host")
    p.add_argument("--ranks", type=positive_int, metavar="N", help="MPI ranks (default: from the machine)")
    p.add_argument("--threads", type=positive_int, metavar="T", help="OpenMP threads per rank (default: "
                   "cores per NUMA domain, at least 2)")
    p.add_argument("--emulated-nodes", type=positive_int, metavar="N",
                   help="run on an emulated cluster of N nodes (scripts/emulated-cluster; root)")
    p.add_argument("--link", metavar="RATE", help="emulated link rate, with --emulated-nodes (tc "
                   "syntax, default 1gbit)")
    p.add_argument("--steps", metavar="LIST", help="only these steps, comma-separated "
                   "(info, beff, cyclic3d, pack, internode, ratio, overlap, solve, depth, and "
                   "any other benchmark 'hympi info' lists)")
    p.add_argument("--kernels", metavar="LIST", help="only these kernels (those 'hympi info' lists: "
                   "jacobi, rbgs, spmv, cg, pipecg, ...; default all whose info entry has default_study "
                   "true (not pipecg), none with --app)")
    p.add_argument("--app", metavar="CMD",
                   help="measure your own program (built on hympi's Domain API, calling "
                   "Domain::write_report or hympi_report_json) under every scheme: its command "
                   "without a launcher, with {scheme} and {threads} (and optionally {reserved}, "
                   "{json}) put in per run, e.g. \"./heat_c --scheme {scheme} --threads {threads}\"")
    p.add_argument("--app-name", metavar="NAME", help="the name of your kernel in the report "
                   "(default: the program's file name)")
    p.add_argument("--app-repeat", type=int_in(1, 1000), metavar="R",
                   help="runs of each --app point (default 3): a scheme is ranked ahead of another "
                   "only when the ranges of their runs' times do not overlap")
    p.add_argument("--run-timeout", type=positive, metavar="S",
                   help="per-run time limit in seconds (default 120 quick, 300, 1800 full)")
    p.add_argument("--no-report", action="store_true", help="measure only; write the report later "
                   "with 'hympi-lab report DIR'")
    p.set_defaults(func=cmd_study)


def cmd_study(args: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path

    from . import report, study as study_mod
    from .options import APP_REPEAT_DEFAULT

    problems = not_applying(args)
    if problems:
        raise InputError("; ".join(problems))
    if args.resume:
        outdir = Path(args.resume)
        opts = study_mod.StudyOptions()
    else:
        stamp = study_mod.now_iso().replace(":", "").replace("-", "")
        outdir = Path(args.out or f"results/study-{stamp}")
        opts = study_mod.StudyOptions(
            level="quick" if args.quick else "full" if args.full else "default",
            mpi=args.mpi or "openmpi", launcher=args.launcher or "", hympi=args.hympi or "",
            hostfile=args.hostfile or "", ranks=args.ranks or 0, threads=args.threads or 0,
            emulated_nodes=args.emulated_nodes or 0, link=args.link or "1gbit",
            # None: every step and kernel the build's `hympi info` lists.
            steps=_csv_list("--steps", args.steps) if args.steps is not None else None,
            # With --app the study measures the user's program; the built-in
            # kernels run only when asked for.
            kernels=(_csv_list("--kernels", args.kernels) if args.kernels is not None
                     else [] if args.app else None),
            run_timeout_s=args.run_timeout or 0.0,
            app=args.app or "", app_name=args.app_name or "",
            app_repeat=(args.app_repeat or APP_REPEAT_DEFAULT) if args.app else 0)
        if args.hostfile and not os.path.isfile(args.hostfile):
            raise InputError(f"--hostfile {args.hostfile}: no such file")
    if args.hympi:
        opts.hympi = args.hympi
    return study_mod.run_study(opts, outdir, bool(args.resume), out,
                               write_report=None if args.no_report else report.write_report)


# The study options --resume takes over from study.json: given with
# --resume, each is refused by name (only --hympi and --no-report apply).
_STARTING_OPTIONS = ("out", "ranks", "threads", "hostfile", "emulated_nodes", "link", "launcher", "mpi",
                     "quick", "full", "steps", "kernels", "app", "app_name", "run_timeout", "app_repeat")


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def not_applying(args: argparse.Namespace) -> list[str]:
    """Each option given that cannot apply, named with the reason: never
    silently ignored."""
    if args.resume:
        given = [_flag(d) for d in _STARTING_OPTIONS if getattr(args, d) not in (None, False)]
        if given:
            return [f"{', '.join(given)} cannot apply with --resume: it continues the study with the "
                    "options it was started with (only --hympi and --no-report apply)"]
        return []
    problems = []
    if args.link is not None and not args.emulated_nodes:
        problems.append("--link applies to an emulated cluster only: give --emulated-nodes N too, or "
                        "leave --link out")
    if args.app_name is not None and args.app is None:
        problems.append("--app-name names the program of --app: give --app too, or leave --app-name out")
    if args.app_repeat is not None and args.app is None:
        problems.append("--app-repeat repeats the runs of --app: give --app too, or leave --app-repeat out")
    if args.hostfile and args.launcher == "srun":
        problems.append("--hostfile cannot apply with --launcher srun: Slurm's allocation gives the "
                        "hosts")
    return problems


def _csv_list(flag: str, text: str) -> list[str]:
    """A comma-separated list of names; an empty one is refused (it would
    otherwise read as 'all', the default, which the user did not ask for)."""
    names = [w.strip() for w in text.split(",") if w.strip()]
    if not names:
        raise InputError(f"{flag} {text!r}: an empty list; name at least one, or leave {flag} out for all")
    return names


# --- report -----------------------------------------------------------------

def add_report(sub: Subparsers) -> None:
    """`report`."""
    p = sub.add_parser("report", help="write DIR/report.html and DIR/results.csv of a study",
                       description="Fits the model to a study's measurements and writes one "
                       "self-contained HTML report (figures embedded) and results.csv.")
    _add_study_dir(p)
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    from . import report

    outdir = report.check_study_dir(args.dir)
    verdict = report.write_report(outdir)
    print(f"wrote {outdir / 'report.html'} and {outdir / 'results.csv'}\n{verdict}", file=out)
    return 0


# --- project ----------------------------------------------------------------

def add_project(sub: Subparsers) -> None:
    """`project`."""
    from .project import MAX_NODES, SAMPLES_RANGE
    p = sub.add_parser("project", help=f"carry a study's fitted model to 1..{MAX_NODES} nodes",
                       description="Predicts the time per iteration and the parallel efficiency of "
                       f"each kernel under each measured scheme (and m) for 1 to {MAX_NODES} nodes, weak and "
                       "strong scaling, from a study's ping-pong (Hockney), internode (link "
                       "saturation) and solve runs (cost per point). First predicts the study's own "
                       "runs and prints the error against each. Exit 0; 2: bad input or a study "
                       "without the runs a projection needs (names the step).")
    _add_study_dir(p)
    p.add_argument("--grid", type=grid, metavar="NXxNYxNZ",
                   help="the problem on one node: weak scaling gives every node this many points, "
                   "strong scaling divides it (default: the study's solve grid)")
    p.add_argument("--cores-per-node", type=positive_int, metavar="C",
                   help="cores of a node (default: ranks x threads; given alone, it keeps the study's threads per rank)")
    p.add_argument("--ranks", type=positive_int, metavar="R", help="MPI ranks per node of the hybrid schemes")
    p.add_argument("--threads", type=positive_int, metavar="T", help="threads per rank (R x T = C)")
    # The kernels are the study's: a name it did not measure is refused with
    # the ones it did (project.request_problems), so no list is kept here.
    p.add_argument("--kernel", action="append", metavar="NAME",
                   help="project this kernel (repeat; default every kernel the study measured)")
    p.add_argument("--scaling", choices=("weak", "strong", "both"), default="both",
                   help="default both")
    # The ranges of project.request_problems, checked here so that a bad
    # value is refused before the study is loaded.
    p.add_argument("--max-nodes", type=int_in(1, MAX_NODES), default=MAX_NODES, metavar="N",
                   help=f"largest node count (default {MAX_NODES})")
    p.add_argument("--samples", type=int_in(*SAMPLES_RANGE), default=200, metavar="S",
                   help="Monte Carlo draws of the fitted parameters for the 16-84 %% band (default 200)")
    p.add_argument("-o", "--output", action="append", metavar="PNG",
                   help="efficiency plot (.png or .svg), one panel per kernel and scaling; repeatable")
    add_json(p)
    p.set_defaults(func=cmd_project)


def _node_shape(args: argparse.Namespace, ranks: int, threads: int) -> tuple[int, int, int]:
    """(cores, ranks, threads) of a node: the study's `ranks` x `threads`, with
    what was given replacing its part. Cores follow from ranks x threads
    unless given; given, a missing count follows from it (request_problems
    refuses a shape where they do not multiply)."""
    ranks = args.ranks or ranks
    threads = args.threads or threads
    cores = args.cores_per_node or ranks * threads
    if args.cores_per_node and not (args.ranks and args.threads):
        if args.ranks:
            threads = max(1, cores // ranks)
        else:
            ranks = max(1, cores // threads)
    return cores, ranks, threads


def cmd_project(args: argparse.Namespace, out: TextIO) -> int:
    from . import project
    from .report import check_study_dir

    outdir = check_study_dir(args.dir)
    if args.json and args.json != "-":
        from .atomic import check_target
        check_target(args.json)  # before the projection's seconds, not after
    if args.output:
        from . import plotting  # matplotlib loads only when a plot is asked for
        plotting.check_outputs(args.output)
    inputs = project.load_inputs(outdir)
    req = project.default_request(inputs)
    cores, ranks, threads = _node_shape(args, req.shape.ranks, req.shape.threads)
    req = project.Request(args.kernel or req.kernels, project.Shape(cores, ranks, threads),
                          args.grid or req.grid,
                          ["weak", "strong"] if args.scaling == "both" else [args.scaling],
                          args.max_nodes, args.samples)
    doc = project.document(inputs, req)
    if args.output:
        plotting.projection(doc, args.output)
    text = project.text(doc)
    if args.output:
        text += "\nwrote " + ", ".join(args.output)
    # The projection marks what it cannot predict as null (project._clean);
    # a parameter it reports as inf (a sigma no fit could bound) goes the
    # same way, rather than refusing the whole projection.
    emit(args, "project", null_non_finite(doc), text, out)
    return 0


# --- trace ------------------------------------------------------------------

def add_trace(sub: Subparsers) -> None:
    """`trace`."""
    p = sub.add_parser("trace", help="draw a thread timeline (Gantt chart) of a solve trace",
                       description="Reads the Chrome Trace Event document of 'hympi solve --trace "
                       "PATH' and draws one row per thread, coloured by phase.")
    p.add_argument("path", metavar="PATH", help="trace document")
    add_outputs(p, metavar="PNG")
    p.add_argument("--max-ranks", type=positive_int, default=4, metavar="R",
                   help="draw the first R ranks (default 4)")
    p.set_defaults(func=cmd_trace)


def cmd_trace(args: argparse.Namespace, out: TextIO) -> int:
    from . import plotting, trace

    plotting.check_outputs(args.output)
    tr = trace.load_trace(args.path)
    plotting.gantt(tr, args.output, max_ranks=args.max_ranks)
    share = trace.busy_share(tr)
    print(f"{tr.title}: " + ", ".join(f"{k} {v * 100:.0f} %" for k, v in sorted(share.items())),
          file=out)
    print(f"wrote {', '.join(args.output)}", file=out)
    return 0
