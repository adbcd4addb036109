"""Fits recover known parameters from synthetic noisy data, within the
uncertainty they report, and that uncertainty is honest (coverage)."""

from __future__ import annotations

import numpy as np
import pytest

from hympi_lab import fit, model
from hympi_lab.errors import InputError

NK = np.array([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256], dtype=float)
A_TRUE, B_TRUE = 4.57, 1.0 / 6.0
LENGTHS = np.array([8, 64, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304], dtype=float)
T_LAT, B_INF = 5e-6, 2e9


def noisy_eq14(rng: np.random.Generator, m: "int | np.ndarray", nk: np.ndarray = NK,
               noise: float = 0.02) -> np.ndarray:
    clean = np.asarray(model.eq14_epsilon(nk, A_TRUE, B_TRUE, 8, m))
    return clean * (1 + noise * rng.standard_normal(nk.size))


def noisy_times(rng: np.random.Generator, noise: float = 0.03) -> np.ndarray:
    return (T_LAT + LENGTHS / B_INF) * (1 + noise * rng.standard_normal(LENGTHS.size))


def test_eq14_fit_recovers_both_ratios_within_uncertainty() -> None:
    rng = np.random.default_rng(11)
    result = fit.fit_eq14(NK, noisy_eq14(rng, 1), 8, 1)
    a, b = result.params["comm_ratio"], result.params["non_ratio"]
    # meaningful uncertainties: small against the values, but not zero
    assert 0 < a.sigma < 0.05 * A_TRUE and 0 < b.sigma < 0.3 * B_TRUE
    assert abs(a.value - A_TRUE) < 3 * a.sigma
    assert abs(b.value - B_TRUE) < 3 * b.sigma
    cross = result.params["nk_cross_m1"]
    assert abs(cross.value - 32) < 3 * cross.sigma + 0.05
    assert result.n_points == NK.size and result.dof == NK.size - 2


def test_eq14_fit_with_fixed_non_ratio_as_in_the_paper() -> None:
    rng = np.random.default_rng(12)
    result = fit.fit_eq14(NK, noisy_eq14(rng, 1), 8, 1, non_ratio=B_TRUE)
    a, b = result.params["comm_ratio"], result.params["non_ratio"]
    assert b.fixed and b.value == B_TRUE and b.sigma == 0.0
    assert abs(a.value - A_TRUE) < 3 * a.sigma
    assert result.dof == NK.size - 1


def test_eq14_fit_joins_points_of_several_m() -> None:
    rng = np.random.default_rng(13)
    nk = np.concatenate([NK, NK])
    ms = np.repeat([1, 2], NK.size)
    result = fit.fit_eq14(nk, noisy_eq14(rng, ms, nk), 8, ms)
    assert abs(result.params["comm_ratio"].value - A_TRUE) < 3 * result.params["comm_ratio"].sigma
    assert result.params["nk_cross_m2"].value == pytest.approx(
        model.eq14_crossover(result.params["comm_ratio"].value, 8, 2))


def test_eq14_fit_exact_data_gives_exact_parameters() -> None:
    clean = np.asarray(model.eq14_epsilon(NK, A_TRUE, B_TRUE, 8, 1))
    result = fit.fit_eq14(NK, clean, 8, 1)
    assert result.params["comm_ratio"].value == pytest.approx(A_TRUE, rel=1e-6)
    assert result.params["non_ratio"].value == pytest.approx(B_TRUE, rel=1e-5)


def test_eq14_uncertainty_coverage() -> None:
    """Over repeated noisy data sets about 68 % of fits lie within 1 sigma."""
    rng = np.random.default_rng(14)
    within = 0
    trials = 60
    for _ in range(trials):
        p = fit.fit_eq14(NK, noisy_eq14(rng, 1), 8, 1).params["comm_ratio"]
        within += abs(p.value - A_TRUE) < p.sigma
    # 60 trials: the binomial spread around 0.68 is +-0.06
    assert 0.50 <= within / trials <= 0.86


def test_hockney_fit_recovers_latency_and_bandwidth() -> None:
    rng = np.random.default_rng(21)
    result = fit.fit_hockney(LENGTHS, noisy_times(rng))
    t_lat, b_inf = result.params["T_lat"], result.params["b_inf"]
    assert 0 < t_lat.sigma < 0.1 * T_LAT and 0 < b_inf.sigma < 0.1 * B_INF
    assert abs(t_lat.value - T_LAT) < 3 * t_lat.sigma
    assert abs(b_inf.value - B_INF) < 3 * b_inf.sigma
    n_half = result.params["n_half"]
    assert abs(n_half.value - T_LAT * B_INF) < 3 * n_half.sigma


def test_hockney_fit_of_the_table_2_machine() -> None:
    # Exact points of 300 MB/s and 10 us come back exactly.
    times = np.asarray(model.hockney_time(LENGTHS, 10e-6, 300e6))
    result = fit.fit_hockney(LENGTHS, times)
    assert result.params["T_lat"].value == pytest.approx(10e-6, rel=1e-9)
    assert result.params["b_inf"].value == pytest.approx(300e6, rel=1e-9)


def test_hockney_uncertainty_coverage() -> None:
    rng = np.random.default_rng(22)
    trials = 300
    within_lat = within_bw = 0
    for _ in range(trials):
        p = fit.fit_hockney(LENGTHS, noisy_times(rng)).params
        within_lat += abs(p["T_lat"].value - T_LAT) < p["T_lat"].sigma
        within_bw += abs(p["b_inf"].value - B_INF) < p["b_inf"].sigma
    # 8 degrees of freedom: P(|t_8| < 1) = 0.65
    assert 0.55 <= within_lat / trials <= 0.78
    assert 0.55 <= within_bw / trials <= 0.78


@pytest.mark.parametrize("nk, eps, n, m, message", [
    ([1, 2], [1.2, 1.3], 8, 1, "at least 3 points"),
    ([1, 2, 3], [1.2, -1.0, 1.1], 8, 1, "positive"),
    ([1, 2, 3], [1.2, 1.3, 1.1], 8, 8, "m must be less than n"),
    ([1, 2, 3], [1.2, 1.3, float("nan")], 8, 1, "finite"),
])
def test_eq14_fit_bad_input(nk: list, eps: list, n: int, m: int, message: str) -> None:
    with pytest.raises(InputError, match=message):
        fit.fit_eq14(nk, eps, n, m)


@pytest.mark.parametrize("lengths, times, message", [
    ([8, 64], [1e-5, 2e-5], "at least 3 points"),
    ([64, 64, 64], [1e-5, 2e-5, 3e-5], "2 or more message lengths"),
    ([8, 64, 512], [3e-5, 2e-5, 1e-5], "does not grow"),
    ([8, 64, 512], [1e-5, 0.0, 1e-5], "times > 0"),
])
def test_hockney_fit_bad_input(lengths: list, times: list, message: str) -> None:
    with pytest.raises(InputError, match=message):
        fit.fit_hockney(lengths, times)
