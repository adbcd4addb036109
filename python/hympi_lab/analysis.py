"""The numbers and verdicts of a study's report (`hympi-lab report DIR`).

Pure: numbers from the records of DIR/study.json and DIR/results.jsonl:
the fits (Hockney from b_eff's ping-pong, eq. (14) from the overlap sweep),
the solve runs by kernel, the model-vs-measurement check, each kernel's
advice and the recommendation, the temporal-blocking rows, and the files
written beside the page (results.csv, fit.json). render.py turns them into
report.html; nothing here writes HTML.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from . import advise as advise_mod, fit as fit_mod, judge, schemes as schemes_mod
from .atomic import write_atomic
from .errors import InputError
from .results import inter_share
from .studydir import RESULTS, STUDY_FILE, load_results_full, load_study

# Run-to-run spread below which a model error is not distinguishable from noise.
NOISE_FLOOR = 0.05
# The report's section on temporal blocking (render.SECTIONS' position of
# "depth"), named in the recommendation.
DEPTH_SECTION = 13

@dataclass
class Study:
    path: Path
    header: dict[str, Any]
    results: list[dict[str, Any]]
    status: dict[str, dict[str, Any]]
    # points whose records end results.jsonl without their point line (a
    # study stopped while it ran them): left out, and said so
    unfinished: tuple[str, ...] = ()

    def of(self, step: str, kind: Optional[str] = None) -> list[dict[str, Any]]:
        return [r for r in self.results if r["step"] == step
                and (kind is None or r["result"].get("kind") == kind)]

    @property
    def setting(self) -> dict[str, Any]:
        return self.header.get("setting", {})

    @property
    def oversubscribed(self) -> bool:
        """Whether threads shared cores: the study's setting says so, its
        layout does (more threads than cores, as launch.py decides it), or
        the context of any of its runs does (a study.json edited or from
        another machine must not turn such timings into a recommendation)."""
        st = self.setting
        ranks, threads, cores = st.get("ranks"), st.get("threads"), st.get("cores")
        nodes = st.get("nodes") if st.get("nodes_kind") == "real" else 1
        crowded = (all(isinstance(v, int) for v in (ranks, threads, cores, nodes))
                   and ranks * threads > cores * nodes)
        return bool(st.get("oversubscribed")) or crowded or any(
            r["context"].get("oversubscribed") is True for r in self.results)

    @property
    def failed(self) -> list[str]:
        """The points whose run failed (they have no results)."""
        return [key for key, st in self.status.items() if st.get("status") != "ok"]


def load(outdir: Path) -> Study:
    header = load_study(outdir)
    loaded = load_results_full(outdir / RESULTS)
    return Study(outdir, header, loaded.results, loaded.status, tuple(loaded.unfinished))



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
    converges: bool = False              # run to a tolerance (the record has "tol")
    repeat: int = 1                      # repetitions behind median, low and high


def determined(param: Mapping[str, Any]) -> bool:
    """Whether a fitted parameter ({"value", "sigma"}) is carried by the data:
    both finite and its 1-sigma uncertainty smaller than its size. A fit
    that is not (a crossover of 1e-21 +- 100 from points the model cannot
    separate) is reported as not determined, never as a number."""
    value, sigma = number_or_nan(param.get("value")), number_or_nan(param.get("sigma"))
    return math.isfinite(value) and math.isfinite(sigma) and sigma < abs(value)


def fitted(param: Mapping[str, Any], scale: float = 1.0, digits: str = ".3g", unit: str = "") -> str:
    """'value +- sigma' of a fitted parameter, or 'not determined (...)' when
    the data cannot carry it (determined)."""
    if not determined(param):
        return "not determined (its uncertainty exceeds its value)"
    return f"{param['value'] * scale:{digits}} +- {param['sigma'] * scale:.2g}{unit}"


def number_or_nan(value: Any) -> float:
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
        label = schemes_mod.label(scheme, m)
        if scheme == "masteronly" and int(rec["threads"]) == 1:
            label = "masteronly = pure MPI"
        by_kernel.setdefault(rec["kernel"], []).append(SolveRun(
            r["point"], rec["kernel"], scheme, label, m, int(rec["threads"]),
            int(r["context"].get("ranks", 0)), rec["time_s"]["median"], rec["time_s"]["min"],
            rec["time_s"]["max"], number_or_nan(rec.get("l2")), rec.get("fractions", {}),
            rec.get("breakdown_s", {}), r.get("trace", ""), rec.get("iterations"),
            inter_share(rec.get("bytes_per_exchange")), "tol" in rec, _repeat(rec)))
    order = {"pure-mpi": 0, "masteronly": 1}
    for runs in by_kernel.values():
        runs.sort(key=lambda s: (order.get(s.scheme, 2), s.scheme, s.m))
    return by_kernel


def _repeat(rec: Mapping[str, Any]) -> int:
    """A record's repetitions (1 when it does not say: one run, no range)."""
    value = rec.get("repeat")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def separated(best: SolveRun, other: Optional[SolveRun]) -> bool:
    """Whether `best` is clearly faster than `other`: both were repeated
    (one run has no range to compare) and the best's slowest repetition
    beats the other's fastest."""
    return (other is not None and best.repeat >= 2 and other.repeat >= 2
            and best.high < other.low)


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
    judged: judge.Compared = judge.Compared(None, "no model")

    @property
    def error(self) -> Optional[float]:
        return None if self.predicted is None else self.predicted / self.measured - 1.0


