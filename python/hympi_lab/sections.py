"""The report's sections, one function each: numbers from analysis.py (and
the records) as paragraphs, tables and figures (content.py). render.py
orders, numbers and renders them."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, TypeVar

from . import schemes as schemes_mod
from .analysis import (NOISE_FLOOR, KernelAdvice, SolveRun, Study, depth_rows, determined, fitted, user_kernels,
                       validations, write_json, fastest_deep)
from .content import Block, Blocks, slug
from .errors import InputError

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

    @property
    def nodes_label(self) -> str:
        st = self.study.setting
        return f"{st.get('nodes', '?')} {st.get('nodes_kind', '?')} nodes"

    def blocks(self) -> Blocks:
        return Blocks(self.outdir / "figures")


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
    return [
        ("hosts", ", ".join(info_ctx.get("hosts", [mach.get("host", "?")]))),
        ("cores / NUMA domains", f"{mach.get('cores')} / {mach.get('numa_domains')} ({mach.get('hwloc')})"),
        ("caches", caches or "unknown"),
        ("memory", f"{mach.get('memory_bytes', 0) / 1e9:.1f} GB"),
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
        ("compiler / flags", f"{info_ctx.get('compiler', '?')} / {info_ctx.get('flags', '?')}"),
        ("hympi", f"{info_ctx.get('hympi_version', '?')} ({info_ctx.get('git_revision', '?')})"),
        ("study", f"{study.header.get('options', {}).get('level')} level, started "
                  f"{study.header.get('created')}, {len(study.status)} points"),
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
        b.p(f"Oversubscribed: {st.get('ranks', 0) * st.get('threads', 0)} threads on "
            f"{st.get('cores')} cores. Timings below show what happens, but they cannot rank "
            "the schemes.", "warn")
    failed = [s for s in study.status.values() if s.get("status") != "ok"]
    if failed:
        b.p(f"{len(failed)} run(s) failed and are missing below: "
            + "; ".join(f"{s['point']} ({s.get('reason')})" for s in failed), "warn")
    return b.items


# --- 2-6. the communication benchmarks ---------------------------------------------------

def _beff_text(ctx: Ctx, hk: dict[str, Any]) -> str:
    summary = next((r["result"] for r in ctx.study.of("beff", "summary")), {})
    text = (f"On this machine b_eff = {summary.get('b_eff_MBps', float('nan')):.4g} MB/s "
            f"({summary.get('b_eff_per_process_MBps', float('nan')):.4g} MB/s per process)")
    if "params" in hk:
        p = hk["params"]
        half = (f" (half bandwidth at {p['n_half']['value']:.3g} bytes)"
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
    hockney = (hk["params"]["T_lat"]["value"], hk["params"]["b_inf"]["value"]) if "params" in hk else None
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
    b.figure("fig-internode", lambda o: ctx.plotting.internode(series, nodes_label, o),
             f"masteronly reaches {share * 100:.0f} % of the node's bandwidth (one "
             f"communicating CPU per node against the best k; {nodes_label}"
             + ("; virtual nodes share one machine's memory, not a network" if
                study.setting.get("nodes_kind") == "virtual" else "") + ").")
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
    b.figure("fig-pack", lambda o: ctx.plotting.pack(series, o),
             "Exchange bandwidth of a 6-face halo by packing method; every received halo "
             f"{'was checked correct' if ok else 'was NOT correct: see results.csv'}.")
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
    fitted = ((eq14["params"]["comm_ratio"]["value"], eq14["params"]["non_ratio"]["value"])
              if "params" in eq14 else None)
    if series and n_ov:
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
             "barriers).")
    b.table(["kernel", "scheme", "ranks x threads", "median s", "min s", "max s", "l2",
             "same result as masteronly"], rows, tid="solve-table")
    return b.items


def validation(ctx: Ctx) -> list[Block]:
    b = ctx.blocks()
    vals = validations(ctx.runs, schemes_mod.table(ctx.study.header.get("schemes")))
    if not vals:
        b.p("Not measured: needs masteronly and overlap-scheme solve runs with 2+ threads.")
        return b.items
    rows = [(v.kernel, v.label, v.n, v.predicted, v.measured,
             None if v.error is None else f"{v.error * 100:+.0f} %", f"{v.spread * 100:.0f} %", v.note)
            for v in vals]
    b.table(["kernel", "scheme", "n", "epsilon predicted", "epsilon measured", "error",
             "run-to-run spread", "model"], rows, tid="validation-table")
    judged = [v for v in vals if v.error is not None and "bound" not in v.note]
    good = [v for v in judged if abs(v.error) <= max(NOISE_FLOOR, v.spread)]
    bad = [v for v in judged if v not in good]
    text = (f"eq. (3), fed with each kernel's masteronly fractions, predicts the measured "
            f"epsilon within the run-to-run spread (or 5 %) for {len(good)} of {len(judged)} runs.")
    if bad:
        text += (" It fails for " + ", ".join(f"{v.kernel} {v.label} ({v.error * 100:+.0f} %)"
                                              for v in bad) + ".")
    if ctx.study.oversubscribed:
        text += (" On an oversubscribed machine the model's premise (n threads computing at "
                 "once) does not hold, so failures here say more about the machine than the model.")
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
        rows = [(a.kernel, a.best.label, a.runner_up.label if a.runner_up else "-",
                 a.gain_pure, a.gain_masteronly, "yes" if a.separated else "no", a.model_verdict)
                for a in ctx.advice]
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
    b.p(f"The model of 'hympi-lab project' (python/README.md, Projection) first predicts this "
        f"study's own runs: {sc['within']} of {sc['runs']} within {sc['limit'] * 100:.0f} %. "
        "Where it misses, the projection below inherits the miss.",
        "" if sc["within"] == sc["runs"] else "warn")
    b.table(["kernel", "scheme", "measured s/iteration", "predicted", "error", "run spread"],
            [(c["kernel"], c["scheme"], c["measured_s"], c["predicted_s"],
              schemes_mod.NO_MODEL if c["error"] is None else f"{c['error'] * 100:+.0f} %",
              f"{c['spread'] * 100:.0f} %") for c in sc["checks"]], tid="projection-check")
    grid = "x".join(map(str, req.grid))
    b.figure("fig-projection", lambda o: ctx.plotting.projection(doc, o),
             f"Parallel efficiency over nodes, weak (every node keeps {grid} points) and strong "
             f"({grid} in all) scaling, {req.shape.ranks} rank(s) x {req.shape.threads} thread(s) "
             "per node; bands: 16-84 % of the fitted parameters' spread.")
    for p in doc["projections"]:
        cross = "; ".join(f"at {x['nodes']} nodes {x['from']} -> {x['to']}"
                          + ("" if x["separated"] else " (within the bands)") for x in p["crossovers"])
        b.p(f"{p['kernel']}, {p['scaling']} scaling: fastest at 1 node "
            f"{p['fastest'][0] if p['fastest'] else '-'}, at "
            f"{p['series'][0]['nodes'][-1] if p['series'] else '-'} nodes "
            f"{p['fastest'][-1] if p['fastest'] else '-'}; "
            + (f"the fastest changes {cross}." if cross else "the fastest does not change."))
    b.p("Where it stops holding: " + " ".join(f"({i + 1}) {n}." for i, n in enumerate(doc["limits"])))
    return b.items


_DEPTH_INTRO = (
    "Halos h layers deep (with edges and corners) are exchanged every h iterations; the h "
    "sweeps between run as a cache-blocked wavefront, masteronly on the study's layout "
    "(spmv matrix-free). Fewer, larger messages and fewer passes over memory, for the same "
    "field to the last bit (the checksum column compares sum and l2 norm with the same "
    "kernel's depth-1 run exactly). Depth 1 writes its output with streaming stores where "
    "a thread's arrays exceed its L2 (hympi solve --stores auto: no write-allocate read), "
    "so deeper halos are compared with the faster one-sweep loop; the blocked sweeps "
    "store cached (the next sweep of a tile reads their output from cache).")


def _depth_table(b: Blocks, rows: list[dict[str, Any]]) -> None:
    b.table(["kernel", "depth h", "exchanges / iterations", "messages per exchange",
             "bytes per exchange", "stores", "median s", "MLUP/s", "speed vs depth 1",
             "checksum = depth 1's"],
            [(r["kernel"], r["depth"], f"{r['exchanges']} / {r['iters']}", r["messages"], r["bytes"],
              r["stores"] or "-", f"{r['median_s']:.4g}", f"{r['mlups']:.0f}",
              f"{r['speedup']:.2f}x" if math.isfinite(r["speedup"]) else "-",
              {True: "yes", False: "NO", None: "-"}[r["same_field"]]) for r in rows],
            tid="depth-table")


def depth(ctx: Ctx) -> list[Block]:
    """Temporal blocking: jacobi and spmv --halo-depth h against depth 1."""
    b, study = ctx.blocks(), ctx.study
    rows = depth_rows(study)
    if not rows:
        b.missing("depth-table", "no run of the depth step (it runs when --steps includes depth "
                  "and jacobi or spmv is among the kernels)")
        return b.items
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    lacking = [k for k in kernels if min(r["depth"] for r in rows if r["kernel"] == k) != 1]
    if lacking:
        b.p(f"No depth-1 run of {', '.join(lacking)} to compare with (it failed or did not run): "
            "its speed and checksum columns are empty.", "warn")
    b.p(_DEPTH_INTRO)
    _depth_table(b, rows)
    st = study.setting
    if study.oversubscribed:
        b.p(f"These runs were oversubscribed ({st.get('ranks', 0) * st.get('threads', 0)} threads "
            f"on {st.get('cores', '?')} cores): the speeds are indicative only; the exchange "
            "counts, bytes and checksums hold.")
    for kernel in (k for k in kernels if k not in lacking):
        mine = [r for r in rows if r["kernel"] == kernel]
        best = fastest_deep(mine)
        if best is not None and best["speedup"] > 1:
            b.p(f"{kernel}: fastest here --halo-depth {best['depth']}, {best['speedup']:.2f}x depth 1 "
                f"({best['exchanges']} exchanges instead of {mine[0]['exchanges']}).")
        else:
            b.p(f"{kernel}: no depth beat depth 1 here (the grid per rank may already sit in "
                "cache, or the run is too short to tell).")
    b.p("Your own two-array stencil gets the same through Domain::sweep_block / "
        "hympi_sweep_block (docs/user-kernels.md).")
    b.p(f"Section {ctx.numbers.get('projection', '?')} carries these runs to more nodes as their own "
        "series (masteronly depth h, "
        "or pure MPI depth h with one thread per rank): on one machine the gain is fewer passes "
        "over memory; across nodes a deeper halo also divides the start-ups per iteration by h "
        "(an inner rank of a 3-D split sends 26 messages instead of 6 past depth 1, so fewer "
        "from h = 5 on), and pays for the halo points each block recomputes.")
    return b.items


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
