"""Which hybrid scheme, with how many reserved threads, and by how much.

Candidates, each predicted by seed 000 eq. (3) relative to masteronly:

- masteronly: epsilon = 1 by definition (the reference);
- funneled: m = 1 reserved thread;
- multiple: m = 2 .. n-1 reserved threads.

The `adaptive` scheme is not ranked: the papers give no equation for it, and
the ideal-balancing value of `model.epsilon_adaptive_bound` is an upper bound
(>= funneled always), which would win every comparison it entered. It is
reported next to the ranking as that bound. So are the two schemes beyond
the papers, for the same reason: `partitioned` with asynchronous progress
(`model.epsilon_partitioned`, >= funneled always; without that progress it is
masteronly's time) and `shared-window` with ideal zero-copy intra-node faces
(`model.epsilon_shared_window`, intra_cost 0, given the inter-node share of
the bytes; with hympi's packed faces, intra_cost near 1, it is funneled's
value). Neither is a prediction one could rank against eq. (3).

Uncertainty: the caller passes sample points (f_comm, f_comp_non) spanning
the 1-sigma uncertainty of the inputs. If any sample ranks another candidate
first, or the margin is nil, the answer is "no clear winner". Without any
uncertainty no winner is claimed either: the ranking is nominal.

Trust: measured inputs that cannot back a choice are refused ("cannot
recommend: <reason>"): runs on an oversubscribed node (more threads than
CPUs in the ranks' affinity masks), runs where idle time dominates the loop,
and a single repetition (no spread to judge the noise by). See
`untrusted_reasons`.

Where the fractions come from: `from_fractions` (measured shares),
`from_ratios` (eq. (14) ratios at a local depth), `from_overlap_points`
(eq. (14) fitted to overlap benchmark points) and `from_solve_records`
(masteronly solve records of result documents) each return an
`AdviseInput`; `advise_input` ranks it.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

from . import fit, model, results
from .errors import InputError

# The most threads per process advised on: advise --n's bound
# (cli_args.MAX_THREADS); a record of 10^30 threads must not make the
# candidates' loop run for ever.
MAX_THREADS = 4096

# Relative difference in epsilon below which two candidates tie. At
# f_comm_equiv funneled and masteronly tie exactly in exact arithmetic.
TIE_TOL = 1e-9


@dataclass(frozen=True)
class Candidate:
    scheme: str
    m: int  # reserved communication threads (0 for masteronly)
    epsilon: float

    @property
    def label(self) -> str:
        return self.scheme if self.scheme == "masteronly" else f"{self.scheme} (m = {self.m})"


@dataclass(frozen=True)
class Advice:
    n: int
    f_comm: float
    f_comp_non: float
    ranking: list[Candidate]  # best first
    margin: float  # epsilon(best) - epsilon(runner-up), nominal
    margin_range: Optional[tuple[float, float]]  # over the uncertainty samples
    clear_winner: bool
    verdict: str
    adaptive_bound: float
    m_min: float
    refused: tuple[str, ...] = ()  # why the inputs cannot back a choice (empty: they can)
    partitioned_bound: float = 0.0  # model.epsilon_partitioned, asynchronous progress
    inter_share: Optional[float] = None  # inter-node share of the exchanged bytes, if known
    shared_window_bound: Optional[float] = None  # ideal zero-copy; None without inter_share

    @property
    def best(self) -> Candidate:
        return self.ranking[0]

    @property
    def runner_up(self) -> Candidate:
        return self.ranking[1]


def candidates(f_comm: float, f_comp_non: float, n: int, m_max: Optional[int] = None,
               beta: Optional[Mapping[int, float]] = None) -> list[Candidate]:
    """All candidates in order of simplicity (masteronly, funneled, multiple m = 2..).

    `m_max` caps the reserved threads (e.g. the threads that saturate the
    link). `beta` maps k to the bandwidth share k communicating threads reach
    (seed 001 sec. 3.1); with it the communication time with m threads is
    f_comm beta(1)/beta(m) instead of the paper's f_comm/m, and only m with a
    known beta(m) are candidates.
    """
    result = [Candidate("masteronly", 0, 1.0)]
    for m, speedup in _reserved(n, m_max, beta):
        eps = model.epsilon(f_comm, f_comp_non, n, m, comm_speedup=speedup)
        result.append(Candidate("funneled" if m == 1 else "multiple", m, eps))
    return result


def _reserved(n: int, m_max: Optional[int] = None, beta: Optional[Mapping[int, float]] = None
              ) -> list[tuple[int, float]]:
    """(m, communication speedup) of the candidates with reserved threads."""
    top = n - 1 if m_max is None else min(m_max, n - 1)
    if beta is None:
        return [(m, float(m)) for m in range(1, top + 1)]
    return [(m, beta[m] / beta[1]) for m in range(1, top + 1) if m in beta]


def break_slopes(n: int, m_max: Optional[int] = None,
                 beta: Optional[Mapping[int, float]] = None) -> list[float]:
    """Slopes k of the lines f_comp_non = 1 - k f_comm where a candidate's max()
    in eq. (3) switches branch: f_comm / s = f_comp_overlap n / (n - m), so
    k = 1 + (n - m) / (s n). Whether a candidate beats another compares those
    max() terms (f_comp_non cancels), a piecewise-linear difference, so its
    least value over the uncertainty box lies on a corner of the box or where
    one of these lines crosses an edge: box_samples adds those points."""
    return [1.0 + (n - m) / (s * n) for m, s in _reserved(n, m_max, beta)]


def rank(cands: Sequence[Candidate]) -> list[Candidate]:
    """Best epsilon first; on a tie the simpler candidate (listed earlier) first."""
    best_eps = max(c.epsilon for c in cands)

    def key(item: tuple[int, Candidate]) -> tuple[float, int]:
        position, c = item
        # Snap near-ties to the same value so that simplicity decides them.
        eps = best_eps if abs(c.epsilon - best_eps) <= TIE_TOL * best_eps else c.epsilon
        return (-eps, position)

    return [c for _, c in sorted(enumerate(cands), key=key)]


def advise(f_comm: float, f_comp_non: float, n: int,
           samples: Sequence[tuple[float, float]] = (),
           m_max: Optional[int] = None,
           beta: Optional[Mapping[int, float]] = None,
           inter_share: Optional[float] = None) -> Advice:
    """Rank the candidates for measured fractions; see the module docstring."""
    if n > MAX_THREADS:
        raise InputError(f"n must be at most {MAX_THREADS} threads (got {n})")
    problems = model.fraction_problems(n, None, f_comp_non, f_comm)
    if inter_share is not None and not 0.0 <= inter_share <= 1.0:
        problems.append(f"the inter-node share must lie in [0, 1] (got {inter_share:g})")
    if m_max is not None and m_max < 1:
        problems.append(f"--m-max must be at least 1 (got {m_max})")
    if beta is not None:
        if 1 not in beta:
            problems.append("beta(1) is needed: it is the masteronly bandwidth share")
        if any(not (0.0 < v <= 1.0) for v in beta.values()):
            problems.append("beta values are bandwidth shares and must lie in (0, 1]")
    if problems:
        raise InputError("; ".join(problems))

    ranking = rank(candidates(f_comm, f_comp_non, n, m_max, beta))
    best, second = ranking[0], ranking[1]
    margin = best.epsilon - second.epsilon
    tied = margin <= TIE_TOL * best.epsilon

    margin_range = None
    rival: Optional[Candidate] = None  # a candidate that beats `best` somewhere in the samples
    if samples:
        diffs = []
        for fc, fn in samples:
            others = {(c.scheme, c.m): c.epsilon for c in candidates(fc, fn, n, m_max, beta)}
            eps_best = others.pop((best.scheme, best.m))
            (scheme, m), eps_other = max(others.items(), key=lambda kv: kv[1])
            diff = eps_best - eps_other
            diffs.append(diff)
            if diff <= TIE_TOL * eps_best and rival is None:
                rival = next(c for c in ranking if (c.scheme, c.m) == (scheme, m))
        margin_range = (min(diffs), max(diffs))

    clear = not tied and rival is None and bool(samples)
    gain = (best.epsilon - 1.0) * 100.0
    if tied:
        verdict = (f"no clear winner: {best.label} and {second.label} predict the same "
                   f"epsilon ({best.epsilon:.3f})")
    elif rival is not None:
        assert margin_range is not None
        verdict = (f"no clear winner: within the uncertainty {rival.label} can match or beat "
                   f"{best.label} (margin {margin:.3f}, between {margin_range[0]:.3f} and "
                   f"{margin_range[1]:.3f})")
    elif best.scheme == "masteronly":
        verdict = (f"masteronly: reserving threads does not pay; runner-up {second.label} "
                   f"at epsilon {second.epsilon:.3f}, margin {margin:.3f}")
    else:
        verdict = (f"{best.label}: predicted epsilon {best.epsilon:.3f} "
                   f"({gain:+.0f}% against masteronly); runner-up {second.label} "
                   f"at {second.epsilon:.3f}, margin {margin:.3f}")
    if not samples and not tied:
        verdict = ("no clear winner claimed: no uncertainty was given (the fractions' errors, "
                   "or repeated runs); nominally " + verdict)
    return Advice(
        n=n, f_comm=f_comm, f_comp_non=f_comp_non, ranking=ranking, margin=margin,
        margin_range=margin_range, clear_winner=clear, verdict=verdict,
        adaptive_bound=model.epsilon_adaptive_bound(f_comm, f_comp_non, n),
        m_min=model.m_min(f_comm, f_comp_non),
        partitioned_bound=model.epsilon_partitioned(f_comm, f_comp_non, n),
        inter_share=inter_share,
        shared_window_bound=_shared_window_bound(f_comm, f_comp_non, n, inter_share),
    )


def _shared_window_bound(f_comm: float, f_comp_non: float, n: int,
                         inter_share: Optional[float]) -> Optional[float]:
    """shared-window's ideal ratio (zero-copy intra-node faces), or None where
    the inter-node share is unknown or the model gives no finite value."""
    if inter_share is None:
        return None
    try:
        return model.epsilon_shared_window(f_comm, f_comp_non, n, inter_share, 0.0)
    except ValueError:
        return None


def box_samples(f_comm: float, f_comm_err: float, f_comp_non: float, f_comp_non_err: float,
                steps: int = 11, breaks: Sequence[float] = ()) -> list[tuple[float, float]]:
    """A steps x steps grid over f +- err for both fractions, clamped to [0, 1]
    and kept where f_comm + f_comp_non <= 1, plus the corners of that region
    and the points where the lines of `breaks` (see break_slopes) cross its
    edges.

    The box is clamped before the grid is laid: a grid over f +- err with the
    points outside [0, 1] dropped would, for a large err, keep only the centre
    and claim more certainty the larger the error (and f +- 1e308 overflows).
    With the corners and crossings included, a larger error never samples a
    smaller minimum margin than a smaller error did: the ranking can only
    become less clear.
    """
    for name, value in (("f_comm", f_comm_err), ("f_comp_non", f_comp_non_err)):
        if not (value >= 0.0 and math.isfinite(value)):
            raise InputError(f"the uncertainty of {name} must be a finite number >= 0 (got {value:g})")
    fcs, fns = _axis(f_comm, f_comm_err, steps), _axis(f_comp_non, f_comp_non_err, steps)
    lo_c, hi_c, lo_n, hi_n = fcs[0], fcs[-1], fns[0], fns[-1]
    points = list(itertools.product(fcs, fns))
    # Where f_comm + f_comp_non = 1 cuts the box: the corners of the valid region.
    points += [(fc, 1.0 - fc) for fc in fcs] + [(1.0 - fn, fn) for fn in (lo_n, hi_n)]
    for k in breaks:
        points += [(fc, 1.0 - k * fc) for fc in (lo_c, hi_c)]
        points += [((1.0 - fn) / k, fn) for fn in (lo_n, hi_n)]
    samples = []
    for fc, fn in points:
        fc, fn = float(fc), float(fn)
        if (lo_c <= fc <= hi_c and lo_n <= fn <= hi_n and fc + fn <= 1.0 + model.FRACTION_TOL
                and (fc, fn) not in samples):
            samples.append((fc, fn))
    return samples


def _axis(f: float, err: float, steps: int) -> NDArray[np.float64]:
    """Grid over [f - err, f + err] clamped to [0, 1], with f itself on it: steps // 2
    intervals on each side of f (the plain linspace when nothing is clamped)."""
    half = max(1, steps // 2)
    below = np.linspace(max(0.0, f - err), f, half + 1)
    above = np.linspace(f, min(1.0, f + err), half + 1)
    return np.unique(np.concatenate([below, above]))


def eq14_samples(nk_loc: float, comm_ratio: float, comm_ratio_err: float,
                 non_ratio: float, non_ratio_err: float, steps: int = 11) -> list[tuple[float, float]]:
    """Fractions at nk_loc over the 1-sigma box of an eq. (14) fit's two ratios."""
    for name, value, err in (("x_comm/x_overlap", comm_ratio, comm_ratio_err),
                             ("x_non/x_overlap", non_ratio, non_ratio_err)):
        if not (err >= 0.0 and math.isfinite(value + err)):
            raise InputError(f"{name} {value:g} with the uncertainty {err:g} is not a finite "
                             "range: give values of a realistic size")
    as_ = np.linspace(max(0.0, comm_ratio - comm_ratio_err), comm_ratio + comm_ratio_err, steps)
    bs = np.linspace(max(0.0, non_ratio - non_ratio_err), non_ratio + non_ratio_err, steps)
    samples = []
    for a, b in itertools.product(as_, bs):
        fc, fn = _eq14_fractions(nk_loc, float(a), float(b))
        samples.append((fc, fn))
    return samples


