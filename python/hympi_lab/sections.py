"""The report's sections, one function each: numbers from analysis.py (and
the records) as paragraphs, tables and figures (content.py), each
statement judged first (judge.py). render.py orders, numbers and renders
them; the temporal-blocking section is sections_depth.py."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, TypeVar

from . import judge, schemes as schemes_mod, sections_app
from .analysis import (NOISE_FLOOR, KernelAdvice, SolveRun, Study, determined, fitted, user_kernels,
                       validations, write_json)
from .judge import num
from .content import Block, Blocks, slug
from .errors import InputError
from .figjobs import FigureJobs

K = TypeVar("K")


@dataclass
class Ctx:
    """What every section reads: the study, its fits, runs and advice."""
    study: Study
    outdir: Path
    fit: dict[str, Any]
    runs: dict[str, list[SolveRun]]
    advice: list[KernelAdvice]
    verdict: str
    plotting: Any                       # the plotting module (matplotlib loads with it)
    trace: Any                          # the trace module
    numbers: dict[str, int] = field(default_factory=dict)   # section id -> its number
    figures: Optional[FigureJobs] = None  # draws the figures (render.write_report waits for it)

    @property
    def nodes_label(self) -> str:
        st = self.study.setting
        return f"{st.get('nodes', '?')} {st.get('nodes_kind', '?')} nodes"

    def blocks(self) -> Blocks:
        return Blocks(self.outdir / "figures", jobs=self.figures)


def _xy_series(records: Iterable[Mapping[str, Any]], key: Callable[[Mapping[str, Any]], K],
               x: str, y: str) -> dict[K, tuple[list[float], list[float]]]:
    """One (xs, ys) series per key(record), in the records' order (for a line figure)."""
    series: dict[K, tuple[list[float], list[float]]] = {}
    for rec in records:
        xs, ys = series.setdefault(key(rec), ([], []))
        xs.append(float(rec[x]))
        ys.append(float(rec[y]))
    return series


# --- 1. machine and context -------------------------------------------------------------

def _machine_rows(ctx: Ctx, info_ctx: dict[str, Any]) -> list[tuple[str, Any]]:
    study, st = ctx.study, ctx.study.setting
    mach = study.header.get("machine", {})
    caches = ", ".join(f"{k} {v // 1024} KiB" for k, v in sorted(mach.get("caches", {}).items()))
    memory = mach.get("memory_bytes")
    return [
        ("hosts", ", ".join(info_ctx.get("hosts", [mach.get("host", "?")]))),
        ("cores / NUMA domains", f"{mach.get('cores', '?')} / {mach.get('numa_domains', '?')} "
                                 f"({mach.get('hwloc') or 'no hwloc'})"),
        ("caches", caches or "unknown"),
        ("memory", f"{memory / 1e9:.1f} GB" if judge.finite(memory) else "unknown"),
        ("Slurm", _slurm_jobs(study.header, mach)),
        ("nodes", ctx.nodes_label),
        ("layout", f"{st.get('ranks')} ranks x {st.get('threads')} threads"
                   + (" (oversubscribed)" if study.oversubscribed else "")),
        ("MPI library", info_ctx.get("mpi_library", "?")),
        ("MPI standard", info_ctx.get("mpi_version", "?")),
        ("thread level", f"requested {info_ctx.get('thread_level_requested', '?')}, provided "
                         f"{info_ctx.get('thread_level_provided', '?')}"),
        ("binding", st.get("binding", "?")),
        ("binding of pure-MPI runs", st.get("pure_binding", "-") if st.get("threads", 1) > 1 else "-"),
        ("a run's command (commands.log has each)", _first_command(study)),
        *sections_app.build_rows(study, info_ctx),
        ("hympi", f"{info_ctx.get('hympi_version', '?')} ({info_ctx.get('git_revision', '?')})"),
        ("study", f"{study.header.get('options', {}).get('level', '?')} level, started "
                  f"{study.header.get('created', '?')}, {len(study.status)} points"),
    ]


