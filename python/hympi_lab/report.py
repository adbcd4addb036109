"""`hympi-lab report DIR`: one self-contained HTML report of a study, plus results.csv.

Reads DIR/study.json and the complete points of DIR/results.jsonl, fits the
model (Hockney from b_eff's ping-pong, eq. (14) from the overlap sweep; kept
in DIR/fit.json), draws the figures (DIR/figures/*.png, embedded in the page
as base64 so it reads offline) and writes DIR/report.html and
DIR/results.csv. Every section and figure has a stable element id
(SECTION_IDS, and the figure ids in each section) for tests and links.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import math
import os
import statistics
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, TypeVar

from . import advise as advise_mod, fit as fit_mod, model
from .errors import InputError, OutputError
from .results import inter_share, write_atomic
from .studydir import RESULTS, STUDY_FILE, load_results, load_study

K = TypeVar("K")

SECTION_IDS = ("machine", "beff", "internode", "ratio", "pack", "overlap", "fig5", "breakdown",
               "validation", "timelines", "recommendation", "projection", "depth")

# Run-to-run spread below which a model error is not distinguishable from noise.
NOISE_FLOOR = 0.05


@dataclass
class Study:
    path: Path
    header: dict[str, Any]
    results: list[dict[str, Any]]
    status: dict[str, dict[str, Any]]

    def of(self, step: str, kind: Optional[str] = None) -> list[dict[str, Any]]:
        return [r for r in self.results if r["step"] == step
                and (kind is None or r["result"].get("kind") == kind)]

    @property
    def setting(self) -> dict[str, Any]:
        return self.header.get("setting", {})

    @property
    def oversubscribed(self) -> bool:
        """Whether threads shared cores: the study's setting says so, or the
        context of any of its runs does (a study.json edited or from another
        machine must not turn such timings into a recommendation)."""
        return bool(self.setting.get("oversubscribed")) or any(
            r["context"].get("oversubscribed") is True for r in self.results)


def load(outdir: Path) -> Study:
    header = load_study(outdir)
    results, status = load_results(outdir / RESULTS)
    return Study(outdir, header, results, status)


# --- analysis (pure: numbers from records) --------------------------------------------

def fits(study: Study) -> dict[str, Any]:
    """Hockney from the ping-pong, eq. (14) from the overlap points; errors kept as text."""
    out: dict[str, Any] = {}
    pp = study.of("beff", "pingpong")
    if pp:
        lengths = [r["result"]["bytes"] for r in pp]
        times = [r["result"]["time_s"]["median"] for r in pp]
        try:
            f = fit_mod.fit_hockney(lengths, times)
            out["hockney"] = _fit_json(f)
        except InputError as err:
            out["hockney"] = {"error": str(err)}
    else:
        out["hockney"] = {"error": "no ping-pong measured (the beff step did not run)"}
    nk, eps, ms, ns = [], [], [], set()
    for r in study.of("overlap", "point"):
        rec = r["result"]
        if rec.get("scheme") not in ("funneled", "multiple"):
            continue
        m = 1 if rec["scheme"] == "funneled" else int(rec.get("reserved", 1))
        nk.append(float(rec["nk_loc"]))
        eps.append(float(rec["epsilon"]["median"]))
        ms.append(m)
        ns.add(int(rec["threads"]))
    if len(ns) == 1 and nk:
        n = ns.pop()
        try:
            f = fit_mod.fit_eq14(nk, eps, n, ms)
            out["eq14"] = _fit_json(f)
            out["eq14"]["n"] = n
        except InputError as err:
            out["eq14"] = {"error": str(err)}
    else:
        out["eq14"] = {"error": "no overlap points of funneled or multiple (needs 2+ threads)"}
    return out


def _fit_json(f: fit_mod.FitResult) -> dict[str, Any]:
    return {"params": {k: {"value": p.value, "sigma": p.sigma, "fixed": p.fixed}
                       for k, p in f.params.items()},
            "n_points": f.n_points, "dof": f.dof, "rms_residual": f.rms_residual}


@dataclass
class SolveRun:
    point: str
    kernel: str
    scheme: str          # scheme name, or "pure-mpi"
    label: str           # e.g. "multiple m=2"
    m: int
    threads: int
    ranks: int
    median: float
    low: float
    high: float
    l2: float
    fractions: dict[str, float]
    breakdown: dict[str, list[float]]
    trace: str
    iterations: Optional[int] = None
    inter_share: Optional[float] = None  # inter-node bytes / all bytes per exchange


def _number_or_nan(value: Any) -> float:
    """A record's number, or NaN when it has none (a user's report without a checksum)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def user_kernels(runs: dict[str, list[SolveRun]]) -> list[str]:
    """The kernels measured from a user's program (hympi-lab study --app)."""
    return [k for k in runs if k.startswith("user:")]


def solve_runs(study: Study) -> dict[str, list[SolveRun]]:
    """Solve runs by kernel, pure MPI first, then masteronly, then the rest."""
    by_kernel: dict[str, list[SolveRun]] = {}
    for r in study.of("solve", "solve"):
        rec = r["result"]
        meta = study.status.get(r["point"], {}).get("meta", {})
        scheme = "pure-mpi" if meta.get("scheme") == "pure-mpi" else rec["scheme"]
        m = int(rec.get("reserved", 0))
        label = {"pure-mpi": "pure MPI"}.get(scheme, scheme + (f" m={m}" if scheme == "multiple" else ""))
        if scheme == "masteronly" and int(rec["threads"]) == 1:
            label = "masteronly = pure MPI"
        by_kernel.setdefault(rec["kernel"], []).append(SolveRun(
            r["point"], rec["kernel"], scheme, label, m, int(rec["threads"]),
            int(r["context"].get("ranks", 0)), rec["time_s"]["median"], rec["time_s"]["min"],
            rec["time_s"]["max"], _number_or_nan(rec.get("l2")), rec.get("fractions", {}),
            rec.get("breakdown_s", {}), r.get("trace", ""), rec.get("iterations"),
            inter_share(rec.get("bytes_per_exchange"))))
    order = {"pure-mpi": 0, "masteronly": 1}
    for runs in by_kernel.values():
        runs.sort(key=lambda s: (order.get(s.scheme, 2), s.scheme, s.m))
    return by_kernel