def _eq14_fractions(nk_loc: float, comm_ratio: float, non_ratio: float) -> tuple[float, float]:
    """(f_comm, f_comp_non) of eq. (14), refused when the inputs are so large
    that the arithmetic overflows (the fractions would come out 0 or nan)."""
    with np.errstate(over="ignore", invalid="ignore"):
        fc, fn, _ = model.eq14_fractions(nk_loc, comm_ratio, non_ratio)
    if not (math.isfinite(comm_ratio) and math.isfinite(non_ratio)
            and math.isfinite(fc) and math.isfinite(fn)
            and math.isfinite(comm_ratio + (non_ratio + 1.0) * nk_loc)):
        raise InputError(f"eq. (14) overflows at nk_loc = {nk_loc:g} with x_comm/x_overlap = "
                         f"{comm_ratio:g} and x_non/x_overlap = {non_ratio:g}: give values of "
                         "a realistic size")
    return fc, fn


# --- the inputs: fractions with their uncertainty, from one source ----------

@dataclass(frozen=True)
class AdviseInput:
    """Fractions to advise on, where they come from and how uncertain they are.

    The uncertainty is either 1-sigma errors of the two fractions
    (`f_comm_err`, `f_comp_non_err`: a box is sampled) or explicit sample
    points (`samples`, e.g. over an eq. (14) fit's ratios).
    """
    n: int
    f_comm: float
    f_comp_non: float
    source: str
    f_comm_err: float = 0.0
    f_comp_non_err: float = 0.0
    samples: tuple[tuple[float, float], ...] = ()
    refused: tuple[str, ...] = ()  # untrusted_reasons of the measurements
    inter_share: Optional[float] = None  # inter-node share of the bytes (solve records)

    def uncertainty_samples(self, breaks: Sequence[float] = ()) -> list[tuple[float, float]]:
        """The sample points; `breaks` (break_slopes of the candidates) for the error box."""
        if self.f_comm_err or self.f_comp_non_err:
            return box_samples(self.f_comm, self.f_comm_err, self.f_comp_non, self.f_comp_non_err,
                               breaks=breaks)
        return list(self.samples)