def _slurm_jobs(header: dict[str, Any], mach: dict[str, Any]) -> str:
    """The Slurm jobs that ran the study (the first, resumed and requeued ones)."""
    jobs = header.get("slurm_jobs") or []
    if not jobs:
        return str((mach.get("slurm") or {}).get("SLURM_JOB_ID", "none (no allocation)"))
    return "; ".join(f"job {j['job_id']}" + (f" (restart {j['restart_count']})" if j.get("restart_count") else "")
                     + f" on {j.get('nodes', '?')} node(s) {j['nodelist']}, started {j['started']}"
                     + (f", srun --mpi={j['srun_mpi']}" if j.get("srun_mpi") else "") for j in jobs)


def _first_command(study: Any) -> str:
    """The exact launch line of one run (a solve run if any), as it ran."""
    runs = [s for s in study.status.values() if s.get("command")]
    solves = [s for s in runs if s.get("step") == "solve"]
    return (solves or runs)[0]["command"] if runs else "-"


def machine(ctx: Ctx) -> list[Block]:
    b, study, st = ctx.blocks(), ctx.study, ctx.study.setting
    info = study.of("info")
    info_ctx = info[0]["context"] if info else (study.results[0]["context"] if study.results else {})
    b.table(["what", "value"], _machine_rows(ctx, info_ctx), tid="machine-table")
    cpus = info_ctx.get("thread_cpus")
    if isinstance(cpus, list):
        aff = info_ctx.get("thread_affinity") or []
        rows = []
        for r, threads in enumerate(cpus):
            for t, cpu in enumerate(threads):
                mask = aff[r][t] if r < len(aff) and t < len(aff[r]) else ""
                rows.append((r, t, cpu, mask))
        b.p("Where every thread ran (hympi info, the study's layout): CPU at the time of the "
            "call and the affinity mask it may run on.")
        b.table(["rank", "thread", "CPU", "allowed CPUs"], rows, tid="binding-table")
    if study.oversubscribed:
        n = ctx.numbers
        b.p(f"Oversubscribed: {st.get('ranks', 0) * st.get('threads', 0)} threads on "
            f"{st.get('cores', '?')} cores, so threads took turns on the cores. What holds below is "
            "what was measured: bandwidths, message counts and bytes, checksums, and each run's "
            "times and phases as they happened. What cannot be concluded from them: which scheme "
            f"is faster (section {n.get('recommendation', '?')}), whether the model describes "
            f"the schemes (section {n.get('validation', '?')}), how they scale to more nodes "
            f"(section {n.get('projection', '?')}), and whether deeper halos pay (section "
            f"{n.get('depth', '?')}).", "warn")
    sections_app.left_out(b, study)
    failed = [s for s in study.status.values() if s.get("status") != "ok"]
    if failed:
        b.p(f"{len(failed)} run(s) failed and are missing below: "
            + "; ".join(f"{s['point']} ({s.get('reason') or 'no reason recorded'})" for s in failed), "warn")
    if study.unfinished:
        b.p(f"results.jsonl ends with {len(study.unfinished)} unfinished point(s) (the study stopped "
            f"while it ran them): {', '.join(study.unfinished)}. They are left out below; "
            "'hympi-lab study --resume DIR' measures them.", "warn")
    return b.items


# --- 2-6. the communication benchmarks ---------------------------------------------------

def _beff_text(ctx: Ctx, hk: dict[str, Any]) -> str:
    summary = next((r["result"] for r in ctx.study.of("beff", "summary")), {})
    text = (f"On this machine b_eff = {num(summary.get('b_eff_MBps'), none='(no summary)')} MB/s "
            f"({num(summary.get('b_eff_per_process_MBps'), none='-')} MB/s per process)")
    if "params" in hk:
        p = hk["params"]
        half = (f" (half bandwidth at {num(p['n_half']['value'], '.3g')} bytes)"
                if determined(p['T_lat']) and determined(p['b_inf']) else "")
        return text + (f"; the ping-pong fits T_lat = {fitted(p['T_lat'], 1e6, unit=' us')} and "
                       f"b_inf = {fitted(p['b_inf'], 1e-6, '.4g', ' MB/s')}{half}.")
    return text + f"; no Hockney fit ({hk.get('error', '?')})."