@dataclass
class Validation:
    kernel: str
    label: str
    n: int
    m: int
    predicted: Optional[float]
    measured: float
    spread: float        # relative run-to-run spread of the two runs' times
    note: str

    @property
    def error(self) -> Optional[float]:
        return None if self.predicted is None else self.predicted / self.measured - 1.0


def validations(runs: dict[str, list[SolveRun]]) -> list[Validation]:
    """Eq. (3) from each kernel's masteronly fractions against the measured epsilon."""
    rows = []
    for kernel, kruns in runs.items():
        mo = next((s for s in kruns if s.scheme == "masteronly"), None)
        if mo is None or not mo.fractions:
            continue
        fc, fn = mo.fractions.get("f_comm", 0.0), mo.fractions.get("f_comp_non", 0.0)
        for s in kruns:
            if s.scheme in ("pure-mpi", "masteronly", "masteronly-threaded"):
                continue
            measured = mo.median / s.median
            spread = (mo.high - mo.low) / mo.median + (s.high - s.low) / s.median
            n = s.threads
            pred, note = None, ""
            if s.scheme in ("funneled", "multiple") and n >= 2:
                m = 1 if s.scheme == "funneled" else s.m
                pred = model.epsilon(fc, fn, n, m)
                note = f"eq. (3), n = {n}, m = {m}"
            elif s.scheme == "adaptive":
                pred = model.epsilon_adaptive_bound(fc, fn, n)
                note = "upper bound (ideal load balancing)"
            elif s.scheme == "shared-window" and mo.inter_share is not None:
                # masteronly's split of the bytes: shared-window's own moves
                # its intra-node faces as zero-copy.
                pred = model.epsilon_shared_window(fc, fn, n, mo.inter_share)
                note = (f"zero-copy intra-node faces, inter-node share {mo.inter_share:.2f} "
                        "(this package's model)")
            elif s.scheme == "partitioned":
                pred = model.epsilon_partitioned(fc, fn, n)
                note = "asynchronous progress assumed (this package's model)"
            else:
                note = "no equation in the papers for this scheme"
            rows.append(Validation(kernel, s.label, n, s.m, pred, measured, spread, note))
    return rows


@dataclass
class KernelAdvice:
    kernel: str
    best: SolveRun
    runner_up: Optional[SolveRun]
    separated: bool
    gain_pure: Optional[float]
    gain_masteronly: Optional[float]
    model_verdict: str
    model_best: str
    model_eps: Optional[float]


def kernel_advice(runs: dict[str, list[SolveRun]]) -> list[KernelAdvice]:
    out = []
    for kernel, kruns in runs.items():
        ranked = sorted(kruns, key=lambda s: s.median)
        best = ranked[0]
        second = ranked[1] if len(ranked) > 1 else None
        # Separated: the best's slowest repetition beats the runner-up's fastest.
        separated = second is not None and best.high < second.low
        # With one thread per rank, masteronly is pure MPI (class 1).
        pure = next((s for s in kruns if s.scheme == "pure-mpi"
                     or (s.scheme == "masteronly" and s.threads == 1)), None)
        mo = next((s for s in kruns if s.scheme == "masteronly"), None)
        verdict, model_best, model_eps = "no masteronly run: the model has no inputs", "", None
        if mo is not None and mo.threads >= 2 and mo.fractions:
            fc, fn = mo.fractions["f_comm"], mo.fractions["f_comp_non"]
            rel = (mo.high - mo.low) / mo.median if mo.median > 0 else 0.0
            samples = advise_mod.box_samples(fc, max(rel * fc, 0.01), fn, max(rel * fn, 0.01))
            try:
                adv = advise_mod.advise(fc, fn, mo.threads, samples)
                verdict, model_best, model_eps = adv.verdict, adv.best.label, adv.best.epsilon
            except InputError as err:
                verdict = f"the model cannot advise: {err}"
        out.append(KernelAdvice(kernel, best, second, separated,
                                pure.median / best.median if pure else None,
                                mo.median / best.median if mo else None,
                                verdict, model_best, model_eps))
    return out


