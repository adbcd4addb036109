"""Which hybrid scheme, with how many reserved threads, and by how much.

Candidates, each predicted by seed 000 eq. (3) relative to masteronly:

- masteronly: epsilon = 1 by definition (the reference);
- funneled: m = 1 reserved thread;
- multiple: m = 2 .. n-1 reserved threads.

The `adaptive` scheme is not ranked: the papers give no equation for it, and
the ideal-balancing value of `model.epsilon_adaptive_bound` is an upper bound
(>= funneled always), which would win every comparison it entered. It is
reported next to the ranking as that bound.

Uncertainty: the caller passes sample points (f_comm, f_comp_non) spanning
the 1-sigma uncertainty of the inputs. If any sample ranks another candidate
first, or the margin is nil, the answer is "no clear winner".
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from . import model
from .errors import InputError

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
    top = n - 1 if m_max is None else min(m_max, n - 1)
    result = [Candidate("masteronly", 0, 1.0)]
    for m in range(1, top + 1):
        speedup = None
        if beta is not None:
            if m not in beta:
                continue
            speedup = beta[m] / beta[1]
        eps = model.epsilon(f_comm, f_comp_non, n, m, comm_speedup=speedup)
        result.append(Candidate("funneled" if m == 1 else "multiple", m, eps))
    return result


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
           beta: Optional[Mapping[int, float]] = None) -> Advice:
    """Rank the candidates for measured fractions; see the module docstring."""
    problems = model.fraction_problems(n, None, f_comp_non, f_comm)
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

    clear = not tied and rival is None
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
    return Advice(
        n=n, f_comm=f_comm, f_comp_non=f_comp_non, ranking=ranking, margin=margin,
        margin_range=margin_range, clear_winner=clear, verdict=verdict,
        adaptive_bound=model.epsilon_adaptive_bound(f_comm, f_comp_non, n),
        m_min=model.m_min(f_comm, f_comp_non),
    )


def box_samples(f_comm: float, f_comm_err: float, f_comp_non: float, f_comp_non_err: float,
                steps: int = 11) -> list[tuple[float, float]]:
    """A steps x steps grid over f +- err for both fractions, kept to the valid domain.

    eq. (3) is piecewise linear in the fractions, so a fine grid over the box
    finds where the ranking flips; the corners are always included.
    """
    fcs = np.linspace(f_comm - f_comm_err, f_comm + f_comm_err, steps)
    fns = np.linspace(f_comp_non - f_comp_non_err, f_comp_non + f_comp_non_err, steps)
    return [(float(fc), float(fn)) for fc, fn in itertools.product(fcs, fns)
            if 0.0 <= fc <= 1.0 and 0.0 <= fn <= 1.0 and fc + fn <= 1.0 + model.FRACTION_TOL]


def eq14_samples(nk_loc: float, comm_ratio: float, comm_ratio_err: float,
                 non_ratio: float, non_ratio_err: float, steps: int = 11) -> list[tuple[float, float]]:
    """Fractions at nk_loc over the 1-sigma box of an eq. (14) fit's two ratios."""
    as_ = np.linspace(max(0.0, comm_ratio - comm_ratio_err), comm_ratio + comm_ratio_err, steps)
    bs = np.linspace(max(0.0, non_ratio - non_ratio_err), non_ratio + non_ratio_err, steps)
    samples = []
    for a, b in itertools.product(as_, bs):
        fc, fn, _ = model.eq14_fractions(nk_loc, float(a), float(b))
        samples.append((fc, fn))
    return samples