def beff(ctx: Ctx) -> list[Block]:
    b, study = ctx.blocks(), ctx.study
    pts = study.of("beff", "point")
    if not pts:
        b.missing("fig-beff", "the beff step has no results")
        return b.items
    best: dict[tuple[str, int], float] = {}
    kinds: dict[str, str] = {}
    for r in pts:
        rec = r["result"]
        key = (rec["pattern"], int(rec["bytes"]))
        best[key] = max(best.get(key, 0.0), float(rec["bandwidth_MBps"]))
        kinds[rec["pattern"]] = rec.get("pattern_kind", "ring")
    patterns = {}
    for name in kinds:
        lengths = sorted(n for (p, n) in best if p == name)
        patterns[name] = (kinds[name], lengths, [best[(name, n)] for n in lengths])
    pp = sorted(((r["result"]["bytes"], r["result"]["bandwidth_MBps"]) for r in study.of("beff", "pingpong")))
    hk = ctx.fit.get("hockney", {})
    # The fitted curve only where both parameters are determined: a latency of
    # -2.1 +- 8.8 us drew a curve with a pole and a negative T_lat in its legend.
    hockney = ((hk["params"]["T_lat"]["value"], hk["params"]["b_inf"]["value"])
               if "params" in hk and determined(hk["params"]["T_lat"]) and determined(hk["params"]["b_inf"])
               else None)
    b.figure("fig-beff", lambda o: ctx.plotting.beff(
        patterns, (list(zip(*pp))[0], list(zip(*pp))[1]) if pp else None, hockney, o), _beff_text(ctx, hk))
    cyc = next((r["result"] for r in study.of("cyclic3d", "summary")), None)
    if cyc:
        b.p(f"3-D cyclic pattern (6 neighbours, process grid "
            f"{'x'.join(map(str, cyc.get('proc_grid', [])))}): average "
            f"{cyc.get('average_MBps', 0):.4g} MB/s, at Lmax {cyc.get('at_lmax_MBps', 0):.4g} MB/s "
            f"({cyc.get('at_lmax_per_process_MBps', 0):.4g} per process).")
    return b.items


def internode(ctx: Ctx) -> list[Block]:
    b, study = ctx.blocks(), ctx.study
    pts = study.of("internode", "point")
    if not pts:
        b.missing("fig-internode", "needs 2 or more nodes (the internode step did not run)")
        return b.items
    series = _xy_series(sorted((r["result"] for r in pts), key=lambda rec: (rec["bytes"], rec["k"])),
                        lambda rec: int(rec["bytes"]), "k", "bandwidth_per_node_MBps")
    sums = study.of("internode", "summary")
    share = min((float(s["result"]["masteronly_share"]) for s in sums), default=float("nan"))
    nodes_label = ctx.nodes_label
    virtual = ("; virtual nodes share one machine's memory, not a network" if
               study.setting.get("nodes_kind") == "virtual" else "")
    if judge.one_point([ks for ks, _ in series.values()]):
        # One k: no saturation curve, and "masteronly reaches 100 % of the best k" says nothing.
        b.table(["message bytes", "communicating CPUs per node k", "MB/s per node"],
                [(size, k, bw) for size, (ks, bws) in sorted(series.items()) for k, bw in zip(ks, bws)],
                tid="internode-table")
        b.p(f"Only k = {next(iter(series.values()))[0][0]:g} communicating CPU(s) per node could be "
            f"measured ({nodes_label}{virtual}): how a node's bandwidth saturates with k needs more "
            "CPUs per node.")
        return b.items
    b.figure("fig-internode", lambda o: ctx.plotting.internode(series, nodes_label, o),
             (f"masteronly reaches {share * 100:.0f} % of the node's bandwidth (one "
              f"communicating CPU per node against the best k" if judge.finite(share) else
              "no summary record of the step (masteronly's share of the best k)")
             + f"; {nodes_label}{virtual}).")
    return b.items


