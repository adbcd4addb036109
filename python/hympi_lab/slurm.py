"""A study inside a Slurm allocation: what the allocation holds (nodes,
tasks, CPUs; the SLURM_* variables of sbatch/salloc), whether a layout fits
it, and which PMI plugin srun needs for the build's MPI.

srun starts MPI programs only through a PMI plugin that matches the MPI
library: Open MPI (Debian's 4.1) through PMIx, MPICH (Debian's 4.0, Hydra's
PMI) through PMI-2. Slurm ships with `MpiDefault=none`, under which an Open
MPI program dies with "Local abort before MPI_INIT completed"; so the study
names the plugin on every srun line, unless the user chose one with
SLURM_MPI_TYPE (srun's own variable for --mpi).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Mapping, Optional

from .errors import InputError

# The plugins that start each MPI, best first; pmix_v3/v4 are Slurm's
# versioned names of the same plugin.
PMI_PLUGINS = {"openmpi": ("pmix", "pmix_v5", "pmix_v4", "pmix_v3"),
               "mpich": ("pmi2", "pmix", "pmix_v5", "pmix_v4", "pmix_v3")}


@dataclass
class Allocation:
    """A Slurm job as its SLURM_* variables describe it."""
    job_id: str
    nodes: int
    nodelist: str
    cpus_per_node: list[int]        # SLURM_JOB_CPUS_PER_NODE, expanded: one entry per node
    tasks: int                      # SLURM_NTASKS (0: not given)
    cpus_per_task: int              # SLURM_CPUS_PER_TASK (0: not given)
    restart_count: int              # SLURM_RESTART_COUNT: > 0 in a requeued job

    @property
    def cpus(self) -> int:
        return sum(self.cpus_per_node)

    def describe(self) -> str:
        cpus = ", ".join(sorted({str(c) for c in self.cpus_per_node}))
        return (f"Slurm job {self.job_id}"
                + (f" (restart {self.restart_count})" if self.restart_count else "")
                + f": {self.nodes} node(s) {self.nodelist}, {cpus} CPUs per node"
                + (f", {self.tasks} tasks" if self.tasks else "")
                + (f", {self.cpus_per_task} CPUs per task" if self.cpus_per_task else ""))


def expand_counts(text: str) -> list[int]:
    """Slurm's compressed per-node counts: "8(x2),4" -> [8, 8, 4]."""
    counts: list[int] = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", part)
        if not match:
            raise ValueError(part)
        counts += [int(match.group(1))] * int(match.group(2) or 1)
    return counts


def allocation(env: Optional[Mapping[str, str]]) -> Optional[Allocation]:
    """The allocation described by `env` (SLURM_* variables), or None outside one.

    A variable Slurm always sets but that cannot be read is an InputError:
    planning a study on a guessed allocation would launch the wrong layout."""
    if not env or not env.get("SLURM_JOB_ID"):
        return None
    nodes_text = env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES") or "1"
    cpus_text = env.get("SLURM_JOB_CPUS_PER_NODE") or env.get("SLURM_CPUS_ON_NODE") or ""
    try:
        nodes = int(nodes_text)
        cpus = expand_counts(cpus_text) if cpus_text else []
        tasks = int(env.get("SLURM_NTASKS") or env.get("SLURM_NPROCS") or 0)
        per_task = int(env.get("SLURM_CPUS_PER_TASK") or 0)
        restarts = int(env.get("SLURM_RESTART_COUNT") or 0)
    except ValueError:
        raise InputError("the Slurm variables of this job cannot be read (SLURM_JOB_NUM_NODES="
                         f"{nodes_text!r}, SLURM_JOB_CPUS_PER_NODE={cpus_text!r})") from None
    if len(cpus) == 1 and nodes > 1 and not env.get("SLURM_JOB_CPUS_PER_NODE"):
        cpus *= nodes  # only SLURM_CPUS_ON_NODE: assume alike nodes
    return Allocation(env["SLURM_JOB_ID"], nodes, env.get("SLURM_JOB_NODELIST", env.get("SLURM_NODELIST", "?")),
                      cpus, tasks, per_task, restarts)