def validations(runs: dict[str, list[SolveRun]],
                table: Optional[Mapping[str, schemes_mod.SchemeModel]] = None,
                oversubscribed: bool = False) -> list[Validation]:
    """Eq. (3) and its relatives (schemes.py's table) from each kernel's
    masteronly fractions against the measured epsilon; a scheme without a
    model gets a row that says so. Each row is judged (judge.compare): not
    at all on an oversubscribed machine, and marked where the run-to-run
    spread covers the difference."""
    rows = []
    for kernel, kruns in runs.items():
        mo = next((s for s in kruns if s.scheme == "masteronly"), None)
        if mo is None or not mo.fractions:
            continue
        fc, fn = mo.fractions.get("f_comm", 0.0), mo.fractions.get("f_comp_non", 0.0)
        for s in kruns:
            entry = schemes_mod.lookup(s.scheme, table)
            if entry is not None and entry.reference:
                continue
            measured = mo.median / s.median
            spread = (mo.high - mo.low) / mo.median + (s.high - s.low) / s.median
            got = (entry.epsilon(fc, fn, s.threads, s.m, mo.inter_share)
                   if entry is not None and entry.epsilon is not None else None)
            pred, note = got if got is not None else (None, "no equation in the papers for this scheme")
            rows.append(Validation(kernel, s.label, s.threads, s.m, pred, measured, spread, note,
                                   judge.compare(pred, measured, spread, NOISE_FLOOR, oversubscribed)))
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
    threads: int = 1     # the most threads per rank of the kernel's runs


def kernel_advice(runs: dict[str, list[SolveRun]], oversubscribed: bool = False) -> list[KernelAdvice]:
    """Per kernel: the fastest run, whether its repetitions separate it from
    the runner-up, its gains, and what eq. (3) says from the masteronly
    fractions (nothing from an oversubscribed run: `advise` refuses those
    too)."""
    out = []
    for kernel, kruns in runs.items():
        ranked = sorted(kruns, key=lambda s: s.median)
        best = ranked[0]
        second = ranked[1] if len(ranked) > 1 else None
        # With one thread per rank, masteronly is pure MPI (class 1).
        pure = next((s for s in kruns if s.scheme == "pure-mpi"
                     or (s.scheme == "masteronly" and s.threads == 1)), None)
        mo = next((s for s in kruns if s.scheme == "masteronly"), None)
        verdict, model_best, model_eps = "no masteronly run: the model has no inputs", "", None
        if oversubscribed:
            verdict = "cannot recommend: the runs were oversubscribed (threads shared cores)"
        elif mo is not None and mo.threads >= 2 and mo.fractions:
            fc, fn = mo.fractions["f_comm"], mo.fractions["f_comp_non"]
            rel = (mo.high - mo.low) / mo.median if mo.median > 0 else 0.0
            samples = advise_mod.box_samples(fc, max(rel * fc, 0.01), fn, max(rel * fn, 0.01))
            try:
                adv = advise_mod.advise(fc, fn, mo.threads, samples)
                verdict, model_best, model_eps = adv.verdict, adv.best.label, adv.best.epsilon
            except InputError as err:
                verdict = f"the model cannot advise: {err}"
        out.append(KernelAdvice(kernel, best, second, separated(best, second),
                                pure.median / best.median if pure else None,
                                mo.median / best.median if mo else None,
                                verdict, model_best, model_eps, max(s.threads for s in kruns)))
    return out