def ratio(ctx: Ctx) -> list[Block]:
    b = ctx.blocks()
    pts = sorted(ctx.study.of("ratio", "point"), key=lambda r: r["result"]["bytes"])
    if not pts:
        b.missing("fig-ratio", "needs 2 or more nodes (the ratio step did not run)")
        return b.items
    ls = [r["result"]["bytes"] for r in pts]
    med = [r["result"]["ratio"] for r in pts]
    hi = [r["result"]["hybrid"]["time_s"]["max"] / r["result"]["pure"]["time_s"]["min"] for r in pts]
    lo = [r["result"]["hybrid"]["time_s"]["min"] / r["result"]["pure"]["time_s"]["max"] for r in pts]
    if judge.one_point([ls]):
        b.p(f"One message size was measured ({ls[0]} bytes per pure-MPI message): there hybrid "
            f"masteronly takes {num(med[0], '.2f')}x the pure-MPI communication time (repetitions: "
            f"{num(min(lo[0], med[0]), '.2f')}x to {num(max(hi[0], med[0]), '.2f')}x; below 1: one "
            f"process per node sending the aggregate wins; {ctx.nodes_label}).")
        return b.items
    b.figure("fig-ratio", lambda o: ctx.plotting.ratio(ls, med, [min(x, y) for x, y in zip(lo, med)],
                                                       [max(x, y) for x, y in zip(hi, med)],
                                                       ctx.nodes_label, o),
             f"Hybrid masteronly takes {min(med):.2f}x to {max(med):.2f}x the pure-MPI "
             "communication time here (below 1: one process per node sending the aggregate wins).")
    return b.items


_PACK_METHODS = {"library": "the schemes' exchange (1 thread)",
                 "sendrecv": "plain MPI_Sendrecv (1 thread)"}


def pack(ctx: Ctx) -> list[Block]:
    b = ctx.blocks()
    pts = ctx.study.of("pack", "point")
    if not pts:
        b.missing("fig-pack", "the pack step has no results")
        return b.items
    series = _xy_series(sorted((r["result"] for r in pts), key=lambda rec: rec["face_bytes"]),
                        lambda rec: f"pack, {rec['threads']} thread(s)" if rec["method"] == "pack" else
                        _PACK_METHODS.get(rec["method"], f"derived datatype ({rec['method']})"),
                        "face_bytes", "bandwidth_MBps")
    ok = all(r["result"].get("halos_ok", True) for r in pts)
    checked = f"every received halo {'was checked correct' if ok else 'was NOT correct: see results.csv'}"
    if judge.one_point([xs for xs, _ in series.values()]):
        b.table(["method", "face bytes", "MB/s"],
                [(label, x, y) for label, (xs, ys) in series.items() for x, y in zip(xs, ys)],
                tid="pack-table")
        b.p(f"Exchange bandwidth of a 6-face halo by packing method at one face size; {checked}.")
        return b.items
    b.figure("fig-pack", lambda o: ctx.plotting.pack(series, o),
             f"Exchange bandwidth of a 6-face halo by packing method; {checked}.")
    return b.items


