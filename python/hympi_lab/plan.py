"""What a study runs: the sizes of each level, the rough time of each step,
and the plan itself, one Point per native run, with stable keys so that
--resume finds the points already measured.

The kernels, schemes and benchmarks come from the build's `hympi info
--json` (buildinfo.py): the benchmarks below are sized per level here; any
other benchmark info lists runs as a step of its own name with its defaults."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from . import buildinfo
from .buildinfo import Info
from .launch import Setting
from .options import StudyOptions, app_kernel, app_words

# Sizes of each level of detail: chosen so the default study's runs take
# about a minute and a half on a 2-core machine, --quick's well under a
# minute, and --full
# the papers' sizes (8 MB b_eff messages, 2 and 16 MB inter-node messages).
LEVELS: dict[str, dict[str, Any]] = {
    "quick": {"lmax": 65536, "repeat": 2, "faces": [16, 48], "sizes": [65536],
              "plane": 16, "nk_loc": [1, 4, 16, 64], "overlap_iters": 6,
              "grid": 24, "iters": 6, "solve_repeat": 2, "converging_repeat": 2, "max_iters": 200,
              "depths": [1, 3]},
    "default": {"lmax": 8000000, "repeat": 3, "faces": [16, 32, 64, 128], "sizes": [262144, 2000000],
                "plane": 48, "nk_loc": [1, 2, 4, 8, 16, 32, 64, 128], "overlap_iters": 20,
                "grid": 128, "iters": 20, "solve_repeat": 3, "converging_repeat": 2, "max_iters": 2000,
                "depths": [1, 2, 4, 8]},
    "full": {"lmax": 8000000, "repeat": 5, "faces": [16, 32, 64, 128, 256], "sizes": [2000000, 16000000],
             "plane": 96, "nk_loc": [1, 2, 4, 8, 16, 32, 64, 128, 256], "overlap_iters": 50,
             "grid": 192, "iters": 50, "solve_repeat": 5, "converging_repeat": 5, "max_iters": 5000,
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
# The estimate of a benchmark the plan does not size (run with its defaults).
OTHER_BENCHMARK_S = {"quick": 1, "default": 3, "full": 10}

# The benchmarks this plan sizes per level, in the order they run; the
# others info lists run after them, in info's order.
DEDICATED_BENCHMARKS = ("beff", "cyclic3d", "pack", "internode", "ratio", "overlap")


def estimate_s(level: str, step: str) -> float:
    """Rough seconds of one run of `step` at `level`."""
    return ESTIMATE_S[level].get(step, OTHER_BENCHMARK_S[level])


def benchmark_names(info: Info) -> list[str]:
    """The benchmarks of this build (the dedicated ones when info predates the list)."""
    listed = buildinfo.benchmarks(info)
    return list(DEDICATED_BENCHMARKS) if listed is None else [b["name"] for b in listed]


def study_steps(info: Info) -> list[str]:
    """Every step a study of this build can run, in the order they run."""
    names = benchmark_names(info)
    return (["info"] + [b for b in DEDICATED_BENCHMARKS if b in names]
            + [b for b in names if b not in DEDICATED_BENCHMARKS] + ["solve", "depth"])


def steps_of(opts: StudyOptions, info: Info) -> list[str]:
    """The steps the study runs: those asked for, else every one."""
    return list(opts.steps) if opts.steps is not None else study_steps(info)


def kernels_of(opts: StudyOptions, info: Info) -> list[str]:
    """The kernels the study runs: those asked for, else info's default set
    (every kernel but those whose entry says default_study false)."""
    return list(opts.kernels) if opts.kernels is not None else buildinfo.default_kernel_names(info)


def name_problems(opts: StudyOptions, info: Info) -> list[str]:
    """--steps and --kernels checked against this build's info (empty when right)."""
    problems = []
    valid = study_steps(info)
    unknown = [s for s in steps_of(opts, info) if s not in valid]
    if unknown:
        problems.append(f"--steps: unknown step(s) {', '.join(unknown)} (valid: {', '.join(valid)})")
    valid = buildinfo.kernel_names(info)
    kernels = kernels_of(opts, info)
    unknown = [k for k in kernels if k not in valid]
    if unknown:
        problems.append(f"--kernels: unknown kernel(s) {', '.join(unknown)} (valid: {', '.join(valid)})")
    deep = buildinfo.depth_kernels(info)
    steps = steps_of(opts, info)
    if steps and set(steps) <= {"depth"} and not set(deep) & set(kernels):
        problems.append(f"--steps depth runs {_and(deep) or 'no kernel of this build'} only: "
                        "with these --kernels it has nothing to run")
    return problems


