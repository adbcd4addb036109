"""What a study is asked to do: StudyOptions (the command line's study
options, also study.json's "options"), the steps and kernels it may name, and
the checks of a user's --app command.

Kept apart from the plan and the launcher so that both can read the options
without importing each other.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import dataclass
from typing import Optional

# The names a step or kernel may have; which exist is the build's to say
# (`hympi info --json`, checked once it ran: plan.name_problems).
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_-]*$")


@dataclass
class StudyOptions:
    level: str = "default"               # quick | default | full
    mpi: str = "openmpi"                 # openmpi | mpich
    launcher: str = ""                   # mpirun | mpiexec | srun ("" = the MPI's own)
    hympi: str = ""                      # the native executable
    hostfile: str = ""
    ranks: int = 0                       # 0 = chosen from the machine
    threads: int = 0
    emulated_nodes: int = 0
    link: str = "1gbit"
    # None: every step / kernel the build's info lists (the study records
    # the resolved lists once info ran).
    steps: Optional[list[str]] = None
    run_timeout_s: float = 0.0           # 0 = per step default
    kernels: Optional[list[str]] = None
    app: str = ""                        # the user's program (--app), with placeholders
    app_name: str = ""                   # its kernel's name in the report
    # Runs of each --app point (--app-repeat); 0 in a study from before
    # repetitions, whose points ran once.
    app_repeat: int = 0


# --app-repeat's default: three runs give each scheme a range, so that the
# ranking counts only where the ranges do not overlap.
APP_REPEAT_DEFAULT = 3


# --app: the placeholders a user's command may hold, and launchers it must not.
APP_PLACEHOLDERS = ("scheme", "threads", "reserved", "json")
APP_LAUNCHERS = ("mpirun", "mpiexec", "srun", "orterun", "prun", "aprun", "jsrun", "flux",
                 "mpiexec.hydra", "mpirun.openmpi", "mpiexec.openmpi", "mpirun.mpich",
                 "mpiexec.mpich")


def app_words(opts: StudyOptions) -> list[str]:
    return shlex.split(opts.app)


def app_kernel(opts: StudyOptions) -> str:
    """The user's kernel as the report names it: user:<name>."""
    return "user:" + (opts.app_name or os.path.basename(app_words(opts)[0]))


def app_problems(opts: StudyOptions) -> list[str]:
    """What is wrong with --app (empty when it can run)."""
    try:
        words = app_words(opts)
    except ValueError as err:
        return [f"--app: {err}"]
    if not words:
        return ["--app: no command given"]
    if os.path.basename(words[0]) in APP_LAUNCHERS:
        return [f"--app: give your program without a launcher ('{words[0]}'): the study puts its "
                f"own launcher, rank count and binding in front of it"]
    problems = []
    exe = words[0]
    if not (shutil.which(exe) or (os.path.isfile(exe) and os.access(exe, os.X_OK))):
        problems.append(f"--app: {exe} is not an executable program")
    names = set(re.findall(r"\{(\w*)\}", opts.app))
    unknown = sorted(names - set(APP_PLACEHOLDERS))
    if unknown:
        problems.append(f"--app: unknown placeholder(s) {', '.join('{' + u + '}' for u in unknown)} "
                        f"(valid: {', '.join('{' + p + '}' for p in APP_PLACEHOLDERS)})")
    missing = [p for p in ("scheme", "threads") if p not in names]
    if missing:
        problems.append(f"--app must contain {' and '.join('{' + m + '}' for m in missing)}: the "
                        "study runs your program under each scheme and thread count")
    return problems