def _overlap_text(eq14: dict[str, Any], ms: Iterable[int]) -> str:
    if "params" not in eq14:
        return f"eq. (14) not fitted: {eq14.get('error', '?')}."
    p = eq14["params"]
    crossings = [f"m = {m}: crossover at nk_loc = {fitted(p[f'nk_cross_m{m}'])}"
                 for m in sorted(set(ms)) if f"nk_cross_m{m}" in p and determined(p[f"nk_cross_m{m}"])]
    if not (determined(p["comm_ratio"]) or determined(p["non_ratio"]) or crossings):
        return (f"eq. (14) not determined by these points: the uncertainty of each fitted parameter "
                f"exceeds its value (rms residual {eq14['rms_residual']:.3g}); the measured epsilon "
                "above is what the data carries.")
    return (f"Fitted x_comm/x_overlap = {fitted(p['comm_ratio'])}, x_non/x_overlap = "
            f"{fitted(p['non_ratio'])} (rms residual {eq14['rms_residual']:.3g})"
            + ("; " + "; ".join(crossings) if crossings else "; no crossover determined") + ".")


def overlap(ctx: Ctx) -> list[Block]:
    b = ctx.blocks()
    pts = ctx.study.of("overlap", "point")
    eq14 = ctx.fit.get("eq14", {})
    if not pts:
        b.missing("fig-overlap", "the overlap step has no results (needs 2+ threads)")
        return b.items
    n_ov = None
    series: dict[tuple[str, int], tuple[list, list, list, list]] = {}
    for r in sorted(pts, key=lambda r: r["result"]["nk_loc"]):
        rec = r["result"]
        if rec.get("scheme") not in ("funneled", "multiple"):
            continue
        m = 1 if rec["scheme"] == "funneled" else int(rec.get("reserved", 1))
        n_ov = int(rec["threads"])
        s = series.setdefault((rec["scheme"], m), ([], [], [], []))
        s[0].append(rec["nk_loc"])
        s[1].append(rec["epsilon"]["median"])
        s[2].append(rec["epsilon"]["min"])
        s[3].append(rec["epsilon"]["max"])
    # The fitted curve (and the crossover its legend names) only where both
    # ratios are determined: an undetermined fit drew "crossover nk_loc = 223".
    params = eq14.get("params", {})
    fitted = ((params["comm_ratio"]["value"], params["non_ratio"]["value"])
              if "params" in eq14 and determined(params["comm_ratio"]) and determined(params["non_ratio"])
              else None)
    if series and n_ov and judge.one_point([s[0] for s in series.values()]):
        b.table(["scheme", "m", "nk_loc", "epsilon median", "min", "max"],
                [(k[0], k[1], s[0][0], s[1][0], s[2][0], s[3][0]) for k, s in series.items()],
                tid="overlap-table")
        b.p(f"One depth nk_loc was measured: no curve, and eq. (14) needs two or more. "
            + _overlap_text(eq14, (k[1] for k in series)))
    elif series and n_ov:
        b.figure("fig-overlap", lambda o: ctx.plotting.overlap(series, n_ov, fitted, o),
                 _overlap_text(eq14, (k[1] for k in series)))
    else:
        b.missing("fig-overlap", "no funneled or multiple points in the overlap sweep")
    return b.items


# --- 7-11. the solve runs -----------------------------------------------------------------

def fig5(ctx: Ctx) -> list[Block]:
    b = ctx.blocks()
    measured = []
    fn_values: list[float] = []
    n5 = 0
    for kernel, kruns in ctx.runs.items():
        mo = next((s for s in kruns if s.scheme == "masteronly"), None)
        fun = next((s for s in kruns if s.scheme == "funneled"), None)
        if mo and fun and mo.fractions:
            n5 = fun.threads
            fn_values.append(mo.fractions["f_comp_non"])
            measured.append((mo.fractions["f_comm"], mo.median / fun.median, f"{kernel} funneled"))
    if measured and n5 >= 2:
        values = sorted(set(round(v, 2) for v in fn_values))[:5]
        b.figure("fig-fig5", lambda o: ctx.plotting.fig5(n5, 1, values, o, measured),
                 "Each star is a kernel: x = its masteronly f_comm, y = the measured funneled "
                 "epsilon; a star near the curve of its f_comp,non is a kernel the model describes.")
    else:
        b.missing("fig-fig5", "needs masteronly and funneled solve runs with 2+ threads")
    return b.items