def _and(names: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else list(names))


def benchmark_skips(opts: StudyOptions, setting: Setting, info: Info) -> list[tuple[dict[str, Any], str]]:
    """(benchmark, why not) of each benchmark without a dedicated plan, asked
    for, that this layout cannot run (why empty when it can)."""
    steps, out = steps_of(opts, info), []
    for b in buildinfo.benchmarks(info) or []:
        if b["name"] in DEDICATED_BENCHMARKS or b["name"] not in steps:
            continue
        ranks, nodes = int(b.get("min_ranks", 1)), int(b.get("min_nodes", 1))
        why = ""
        if setting.ranks < ranks:
            why = f"needs {ranks} ranks, the layout has {setting.ranks}"
        elif setting.nodes < nodes:
            why = f"needs {nodes} nodes, the layout has {setting.nodes}"
        out.append((b, why))
    return out


def dropped(opts: StudyOptions, setting: Setting, info: Info) -> list[tuple[str, str]]:
    """(what, why) of each run the study was asked for that the plan leaves
    out, so that the plan can say so: a step the layout cannot run, a
    halo depth deeper than a rank's box, a scheme this build or layout
    cannot run."""
    steps, names, out = steps_of(opts, info), benchmark_names(info), []
    if setting.nodes < 2:
        for step in ("internode", "ratio"):
            if step in steps and step in names:
                out.append((f"step {step}", f"needs 2 nodes, the layout has {setting.nodes} (run on "
                            "2+ nodes: --emulated-nodes N, a hostfile or a Slurm allocation)"))
    if setting.threads < 2 and "overlap" in steps and "overlap" in names:
        out.append(("step overlap", "needs 2 threads per rank, the layout has 1 (--threads 2)"))
    out += [(f"step {b['name']}", why) for b, why in benchmark_skips(opts, setting, info) if why]
    lv = LEVELS[opts.level]
    kernels = [k for k in buildinfo.depth_kernels(info) if k in kernels_of(opts, info)]
    if "depth" in steps and kernels:
        for h in lv["depths"]:
            if h > 1 and h > lv["grid"] // setting.ranks:
                out.append((f"depth step, --halo-depth {h}", f"deeper than a rank's box ({lv['grid']} "
                            f"points over {setting.ranks} ranks)"))
    if "solve" in steps:
        out += _scheme_drops(opts, setting, info)
    return out


def _scheme_drops(opts: StudyOptions, setting: Setting, info: Info) -> list[tuple[str, str]]:
    """(scheme, why) of each scheme the solve step leaves out: once when the
    built-in kernels and the --app program miss it for the same reason,
    else once for each (they see other nodes: see scheme_skip_reason)."""
    out = []
    users = ([("built-in kernels", False)] if kernels_of(opts, info) else []) + (
        [("--app", True)] if opts.app else [])
    for s in buildinfo.schemes(info):
        reasons = {who: scheme_skip_reason(s, setting, app) for who, app in users}
        if len(set(reasons.values())) == 1:
            why = next(iter(reasons.values()))
            if why:
                out.append((f"scheme {s['name']}", why))
            continue
        out += [(f"scheme {s['name']} ({who})", why) for who, why in reasons.items() if why]
    return out