def from_fractions(n: int, f_comm: float, f_comp_non: float,
                   f_comm_err: float = 0.0, f_comp_non_err: float = 0.0) -> AdviseInput:
    """Measured shares of the masteronly time, with optional 1-sigma errors."""
    return AdviseInput(n, f_comm, f_comp_non, "flags", f_comm_err, f_comp_non_err)


def from_ratios(n: int, nk_loc: float, comm_ratio: float, non_ratio: float,
                comm_ratio_err: float = 0.0, non_ratio_err: float = 0.0) -> AdviseInput:
    """The fractions eq. (14) predicts at nk_loc for x_comm/x_overlap and x_non/x_overlap."""
    f_comm, f_non = _eq14_fractions(nk_loc, comm_ratio, non_ratio)
    samples: list[tuple[float, float]] = []
    if comm_ratio_err or non_ratio_err:
        samples = eq14_samples(nk_loc, comm_ratio, comm_ratio_err, non_ratio, non_ratio_err)
    return AdviseInput(n, f_comm, f_non, f"eq. (14) at nk_loc = {nk_loc:g}", samples=tuple(samples))


def from_overlap_points(paths: Sequence[str], nk_loc: float, n: Optional[int] = None) -> AdviseInput:
    """Eq. (14) fitted to overlap points (CSV or documents), evaluated at nk_loc;
    the fit's 1-sigma ratios give the uncertainty."""
    points = results.eq14_points(paths, n, None)
    fitted = fit.fit_eq14(points.nk_loc, points.epsilon, points.n, points.m)
    a, b = fitted.params["comm_ratio"], fitted.params["non_ratio"]
    f_comm, f_non = _eq14_fractions(nk_loc, a.value, b.value)
    source = (f"eq. (14) fitted to {fitted.n_points} overlap points "
              f"(x_comm/x_overlap = {a.value:.3g} +- {a.sigma:.2g}, "
              f"x_non/x_overlap = {b.value:.3g} +- {b.sigma:.2g}) at nk_loc = {nk_loc:g}")
    samples = eq14_samples(nk_loc, a.value, a.sigma, b.value, b.sigma)
    return AdviseInput(points.n, f_comm, f_non, source, samples=tuple(samples))


