"""Least-squares fits of the model to measurements, with 1-sigma uncertainties.

Uncertainties come from the covariance of the fit scaled by the residual
variance (scipy's absolute_sigma=False): they say how well the points pin the
parameters down, assuming the model holds and the scatter is random.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import model
from .errors import InputError


@dataclass(frozen=True)
class Param:
    value: float
    sigma: float  # 1 sigma; 0 for a parameter held fixed
    fixed: bool = False


@dataclass(frozen=True)
class FitResult:
    model: str
    params: dict[str, Param]
    n_points: int
    dof: int
    rms_residual: float  # in the units of the fitted quantity
    setting: dict[str, float] = field(default_factory=dict)  # fixed inputs such as n, m


def fit_eq14(nk_loc: ArrayLike, epsilon: ArrayLike, n: int, m: ArrayLike,
             non_ratio: Optional[float] = None) -> FitResult:
    """Fit a = x_comm/x_overlap and b = x_non/x_overlap of eq. (14).

    `m` is one reserved-thread count or one per point: points measured with
    the same n but different m share a and b (per-plane costs of the same
    masteronly run), so fitting them together pins a and b down better.
    With `non_ratio` given, b is held at that value and only a is fitted (the
    paper fixes b = 1/6 for its spmv, seed 000 sec. 7.2.2).

    Also reports, for each m, the crossover nk_loc (epsilon = 1) and the peak
    nk_loc with their sigma; both follow from a alone.
    """
    # Imported here: scipy.optimize takes about a second to load, and every
    # other hympi-lab command (model, advise from flags) does without it.
    from scipy.optimize import curve_fit

    nk, eps = _points(nk_loc, epsilon, "nk_loc", "epsilon")
    try:
        ms = np.broadcast_to(np.asarray(m, dtype=int), nk.shape)
    except ValueError:
        raise InputError("m must be one value or one per point") from None
    problems = sorted({p for mi in np.unique(ms) for p in model.fraction_problems(n, int(mi), None, None)})
    if problems:
        raise InputError("; ".join(problems))
    n_free = 1 if non_ratio is not None else 2
    # Repeated points at one nk_loc only average the noise there: a and b
    # move epsilon differently along nk_loc, so without a second depth they
    # trade off against each other (and even a alone, with b fixed, has two
    # solutions, one on each side of the peak).
    distinct = len(np.unique(nk))
    if len(nk) < n_free + 1 or distinct < 2:
        raise InputError(f"eq. (14) fit needs at least {n_free + 1} points at 2 or more distinct "
                         f"nk_loc values (got {len(nk)} point(s) at {distinct} nk_loc value(s))")
    if np.any(nk <= 0) or np.any(eps <= 0):
        raise InputError("nk_loc and epsilon must be positive")
    if non_ratio is not None and not (non_ratio >= 0 and math.isfinite(non_ratio)):
        raise InputError(f"the fixed x_non/x_overlap must be a finite number >= 0 (got {non_ratio:g})")

    def curve(x: NDArray[np.float64], a: float, b: float) -> NDArray[np.float64]:
        return np.asarray(model.eq14_epsilon(x, a, b, n, ms))

    # The max() in eq. (14) makes the least-squares surface kinked; start
    # from the best point of a coarse grid so the local optimiser does not
    # stop on the wrong branch.
    a_grid = np.logspace(-3, 4, 71)
    b_grid = [non_ratio] if non_ratio is not None else [0.0, 0.03, 0.1, 0.2, 0.4, 0.8, 1.5, 3.0]
    _, a0, b0 = min((float(np.sum((curve(nk, a, b) - eps) ** 2)), a, b)
                    for a in a_grid for b in b_grid)
    # Relative weights: epsilon is a ratio of timings whose scatter is a
    # fraction of their size. Two passes, the second weighting by the first
    # fit's curve rather than by the noisy points themselves.
    a, b = a0, b0
    try:
        for _ in range(2):
            weight = curve(nk, a, b)
            if non_ratio is not None:
                popt, pcov = curve_fit(lambda x, a_: curve(x, a_, non_ratio), nk, eps, p0=[a],
                                       sigma=weight, bounds=([0.0], [np.inf]))
                a, b = float(popt[0]), non_ratio
                sigma_a, sigma_b = math.sqrt(pcov[0, 0]), 0.0
            else:
                popt, pcov = curve_fit(curve, nk, eps, p0=[a, b], sigma=weight,
                                       bounds=([0.0, 0.0], [np.inf, np.inf]))
                a, b = float(popt[0]), float(popt[1])
                sigma_a, sigma_b = math.sqrt(pcov[0, 0]), math.sqrt(pcov[1, 1])
    except (RuntimeError, ValueError) as err:
        raise InputError(f"eq. (14) fit failed: {err}") from None
    if not (math.isfinite(sigma_a) and math.isfinite(sigma_b)):
        raise InputError("the points do not determine the eq. (14) parameters "
                         "(spread nk_loc over both sides of the peak)")
    residual = eps - curve(nk, a, b)
    params = {
        "comm_ratio": Param(a, sigma_a),
        "non_ratio": Param(b, sigma_b, fixed=non_ratio is not None),
    }
    for mi in sorted({int(x) for x in ms}):
        # Both are a times a constant, so sigma scales the same way.
        params[f"nk_cross_m{mi}"] = Param(model.eq14_crossover(a, n, mi),
                                          sigma_a * model.eq14_crossover(1.0, n, mi))
        params[f"nk_peak_m{mi}"] = Param(model.eq14_peak(a, n, mi),
                                         sigma_a * model.eq14_peak(1.0, n, mi))
    return FitResult(
        model="eq14",
        params=params,
        n_points=len(nk),
        dof=len(nk) - n_free,
        rms_residual=float(np.sqrt(np.mean(residual ** 2))),
        setting={"n": n},
    )


def fit_hockney(length: ArrayLike, time_s: ArrayLike) -> FitResult:
    """Fit t(L) = T_lat + L / b_inf to message-time points.

    The model is linear in (T_lat, 1/b_inf), so this is weighted linear least
    squares in closed form (the covariance curve_fit would report, without
    its iterations). Weights assume relative scatter (a few percent of t at
    every L): plain least squares would let the megabyte messages decide
    everything and leave T_lat undetermined. The weights use the model's t
    from a first pass, not the noisy measurement, to avoid biasing towards
    points that happened to come out fast.
    """
    lengths, times = _points(length, time_s, "bytes", "time_s")
    if len(lengths) < 3 or len(np.unique(lengths)) < 2:
        raise InputError("Hockney fit needs at least 3 points at 2 or more message lengths")
    if np.any(lengths < 0) or np.any(times <= 0):
        raise InputError("message lengths must be >= 0 and times > 0")
    t_lat, slope, cov = _weighted_line(lengths, times, times)
    predicted = t_lat + slope * lengths
    if np.all(predicted > 0):
        t_lat, slope, cov = _weighted_line(lengths, times, predicted)
    if slope <= 0:
        raise InputError("time does not grow with message length: b_inf cannot be fitted")
    b_inf = 1.0 / slope
    # b_inf = 1/s: first-order propagation, sigma_b = sigma_s / s^2.
    sigma_b = math.sqrt(cov[1, 1]) / slope ** 2
    residual = times - (t_lat + slope * lengths)
    return FitResult(
        model="hockney",
        params={
            "T_lat": Param(t_lat, math.sqrt(cov[0, 0])),
            "b_inf": Param(b_inf, sigma_b),
            "n_half": Param(model.hockney_n_half(t_lat, b_inf),
                            _n_half_sigma(t_lat, slope, cov)),
        },
        n_points=len(lengths),
        dof=len(lengths) - 2,
        rms_residual=float(np.sqrt(np.mean(residual ** 2))),
    )


def _weighted_line(x: NDArray[np.float64], y: NDArray[np.float64],
                   sigma: NDArray[np.float64]) -> tuple[float, float, NDArray[np.float64]]:
    """y = c0 + c1 x by least squares with weights 1/sigma^2; (c0, c1, covariance)."""
    design = np.column_stack([np.ones_like(x), x]) / sigma[:, None]
    target = y / sigma
    # Columns differ by many orders of magnitude (1 vs bytes): scale them to
    # unit norm so the solve is well conditioned, then undo the scaling.
    scale = np.linalg.norm(design, axis=0)
    coef_scaled, *_ = np.linalg.lstsq(design / scale, target, rcond=None)
    coef = coef_scaled / scale
    dof = len(x) - 2
    chi2 = float(np.sum((target - design @ coef) ** 2))
    scaled_inv = np.linalg.inv((design / scale).T @ (design / scale))
    cov = scaled_inv / np.outer(scale, scale) * (chi2 / dof if dof > 0 else np.inf)
    return float(coef[0]), float(coef[1]), cov


def _n_half_sigma(t_lat: float, slope: float, cov: NDArray[np.float64]) -> float:
    # n_half = T_lat / s: gradient (1/s, -T_lat/s^2), correlations included.
    grad = np.array([1.0 / slope, -t_lat / slope ** 2])
    return float(math.sqrt(max(0.0, grad @ cov @ grad)))


def _points(x: ArrayLike, y: ArrayLike, x_name: str, y_name: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    xs = np.asarray(x, dtype=float).ravel()
    ys = np.asarray(y, dtype=float).ravel()
    if xs.shape != ys.shape:
        raise InputError(f"{x_name} and {y_name} have different lengths")
    if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(ys))):
        raise InputError(f"{x_name} and {y_name} must be finite numbers")
    return xs, ys