def recommendation(study: Study, advice: list[KernelAdvice], fit: dict[str, Any]) -> str:
    """The one-paragraph recommendation, or why there is none."""
    st = study.setting
    ranks, threads, cores = st.get("ranks", 0), st.get("threads", 0), st.get("cores", 0)
    if not advice:
        return ("No recommendation: no solve runs were measured (the solve step did not run or "
                "every run failed)." + ("" if study.oversubscribed else depth_advice(study)))
    layout = f"{ranks} ranks x {threads} threads"
    # With the user's program measured (--app), the recommendation is for it.
    users = [a for a in advice if a.kernel.startswith("user:")]
    code = ""
    if users:
        advice = users
        code = " for your code (" + ", ".join(a.kernel for a in users) + ")"
    if study.oversubscribed:
        fastest = ", ".join(f"{a.kernel}: {a.best.label}" for a in advice)
        shared = (f"The study ran {ranks * threads} threads ({layout}) on {cores} cores, so threads "
                  "share cores" if st.get("oversubscribed") else
                  "Its runs say they were oversubscribed (their context blocks), so threads shared cores")
        return (f"No recommendation{code}: this machine cannot separate the schemes. {shared} "
                f"and the timings measure the operating system's scheduling more than the schemes "
                f"(for the record, fastest here: {fastest}). Run the study where every thread "
                f"has a core of its own (e.g. on a cluster node, --ranks and --threads with "
                f"ranks x threads <= cores).")
    clear = [a for a in advice if a.separated]
    parts = []
    for a in advice:
        gains = []
        if a.gain_pure is not None:
            gains.append(f"{a.gain_pure:.2f}x pure MPI")
        if a.gain_masteronly is not None:
            gains.append(f"{a.gain_masteronly:.2f}x masteronly")
        sure = ("clearly (repetitions do not overlap)" if a.separated else
                f"not separated from {a.runner_up.label if a.runner_up else '-'} "
                "(repetitions overlap)")
        model_part = (f"; the model predicts {a.model_best} (epsilon {a.model_eps:.2f})"
                      if a.model_eps is not None else "")
        parts.append(f"{a.kernel}: {a.best.label}, {', '.join(gains)}, {sure}{model_part}")
    eq14 = fit.get("eq14", {})
    cross = ""
    if "params" in eq14 and "nk_cross_m1" in eq14["params"]:
        p = eq14["params"]["nk_cross_m1"]
        cross = (f" From the overlap sweep, funneled beats masteronly below nk_loc = "
                 f"{p['value']:.3g} +- {p['sigma']:.2g} planes per process (eq. 14 fit).")
    # Temporal blocking is measured for the built-in kernels only.
    extra = cross + ("" if users else depth_advice(study))
    if not clear:
        return (f"No clear winner{code} on this machine with {layout}: the run-to-run spread covers the "
                f"differences between the best schemes. " + "; ".join(parts) + "." + extra)
    votes: dict[str, int] = {}
    for a in clear:
        votes[a.best.label] = votes.get(a.best.label, 0) + 1
    winner = max(votes, key=lambda k: votes[k])
    return (f"Recommended{code}: {winner} with {layout} (best, clearly separated, for "
            f"{votes[winner]} of {len(advice)} kernel{'s' if len(advice) != 1 else ''}). " + "; ".join(parts) + "." + extra)


# --- output ---------------------------------------------------------------------------

def write_csv(study: Study, path: Path) -> int:
    """Every measured point, one row each: point, step and the flattened result."""
    rows = []
    for r in study.results:
        row = {"point": r["point"], "step": r["step"], "source": r["source"]}
        _flatten(r["result"], "", row)
        rows.append(row)
    for key, st in study.status.items():
        if st.get("status") != "ok":
            rows.append({"point": key, "step": st["step"], "status": st["status"],
                         "reason": st.get("reason", "")})
    columns: list[str] = []
    for row in rows:
        for k in row:
            if k not in columns:
                columns.append(k)
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns)
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(path, text.getvalue())
    return len(rows)


def _flatten(value: Any, prefix: str, row: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else k, row)
    elif isinstance(value, list):
        row[prefix] = json.dumps(value, separators=(",", ":"))
    else:
        row[prefix] = value


class Page:
    """Accumulates the HTML body; figures are embedded as base64 PNG."""

    def __init__(self, figdir: Path):
        self.parts: list[str] = []
        self.figdir = figdir
        self.figures: list[str] = []

    def section(self, sid: str, title: str) -> None:
        if any("<section" in p for p in self.parts):
            self.parts.append("</section>")
        self.parts.append(f'<section id="{sid}"><h2>{html.escape(title)}</h2>')

    def p(self, text: str, cls: str = "") -> None:
        attr = f' class="{cls}"' if cls else ""
        self.parts.append(f"<p{attr}>{html.escape(text)}</p>")

    def table(self, columns: Sequence[str], rows: Sequence[Sequence[Any]], tid: str = "") -> None:
        attr = f' id="{tid}"' if tid else ""
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>"
                       for row in rows)
        self.parts.append(f"<table{attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")

    def figure(self, fid: str, draw, caption: str) -> None:
        """draw(paths) writes the PNG; a failure becomes a note, never a lost report."""
        path = self.figdir / f"{fid}.png"
        try:
            draw([str(path)])
            data = base64.b64encode(path.read_bytes()).decode("ascii")
        except (InputError, ValueError, OSError, KeyError, IndexError, ZeroDivisionError) as err:
            self.parts.append(f'<figure id="{fid}" class="missing"><figcaption>Figure not drawn: '
                              f"{html.escape(str(err))}</figcaption></figure>")
            return
        self.figures.append(fid)
        self.parts.append(f'<figure id="{fid}"><img alt="{html.escape(caption)}" '
                          f'src="data:image/png;base64,{data}"><figcaption>{html.escape(caption)}'
                          "</figcaption></figure>")

    def missing(self, fid: str, why: str) -> None:
        self.parts.append(f'<figure id="{fid}" class="missing"><figcaption>Not measured: '
                          f"{html.escape(why)}</figcaption></figure>")

    def html(self, title: str) -> str:
        body = "\n".join(self.parts + (["</section>"] if any("<section" in p for p in self.parts) else []))
        return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>"
                f"<body><h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n")


_CSS = ("body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;color:#222}"
        "table{border-collapse:collapse;margin:.5em 0;font-size:90%}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}th{background:#f0f0f0}"
        "figure{margin:1em 0}img{max-width:100%}figcaption{font-style:italic;color:#444}"
        ".verdict{font-weight:bold;font-size:110%;background:#f4f8ff;padding:.6em;border-left:4px solid #4c72b0}"
        ".warn{background:#fff4e5;padding:.4em;border-left:4px solid #dd8452}"
        "section{border-top:1px solid #ddd;margin-top:1.5em}")


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if v == 0:
            return "0"
        return f"{v:.4g}"
    return str(v)