# Idle time above this share of the loop time (mean over threads) means the
# run measured waiting, not the scheme: an oversubscribed or disturbed node.
IDLE_LIMIT = 0.5


# CPU ids of an affinity mask above this are no machine's (hympi's limit on
# ranks, 2^22): a mask '0-1000000000000' is refused, not expanded for hours.
MAX_CPU_ID = 4194304


def _cpus(mask: str) -> set[int]:
    """CPU ids of an affinity text such as '0-3,8,10-11' (empty when unreadable)."""
    cpus: set[int] = set()
    for part in str(mask).split(","):
        lo, _, hi = part.strip().partition("-")
        try:
            first, last = int(lo), int(hi or lo)
        except ValueError:
            return set()
        if last > MAX_CPU_ID:
            raise InputError(f"an affinity mask names CPU {last}, beyond any machine's "
                             f"(at most {MAX_CPU_ID}): {str(mask)[:40]!r}")
        cpus.update(range(first, last + 1))
    return cpus


def oversubscription(context: Mapping[str, object]) -> Optional[str]:
    """Why a run was oversubscribed (more threads on a node than CPUs in the
    affinity masks of the node's threads), or None when it was not or the
    context does not say."""
    flag = context.get("oversubscribed")
    if flag is True:
        return "the run was oversubscribed (its context block says so)"
    nodes = context.get("nodes")
    masks = context.get("thread_affinity")
    if not isinstance(nodes, Mapping) or not isinstance(masks, list):
        return None
    node_of_rank = nodes.get("node_of_rank")
    if not isinstance(node_of_rank, list) or len(node_of_rank) != len(masks):
        return None
    per_node: dict[object, tuple[int, set[int]]] = {}
    for node, rank_masks in zip(node_of_rank, masks):
        if not isinstance(rank_masks, list):
            return None
        count, cpus = per_node.get(node, (0, set()))
        for mask in rank_masks:
            cpus = cpus | _cpus(mask)
        per_node[node] = (count + len(rank_masks), cpus)
    for node, (threads, cpus) in per_node.items():
        if cpus and threads > len(cpus):
            return (f"the run was oversubscribed: {threads} threads on node {node} shared "
                    f"{len(cpus)} CPU(s)")
    return None