def scheme_skip_reason(scheme: dict[str, Any], setting: Setting, app: bool = False) -> str:
    """Why the study cannot run `scheme` in its layout ("" when it can).

    A scheme that shares memory between a node's ranks (info's
    needs_node_peers: shared-window) needs two ranks on a node. hympi's own
    runs on one machine split it into virtual nodes (--ranks-per-node), so
    there the virtual node counts; a user's program (`app`) gets no such
    flag, and its ranks share the real node they run on."""
    if not scheme.get("available", True):
        return "not available in this build and MPI library"
    need = int(scheme.get("min_threads", 1))
    if setting.threads < need:
        return f"needs {need} threads per rank, the layout has {setting.threads}"
    if not scheme.get("needs_node_peers"):
        return ""
    if setting.nodes_kind == "virtual":
        if app or not setting.ranks_per_node:
            return ""  # every rank on this one machine
        if setting.ranks_per_node < 2:
            return (f"needs ranks that share a node; this machine is split into {setting.nodes} "
                    f"virtual nodes of {setting.ranks_per_node} rank for hympi's own runs "
                    "(--ranks-per-node)")
        return ""
    per_node = max(1, setting.ranks // max(1, setting.nodes))
    if per_node < 2:
        return (f"needs ranks that share a node; this layout puts {per_node} rank per node "
                f"({setting.ranks} ranks on {setting.nodes} {setting.nodes_kind} nodes)")
    return ""


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
    # Runs of the point (--app points: --app-repeat; hympi's own runs repeat
    # inside the run, with --repeat).
    repeat: int = 1


def scheme_runs(scheme: dict[str, Any], setting: Setting, app: bool = False) -> bool:
    """Whether the study can run `scheme` (an entry of `hympi info --json`) in
    its layout: this build and MPI offer it, it has its fewest threads, and a
    scheme that shares memory between a node's ranks (shared-window) has at
    least two ranks on a node (for hympi's own runs or the --app program:
    scheme_skip_reason)."""
    return not scheme_skip_reason(scheme, setting, app)


def build_plan(opts: StudyOptions, setting: Setting, info: Info, memory_bytes: int) -> list[Point]:
    """Every run of the study, in order, from the build's `hympi info --json`
    document. Keys are stable so --resume finds them."""
    planner = _Planner(opts, setting, info)
    schemes = buildinfo.schemes(info)
    planner.benchmarks(memory_bytes)
    planner.other_benchmarks(benchmark_skips(opts, setting, info))
    planner.kernels(schemes)
    planner.depths()
    if opts.app:
        planner.app(schemes)
    return planner.plan


class _Planner:
    """The plan as it is built: the steps not asked for add nothing."""

    def __init__(self, opts: StudyOptions, setting: Setting, info: Info):
        self.opts, self.setting, self.info = opts, setting, info
        self.steps, self.kernel_names = steps_of(opts, info), kernels_of(opts, info)
        self.benchmark_names = benchmark_names(info)
        self.lv = LEVELS[opts.level]
        self.p, self.n = setting.ranks, setting.threads
        self.rpn = ["--ranks-per-node", str(setting.ranks_per_node)] if setting.ranks_per_node else []
        self.grid = f"{self.lv['grid']}^3"
        self.plan: list[Point] = []

    def add(self, key: str, step: str, args: list[str], ranks: int = 0, threads: int = 0,
            trace: bool = False, label: str = "", cores_per_rank: int = 0,
            app: Optional[list[str]] = None, repeat: int = 1, **meta: Any) -> None:
        """One point; ranks, threads and cores per rank default to the layout's."""
        if step not in self.steps:
            return
        self.plan.append(Point(key, step, args, ranks or self.p, threads or self.n, f"{key}.json",
                               f"{key}.trace.json" if trace else "", label or key, dict(meta),
                               cores_per_rank or self.n, list(app or []), repeat))

    def benchmarks(self, memory_bytes: int) -> None:
        lv, p, n, rpn = self.lv, self.p, self.n, self.rpn

        def add(key: str, step: str, args: list[str], **kw: Any) -> None:
            """A dedicated benchmark's point, when this build has the benchmark."""
            if step == "info" or (step in DEDICATED_BENCHMARKS and step in self.benchmark_names):
                self.add(key, step, args, **kw)

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
        if self.setting.nodes >= 2:
            sizes = ",".join(map(str, lv["sizes"]))
            add("internode", "internode", ["bench", "internode", "--sizes", sizes] + common + rpn,
                threads=1)
            add("ratio", "ratio", ["bench", "ratio", "--sizes", sizes] + common + rpn, threads=1)
        if n >= 2:
            for nk in lv["nk_loc"]:
                add(f"overlap-nk{nk}", "overlap",
                    ["bench", "overlap", "--threads", str(n), "--plane", str(lv["plane"]),
                     "--nk-loc", str(nk), "--iters", str(lv["overlap_iters"])] + common,
                    label=f"overlap nk_loc={nk}", nk_loc=nk)

    def other_benchmarks(self, runs: list[tuple[dict[str, Any], str]]) -> None:
        """Each benchmark without a dedicated plan that this layout can run:
        `hympi bench NAME` with its defaults (threads when it runs them)."""
        for b, why in runs:
            if why:
                continue
            name, threads = b["name"], self.n if b.get("uses_threads") else 1
            args = ["bench", name, "--repeat", str(self.lv["repeat"])]
            args += ["--threads", str(threads)] if b.get("uses_threads") else []
            self.add(name.replace("_", "-"), name, args + self.rpn, threads=threads,
                     label=f"{name} (its defaults)")

    def _scheme_runs(self, schemes: Sequence[dict[str, Any]],
                     app: bool = False) -> list[tuple[dict[str, Any], str, int]]:
        """(scheme, name, m) of every scheme run: every m for those that reserve threads."""
        runs = []
        for s in schemes:
            if scheme_runs(s, self.setting, app):
                for m in (range(1, self.n) if s.get("takes_reserved") else [0]):
                    runs.append((s, s["name"] + (f"-m{m}" if m else ""), m))
        return runs

    def kernels(self, schemes: Sequence[dict[str, Any]]) -> None:
        lv, p, n = self.lv, self.p, self.n
        for kernel in self.kernel_names:
            # A solve to the tolerance (cg: about 320 iterations at 128^3) is
            # 16 times the iterations of a fixed-iteration kernel's repetition:
            # at the default level two repetitions of it already time more
            # iterations than three of the others, and still give a range.
            converges = buildinfo.converges(self.info, kernel)
            repeat = lv["converging_repeat"] if converges else lv["solve_repeat"]
            kargs = ["solve", "--kernel", kernel, "--grid", self.grid, "--repeat", str(repeat)]
            kargs += (["--max-iters", str(lv["max_iters"])] if converges else ["--iters", str(lv["iters"])])
            # Pure MPI: one rank per core of the hybrid layout (the papers' class
            # 1). With one thread per rank, masteronly below is that run already.
            if n > 1:
                self.add(f"solve-{kernel}-pure-mpi", "solve",
                         kargs + ["--scheme", "masteronly", "--threads", "1"] + _rpn_scaled(self.setting, n),
                         ranks=p * n, threads=1, trace=True, label=f"{kernel} pure MPI", cores_per_rank=1,
                         kernel=kernel, scheme="pure-mpi")
            for s, name, m in self._scheme_runs(schemes):
                extra = ["--reserved", str(m)] if m else []
                self.add(f"solve-{kernel}-{name}", "solve",
                         kargs + ["--scheme", s["name"], "--threads", str(n)] + extra + self.rpn,
                         trace=True, label=f"{kernel} {name}", kernel=kernel, scheme=s["name"], m=m)

    def depths(self) -> None:
        """Temporal blocking: the kernels that have it (info's temporal_blocking:
        jacobi, rbgs and matrix-free spmv) with halos h deep, exchanged every h
        sweeps (rbgs: colours), the sweeps between cache-blocked (hympi solve --halo-depth),
        against the same run at depth 1. masteronly on the hybrid layout: every
        sweep of a block runs in the wavefront on the rank's threads. Depths
        deeper than grid / ranks could exceed a rank's box and are left out.
        Every depth runs the same iterations, a multiple of the deepest, so
        that no block is short (each exchange then serves exactly h sweeps)."""
        lv = self.lv
        depths = [h for h in lv["depths"] if h == 1 or h <= lv["grid"] // self.p]
        iters = -(-lv["iters"] // max(depths)) * max(depths)
        for kernel in (k for k in buildinfo.depth_kernels(self.info) if k in self.kernel_names):
            dargs = ["solve", "--kernel", kernel, "--grid", self.grid, "--iters", str(iters),
                     "--repeat", str(lv["solve_repeat"]), "--scheme", "masteronly", "--threads", str(self.n)]
            for h in depths:
                self.add(f"depth-{kernel}-h{h}", "depth", dargs + ["--halo-depth", str(h)] + self.rpn,
                         label=f"{kernel} --halo-depth {h}", kernel=kernel, scheme="masteronly", depth=h)

    def app(self, schemes: Sequence[dict[str, Any]]) -> None:
        """The user's program, like a built-in kernel: pure MPI, then every
        scheme this build offers (every m for those that reserve threads)."""
        opts, p, n = self.opts, self.p, self.n
        kernel = app_kernel(opts)

        def command(scheme: str, threads: int, m: int) -> list[str]:
            values = {"scheme": scheme, "threads": str(threads), "reserved": str(m)}
            return [re.sub(r"\{(scheme|threads|reserved)\}", lambda g: values[g.group(1)], w)
                    for w in app_words(opts)]

        # A study from before --app-repeat (0) ran each point once.
        repeat = opts.app_repeat or 1
        if n > 1:
            self.add("solve-app-pure-mpi", "solve", [], ranks=p * n, threads=1, trace=True,
                     label=f"{kernel} pure MPI", cores_per_rank=1, app=command("masteronly", 1, 0),
                     repeat=repeat, kernel=kernel, scheme="pure-mpi")
        for s, name, m in self._scheme_runs(schemes, app=True):
            self.add(f"solve-app-{name}", "solve", [], trace=True, label=f"{kernel} {name}",
                     app=command(s["name"], n, m), repeat=repeat, kernel=kernel, scheme=s["name"], m=m)


def _rpn_scaled(setting: Setting, n: int) -> list[str]:
    return ["--ranks-per-node", str(setting.ranks_per_node * n)] if setting.ranks_per_node else []