def _xy_series(records: Iterable[Mapping[str, Any]], key: Callable[[Mapping[str, Any]], K],
               x: str, y: str) -> dict[K, tuple[list[float], list[float]]]:
    """One (xs, ys) series per key(record), in the records' order (for a line figure)."""
    series: dict[K, tuple[list[float], list[float]]] = {}
    for rec in records:
        xs, ys = series.setdefault(key(rec), ([], []))
        xs.append(float(rec[x]))
        ys.append(float(rec[y]))
    return series


def write_report(outdir: Path) -> str:
    """Writes report.html, results.csv, fit.json and figures/; returns the recommendation."""
    from . import plotting, trace as trace_mod  # matplotlib loads only here

    outdir = Path(outdir)
    study = load(outdir)
    figdir = outdir / "figures"
    try:
        figdir.mkdir(exist_ok=True)
    except OSError as err:
        raise OutputError(f"cannot create {figdir}: {err.strerror or err}") from None
    fit = fits(study)
    _write_json(outdir / "fit.json", fit)
    runs = solve_runs(study)
    advice = kernel_advice(runs)
    verdict = recommendation(study, advice, fit)
    st = study.setting
    nodes_label = f"{st.get('nodes', '?')} {st.get('nodes_kind', '?')} nodes"
    page = Page(figdir)
    page.parts.append(f'<p class="verdict" id="summary">{html.escape(verdict)} '
                      '<a href="#recommendation">Details</a></p>')

    # 1. machine and context
    page.section("machine", "1. Machine and context")
    info = study.of("info")
    ctx = info[0]["context"] if info else (study.results[0]["context"] if study.results else {})
    mach = study.header.get("machine", {})
    caches = ", ".join(f"{k} {v // 1024} KiB" for k, v in sorted(mach.get("caches", {}).items()))
    page.table(["what", "value"], [
        ("hosts", ", ".join(ctx.get("hosts", [mach.get("host", "?")]))),
        ("cores / NUMA domains", f"{mach.get('cores')} / {mach.get('numa_domains')} ({mach.get('hwloc')})"),
        ("caches", caches or "unknown"),
        ("memory", f"{mach.get('memory_bytes', 0) / 1e9:.1f} GB"),
        ("Slurm allocation", (mach.get("slurm") or {}).get("SLURM_JOB_ID", "none")),
        ("nodes", nodes_label),
        ("layout", f"{st.get('ranks')} ranks x {st.get('threads')} threads"
                   + (" (oversubscribed)" if study.oversubscribed else "")),
        ("MPI library", ctx.get("mpi_library", "?")),
        ("MPI standard", ctx.get("mpi_version", "?")),
        ("thread level", f"requested {ctx.get('thread_level_requested', '?')}, provided "
                         f"{ctx.get('thread_level_provided', '?')}"),
        ("binding", st.get("binding", "?")),
        ("binding of pure-MPI runs", st.get("pure_binding", "-") if st.get("threads", 1) > 1 else "-"),
        ("compiler / flags", f"{ctx.get('compiler', '?')} / {ctx.get('flags', '?')}"),
        ("hympi", f"{ctx.get('hympi_version', '?')} ({ctx.get('git_revision', '?')})"),
        ("study", f"{study.header.get('options', {}).get('level')} level, started "
                  f"{study.header.get('created')}, {len(study.status)} points"),
    ], tid="machine-table")
    cpus = ctx.get("thread_cpus")
    if isinstance(cpus, list):
        aff = ctx.get("thread_affinity") or []
        rows = []
        for r, threads in enumerate(cpus):
            for t, cpu in enumerate(threads):
                mask = aff[r][t] if r < len(aff) and t < len(aff[r]) else ""
                rows.append((r, t, cpu, mask))
        page.p("Where every thread ran (hympi info, the study's layout): CPU at the time of the "
               "call and the affinity mask it may run on.")
        page.table(["rank", "thread", "CPU", "allowed CPUs"], rows, tid="binding-table")
    if study.oversubscribed:
        page.p(f"Oversubscribed: {st.get('ranks', 0) * st.get('threads', 0)} threads on "
               f"{st.get('cores')} cores. Timings below show what happens, but they cannot rank "
               "the schemes.", "warn")
    failed = [s for s in study.status.values() if s.get("status") != "ok"]
    if failed:
        page.p(f"{len(failed)} run(s) failed and are missing below: "
               + "; ".join(f"{s['point']} ({s.get('reason')})" for s in failed), "warn")

    # 2. b_eff
    page.section("beff", "2. Effective bandwidth (b_eff) over message length")
    pts = study.of("beff", "point")
    if pts:
        best: dict[tuple[str, int], float] = {}
        kinds: dict[str, str] = {}
        for r in pts:
            rec = r["result"]
            key = (rec["pattern"], int(rec["bytes"]))
            best[key] = max(best.get(key, 0.0), float(rec["bandwidth_MBps"]))
            kinds[rec["pattern"]] = rec.get("pattern_kind", "ring")
        patterns = {}
        for name in kinds:
            lengths = sorted(b for (p, b) in best if p == name)
            patterns[name] = (kinds[name], lengths, [best[(name, b)] for b in lengths])
        pp = sorted(((r["result"]["bytes"], r["result"]["bandwidth_MBps"])
                     for r in study.of("beff", "pingpong")))
        hk = fit.get("hockney", {})
        hockney = ((hk["params"]["T_lat"]["value"], hk["params"]["b_inf"]["value"])
                   if "params" in hk else None)
        summary = next((r["result"] for r in study.of("beff", "summary")), {})
        text = (f"On this machine b_eff = {summary.get('b_eff_MBps', float('nan')):.4g} MB/s "
                f"({summary.get('b_eff_per_process_MBps', float('nan')):.4g} MB/s per process)")
        if hockney:
            p = hk["params"]
            text += (f"; the ping-pong fits T_lat = {p['T_lat']['value'] * 1e6:.3g} +- "
                     f"{p['T_lat']['sigma'] * 1e6:.2g} us and b_inf = {p['b_inf']['value'] / 1e6:.4g} "
                     f"+- {p['b_inf']['sigma'] / 1e6:.2g} MB/s (half bandwidth at "
                     f"{p['n_half']['value']:.3g} bytes).")
        else:
            text += f"; no Hockney fit ({hk.get('error', '?')})."
        page.figure("fig-beff", lambda o: plotting.beff(
            patterns, (list(zip(*pp))[0], list(zip(*pp))[1]) if pp else None, hockney, o), text)
        cyc = next((r["result"] for r in study.of("cyclic3d", "summary")), None)
        if cyc:
            page.p(f"3-D cyclic pattern (6 neighbours, process grid "
                   f"{'x'.join(map(str, cyc.get('proc_grid', [])))}): average "
                   f"{cyc.get('average_MBps', 0):.4g} MB/s, at Lmax {cyc.get('at_lmax_MBps', 0):.4g} MB/s "
                   f"({cyc.get('at_lmax_per_process_MBps', 0):.4g} per process).")
    else:
        page.missing("fig-beff", "the beff step has no results")

    # 3. internode
    page.section("internode", "3. Inter-node bandwidth over communicating CPUs (seed 001 sec. 3.1)")
    pts = study.of("internode", "point")
    if pts:
        series = _xy_series(sorted((r["result"] for r in pts), key=lambda rec: (rec["bytes"], rec["k"])),
                            lambda rec: int(rec["bytes"]), "k", "bandwidth_per_node_MBps")
        sums = study.of("internode", "summary")
        share = min((float(s["result"]["masteronly_share"]) for s in sums), default=float("nan"))
        page.figure("fig-internode", lambda o: plotting.internode(series, nodes_label, o),
                    f"masteronly reaches {share * 100:.0f} % of the node's bandwidth (one "
                    f"communicating CPU per node against the best k; {nodes_label}"
                    + ("; virtual nodes share one machine's memory, not a network" if
                       st.get("nodes_kind") == "virtual" else "") + ").")
    else:
        page.missing("fig-internode", "needs 2 or more nodes (the internode step did not run)")

    # 4. ratio
    page.section("ratio", "4. T_hybrid / T_pure over message size (seed 000 Fig. 3)")
    pts = sorted(study.of("ratio", "point"), key=lambda r: r["result"]["bytes"])
    if pts:
        ls = [r["result"]["bytes"] for r in pts]
        med = [r["result"]["ratio"] for r in pts]
        hi = [r["result"]["hybrid"]["time_s"]["max"] / r["result"]["pure"]["time_s"]["min"] for r in pts]
        lo = [r["result"]["hybrid"]["time_s"]["min"] / r["result"]["pure"]["time_s"]["max"] for r in pts]
        page.figure("fig-ratio", lambda o: plotting.ratio(ls, med, [min(a, b) for a, b in zip(lo, med)],
                                                          [max(a, b) for a, b in zip(hi, med)],
                                                          nodes_label, o),
                    f"Hybrid masteronly takes {min(med):.2f}x to {max(med):.2f}x the pure-MPI "
                    "communication time here (below 1: one process per node sending the aggregate wins).")
    else:
        page.missing("fig-ratio", "needs 2 or more nodes (the ratio step did not run)")

    # 5. pack
    page.section("pack", "5. Thread-parallel packing vs derived datatypes")
    pts = study.of("pack", "point")
    if pts:
        series2 = _xy_series(sorted((r["result"] for r in pts), key=lambda rec: rec["face_bytes"]),
                             lambda rec: {"pack": f"pack, {rec['threads']} thread(s)",
                                          "library": "the schemes' exchange (1 thread)",
                                          "sendrecv": "plain MPI_Sendrecv (1 thread)"}.get(
                                              rec["method"], f"derived datatype ({rec['method']})"),
                             "face_bytes", "bandwidth_MBps")
        ok = all(r["result"].get("halos_ok", True) for r in pts)
        page.figure("fig-pack", lambda o: plotting.pack(series2, o),
                    "Exchange bandwidth of a 6-face halo by packing method; every received halo "
                    f"{'was checked correct' if ok else 'was NOT correct: see results.csv'}.")
    else:
        page.missing("fig-pack", "the pack step has no results")

    # 6. overlap
    page.section("overlap", "6. Measured epsilon over nk_loc with eq. (14) (seed 000 Fig. 6-7)")
    pts = study.of("overlap", "point")
    eq14 = fit.get("eq14", {})
    n_ov = None
    if pts:
        series3: dict[tuple[str, int], tuple[list, list, list, list]] = {}
        for r in sorted(pts, key=lambda r: r["result"]["nk_loc"]):
            rec = r["result"]
            if rec.get("scheme") not in ("funneled", "multiple"):
                continue
            m = 1 if rec["scheme"] == "funneled" else int(rec.get("reserved", 1))
            n_ov = int(rec["threads"])
            s = series3.setdefault((rec["scheme"], m), ([], [], [], []))
            s[0].append(rec["nk_loc"])
            s[1].append(rec["epsilon"]["median"])
            s[2].append(rec["epsilon"]["min"])
            s[3].append(rec["epsilon"]["max"])
        fitted = ((eq14["params"]["comm_ratio"]["value"], eq14["params"]["non_ratio"]["value"])
                  if "params" in eq14 else None)
        if fitted:
            p = eq14["params"]
            text = (f"Fitted x_comm/x_overlap = {p['comm_ratio']['value']:.3g} +- "
                    f"{p['comm_ratio']['sigma']:.2g}, x_non/x_overlap = {p['non_ratio']['value']:.3g} +- "
                    f"{p['non_ratio']['sigma']:.2g} (rms residual {eq14['rms_residual']:.3g}); "
                    + "; ".join(f"m = {m}: crossover at nk_loc = {p[f'nk_cross_m{m}']['value']:.3g} +- "
                                f"{p[f'nk_cross_m{m}']['sigma']:.2g}" for m in sorted({k[1] for k in series3})
                                if f"nk_cross_m{m}" in p) + ".")
        else:
            text = f"eq. (14) not fitted: {eq14.get('error', '?')}."
        if series3 and n_ov:
            page.figure("fig-overlap", lambda o: plotting.overlap(series3, n_ov, fitted, o), text)
        else:
            page.missing("fig-overlap", "no funneled or multiple points in the overlap sweep")
    else:
        page.missing("fig-overlap", "the overlap step has no results (needs 2+ threads)")

    # 7. Fig. 5 map
    page.section("fig5", "7. The Fig. 5 map with this machine's measured points")
    measured = []
    fn_values: list[float] = []
    n5 = 0
    for kernel, kruns in runs.items():
        mo = next((s for s in kruns if s.scheme == "masteronly"), None)
        fun = next((s for s in kruns if s.scheme == "funneled"), None)
        if mo and fun and mo.fractions:
            n5 = fun.threads
            fn_values.append(mo.fractions["f_comp_non"])
            measured.append((mo.fractions["f_comm"], mo.median / fun.median, f"{kernel} funneled"))
    if measured and n5 >= 2:
        values = sorted(set(round(v, 2) for v in fn_values))[:5]
        page.figure("fig-fig5", lambda o: plotting.fig5(n5, 1, values, o, measured),
                    "Each star is a kernel: x = its masteronly f_comm, y = the measured funneled "
                    "epsilon; a star near the curve of its f_comp,non is a kernel the model describes.")
    else:
        page.missing("fig-fig5", "needs masteronly and funneled solve runs with 2+ threads")

    # 8. breakdown
    page.section("breakdown", "8. Where the time goes, per kernel and scheme")
    if runs:
        bars = {}
        rows = []
        for kernel, kruns in runs.items():
            ref = next((s for s in kruns if s.scheme == "masteronly"), kruns[0])
            tol = 1e-6 if kernel == "cg" else 1e-12
            bars[kernel] = [(s.label, {ph: statistics.fmean(v) for ph, v in s.breakdown.items() if v})
                            for s in kruns]
            for s in kruns:
                agree: Any = abs(s.l2 - ref.l2) <= tol * max(abs(ref.l2), 1e-300)
                if math.isnan(s.l2) or math.isnan(ref.l2):
                    agree = "no checksum reported"
                rows.append((kernel, s.label, f"{s.ranks}x{s.threads}", s.median, s.low, s.high,
                             s.l2, agree))
        page.figure("fig-breakdown", lambda o: plotting.breakdown(bars, o),
                    "Seconds of the median repetition per phase, averaged over a rank's threads "
                    "(max over ranks): idle is time a thread waited (sleeping masteronly threads, "
                    "barriers).")
        page.table(["kernel", "scheme", "ranks x threads", "median s", "min s", "max s", "l2",
                    "same result as masteronly"], rows, tid="solve-table")
    else:
        page.missing("fig-breakdown", "no solve runs")

    # 9. validation
    page.section("validation", "9. Model vs measurement")
    vals = validations(runs)
    if vals:
        rows = [(v.kernel, v.label, v.n, v.predicted, v.measured,
                 None if v.error is None else f"{v.error * 100:+.0f} %", f"{v.spread * 100:.0f} %", v.note)
                for v in vals]
        page.table(["kernel", "scheme", "n", "epsilon predicted", "epsilon measured", "error",
                    "run-to-run spread", "model"], rows, tid="validation-table")
        judged = [v for v in vals if v.error is not None and "bound" not in v.note]
        good = [v for v in judged if abs(v.error) <= max(NOISE_FLOOR, v.spread)]
        bad = [v for v in judged if v not in good]
        text = (f"eq. (3), fed with each kernel's masteronly fractions, predicts the measured "
                f"epsilon within the run-to-run spread (or 5 %) for {len(good)} of {len(judged)} runs.")
        if bad:
            text += (" It fails for " + ", ".join(f"{v.kernel} {v.label} ({v.error * 100:+.0f} %)"
                                                  for v in bad) + ".")
        if study.oversubscribed:
            text += (" On an oversubscribed machine the model's premise (n threads computing at "
                     "once) does not hold, so failures here say more about the machine than the model.")
        page.p(text)
    else:
        page.p("Not measured: needs masteronly and overlap-scheme solve runs with 2+ threads.")

    # 10. timelines
    page.section("timelines", "10. Thread timelines")
    shown = 0
    if runs:
        users = user_kernels(runs)
        kernel = users[0] if users else "jacobi" if "jacobi" in runs else next(iter(runs))
        page.p(f"One Gantt chart per scheme ({kernel}; the median repetition's timed iterations). "
               "Open the trace files in Perfetto (ui.perfetto.dev) or chrome://tracing for detail.")
        for s in runs[kernel]:
            if not s.trace:
                continue
            fid = "fig-timeline-" + s.label.replace(" ", "-").replace("=", "")
            try:
                tr = trace_mod.load_trace(str(outdir / s.trace))
            except InputError as err:
                page.missing(fid, str(err))
                continue
            share = trace_mod.busy_share(tr)
            page.figure(fid, lambda o, tr=tr: plotting.gantt(tr, o),
                        f"{s.label}: idle {share.get('idle', 0) * 100:.0f} %, MPI "
                        f"{share.get('comm', 0) * 100:.0f} %, interior compute "
                        f"{share.get('compute_interior', 0) * 100:.0f} % of all thread time "
                        f"(trace: {s.trace}).")
            shown += 1
    if not shown:
        page.missing("fig-timeline", "no traced solve runs")

    # 11. recommendation
    page.section("recommendation", "11. Recommendation")
    page.parts.append(f'<p class="verdict" id="verdict">{html.escape(verdict)}</p>')
    if advice:
        rows = [(a.kernel, a.best.label, a.runner_up.label if a.runner_up else "-",
                 a.gain_pure, a.gain_masteronly, "yes" if a.separated else "no", a.model_verdict)
                for a in advice]
        page.table(["kernel", "fastest measured", "runner-up", "gain over pure MPI",
                    "gain over masteronly", "separated", "model (eq. 3 from masteronly fractions)"],
                   rows, tid="advice-table")
    page.p("Confidence: a scheme is 'separated' when its slowest repetition beats the runner-up's "
           "fastest; the model's verdict uses the masteronly run's spread as the uncertainty of its "
           "fractions and says 'no clear winner' when the ranking can flip within it.")

    _projection_section(page, outdir, plotting)
    _depth_section(page, study)

    text = page.html(f"hympi study report: {mach.get('host', '')}")
    write_atomic(outdir / "report.html", text)
    write_csv(study, outdir / "results.csv")
    return verdict