def layout_problems(alloc: Allocation, ranks: int, threads: int) -> list[str]:
    """Why ranks x threads cannot run in the allocation (empty when it can).

    srun refuses a step larger than the job ("More processors requested than
    permitted") only when the run starts; the study says it before any run."""
    problems = []
    if alloc.cpus_per_task and threads > alloc.cpus_per_task:
        problems.append(f"--threads {threads} is more than the {alloc.cpus_per_task} CPUs per task "
                        f"of {alloc.describe()}; ask for #SBATCH --cpus-per-task={threads}, "
                        f"or give --threads {alloc.cpus_per_task}")
    if alloc.cpus and ranks * threads > alloc.cpus:
        problems.append(f"--ranks {ranks} x --threads {threads} needs {ranks * threads} CPUs; "
                        f"{alloc.describe()} has {alloc.cpus}: ask for more (#SBATCH --nodes, "
                        "--ntasks-per-node, --cpus-per-task) or run fewer ranks or threads")
    elif alloc.cpus_per_node and ranks % alloc.nodes == 0:
        per_node = ranks // alloc.nodes * threads
        if per_node > min(alloc.cpus_per_node):
            problems.append(f"{ranks // alloc.nodes} ranks x {threads} threads per node needs "
                            f"{per_node} CPUs per node; {alloc.describe()} has "
                            f"{min(alloc.cpus_per_node)} on its smallest node")
    return problems


def srun_plugins(srun: str) -> list[str]:
    """The PMI plugins this srun offers (`srun --mpi=list`)."""
    try:
        proc = subprocess.run([srun, "--mpi=list"], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as err:
        raise InputError(f"'{srun} --mpi=list' could not run: {err}") from None
    if proc.returncode != 0:
        last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise InputError(f"'{srun} --mpi=list' failed (exit {proc.returncode}): {last[0]} "
                         "(is SLURM_CONF set, and slurm.conf readable here?)")
    names = []
    for line in (proc.stdout + "\n" + proc.stderr).splitlines():
        # 22.05 prints "srun: MPI types are..." then "srun: pmix" etc. (on
        # stderr); newer ones "MPI plugin types are..." and indented names.
        word = line.split(":", 1)[-1].strip() if line.startswith("srun:") else line.strip()
        if re.fullmatch(r"[a-z][a-z0-9_]*", word):
            names.append(word)
    return names


def choose_pmi(mpi: str, srun: str, chosen: str = "") -> str:
    """The --mpi plugin for srun lines launching the `mpi` build.

    `chosen` is the user's SLURM_MPI_TYPE: kept when srun offers it. Else the
    first of PMI_PLUGINS[mpi] that srun offers; none is an InputError that
    says what srun offers and what the build needs."""
    offered = srun_plugins(srun)
    if chosen:
        if offered and chosen not in offered:
            raise InputError(f"SLURM_MPI_TYPE={chosen}: this srun offers {', '.join(offered)} "
                             "(srun --mpi=list)")
        return chosen
    for name in PMI_PLUGINS.get(mpi, ()):
        if name in offered:
            return name
    need = " or ".join(PMI_PLUGINS.get(mpi, ("?",))[:2])
    raise InputError(f"srun cannot start this {mpi} build: it needs the PMI plugin {need}, and "
                     f"'srun --mpi=list' offers {', '.join(offered) or 'none'}; install Slurm's "
                     "PMIx plugin, or use --launcher mpirun inside the allocation")


# What srun prints when the job itself is ending (its time limit, scancel, a
# node failure), as opposed to a run that failed: Slurm 22.05's words.
JOB_ENDING = re.compile(r"Job/step already completing or completed|DUE TO TIME LIMIT|"
                        r"DUE TO JOB REQUEUE|DUE TO NODE FAIL|Job has been cancelled|"
                        r"JOB \d+ ON \S+ CANCELLED AT|StepId=\S+ CANCELLED AT|"
                        r"Node failure on|Job allocation \d+ has been revoked")


def job_ending(output: str) -> str:
    """The line of srun's `output` that says the job is ending ("" if none).

    At a time limit slurmd ends the running step first; the batch step (the
    study) may not see its SIGTERM until later, and every srun it starts
    meanwhile fails at once ("Job/step already completing"). Seen on the
    test cluster: without this, 20 points recorded as failed in 0.1 s."""
    for line in output.splitlines():
        if JOB_ENDING.search(line):
            return line.strip()
    return ""


# What srun prints when a step never started its tasks (Slurm 22.05):
# "StepId=J.S aborted before step completely launched", "task N launch
# failed: Unspecified error". Seen on the test cluster for a step of a
# requeued job, likely while a node still held the old run's step of that
# number; clusters also report it for a credential refused in passing
# (openpmix/openpmix#2031). Nothing ran, so the study launches it once more.
STEP_NOT_LAUNCHED = re.compile(r"aborted before step completely launched|task \d+ launch failed")


def step_not_launched(output: str) -> str:
    """The line of srun's `output` that says its step never started ("" if
    none, or if the job itself is ending: job_ending)."""
    if job_ending(output):
        return ""
    for line in output.splitlines():
        if STEP_NOT_LAUNCHED.search(line):
            return line.strip()
    return ""


def srun_path() -> str:
    exe = shutil.which("srun")
    if not exe:
        raise InputError("--launcher srun: srun is not installed (is this a Slurm cluster?)")
    return exe