def breakdown(ctx: Ctx) -> list[Block]:
    b = ctx.blocks()
    if not ctx.runs:
        b.missing("fig-breakdown", "no solve runs")
        return b.items
    bars = {}
    rows = []
    for kernel, kruns in ctx.runs.items():
        ref = next((s for s in kruns if s.scheme == "masteronly"), kruns[0])
        # a kernel run to a tolerance agrees to about it; the others to the last bits
        tol = 1e-6 if any(s.converges for s in kruns) else 1e-12
        bars[kernel] = [(s.label, {ph: statistics.fmean(v) for ph, v in s.breakdown.items() if v})
                        for s in kruns]
        for s in kruns:
            agree: Any = abs(s.l2 - ref.l2) <= tol * max(abs(ref.l2), 1e-300)
            if math.isnan(s.l2) or math.isnan(ref.l2):
                agree = "no checksum reported"
            rows.append((kernel, s.label, f"{s.ranks}x{s.threads}", s.median, s.low, s.high, s.l2, agree))
    b.figure("fig-breakdown", lambda o: ctx.plotting.breakdown(bars, o),
             "Seconds of the median repetition per phase, averaged over a rank's threads "
             "(max over ranks): idle is time a thread waited (sleeping masteronly threads, "
             f"barriers). A bar over {judge.OUTLIER_FACTOR:g} times its panel's median is cut at the "
             "top of the axis and labelled with its value.")
    b.table(["kernel", "scheme", "ranks x threads", "median s", "min s", "max s", "l2",
             "same result as masteronly"], rows, tid="solve-table")
    sections_app.agreement_blocks(b, ctx.study)
    return b.items


def validation(ctx: Ctx) -> list[Block]:
    """Eq. (3) against the measured epsilon, each row judged (judge.compare):
    no error at all on an oversubscribed machine, marked where the
    run-to-run spread covers it."""
    b = ctx.blocks()
    over = ctx.study.oversubscribed
    vals = validations(ctx.runs, schemes_mod.table(ctx.study.header.get("schemes")), over)
    if not vals:
        b.p("Not measured: needs masteronly and overlap-scheme solve runs with 2+ threads.")
        return b.items
    rows = [(v.kernel, v.label, v.n, v.predicted, v.measured, v.judged.text(NOISE_FLOOR),
             f"{num(v.spread * 100, '.0f')} %", v.note) for v in vals]
    b.table(["kernel", "scheme", "n", "epsilon predicted", "epsilon measured", "error",
             "run-to-run spread", "model"], rows, tid="validation-table")
    if over:
        b.p("Not judged: the runs were oversubscribed, so the model's premise (n threads computing "
            "at once) does not hold and the measured epsilon is the scheduler's. The table keeps "
            "what was predicted and measured, for the record; it is no test of the model.", "warn")
        return b.items
    judged = [v for v in vals if v.judged.error is not None and "bound" not in v.note]
    noisy = [v for v in judged if v.judged.verdict == "inside the spread"]
    misses = [v for v in judged if v.judged.verdict == "misses"]
    within = [v for v in judged if v.judged.verdict == "within"]
    text = (f"eq. (3), fed with each kernel's masteronly fractions, predicts the measured epsilon "
            f"within 5 % for {len(within)} of {len(judged)} runs")
    if noisy:
        text += (f"; for {len(noisy)} the run-to-run spread exceeds the difference, so the data cannot "
                 "tell model and measurement apart (marked 'inside the spread')")
    text += "."
    if misses:
        text += (" It misses by more than the spread for " + ", ".join(
            f"{v.kernel} {v.label} ({v.judged.text(NOISE_FLOOR)})" for v in misses) + ".")
    b.p(text)
    return b.items


