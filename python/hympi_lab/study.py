"""`hympi-lab study`: the whole campaign on this machine or cluster.

It detects the machine, plans the runs (benchmarks, the overlap sweep, every
kernel under every scheme with a thread trace), launches each native `hympi`
run itself with the binding its MPI needs, and appends every measurement to
DIR/results.jsonl the moment it exists. A study killed at any point loses
nothing already measured; `--resume DIR` runs only the points still missing.

Layout of a study directory:

    study.json       what the study is (options, machine, plan); written once
    results.jsonl    one record per line (schema: schemas/study-record.schema.json)
    commands.log     the exact command of every native run
    raw/             the JSON documents, traces and logs of every run
    fit.json, report.html, results.csv, figures/   written by the report step

Nothing here prints except through the Progress object and the final summary.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, TextIO

from .errors import InputError, OutputError
from .results import now_iso, write_atomic

STUDY_SCHEMA_VERSION = 1
RESULTS = "results.jsonl"
STUDY_FILE = "study.json"
COMMANDS = "commands.log"
RAW = "raw"

# The steps, in the order they run (SYSTEM.md "Benchmarks", issue 7).
STEPS = ("info", "beff", "cyclic3d", "pack", "internode", "ratio", "overlap", "solve", "depth")
KERNELS = ("jacobi", "rbgs", "spmv", "cg")
# The kernels with temporal blocking (hympi solve --halo-depth; spmv matrix-free).
DEPTH_KERNELS = ("jacobi", "spmv")

# Sizes of each level of detail: chosen so the default study takes about
# two minutes on a 2-core machine, --quick well under a minute, and --full
# the papers' sizes (8 MB b_eff messages, 2 and 16 MB inter-node messages).
LEVELS: dict[str, dict[str, Any]] = {
    "quick": {"lmax": 65536, "repeat": 2, "faces": [16, 48], "sizes": [65536],
              "plane": 16, "nk_loc": [1, 4, 16, 64], "overlap_iters": 6,
              "grid": 24, "iters": 6, "solve_repeat": 2, "max_iters": 200, "depths": [1, 3]},
    "default": {"lmax": 8000000, "repeat": 3, "faces": [16, 32, 64, 128], "sizes": [262144, 2000000],
                "plane": 48, "nk_loc": [1, 2, 4, 8, 16, 32, 64, 128], "overlap_iters": 20,
                "grid": 128, "iters": 20, "solve_repeat": 3, "max_iters": 2000,
                "depths": [1, 2, 4, 8]},
    "full": {"lmax": 8000000, "repeat": 5, "faces": [16, 32, 64, 128, 256], "sizes": [2000000, 16000000],
             "plane": 96, "nk_loc": [1, 2, 4, 8, 16, 32, 64, 128, 256], "overlap_iters": 50,
             "grid": 192, "iters": 50, "solve_repeat": 5, "max_iters": 5000,
             "depths": [1, 2, 4, 8, 16]},
}

# Rough seconds per run (2 ranks on a small machine, launch included), for
# the plan's estimate before anything ran; the progress display replaces them
# by the measured mean of each step as the study goes.
ESTIMATE_S = {"quick": {"info": 0.5, "beff": 0.6, "cyclic3d": 0.6, "pack": 0.6, "internode": 0.5,
                        "ratio": 0.5, "overlap": 0.5, "solve": 0.5, "depth": 0.5},
              "default": {"info": 0.5, "beff": 4, "cyclic3d": 1.5, "pack": 2, "internode": 0.6,
                          "ratio": 0.6, "overlap": 0.6, "solve": 2, "depth": 1.5},
              "full": {"info": 1, "beff": 30, "cyclic3d": 20, "pack": 10, "internode": 10,
                       "ratio": 10, "overlap": 5, "solve": 10, "depth": 8}}


# --- the machine --------------------------------------------------------------

@dataclass
class Machine:
    host: str
    cores: int                      # CPUs this process may run on (affinity mask)
    numa_domains: int
    caches: dict[str, int]          # "L1d"/"L2"/"L3" -> bytes (one of each kind)
    memory_bytes: int
    slurm: Optional[dict[str, str]]  # SLURM_* variables when inside an allocation
    hwloc: str                      # how the topology was found


def detect_machine() -> Machine:
    """Cores, NUMA domains and caches (hwloc's lstopo XML), memory, Slurm."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    numa, caches, how = 1, {}, "lstopo not found: NUMA domains and caches unknown"
    lstopo = shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
    if lstopo:
        try:
            xml = subprocess.run([lstopo, "--of", "xml"], capture_output=True, text=True,
                                 timeout=30, check=True).stdout
            numa, caches = _parse_lstopo(xml)
            how = f"hwloc ({os.path.basename(lstopo)} --of xml)"
        except (subprocess.SubprocessError, OSError, ET.ParseError) as err:
            how = f"lstopo failed ({err}); NUMA domains and caches unknown"
    memory = 0
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    memory = int(line.split()[1]) * 1024
    except OSError:
        pass
    slurm = {k: v for k, v in os.environ.items() if k.startswith("SLURM_")} or None
    return Machine(os.uname().nodename, cores, numa, caches, memory, slurm, how)


def _parse_lstopo(xml: str) -> tuple[int, dict[str, int]]:
    root = ET.fromstring(xml)
    numa = 0
    caches: dict[str, int] = {}
    for obj in root.iter("object"):
        kind = obj.get("type", "")
        if kind == "NUMANode":
            numa += 1
        elif kind.endswith("Cache") and obj.get("cache_size"):
            # hwloc 2: L1Cache/L2Cache/L3Cache (+ L1iCache); hwloc 1: Cache with depth.
            name = kind[:-5] if kind != "Cache" else f"L{obj.get('depth', '?')}"
            if obj.get("cache_type") == "2" or name.endswith("i"):
                continue  # instruction caches do not hold our data
            caches.setdefault(name.replace("d", "") + ("d" if name.startswith("L1") else ""),
                              int(obj.get("cache_size", "0")))
    return max(1, numa), caches


# --- options and the plan ---------------------------------------------------------

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
    steps: list[str] = field(default_factory=lambda: list(STEPS))
    run_timeout_s: float = 0.0           # 0 = per step default
    kernels: list[str] = field(default_factory=lambda: list(KERNELS))
    app: str = ""                        # the user's program (--app), with placeholders
    app_name: str = ""                   # its kernel's name in the report


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


@dataclass
class Point:
    """One native run: what to run, where its outputs go, how it is known."""
    key: str
    step: str
    args: list[str]                      # hympi arguments (after the executable)
    ranks: int
    threads: int
    json_name: str                       # raw/<json_name>
    trace_name: str = ""                 # raw/<trace_name> (solve with --trace)
    label: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    # Cores bound to each rank: the layout's threads, 1 for pure MPI. The
    # single-threaded benchmarks keep the hybrid layout's placement.
    cores_per_rank: int = 0
    # --app points: the user's command with scheme, threads and reserved put
    # in ({json} is put in when it runs); empty for hympi's own runs.
    app: list[str] = field(default_factory=list)


@dataclass
class Setting:
    """What the machine and options resolve to: ranks, threads, nodes, binding."""
    ranks: int
    threads: int
    cores: int
    nodes: int
    nodes_kind: str                      # real | virtual | emulated
    ranks_per_node: int                  # passed as --ranks-per-node for virtual nodes (else 0)
    oversubscribed: bool
    launcher: list[str]                  # argv prefix up to (not including) -n
    binding: str                         # what binding was used, in words
    env: dict[str, str]
    # The same for pure-MPI runs (one core per rank, ranks x threads ranks).
    pure_launcher: list[str] = field(default_factory=list)
    pure_binding: str = ""
    pure_env: dict[str, str] = field(default_factory=dict)

    def launch(self, cores_per_rank: int) -> tuple[list[str], str, dict[str, str]]:
        if cores_per_rank == 1 and self.threads != 1 and self.pure_launcher:
            return self.pure_launcher, self.pure_binding, self.pure_env
        return self.launcher, self.binding, self.env

    def argv(self, ranks: int, cores_per_rank: int) -> list[str]:
        """The launcher's argv for `ranks` ranks, up to the program."""
        launcher, _, _ = self.launch(cores_per_rank)
        if self.nodes_kind == "emulated":
            # scripts/emulated-cluster run takes ranks per node, not in all.
            return launcher + ["--np-per-node", str(max(1, ranks // self.nodes)), "--"]
        return launcher + [str(ranks)]


def resolve_setting(opts: StudyOptions, machine: Machine) -> Setting:
    """Ranks x threads that fit the machine, the node count, and the launcher with binding."""
    problems: list[str] = []
    nodes, kind = 1, "real"
    hosts: list[str] = []
    if opts.hostfile:
        hosts = read_hostfile(opts.hostfile)
        nodes = len(hosts)
    elif machine.slurm and machine.slurm.get("SLURM_JOB_NUM_NODES", machine.slurm.get("SLURM_NNODES")):
        try:
            nodes = int(machine.slurm.get("SLURM_JOB_NUM_NODES") or machine.slurm["SLURM_NNODES"])
        except ValueError:
            nodes = 1
    if opts.emulated_nodes:
        nodes, kind = opts.emulated_nodes, "emulated"
    cores = machine.cores
    cores_per_node = max(1, cores // opts.emulated_nodes) if opts.emulated_nodes else cores
    threads = opts.threads
    ranks = opts.ranks
    if not threads:
        # One rank per NUMA domain is the hybrid layout the papers measure;
        # at least 2 threads so that the overlap schemes can run.
        per_rank = cores_per_node // max(1, min(machine.numa_domains, cores_per_node))
        threads = max(2, per_rank)
        # The study needs 2 ranks: on one node with one NUMA domain (or too
        # few), split the node's cores between them rather than run twice
        # as many threads as cores (seen on a 16-core, 1-domain machine:
        # 2 x 16 threads on 16 cores, and no recommendation).
        if not ranks and nodes * (cores_per_node // threads) < 2:
            threads = max(2, cores_per_node * nodes // 2 // max(1, nodes))
    if not ranks:
        ranks = max(2, nodes * max(1, cores_per_node // threads))
    if ranks < 2:
        problems.append(f"--ranks {ranks}: the study needs at least 2 ranks (its benchmarks "
                        "exchange messages between ranks)")
    if threads < 1 or threads > 1024:
        problems.append(f"--threads {threads}: must be between 1 and 1024")
    if ranks > 4096:
        problems.append(f"--ranks {ranks}: more than 4096 ranks is not a study size")
    if nodes > 1 and ranks % nodes:
        problems.append(f"--ranks {ranks} does not divide into the {nodes} nodes")
    if problems:
        raise InputError("; ".join(problems))
    ranks_per_node = 0
    if nodes == 1:
        # One machine: virtual nodes of half the ranks each, so that the
        # inter-node benchmarks run (labelled virtual everywhere).
        kind = "virtual"
        nodes = 2 if ranks % 2 == 0 else 1
        ranks_per_node = ranks // nodes if nodes == 2 else 0
    total_cores = cores * (1 if kind != "real" or not (opts.hostfile or machine.slurm) else nodes)
    oversubscribed = ranks * threads > total_cores
    launcher, binding, env = launcher_command(opts, ranks, threads, oversubscribed)
    pure = launcher_command(opts, ranks * threads, 1, oversubscribed)
    return Setting(ranks, threads, cores, nodes, kind, ranks_per_node, oversubscribed,
                   launcher, binding, env, *pure)


def read_hostfile(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            hosts = []
            for line in handle:
                word = line.split("#", 1)[0].split()
                if word and word[0] not in hosts:
                    hosts.append(word[0])
    except OSError as err:
        raise InputError(f"--hostfile {path}: {err.strerror or err}") from None
    if not hosts:
        raise InputError(f"--hostfile {path}: names no host")
    return hosts


LAUNCHERS = {"openmpi": {"mpirun": "mpirun.openmpi", "mpiexec": "mpiexec.openmpi"},
             "mpich": {"mpirun": "mpirun.mpich", "mpiexec": "mpiexec.mpich"}}


def launcher_command(opts: StudyOptions, ranks: int, threads: int,
                     oversubscribed: bool) -> tuple[list[str], str, dict[str, str]]:
    """The launcher's argv up to the rank count, the binding in words, and the environment.

    Open MPI binds by default (to core or socket) and MPICH's Hydra does not,
    so each gets its binding said explicitly: every rank on `threads`
    consecutive cores with its OpenMP threads pinned close, or, when the
    machine is oversubscribed, no binding at all (pinned threads that share a
    core would serialise).
    """
    env = {"OMP_NUM_THREADS": str(threads)}
    name = opts.launcher or "mpirun"
    if name == "srun":
        exe = shutil.which("srun")
        if not exe:
            raise InputError("--launcher srun: srun is not installed (is this a Slurm cluster?)")
        argv = [exe, f"--cpus-per-task={threads}"]
        if oversubscribed:
            argv += ["--overcommit", "--cpu-bind=none"]
            binding = "none (srun --cpu-bind=none: oversubscribed)"
        else:
            argv += ["--cpu-bind=cores"]
            env.update(OMP_PROC_BIND="close", OMP_PLACES="cores")
            binding = f"srun --cpu-bind=cores, {threads} cores per rank; OMP_PROC_BIND=close"
        return argv + ["-n"], binding, env
    candidates = [LAUNCHERS[opts.mpi][name], name]
    exe = next((shutil.which(c) for c in candidates if shutil.which(c)), None)
    if not exe:
        raise InputError(f"--launcher {name}: none of {', '.join(candidates)} is installed "
                         f"(install the {'openmpi-bin' if opts.mpi == 'openmpi' else 'mpich'} package)")
    if opts.mpi == "openmpi":
        argv = [exe]
        if os.geteuid() == 0:
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        if opts.hostfile:
            argv += ["--hostfile", opts.hostfile]
        if oversubscribed:
            argv += ["--oversubscribe", "--bind-to", "none"]
            binding = "none (Open MPI --bind-to none: oversubscribed)"
            env["OMP_WAIT_POLICY"] = "passive"
        else:
            argv += ["--map-by", f"slot:PE={threads}", "--bind-to", "core"]
            env.update(OMP_PROC_BIND="close", OMP_PLACES="cores")
            binding = (f"Open MPI --map-by slot:PE={threads} --bind-to core ({threads} cores per "
                       "rank); OMP_PROC_BIND=close, OMP_PLACES=cores")
    else:
        argv = [exe]
        if opts.hostfile:
            argv += ["-f", opts.hostfile]
        if oversubscribed:
            binding = "none (MPICH Hydra default; oversubscribed)"
            env["OMP_WAIT_POLICY"] = "passive"
        else:
            argv += ["-bind-to", f"core:{threads}"]
            env.update(OMP_PROC_BIND="close", OMP_PLACES="cores")
            binding = (f"MPICH Hydra -bind-to core:{threads} ({threads} cores per rank); "
                       "OMP_PROC_BIND=close, OMP_PLACES=cores")
    return argv + ["-n"], binding, env


def scheme_runs(scheme: dict[str, Any], setting: Setting) -> bool:
    """Whether the study can run `scheme` (an entry of `hympi info --json`) in
    its layout: this build and MPI offer it, it has its fewest threads, and a
    scheme that shares memory between a node's ranks (shared-window) has at
    least two ranks on a node."""
    if not scheme.get("available", True) or setting.threads < int(scheme.get("min_threads", 1)):
        return False
    per_node = setting.ranks_per_node or max(1, setting.ranks // max(1, setting.nodes))
    return not (scheme.get("needs_node_peers") and per_node < 2)


def build_plan(opts: StudyOptions, setting: Setting, schemes: Sequence[dict[str, Any]],
               memory_bytes: int) -> list[Point]:
    """Every run of the study, in order. Keys are stable so --resume finds them."""
    lv = LEVELS[opts.level]
    p, n = setting.ranks, setting.threads
    rpn = ["--ranks-per-node", str(setting.ranks_per_node)] if setting.ranks_per_node else []
    plan: list[Point] = []

    def add(key: str, step: str, args: list[str], ranks: int = p, threads: int = n,
            trace: bool = False, label: str = "", cores_per_rank: int = n,
            app: Optional[list[str]] = None, **meta: Any) -> None:
        if step not in opts.steps:
            return
        plan.append(Point(key, step, args, ranks, threads, f"{key}.json",
                          f"{key}.trace.json" if trace else "", label or key, dict(meta),
                          cores_per_rank, list(app or [])))

    add("info", "info", ["info", "--threads", str(n)] + rpn)
    # b_eff's Lmax: the level's, capped by memory per rank / 128 (b_eff's rule).
    lmax = lv["lmax"]
    if memory_bytes:
        lmax = max(4096, min(lmax, memory_bytes // max(1, p) // 128))
    common = ["--repeat", str(lv["repeat"])]
    add("beff", "beff", ["bench", "beff", "--lmax", str(lmax)] + common + rpn, threads=1)
    add("cyclic3d", "cyclic3d", ["bench", "cyclic3d", "--lmax", str(lmax)] + common + rpn, threads=1)
    faces = ",".join(map(str, lv["faces"]))
    add("pack", "pack", ["bench", "pack", "--threads", str(n), "--faces", faces] + common)
    if setting.nodes >= 2:
        sizes = ",".join(map(str, lv["sizes"]))
        add("internode", "internode", ["bench", "internode", "--sizes", sizes] + common + rpn, threads=1)
        add("ratio", "ratio", ["bench", "ratio", "--sizes", sizes] + common + rpn, threads=1)
    if n >= 2:
        for nk in lv["nk_loc"]:
            add(f"overlap-nk{nk}", "overlap",
                ["bench", "overlap", "--threads", str(n), "--plane", str(lv["plane"]),
                 "--nk-loc", str(nk), "--iters", str(lv["overlap_iters"])] + common,
                label=f"overlap nk_loc={nk}", nk_loc=nk)
    grid = f"{lv['grid']}^3"
    for kernel in opts.kernels:
        kargs = ["solve", "--kernel", kernel, "--grid", grid, "--repeat", str(lv["solve_repeat"])]
        kargs += ["--max-iters", str(lv["max_iters"])] if kernel == "cg" else ["--iters", str(lv["iters"])]
        # Pure MPI: one rank per core of the hybrid layout (the papers' class
        # 1). With one thread per rank, masteronly below is that run already.
        if n > 1:
            add(f"solve-{kernel}-pure-mpi", "solve",
                kargs + ["--scheme", "masteronly", "--threads", "1"] + _rpn_scaled(setting, n),
                ranks=p * n, threads=1, trace=True, label=f"{kernel} pure MPI", cores_per_rank=1,
                kernel=kernel, scheme="pure-mpi")
        for s in schemes:
            if not scheme_runs(s, setting):
                continue
            ms = range(1, n) if s.get("takes_reserved") else [0]
            for m in ms:
                name = s["name"] + (f"-m{m}" if m else "")
                extra = ["--reserved", str(m)] if m else []
                add(f"solve-{kernel}-{name}", "solve",
                    kargs + ["--scheme", s["name"], "--threads", str(n)] + extra + rpn,
                    trace=True, label=f"{kernel} {name}", kernel=kernel, scheme=s["name"], m=m)
    # Temporal blocking: jacobi and spmv with halos h deep, exchanged every h
    # iterations, the sweeps between cache-blocked (hympi solve --halo-depth),
    # against the same run at depth 1. masteronly on the hybrid layout: every
    # sweep of a block runs in the wavefront on the rank's threads. Depths
    # deeper than grid / ranks could exceed a rank's box and are left out.
    # Every depth runs the same iterations, a multiple of the deepest, so
    # that no block is short (each exchange then serves exactly h sweeps).
    depths = [h for h in lv["depths"] if h == 1 or h <= lv["grid"] // p]
    iters = -(-lv["iters"] // max(depths)) * max(depths)
    for kernel in (k for k in DEPTH_KERNELS if k in opts.kernels):
        dargs = ["solve", "--kernel", kernel, "--grid", grid, "--iters", str(iters),
                 "--repeat", str(lv["solve_repeat"]), "--scheme", "masteronly", "--threads", str(n)]
        for h in depths:
            add(f"depth-{kernel}-h{h}", "depth", dargs + ["--halo-depth", str(h)] + rpn,
                label=f"{kernel} --halo-depth {h}", kernel=kernel, scheme="masteronly", depth=h)
    if opts.app:
        # The user's program, like a built-in kernel: pure MPI, then every
        # scheme this build offers (every m for those that reserve threads).
        kernel = app_kernel(opts)

        def command(scheme: str, threads: int, m: int) -> list[str]:
            values = {"scheme": scheme, "threads": str(threads), "reserved": str(m)}
            return [re.sub(r"\{(scheme|threads|reserved)\}", lambda g: values[g.group(1)], w)
                    for w in app_words(opts)]

        if n > 1:
            add("solve-app-pure-mpi", "solve", [], ranks=p * n, threads=1, trace=True,
                label=f"{kernel} pure MPI", cores_per_rank=1, app=command("masteronly", 1, 0),
                kernel=kernel, scheme="pure-mpi")
        for s in schemes:
            if not scheme_runs(s, setting):
                continue
            for m in (range(1, n) if s.get("takes_reserved") else [0]):
                name = s["name"] + (f"-m{m}" if m else "")
                add(f"solve-app-{name}", "solve", [], trace=True, label=f"{kernel} {name}",
                    app=command(s["name"], n, m), kernel=kernel, scheme=s["name"], m=m)
    return plan


def _rpn_scaled(setting: Setting, n: int) -> list[str]:
    return ["--ranks-per-node", str(setting.ranks_per_node * n)] if setting.ranks_per_node else []


# --- checking what a study directory holds -------------------------------------------
#
# results.jsonl and study.json are read back by report, project and --resume,
# which divide by these numbers, loop over them and index them. A damaged or
# hand-edited value is refused with the file, its line and the field's path
# (exit 2), before any of that code sees it; a torn last line of a killed
# study is not damage and stays silently dropped (load_results).

# The native tool's limits (src/domain.cpp): threads per rank and halo depth.
MAX_THREADS = 1024
MAX_HALO_DEPTH = 64
# Larger than any run a study makes (4096 ranks x 1024 threads as pure MPI),
# small enough that no loop over them can hang.
MAX_RANKS = 1 << 22
MAX_COUNT = 1 << 62  # bytes, iterations, grid points: whole numbers, not 1e308


# A required field that is absent ("got nothing").
_MISSING = object()


def _shown(value: Any) -> str:
    """A value as its JSON text, shortened: what the file holds."""
    if value is _MISSING:
        return "nothing"
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _refuse(where: str, expected: str, value: Any) -> InputError:
    return InputError(f"{where}: expected {expected}, got {_shown(value)}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _positive(value: Any, where: str) -> None:
    if not (_is_number(value) and value > 0):
        raise _refuse(where, "a positive finite number", value)


def _non_negative(value: Any, where: str) -> None:
    if not (_is_number(value) and value >= 0):
        raise _refuse(where, "a finite number >= 0", value)


def _number(value: Any, where: str) -> None:
    if not _is_number(value):
        raise _refuse(where, "a finite number", value)


def _fraction(value: Any, where: str) -> None:
    if not (_is_number(value) and 0 <= value <= 1):
        raise _refuse(where, "a fraction between 0 and 1", value)


def _whole(low: int, high: int, null_ok: bool = False) -> Any:
    def check(value: Any, where: str) -> None:
        if null_ok and value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise _refuse(where, f"a whole number in {low}..{high}", value)
    return check


def _string(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise _refuse(where, "a string", value)


def _boolean(value: Any, where: str) -> None:
    if not isinstance(value, bool):
        raise _refuse(where, "true or false", value)


def _object(value: Any, where: str) -> None:
    if not isinstance(value, dict):
        raise _refuse(where, "an object", value)


def _triple(value: Any, where: str) -> None:
    if not (isinstance(value, list) and len(value) == 3
            and all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= MAX_COUNT
                    for x in value)):
        raise _refuse(where, "a list of 3 whole numbers >= 1", value)


def _list(value: Any, where: str) -> None:
    if not isinstance(value, list):
        raise _refuse(where, "a list", value)


def _strings(value: Any, where: str) -> None:
    if not (isinstance(value, list) and all(isinstance(x, str) for x in value)):
        raise _refuse(where, "a list of strings", value)


def _lists(value: Any, where: str) -> None:
    if not (isinstance(value, list) and all(isinstance(x, list) for x in value)):
        raise _refuse(where, "a list of lists", value)


def _each(check: Any) -> Any:
    """Every value of an object (breakdown_s, bytes_per_exchange) passes `check`."""
    def each(value: Any, where: str) -> None:
        _object(value, where)
        for key, item in value.items():
            check(item, f"{where}.{key}")
    return each


def _phase_times(value: Any, where: str) -> None:
    """One phase of breakdown_s: seconds per thread."""
    if not (isinstance(value, list) and all(_is_number(x) and x >= 0 for x in value)):
        raise _refuse(where, "a list of numbers >= 0 (seconds per thread)", value)


def _stat(prefix: str, check: Any = _positive) -> list[tuple[str, bool, Any]]:
    """A {"min","median","max"} statistic."""
    return [(prefix, True, _object)] + [(f"{prefix}.{k}", True, check) for k in ("min", "median", "max")]


# (path, required, check) of every result record: its step, source and context.
# A path whose parent is absent is not looked at, so the children of an
# optional object are required only when it is there.
_CONTEXT_FIELDS: list[tuple[str, bool, Any]] = [
    ("step", True, _string),
    ("source", True, _string),
    ("context", True, _object),
    ("context.ranks", False, _whole(1, MAX_RANKS)),
    ("context.threads_per_rank", False, _whole(1, MAX_THREADS)),
    ("context.oversubscribed", False, _boolean),
    ("context.hosts", False, _strings),
    ("context.thread_cpus", False, _lists),
    ("context.thread_affinity", False, _lists),
    ("context.nodes", False, _object),
    ("context.nodes.count", True, _whole(1, MAX_RANKS)),
    ("result", True, _object),
]

# The fields report.py and project.py read, by (step, result kind).
_SOLVE_FIELDS: list[tuple[str, bool, Any]] = [
    ("result.kernel", True, _string),
    ("result.scheme", True, _string),
    ("result.threads", True, _whole(1, MAX_THREADS)),
    ("result.reserved", False, _whole(0, MAX_THREADS - 1)),
    ("result.halo_depth", False, _whole(1, MAX_HALO_DEPTH, null_ok=True)),
    ("result.iters", False, _whole(1, MAX_COUNT)),
    ("result.repeat", False, _whole(1, MAX_COUNT)),
    ("result.exchanges", False, _whole(0, MAX_COUNT)),
    *_stat("result.time_s"),
    ("result.fractions", False, _object),
    ("result.fractions.f_comm", True, _fraction),
    ("result.fractions.f_comp_non", True, _fraction),
    ("result.fractions.f_comp_overlap", False, _fraction),
    ("result.breakdown_s", False, _each(_phase_times)),
    # the phases the projection's costs come from (hympi writes every phase)
    *[(f"result.breakdown_s.{phase}", True, _phase_times)
      for phase in ("compute_interior", "compute_boundary", "pack", "unpack")],
    ("result.bytes_per_exchange", False, _each(_non_negative)),
    ("result.messages_per_exchange", False, _each(_non_negative)),
    ("result.grid", False, _triple),
    ("result.proc_grid", False, _triple),
    ("result.node_block", False, _triple),
    ("result.mlups", False, _non_negative),
]
_RECORD_FIELDS: dict[tuple[str, str], list[tuple[str, bool, Any]]] = {
    ("solve", "solve"): _SOLVE_FIELDS,
    ("depth", "solve"): _SOLVE_FIELDS,
    ("beff", "pingpong"): [("result.bytes", True, _whole(0, MAX_COUNT)), *_stat("result.time_s")],
    ("beff", "point"): [("result.pattern", True, _string), ("result.pattern_kind", False, _string),
                        ("result.bytes", True, _whole(0, MAX_COUNT)),
                        ("result.bandwidth_MBps", True, _non_negative)],
    ("beff", "summary"): [("result.b_eff_MBps", False, _number),
                          ("result.b_eff_per_process_MBps", False, _number)],
    ("cyclic3d", "summary"): [("result.proc_grid", False, _list), ("result.average_MBps", False, _number),
                              ("result.at_lmax_MBps", False, _number),
                              ("result.at_lmax_per_process_MBps", False, _number)],
    ("internode", "point"): [("result.bytes", True, _whole(0, MAX_COUNT)),
                             ("result.k", True, _whole(1, MAX_RANKS)),
                             ("result.bandwidth_per_node_MBps", True, _non_negative)],
    ("internode", "summary"): [("result.masteronly_share", True, _number)],
    ("ratio", "point"): [("result.bytes", True, _whole(0, MAX_COUNT)), ("result.ratio", True, _positive),
                         ("result.hybrid", True, _object), *_stat("result.hybrid.time_s"),
                         ("result.pure", True, _object), *_stat("result.pure.time_s")],
    ("pack", "point"): [("result.face_bytes", True, _whole(0, MAX_COUNT)),
                        ("result.threads", True, _whole(1, MAX_THREADS)),
                        ("result.method", True, _string), ("result.bandwidth_MBps", True, _non_negative),
                        ("result.halos_ok", False, _boolean)],
    ("overlap", "point"): [("result.scheme", True, _string), ("result.threads", True, _whole(1, MAX_THREADS)),
                           ("result.reserved", False, _whole(0, MAX_THREADS - 1)),
                           ("result.nk_loc", True, _positive), *_stat("result.epsilon")],
}


def _check_fields(data: Any, fields: Sequence[tuple[str, bool, Any]], where: str) -> None:
    """Each (path, required, check) of `fields` against `data`; InputError
    '<where>: <path>: expected ..., got ...' at the first that fails."""
    for path, required, check in fields:
        *parents, name = path.split(".")
        node = data
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            continue  # an optional parent that is absent (a wrong one was refused before)
        if name in node or required:
            check(node.get(name, _MISSING), f"{where}: {path}")


def check_result_record(rec: dict[str, Any], where: str) -> None:
    """A result line of results.jsonl, before report, project or --resume use it."""
    _check_fields(rec, _CONTEXT_FIELDS, where)
    kind = rec["result"].get("kind")
    fields = _RECORD_FIELDS.get((rec["step"], kind), []) if isinstance(kind, str) else []
    _check_fields(rec, fields, where)
    result = rec["result"]
    if fields and result.get("scheme") == "multiple":
        # multiple reserves m of its n threads for communication: eq. (3)
        # divides by m and by n - m.
        threads = result["threads"]
        if threads < 2:
            raise _refuse(f"{where}: result.threads", "2 or more for scheme multiple", threads)
        _whole(1, threads - 1)(result.get("reserved", _MISSING), f"{where}: result.reserved")


def check_point_line(rec: dict[str, Any], where: str) -> None:
    """A point (status) line of results.jsonl."""
    _check_fields(rec, [("step", True, _string), ("status", True, _string),
                        ("reason", False, _string), ("meta", False, _object)], where)

# --- the results file ------------------------------------------------------------

def append_lines(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Append records as JSON lines in one write, then fsync: what returns is on disk.

    The point's status line is the last of its records, so a study killed in
    the middle of a write leaves at most one incomplete point, which
    load_results() ignores and --resume runs again.
    """
    data = "".join(json.dumps(r, separators=(",", ":"), allow_nan=False) + "\n" for r in records)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as err:
        raise OutputError(f"cannot write {path}: {err.strerror or err}") from None
    start = os.fstat(fd).st_size
    try:
        view = memoryview(data.encode("utf-8"))
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except OSError as err:
        # Disk full: take the torn lines back so the file ends on a whole point.
        try:
            os.ftruncate(fd, start)
        except OSError:
            pass
        raise OutputError(f"cannot write {path}: {err.strerror or err}") from None
    finally:
        os.close(fd)


def load_results(path: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The complete points of a results file: (result records, point status by key).

    A point counts when its status line exists and all the n_results records
    it announces precede it; lines of an interrupted write are dropped. A
    record of a counted point with a damaged value (check_result_record) is
    an InputError naming its line: it is not a torn write, and report,
    project and --resume must not compute with it.
    """
    pending: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    results_by_point: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    status: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return [], {}
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue  # the torn last line of a killed study
                if not isinstance(rec, dict) or not isinstance(rec.get("point"), str):
                    continue
                key = rec["point"]
                if rec.get("record") == "result":
                    pending.setdefault(key, []).append((number, rec))
                elif rec.get("record") == "point":
                    count = rec.get("n_results")
                    mine = pending.pop(key, [])
                    if isinstance(count, int) and not isinstance(count, bool) and 0 <= count <= len(mine):
                        check_point_line(rec, f"{path} line {number}")
                        # A later run of the same point (a resumed failure) replaces it.
                        status[key] = rec
                        results_by_point[key] = mine[len(mine) - count:]
    except OSError as err:
        raise InputError(f"cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file") from None
    results = []
    for key in status:
        for number, rec in results_by_point.get(key, []):
            check_result_record(rec, f"{path} line {number}")
            results.append(rec)
    return results, status


def rewrite_results(path: Path, results: list[dict[str, Any]], status: dict[str, dict[str, Any]]) -> None:
    """Rewrite the file with complete points only (before a resume), atomically."""
    by_point: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_point.setdefault(r["point"], []).append(r)
    write_atomic(path, "".join(json.dumps(r, separators=(",", ":"), allow_nan=False) + "\n"
                               for key, st in status.items() for r in by_point.get(key, []) + [st]))


# --- running one point ---------------------------------------------------------

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


class Interrupted(Exception):
    """Ctrl-C or SIGTERM during a run; the child has been ended."""


def point_command(point: Point, setting: Setting, hympi: str, outdir: Path) -> list[str]:
    if point.app:
        # The user's program writes its report where HYMPI_REPORT_JSON says
        # (run_point sets it); {json} names the same file for a --report flag.
        report = str(outdir / RAW / point.json_name)
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


def run_point(point: Point, setting: Setting, hympi: str, outdir: Path, timeout_s: float) -> RunOutcome:
    argv = point_command(point, setting, hympi, outdir)
    _, _, launch_env = setting.launch(point.cores_per_rank)
    env = dict(os.environ)
    env.update(launch_env)
    env["OMP_NUM_THREADS"] = str(point.threads)
    if point.app:
        launch_env = dict(launch_env)
        launch_env["HYMPI_REPORT_JSON"] = str(outdir / RAW / point.json_name)
        launch_env["HYMPI_TRACE_JSON"] = str(outdir / RAW / point.trace_name) if point.trace_name else ""
        env.update(launch_env)
    env_words = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(launch_env.items())
                         if k != "OMP_NUM_THREADS")
    try:
        with open(outdir / COMMANDS, "a", encoding="utf-8") as log:
            log.write(f"# {now_iso()} {point.key}\nOMP_NUM_THREADS={point.threads} {env_words} "
                      f"{shlex.join(argv)}\n")
        outcome = _run(point, argv, env, outdir, timeout_s)
    except OSError as err:  # the study directory's disk, not the run
        raise OutputError(f"cannot write in {outdir}: {err.strerror or err}") from None
    outcome.command = argv
    return outcome


# hympi's own exit codes (README, "Exit codes"), named in a failed run's reason.
HYMPI_EXIT_CODES = {
    1: "the run failed",
    2: "bad input",
    3: "cg did not converge within --max-iters",
    4: "a result file could not be written",
}


def _run(point: Point, argv: list[str], env: dict[str, str], outdir: Path,
         timeout_s: float) -> RunOutcome:
    log_path = outdir / RAW / f"{point.key}.log"
    start = time.monotonic()
    timed_out = False
    with open(log_path, "w", encoding="utf-8") as out:
        # Own process group: a time-out or Ctrl-C ends mpirun and every rank.
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _end_group(proc)
        except BaseException:
            _end_group(proc)
            raise
    wall = time.monotonic() - start
    tail = _tail(log_path)
    code = proc.returncode
    if timed_out:
        return RunOutcome("failed", code, True, wall, tail, [],
                          f"exceeded the per-run limit of {timeout_s:g} s")
    if code != 0:
        why = HYMPI_EXIT_CODES.get(code, "") if not point.app else ""
        return RunOutcome("failed", code, False, wall, tail, [],
                          f"exit code {code}" + (f" ({why})" if why else ""))
    if point.app and not (outdir / RAW / point.json_name).exists():
        return RunOutcome("failed", code, False, wall, tail, [],
                          "the app wrote no report: call hympi_report_json (C, Fortran) or "
                          "Domain::write_report (C++) after the timed loop; the study sets "
                          "HYMPI_REPORT_JSON to the path")
    try:
        with open(outdir / RAW / point.json_name, encoding="utf-8") as handle:
            doc = json.load(handle)
    except (OSError, json.JSONDecodeError) as err:
        return RunOutcome("failed", code, False, wall, tail, [], f"no readable JSON document: {err}")
    context = doc.get("context", {})
    records = []
    if point.step == "info":
        rest = {k: v for k, v in doc.items() if k != "context"}
        records.append(_result_line(point, context, {"kind": "info", **rest}))
    else:
        for rec in doc.get("results", []):
            records.append(_result_line(point, context, rec))
    if point.trace_name and not (outdir / RAW / point.trace_name).exists():
        return RunOutcome("failed", code, False, wall, tail, [], "the run wrote no trace")
    return RunOutcome("ok", code, False, wall, tail, records)


def _result_line(point: Point, context: dict[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
    line = {"record": "result", "study_schema_version": STUDY_SCHEMA_VERSION, "point": point.key,
            "step": point.step, "source": f"{RAW}/{point.json_name}", "context": context,
            "result": rec}
    if point.trace_name:
        line["trace"] = f"{RAW}/{point.trace_name}"
    return line


def _end_group(proc: subprocess.Popen) -> None:
    """SIGTERM the run's process group, SIGKILL after 5 s."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _tail(path: Path, lines: int = 15, chars: int = 2000) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])[-chars:]


def point_status_line(point: Point, outcome: RunOutcome, binding: str) -> dict[str, Any]:
    return {"record": "point", "study_schema_version": STUDY_SCHEMA_VERSION, "point": point.key,
            "step": point.step, "label": point.label, "status": outcome.status,
            "n_results": len(outcome.records), "command": shlex.join(outcome.command), "binding": binding,
            "ranks": point.ranks, "threads": point.threads, "wall_s": round(outcome.wall_s, 4),
            "exit_code": outcome.exit_code, "timed_out": outcome.timed_out,
            "reason": outcome.reason, "stderr_tail": outcome.stderr_tail if outcome.status != "ok" else "",
            "date": now_iso(), "meta": point.meta}


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
        mark = "ok" if outcome.status == "ok" else f"FAILED ({outcome.reason})"
        if self.bar is not None:
            self.bar.update(1)
            if outcome.status != "ok":
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

def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


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
    unknown = [s for s in opts.steps if s not in STEPS]
    if unknown:
        problems.append(f"--steps: unknown step(s) {', '.join(unknown)} (valid: {', '.join(STEPS)})")
    unknown = [k for k in opts.kernels if k not in KERNELS]
    if unknown:
        problems.append(f"--kernels: unknown kernel(s) {', '.join(unknown)} (valid: {', '.join(KERNELS)})")
    if opts.run_timeout_s < 0:
        problems.append("--run-timeout must be >= 0")
    if opts.steps and set(opts.steps) <= {"depth"} and not set(DEPTH_KERNELS) & set(opts.kernels):
        problems.append("--steps depth runs jacobi and spmv only: with these --kernels it has "
                        "nothing to run")
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


def prepare_outdir(outdir: Path, header: dict[str, Any], resume: bool) -> None:
    """Create or reopen a study directory; refuse one that holds something else."""
    study_file = outdir / STUDY_FILE
    if resume:
        if not study_file.is_file():
            raise InputError(f"--resume {outdir}: not a study directory (no {STUDY_FILE})")
        return
    if outdir.exists() and any(outdir.iterdir()):
        if study_file.is_file():
            raise InputError(f"--out {outdir} already holds a study; continue it with "
                             f"'--resume {outdir}', or choose another --out")
        raise InputError(f"--out {outdir} exists and is not empty; choose a new directory")
    try:
        (outdir / RAW).mkdir(parents=True, exist_ok=True)
        probe = outdir / ".write-test"
        probe.write_text("", encoding="utf-8")
        probe.unlink()
    except OSError as err:
        raise InputError(f"--out {outdir}: not writable ({err.strerror or err})") from None
    write_atomic(study_file, json.dumps(header, indent=2) + "\n")


def load_study(outdir: Path) -> dict[str, Any]:
    if not (outdir / STUDY_FILE).is_file():
        raise InputError(f"{outdir}: not a study directory (no {STUDY_FILE}; start one with "
                         "'hympi-lab study --out DIR')")
    try:
        header = json.loads((outdir / STUDY_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise InputError(f"{outdir / STUDY_FILE}: unreadable ({err})") from None
    version = header.get("study_schema_version") if isinstance(header, dict) else None
    if not isinstance(header, dict) or "options" not in header:
        raise InputError(f"{outdir}: not a study directory ({STUDY_FILE} holds no study options)")
    if version != STUDY_SCHEMA_VERSION:
        raise InputError(f"{outdir}: a study of schema version {version!r}; this hympi-lab "
                         f"continues version {STUDY_SCHEMA_VERSION} only (start a new study)")
    check_study_header(header, str(outdir / STUDY_FILE))
    return header


# The options a study.json must hold: StudyOptions' fields, less the ones
# added after study schema 1 was first written (app, app_name: a study
# without them measured no program of the user's, which their defaults say).
# A missing one would silently become its default and --resume would plan
# another study (a quick study resumed at the default level).
OPTIONAL_OPTIONS = ("app", "app_name")
_OPTION_CHECKS: dict[str, Any] = {
    "level": _string, "mpi": _string, "launcher": _string, "hympi": _string, "hostfile": _string,
    "ranks": _whole(0, MAX_RANKS), "threads": _whole(0, MAX_THREADS),
    "emulated_nodes": _whole(0, MAX_RANKS), "link": _string, "steps": _strings,
    "run_timeout_s": _non_negative, "kernels": _strings, "app": _string, "app_name": _string,
}

# The setting the report's layout, recommendation and projection read: what
# the study's runs were launched with.
_SETTING_FIELDS: list[tuple[str, bool, Any]] = [
    ("setting", True, _object),
    ("setting.ranks", True, _whole(1, MAX_RANKS)),
    ("setting.threads", True, _whole(1, MAX_THREADS)),
    ("setting.cores", True, _whole(1, MAX_RANKS)),
    ("setting.nodes", True, _whole(1, MAX_RANKS)),
    ("setting.nodes_kind", True, _string),
    ("setting.ranks_per_node", True, _whole(0, MAX_RANKS)),
    ("setting.oversubscribed", True, _boolean),
    ("setting.binding", False, _string),
    ("setting.pure_binding", False, _string),
    ("machine", True, _object),
    ("machine.caches", False, _each(_whole(0, MAX_COUNT))),
    ("machine.memory_bytes", False, _non_negative),
]


def check_study_header(header: dict[str, Any], where: str) -> None:
    """study.json's options (all of StudyOptions' but OPTIONAL_OPTIONS, of
    their types), setting and machine blocks; InputError naming the first
    field that is wrong."""
    options = header["options"]
    if not isinstance(options, dict):
        raise _refuse(f"{where}: options", "an object", options)
    unknown = sorted(k for k in options if k not in _OPTION_CHECKS)
    if unknown:
        raise InputError(f"{where}: options: unknown option(s) {', '.join(map(str, unknown))}")
    missing = [k for k in _OPTION_CHECKS if k not in options and k not in OPTIONAL_OPTIONS]
    if missing:
        raise InputError(f"{where}: options: missing {', '.join(missing)} (a study.json written by "
                         "'hympi-lab study' holds them all)")
    for key, value in options.items():
        _OPTION_CHECKS[key](value, f"{where}: options.{key}")
    _check_fields(header, _SETTING_FIELDS, where)


def discover_schemes(setting: Setting, hympi: str, timeout_s: float) -> list[dict[str, Any]]:
    """The schemes this build offers, from `hympi info --json` at one rank."""
    argv = setting.argv(1, 1) + [hympi, "info", "--json"]
    env = dict(os.environ)
    env.update(setting.pure_env or setting.env)
    env["OMP_NUM_THREADS"] = "1"
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout_s,
                              stdin=subprocess.DEVNULL, start_new_session=True)
    except subprocess.TimeoutExpired:
        raise InputError(f"'{shlex.join(argv)}' did not finish in {timeout_s:g} s: "
                         "is the launcher working on this machine?") from None
    except OSError as err:
        raise InputError(f"cannot run {argv[0]}: {err.strerror or err}") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise InputError(f"'{shlex.join(argv)}' failed (exit {proc.returncode}): {' / '.join(tail)}")
    try:
        info = json.loads(proc.stdout)
        return [s for s in info["schemes"] if isinstance(s, dict) and "name" in s], info.get("context", {})
    except (json.JSONDecodeError, KeyError, TypeError):
        raise InputError(f"'{shlex.join(argv)}' printed no scheme list") from None


def run_study(opts: StudyOptions, outdir: Path, resume: bool, out: TextIO,
              make_report: bool = True) -> int:
    """The campaign. Returns 0 when every run succeeded, 1 when some failed, 130 on Ctrl-C."""
    if resume:
        header = load_study(outdir)
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
    emulated = None
    if opts.emulated_nodes:
        emulated = EmulatedCluster(opts, setting)
    timeout_s = opts.run_timeout_s or {"quick": 120.0, "default": 300.0, "full": 1800.0}[opts.level]
    schemes, info_context = discover_schemes(setting, opts.hympi, 60.0) if emulated is None \
        else (None, {})
    header = {"hympi_study": True, "study_schema_version": STUDY_SCHEMA_VERSION,
              "created": now_iso(), "options": asdict(opts), "machine": asdict(machine),
              "setting": asdict(setting), "mpi_library": info_context.get("mpi_library", ""),
              "schemes": schemes}
    prepare_outdir(outdir, header, resume)
    try:
        if emulated is not None:
            emulated.up()
            setting = emulated.setting
            schemes, info_context = discover_schemes(setting, opts.hympi, 120.0)
        plan = build_plan(opts, setting, schemes or [], machine.memory_bytes)
        results_path = outdir / RESULTS
        results, status = load_results(results_path)
        done = {k for k, v in status.items() if v.get("status") == "ok"}
        if resume:
            rewrite_results(results_path, [r for r in results if r["point"] in done],
                            {k: v for k, v in status.items() if k in done})
        todo = [pt for pt in plan if pt.key not in done]
        est = ESTIMATE_S[opts.level]
        estimate = sum(est[pt.step] for pt in todo)
        _print_plan(out, opts, machine, setting, plan, todo, estimate, outdir, info_context, resume)
        failed: list[tuple[Point, RunOutcome]] = []
        progress = Progress(len(todo), estimate, out)
        # SIGTERM (a batch system's time limit, kill) stops like Ctrl-C: the
        # running MPI job is ended and what was measured stays.
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        spent: dict[str, list[float]] = {}
        try:
            for i, point in enumerate(todo):
                progress.start(point)
                outcome = run_point(point, setting, opts.hympi, outdir, timeout_s)
                append_lines(results_path, outcome.records +
                             [point_status_line(point, outcome, setting.launch(point.cores_per_rank)[1])])
                spent.setdefault(point.step, []).append(outcome.wall_s)
                left = sum((sum(spent[pt.step]) / len(spent[pt.step])) if pt.step in spent
                           else est[pt.step] for pt in todo[i + 1:])
                progress.finish(point, outcome, left)
                if outcome.status != "ok":
                    failed.append((point, outcome))
        except KeyboardInterrupt:
            progress.close()
            print(f"\nhympi-lab study: interrupted; what was measured is kept in {outdir / RESULTS}.\n"
                  f"Resume with: hympi-lab study --resume {outdir}", file=out, flush=True)
            return 130
        except OutputError as err:
            progress.close()
            print(f"\nhympi-lab study: {err}; the points measured before are kept in "
                  f"{outdir / RESULTS}.\nFree space, then resume with: hympi-lab study --resume "
                  f"{outdir}", file=out, flush=True)
            return 1
        finally:
            signal.signal(signal.SIGTERM, previous)
        progress.close()
    finally:
        if emulated is not None:
            emulated.down()
    code = 0
    if failed:
        code = 1
        print(f"\n{len(failed)} run(s) failed (recorded in {outdir / RESULTS}; "
              f"'--resume {outdir}' runs them again):", file=out)
        for point, outcome in failed:
            first = outcome.stderr_tail.strip().splitlines()[-1:] or [""]
            print(f"  {point.key}: {outcome.reason}: {first[0][:200]}", file=out)
    if make_report:
        from . import report
        try:
            summary = report.write_report(outdir)
        except (InputError, OutputError) as err:
            print(f"hympi-lab study: the report could not be written: {err}", file=out)
            return 1
        print(f"\nreport: {outdir / 'report.html'}\n{summary}", file=out, flush=True)
    return code


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _print_plan(out: TextIO, opts: StudyOptions, machine: Machine, setting: Setting,
                plan: list[Point], todo: list[Point], estimate: float, outdir: Path,
                info_context: dict[str, Any], resume: bool) -> None:
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
    lines.append(f"# plan: {len(todo)} runs ("
                 + ", ".join(f"{s} {c}" for s, c in steps.items()) + f"), about {_clock(estimate)}")
    print("\n".join(lines), file=out, flush=True)


class EmulatedCluster:
    """scripts/emulated-cluster up/down around the study (root only)."""

    def __init__(self, opts: StudyOptions, setting: Setting):
        self.script = repo_root() / "scripts" / "emulated-cluster"
        if not self.script.is_file():
            raise InputError(f"--emulated-nodes needs {self.script}, which is missing")
        self.opts = opts
        self.per_node = setting.ranks // opts.emulated_nodes
        cpus = max(1, setting.cores // opts.emulated_nodes)
        self.up_argv = [str(self.script), "up", "--nodes", str(opts.emulated_nodes),
                        "--cpus-per-node", str(cpus), "--link", opts.link, "--mpi", opts.mpi]
        launcher = [str(self.script), "run", "--mpi", opts.mpi]
        env = {"OMP_NUM_THREADS": str(setting.threads), "OMP_WAIT_POLICY": "passive"}
        self.setting = Setting(setting.ranks, setting.threads, setting.cores, opts.emulated_nodes,
                               "emulated", 0, setting.oversubscribed, launcher,
                               f"emulated-cluster run ({self.per_node} ranks per node, no binding)",
                               env)

    def up(self) -> None:
        proc = subprocess.run(self.up_argv, capture_output=True, text=True)
        if proc.returncode != 0:
            raise InputError(f"emulated cluster did not come up: {proc.stderr.strip()[-300:]}")

    def down(self) -> None:
        subprocess.run([str(self.script), "down"], capture_output=True, text=True)