def left_out(study: Study) -> str:
    """What the verdict was drawn without, said in it ('' when nothing):
    failed runs and an unfinished point at the end of results.jsonl."""
    notes = []
    failed = study.failed
    if failed:
        notes.append(f"{len(failed)} run(s) failed and are left out ({', '.join(failed[:4])}"
                     + (", ..." if len(failed) > 4 else "") + ")")
    if study.unfinished:
        notes.append(f"{len(study.unfinished)} unfinished point(s) at the end of {RESULTS} (a study "
                     f"stopped while it ran them) are left out ({', '.join(study.unfinished[:4])}; "
                     "--resume measures them)")
    return (" Drawn without: " + "; ".join(notes) + ".") if notes else ""


def advice_part(a: KernelAdvice) -> str:
    gains = []
    if a.gain_pure is not None:
        gains.append(f"{a.gain_pure:.2f}x pure MPI")
    if a.gain_masteronly is not None:
        gains.append(f"{a.gain_masteronly:.2f}x masteronly")
    sure = ("clearly (repetitions do not overlap)" if a.separated else
            f"not separated from {a.runner_up.label if a.runner_up else '-'} "
            + ("(one run each: no range to compare)" if a.runner_up and min(a.best.repeat, a.runner_up.repeat) < 2
               else "(repetitions overlap)"))
    model_part = (f"; the model predicts {a.model_best} (epsilon {a.model_eps:.2f})"
                  if a.model_eps is not None and judge.finite(a.model_eps) else "")
    return f"{a.kernel}: {a.best.label}, {', '.join(gains)}, {sure}{model_part}"


def _cannot_separate(study: Study, advice: list[KernelAdvice], code: str, layout: str) -> str:
    """The verdict of an oversubscribed study: what ran, why no ranking."""
    st = study.setting
    fastest = ", ".join(f"{a.kernel}: {a.best.label}" for a in advice)
    crowded = st.get("oversubscribed") or not any(r["context"].get("oversubscribed") is True
                                                  for r in study.results)
    shared = (f"The study ran {st.get('ranks', 0) * st.get('threads', 0)} threads ({layout}) on "
              f"{st.get('cores', '?')} cores, so threads share cores" if crowded else
              "Its runs say they were oversubscribed (their context blocks), so threads shared cores")
    return (f"No recommendation{code}: this machine cannot separate the schemes. {shared} "
            f"and the timings measure the operating system's scheduling more than the schemes "
            f"(for the record, fastest here: {fastest}). Run the study where every thread "
            f"has a core of its own (e.g. on a cluster node, --ranks and --threads with "
            f"ranks x threads <= cores).")


def _one_thread(advice: list[KernelAdvice], code: str, layout: str) -> str:
    """The verdict of a study whose every run had one thread per rank."""
    fastest = "; ".join(f"{a.kernel}: {a.best.label}"
                        + ("" if a.separated else " (not separated)") for a in advice)
    return (f"No scheme recommendation{code} from {layout}: with one thread per rank every hybrid "
            "scheme runs as pure MPI (no thread to overlap or reserve), so the differences "
            f"measured between them are overheads of their code, not what the scheme is worth "
            f"(for the record, fastest here: {fastest}). Run the study with --threads 2 or more "
            "(ranks x threads <= cores) to compare the schemes.")