def depth_rows(study: Study) -> list[dict[str, Any]]:
    """The depth step's runs, by kernel (jacobi first) and shallowest depth
    first, each with its speed relative to the same kernel at depth 1 (per
    iteration, so that runs of a resumed older study with other iteration
    counts still compare) and whether its field's checksum is that run's
    (None when there is no depth-1 run or it ran other iterations)."""
    runs: dict[str, dict[int, dict[str, Any]]] = {}
    for r in study.of("depth", "solve"):
        rec = r["result"]
        runs.setdefault(str(rec.get("kernel", "jacobi")), {})[int(rec.get("halo_depth") or 1)] = rec
    rows = []
    order = {"jacobi": 0, "spmv": 1}

    def per_iteration(rec: Optional[dict[str, Any]], stat: str) -> float:
        if rec is None:
            return math.nan
        iters = rec.get("iters")
        t = _number_or_nan((rec.get("time_s") or {}).get(stat))
        return t / iters if isinstance(iters, int) and iters > 0 else math.nan

    for kernel in sorted(runs, key=lambda k: (order.get(k, 2), k)):
        by_depth = runs[kernel]
        base = by_depth.get(1)
        t1 = per_iteration(base, "median")
        for h in sorted(by_depth):
            rec = by_depth[h]
            t = per_iteration(rec, "median")
            same = None
            if (base is not None and base.get("iters") == rec.get("iters")
                    and base.get("checksum") is not None and base.get("l2") is not None):
                same = rec.get("checksum") == base.get("checksum") and rec.get("l2") == base.get("l2")
            # Clearly faster: its slowest repetition beats depth 1's fastest.
            clear = per_iteration(rec, "max") < per_iteration(base, "min")
            rows.append({"kernel": kernel, "depth": h, "iters": rec.get("iters"),
                         "exchanges": rec.get("exchanges"),
                         "messages": sum((rec.get("messages_per_exchange") or {}).values()),
                         "bytes": sum((rec.get("bytes_per_exchange") or {}).values()),
                         "median_s": _number_or_nan((rec.get("time_s") or {}).get("median")),
                         "mlups": _number_or_nan(rec.get("mlups")),
                         "speedup": t1 / t if t > 0 else math.nan, "same_field": same,
                         "clearly_faster": bool(clear),
                         # how the output was written (None: a study from before --stores)
                         "stores": rec.get("stores") if rec.get("stores") in ("cached", "streaming")
                         else None})
    return rows