def timelines(ctx: Ctx) -> list[Block]:
    b = ctx.blocks()
    ids: list[str] = []
    shown = 0
    if ctx.runs:
        users = user_kernels(ctx.runs)
        kernel = users[0] if users else "jacobi" if "jacobi" in ctx.runs else next(iter(ctx.runs))
        b.p(f"One Gantt chart per scheme ({kernel}; the median repetition's timed iterations). "
            "Open the trace files in Perfetto (ui.perfetto.dev) or chrome://tracing for detail.")
        for i, s in enumerate(ctx.runs[kernel]):
            if not s.trace:
                continue
            fid = slug("fig-timeline-", s.label.replace("=", ""), i, ids)
            ids.append(fid)
            try:
                tr = ctx.trace.load_trace(str(ctx.outdir / s.trace))
            except InputError as err:
                b.missing(fid, str(err))
                continue
            share = ctx.trace.busy_share(tr)
            b.figure(fid, lambda o, tr=tr: ctx.plotting.gantt(tr, o),
                     f"{s.label}: idle {share.get('idle', 0) * 100:.0f} %, MPI "
                     f"{share.get('comm', 0) * 100:.0f} %, interior compute "
                     f"{share.get('compute_interior', 0) * 100:.0f} % of all thread time "
                     f"(trace: {s.trace}).")
            shown += 1
    if not shown:
        b.missing("fig-timeline", "no traced solve runs")
    return b.items


def recommendation(ctx: Ctx) -> list[Block]:
    b = ctx.blocks()
    b.p(ctx.verdict, "verdict", "verdict")
    if ctx.advice:
        # Gains measured while threads shared cores are the scheduler's (a 247x
        # "gain over masteronly" on two cores): for the record only, not shown.
        gain: Callable[[Any], Any] = ((lambda g: "not judged") if ctx.study.oversubscribed
                                      else (lambda g: g))
        rows = [(a.kernel, a.best.label, a.runner_up.label if a.runner_up else "-",
                 gain(a.gain_pure), gain(a.gain_masteronly), "yes" if a.separated else "no",
                 a.model_verdict) for a in ctx.advice]
        b.table(["kernel", "fastest measured", "runner-up", "gain over pure MPI",
                 "gain over masteronly", "separated", "model (eq. 3 from masteronly fractions)"],
                rows, tid="advice-table")
    b.p("Confidence: a scheme is 'separated' when its slowest repetition beats the runner-up's "
        "fastest; the model's verdict uses the masteronly run's spread as the uncertainty of its "
        "fractions and says 'no clear winner' when the ranking can flip within it.")
    return b.items


# --- 12-13. projection and temporal blocking ------------------------------------------------

def projection(ctx: Ctx) -> list[Block]:
    """hympi-lab project with the study's own grid and node shape."""
    from . import project

    b = ctx.blocks()
    try:
        inputs = project.load_inputs(ctx.outdir)
        req = project.default_request(inputs)
        doc = project.document(inputs, replace(req, samples=100))
    except InputError as err:
        b.missing("fig-projection", str(err))
        return b.items
    write_json(ctx.outdir / "projection.json", doc)
    sc = doc["self_consistency"]
    opening = ("The model of 'hympi-lab project' (python/README.md, Projection) first predicts this "
               "study's own runs")
    if sc["not_judged"]:
        b.p(f"{opening} ({sc['runs']} of them). Not judged: {sc['not_judged']}.", "warn")
    else:
        b.p(f"{opening}: {sc['within']} of {sc['runs']} within {sc['limit'] * 100:.0f} %. "
            "A scheme whose own run it misses is not carried to more nodes.",
            "" if sc["within"] == sc["runs"] else "warn")
    # Errors inside the run spread are marked.
    b.table(["kernel", "scheme", "measured s/iteration", "predicted", "error", "run spread"],
            [(c["kernel"], c["scheme"], c["measured_s"], c["predicted_s"],
              "not judged" if sc["not_judged"] else
              judge.compare(c["predicted_s"], c["measured_s"], c["spread"], sc["limit"]).text(sc["limit"]),
              f"{num(c['spread'] * 100, '.0f')} %") for c in sc["checks"]], tid="projection-check")
    shown = [p for p in doc["projections"] if p["series"]]
    grid = "x".join(map(str, req.grid))
    if shown:
        b.figure("fig-projection", lambda o: ctx.plotting.projection(doc, o),
                 f"Parallel efficiency over nodes, weak (every node keeps {grid} points) and strong "
                 f"({grid} in all) scaling, {req.shape.ranks} rank(s) x {req.shape.threads} thread(s) "
                 "per node; bands: 16-84 % of the fitted parameters' spread, clipped to 0..1.")
    for p in doc["projections"]:
        b.p(_projection_sentence(p))
    b.p("Where it stops holding: " + " ".join(f"({i + 1}) {n}." for i, n in enumerate(doc["limits"])))
    return b.items