def _median_time(rec: Mapping[str, object], path: str) -> Optional[float]:
    """The median time of a masteronly record (None: it has none, which is not
    held against it), refused unless positive finite numbers with min <=
    median <= max: a negative one skipped the idle check and turned 'cannot
    recommend' into a ranking."""
    time_s = rec.get("time_s")
    if time_s is None:
        return None
    stats = [time_s.get(k) if isinstance(time_s, Mapping) else None for k in ("min", "median", "max")]
    if not (all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0
                for v in stats) and stats[0] <= stats[1] <= stats[2]):  # type: ignore[operator]
        raise InputError(f"{path}: a masteronly record's time_s must be positive finite numbers "
                         f"with min <= median <= max (got {time_s!r})"[:300])
    return float(stats[1])  # type: ignore[arg-type]


def untrusted_reasons(documents: Sequence[results.Document], n: Optional[int] = None) -> list[str]:
    """Why the masteronly solve records of `documents` cannot back a choice
    (empty when nothing is known against them): oversubscription, idle time
    dominating the loop, a single repetition. Fields a record lacks are not
    held against it."""
    reasons: list[str] = []
    repetitions = 0
    for doc in documents:
        used = [rec for rec in doc.results
                if results.is_masteronly_one_sweep(rec) and (n is None or rec.get("threads") == n)]
        if not used:
            continue
        over = oversubscription(doc.context)
        if over and over not in reasons:
            reasons.append(over)
        for rec in used:
            repeat = rec.get("repeat")
            repetitions += repeat if isinstance(repeat, int) and repeat > 0 else 2
            idle = (rec.get("breakdown_s") or {}).get("idle") if isinstance(rec.get("breakdown_s"), Mapping) else None
            median = _median_time(rec, doc.path)
            if isinstance(idle, list) and idle and median is not None:
                # mean as a sum of parts: 1e308 per thread must not overflow to inf
                share = (sum(float(x) / len(idle) for x in idle) / median
                         if all(isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0
                                for x in idle) else math.nan)
                if not math.isfinite(share):
                    raise InputError(f"{doc.path}: a masteronly record's idle times ({idle[0]!r}, ...) "
                                     "are no seconds of its run")
                reason = (f"idle time dominates the loop ({share:.0%} of it on average in "
                          f"{doc.path}): the run measured waiting, not the scheme")
                if share > IDLE_LIMIT and reason not in reasons:
                    reasons.append(reason)
    if repetitions == 1:
        reasons.append("a single repetition: no spread to judge the noise by (repeat the run)")
    return reasons