def _fastest_deep(mine: Sequence[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """Of one kernel's depth rows, the fastest deeper than 1 (None: none
    with a speed)."""
    return max((r for r in mine if r["depth"] > 1 and math.isfinite(r["speedup"])),
               key=lambda r: r["speedup"], default=None)


def depth_advice(study: Study) -> str:
    """One sentence on temporal blocking for the recommendation: per kernel
    the fastest depth and how sure, that none gained, or why nothing could be
    compared ('' without a depth step)."""
    rows = depth_rows(study)
    parts = []
    for kernel in dict.fromkeys(r["kernel"] for r in rows):
        mine = [r for r in rows if r["kernel"] == kernel]
        deep = [r for r in mine if r["depth"] > 1]
        if mine[0]["depth"] != 1:
            parts.append(f"{kernel} has no depth-1 run to compare with")
            continue
        if not deep:
            parts.append(f"{kernel} ran no depth above 1 (the boxes are too thin)")
            continue
        differs = [r["depth"] for r in deep if r["same_field"] is False]
        if differs:
            parts.append(f"{kernel} at --halo-depth {', '.join(map(str, differs))} did NOT give depth "
                         "1's field (a bug: please report it)")
            continue
        best = _fastest_deep(mine)
        if best is None or best["speedup"] <= 1:
            parts.append(f"{kernel} did not gain from it")
            continue
        sure = ("clearly (repetitions do not overlap)" if best["clearly_faster"] else
                "not clearly (repetitions overlap)")
        parts.append(f"{kernel} --halo-depth {best['depth']} ran {best['speedup']:.2f}x its depth-1 "
                     f"speed, {sure}")
    if not parts:
        return ""
    return " Temporal blocking (section 13): " + "; ".join(parts) + "."


def _depth_section(page: Page, study: Study) -> None:
    """13. Temporal blocking: jacobi and spmv --halo-depth h against depth 1."""
    page.section("depth", "13. Temporal blocking (jacobi, spmv --halo-depth)")
    rows = depth_rows(study)
    if not rows:
        page.missing("depth-table", "no run of the depth step (it runs when --steps includes depth "
                     "and jacobi or spmv is among the kernels)")
        return
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    lacking = [k for k in kernels if min(r["depth"] for r in rows if r["kernel"] == k) != 1]
    if lacking:
        page.p(f"No depth-1 run of {', '.join(lacking)} to compare with (it failed or did not run): "
               "its speed and checksum columns are empty.", "warn")
    page.p("Halos h layers deep (with edges and corners) are exchanged every h iterations; the h "
           "sweeps between run as a cache-blocked wavefront, masteronly on the study's layout "
           "(spmv matrix-free). Fewer, larger messages and fewer passes over memory, for the same "
           "field to the last bit (the checksum column compares sum and l2 norm with the same "
           "kernel's depth-1 run exactly). Depth 1 writes its output with streaming stores where "
           "a thread's arrays exceed its L2 (hympi solve --stores auto: no write-allocate read), "
           "so deeper halos are compared with the faster one-sweep loop; the blocked sweeps "
           "store cached (the next sweep of a tile reads their output from cache).")
    page.table(["kernel", "depth h", "exchanges / iterations", "messages per exchange",
                "bytes per exchange", "stores", "median s", "MLUP/s", "speed vs depth 1",
                "checksum = depth 1's"],
               [(r["kernel"], r["depth"], f"{r['exchanges']} / {r['iters']}", r["messages"], r["bytes"],
                 r["stores"] or "-", f"{r['median_s']:.4g}", f"{r['mlups']:.0f}",
                 f"{r['speedup']:.2f}x" if math.isfinite(r["speedup"]) else "-",
                 {True: "yes", False: "NO", None: "-"}[r["same_field"]]) for r in rows],
               tid="depth-table")
    st = study.setting
    if study.oversubscribed:
        page.p(f"These runs were oversubscribed ({st.get('ranks', 0) * st.get('threads', 0)} threads "
               f"on {st.get('cores', '?')} cores): the speeds are indicative only; the exchange "
               "counts, bytes and checksums hold.")
    for kernel in (k for k in kernels if k not in lacking):
        mine = [r for r in rows if r["kernel"] == kernel]
        best = _fastest_deep(mine)
        if best is not None and best["speedup"] > 1:
            page.p(f"{kernel}: fastest here --halo-depth {best['depth']}, {best['speedup']:.2f}x depth 1 "
                   f"({best['exchanges']} exchanges instead of {mine[0]['exchanges']}).")
        else:
            page.p(f"{kernel}: no depth beat depth 1 here (the grid per rank may already sit in "
                   "cache, or the run is too short to tell).")
    page.p("Your own two-array stencil gets the same through Domain::sweep_block / "
           "hympi_sweep_block (docs/user-kernels.md).")
    page.p("Section 12 carries these runs to more nodes as their own series (masteronly depth h, "
           "or pure MPI depth h with one thread per rank): on one machine the gain is fewer passes "
           "over memory; across nodes a deeper halo also divides the start-ups per iteration by h "
           "(an inner rank of a 3-D split sends 26 messages instead of 6 past depth 1, so fewer "
           "from h = 5 on), and pays for the halo points each block recomputes.")


def _projection_section(page: Page, outdir: Path, plotting: Any) -> None:
    """12. hympi-lab project with the study's own grid and node shape."""
    from . import project

    page.section("projection", "12. Projection to 16,384 nodes")
    try:
        inputs = project.load_inputs(outdir)
        req = project.default_request(inputs)
        doc = project.document(inputs, replace(req, samples=100))
    except InputError as err:
        page.missing("fig-projection", str(err))
        return
    _write_json(outdir / "projection.json", doc)
    sc = doc["self_consistency"]
    page.p(f"The model of 'hympi-lab project' (python/README.md, Projection) first predicts this "
           f"study's own runs: {sc['within']} of {sc['runs']} within {sc['limit'] * 100:.0f} %. "
           "Where it misses, the projection below inherits the miss.",
           "" if sc["within"] == sc["runs"] else "warn")
    page.table(["kernel", "scheme", "measured s/iteration", "predicted", "error", "run spread"],
               [(c["kernel"], c["scheme"], c["measured_s"], c["predicted_s"], f"{c['error'] * 100:+.0f} %",
                 f"{c['spread'] * 100:.0f} %") for c in sc["checks"]], tid="projection-check")
    grid = "x".join(map(str, req.grid))
    page.figure("fig-projection", lambda o: plotting.projection(doc, o),
                f"Parallel efficiency over nodes, weak (every node keeps {grid} points) and strong "
                f"({grid} in all) scaling, {req.shape.ranks} rank(s) x {req.shape.threads} thread(s) "
                "per node; bands: 16-84 % of the fitted parameters' spread.")
    for p in doc["projections"]:
        cross = "; ".join(f"at {x['nodes']} nodes {x['from']} -> {x['to']}"
                          + ("" if x["separated"] else " (within the bands)") for x in p["crossovers"])
        page.p(f"{p['kernel']}, {p['scaling']} scaling: fastest at 1 node {p['fastest'][0]}, at "
               f"{p['series'][0]['nodes'][-1] if p['series'] else '-'} nodes "
               f"{p['fastest'][-1] if p['fastest'] else '-'}; "
               + (f"the fastest changes {cross}." if cross else "the fastest does not change."))
    page.p("Where it stops holding: " + " ".join(f"({i + 1}) {n}." for i, n in enumerate(doc["limits"])))


def _write_json(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(_finite(data), indent=2, allow_nan=False) + "\n")


def _finite(value: Any) -> Any:
    """JSON has no inf or nan: an undetermined uncertainty becomes null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def check_study_dir(outdir: str) -> Path:
    path = Path(outdir)
    if not (path / STUDY_FILE).is_file():
        raise InputError(f"{outdir}: not a study directory (no {STUDY_FILE}; make one with "
                         "'hympi-lab study --out DIR')")
    return path


__all__ = ["write_report", "check_study_dir", "SECTION_IDS", "fits", "load"]