def _projection_sentence(p: dict[str, Any]) -> str:
    """One kernel and scaling: why it is not projected, or the fastest scheme
    at both ends and where it changes."""
    if p.get("withheld"):
        return f"{p['kernel']}, {p['scaling']} scaling: no projection: {p['withheld']}."
    if not p["series"]:
        return (f"{p['kernel']}, {p['scaling']} scaling: no projection: no scheme the study measured "
                "runs on the requested node shape.")
    cross = "; ".join(f"at {x['nodes']} nodes {x['from']} -> {x['to']}"
                      + ("" if x["separated"] else " (within the bands)") for x in p["crossovers"])
    last = p["series"][0]["nodes"][-1]
    gone = (f" (not projected, the model misses their own runs: {', '.join(p['left_out'])})"
            if p.get("left_out") else "")
    return (f"{p['kernel']}, {p['scaling']} scaling{gone}: fastest at 1 node {p['fastest'][0] or 'none (does not fit)'}, "
            f"at {last} nodes {p['fastest'][-1] or 'none (the grid leaves a rank no point)'}; "
            + (f"the fastest changes {cross}." if cross else "the fastest does not change."))


# --- optional: the benchmarks without a section of their own ---------------------------

# The steps the sections above present (info, solve and depth feed several).
PRESENTED_STEPS = ("info", "beff", "cyclic3d", "internode", "ratio", "pack", "overlap", "solve", "depth")


def _scalars(value: Any, prefix: str, row: dict[str, Any]) -> None:
    """A record's scalar fields, nested objects as dotted names; lists left out."""
    if isinstance(value, dict):
        for k, v in value.items():
            _scalars(v, f"{prefix}.{k}" if prefix else str(k), row)
    elif value is None or isinstance(value, (str, int, float, bool)):
        row[prefix] = value


def other_benchmarks(ctx: Ctx) -> list[Block]:
    """Each step with no section of its own (a benchmark `hympi info` lists
    that this report does not know): its records as a table, every scalar
    field a column. Empty when there is none (the section is then left out)."""
    b, study = ctx.blocks(), ctx.study
    steps = list(dict.fromkeys(r["step"] for r in study.results if r["step"] not in PRESENTED_STEPS))
    info = next((r["result"] for r in study.of("info")), {})
    described = {e.get("name"): e.get("description", "") for e in info.get("benchmarks") or []
                 if isinstance(e, dict)}
    taken: list[str] = []
    for i, step in enumerate(steps):
        records = [r for r in study.results if r["step"] == step]
        rows: list[dict[str, Any]] = []
        for r in records:
            row: dict[str, Any] = {"point": r["point"]}
            _scalars(r["result"], "", row)
            rows.append(row)
        columns = list(dict.fromkeys(k for row in rows for k in row))
        what = described.get(step) or "a benchmark of hympi bench this report has no section for"
        b.p(f"{step}: {what}. {len(records)} record{'s' if len(records) != 1 else ''}, run with "
            "its defaults (hympi bench " + step + " --help lists them).")
        tid = slug("other-", step, i, taken)
        taken.append(tid)
        b.table(columns, [[row.get(c) for c in columns] for row in rows], tid)
    return b.items