def from_solve_records(documents: Sequence[results.Document], n: Optional[int] = None,
                       f_comm_err: Optional[float] = None,
                       f_comp_non_err: Optional[float] = None) -> AdviseInput:
    """The mean fractions of masteronly solve records (all of one thread count).

    The spread between repeated runs is the measurement uncertainty (sample
    standard deviation, not that of the mean: the next run scatters as
    much); errors given explicitly take precedence.
    """
    found = results.masteronly_fractions(documents, n)
    if not found:
        raise InputError("no masteronly solve records with fractions"
                         + (f" at --n {n}" if n is not None else "")
                         + " in the input (for overlap benchmark points give --nk-loc)")
    threads = sorted({f.threads for f in found})
    if threads[-1] > MAX_THREADS:
        raise InputError(f"the records say {threads[-1]} threads per process; at most {MAX_THREADS} "
                         "are advised on (a damaged record?)")
    if len(threads) > 1:
        raise InputError(f"the records were run with different thread counts "
                         f"({', '.join(map(str, threads))}); choose one with --n")
    fc = np.array([f.f_comm for f in found])
    fn = np.array([f.f_comp_non for f in found])
    spread = len(found) > 1
    if f_comm_err is None:
        f_comm_err = float(fc.std(ddof=1)) if spread else 0.0
    if f_comp_non_err is None:
        f_comp_non_err = float(fn.std(ddof=1)) if spread else 0.0
    source = f"{len(found)} masteronly solve record(s), mean" + (" +- sample std" if spread else "")
    shares = [f.inter_share for f in found if f.inter_share is not None]
    return AdviseInput(threads[0], float(fc.mean()), float(fn.mean()), source, f_comm_err,
                       f_comp_non_err, refused=tuple(untrusted_reasons(documents, threads[0])),
                       inter_share=float(np.mean(shares)) if shares else None)


def advise_input(given: AdviseInput, m_max: Optional[int] = None,
                 beta: Optional[Mapping[int, float]] = None) -> Advice:
    """`advise` for one AdviseInput, sampling its uncertainty; refused (no
    winner, verdict "cannot recommend: ...") when its measurements cannot be
    trusted."""
    breaks: list[float] = []
    # Without n >= 2 and positive shares with beta(1), advise() refuses the input.
    if 2 <= given.n <= MAX_THREADS and (beta is None or (1 in beta and all(v > 0 for v in beta.values()))):
        breaks = break_slopes(given.n, m_max, beta)
    result = advise(given.f_comm, given.f_comp_non, given.n, given.uncertainty_samples(breaks), m_max,
                    beta, given.inter_share)
    if given.refused:
        result = dataclasses.replace(result, clear_winner=False, refused=given.refused,
                                     verdict="cannot recommend: " + "; ".join(given.refused))
    return result