def _eq14_sentence(fit: dict[str, Any]) -> str:
    eq14 = fit.get("eq14", {})
    if "params" not in eq14 or "nk_cross_m1" not in eq14["params"]:
        return ""
    p = eq14["params"]["nk_cross_m1"]
    return (f" From the overlap sweep, funneled beats masteronly below nk_loc = "
            f"{fitted(p)} planes per process (eq. 14 fit)." if determined(p) else
            " The overlap sweep does not determine where funneled starts to beat masteronly "
            "(the eq. 14 crossover's uncertainty exceeds its value).")


def recommendation(study: Study, advice: list[KernelAdvice], fit: dict[str, Any]) -> str:
    """The one-paragraph recommendation, or why there is none; it names the
    runs it was drawn without (left_out)."""
    st = study.setting
    if not advice:
        return ("No recommendation: no solve runs were measured (the solve step did not run or "
                "every run failed)." + ("" if study.oversubscribed else depth_advice(study))
                + left_out(study))
    layout = f"{st.get('ranks', 0)} ranks x {st.get('threads', 0)} threads"
    # With the user's program measured (--app), the recommendation is for it.
    users = [a for a in advice if a.kernel.startswith("user:")]
    code = ""
    if users:
        advice = users
        code = " for your code (" + ", ".join(a.kernel for a in users) + ")"
    # Temporal blocking is measured for the built-in kernels only.
    depth = "" if users else depth_advice(study)
    if study.oversubscribed:
        return _cannot_separate(study, advice, code, layout) + left_out(study)
    if all(a.threads == 1 for a in advice):
        return _one_thread(advice, code, layout) + depth + left_out(study)
    clear = [a for a in advice if a.separated]
    parts = "; ".join(advice_part(a) for a in advice) + "."
    extra = _eq14_sentence(fit) + depth + left_out(study)
    if not clear:
        return (f"No clear winner{code} on this machine with {layout}: the run-to-run spread covers the "
                f"differences between the best schemes. " + parts + extra)
    winners = list(dict.fromkeys(a.best.label for a in clear))
    if len(winners) > 1:
        return (f"No single recommendation{code} with {layout}: the clear winner depends on the kernel ("
                + ", ".join(f"{a.kernel}: {a.best.label}" for a in clear) + "). " + parts + extra)
    kernels = f"{len(clear)} of {len(advice)} kernel{'s' if len(advice) != 1 else ''}"
    return (f"Recommended{code}: {winners[0]} with {layout} (best, clearly separated, for "
            f"{kernels}). " + parts + extra)



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
        t = number_or_nan((rec.get("time_s") or {}).get(stat))
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
                         "median_s": number_or_nan((rec.get("time_s") or {}).get("median")),
                         "mlups": number_or_nan(rec.get("mlups")),
                         "speedup": t1 / t if t > 0 else math.nan, "same_field": same,
                         "clearly_faster": bool(clear),
                         # how the output was written (None: a study from before --stores)
                         "stores": rec.get("stores") if rec.get("stores") in ("cached", "streaming")
                         else None})
    return rows


def fastest_deep(mine: Sequence[dict[str, Any]]) -> Optional[dict[str, Any]]:
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
        best = fastest_deep(mine)
        if best is None or best["speedup"] <= 1:
            parts.append(f"{kernel} did not gain from it")
            continue
        sure = ("clearly (repetitions do not overlap)" if best["clearly_faster"] else
                "not clearly (repetitions overlap)")
        parts.append(f"{kernel} --halo-depth {best['depth']} ran {best['speedup']:.2f}x its depth-1 "
                     f"speed, {sure}")
    if not parts:
        return ""
    return f" Temporal blocking (section {DEPTH_SECTION}): " + "; ".join(parts) + "."



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



def write_json(path: Path, data: Any) -> None:
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


__all__ = ["Study", "load", "fits", "SolveRun", "user_kernels", "solve_runs", "Validation", "validations",
           "KernelAdvice", "kernel_advice", "separated", "advice_part", "recommendation", "left_out", "depth_rows", "depth_advice", "write_csv",
           "write_json", "fastest_deep", "check_study_dir", "NOISE_FLOOR", "DEPTH_SECTION", "number_or_nan"]
