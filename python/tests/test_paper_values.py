"""The papers' printed numbers, reproduced by the model.

The papers round to two or three digits, so each comparison allows half a
unit of the last printed digit (plus float slack), no more.
"""

from __future__ import annotations

import pytest

from hympi_lab import model


def printed(value: float, shown: float, digits: int) -> bool:
    """True if `value` rounds to the number the paper printed with `digits` decimals."""
    return abs(value - shown) <= 0.5 * 10.0 ** -digits + 1e-12


# --- seed 000 sec. 7.2.1, the worked example: m = 1, n = 8, f_comp_non = 20 % ---

def test_worked_example_eps_max() -> None:
    assert printed(model.eps_max(0.2, 8, 1), 1.60, 2)


def test_worked_example_f_comm_best_is_43_percent() -> None:
    assert printed(model.f_comm_best(0.2, 8, 1) * 100, 43, 0)


def test_worked_example_break_even_at_10_percent() -> None:
    assert model.f_comm_equiv(0.2, 8, 1) == pytest.approx(0.10, abs=1e-15)
    assert model.epsilon(0.10, 0.2, 8, 1) == pytest.approx(1.0, rel=1e-12)


def test_worked_example_eps_min() -> None:
    assert printed(model.eps_min(0.2, 8, 1), 0.90, 2)
    # "for fcomm = 0%": eps_min is epsilon with nothing to communicate
    assert model.epsilon(0.0, 0.2, 8, 1) == pytest.approx(model.eps_min(0.2, 8, 1), rel=1e-12)


def test_worked_example_eps_max_is_reached_at_f_comm_best() -> None:
    best = model.f_comm_best(0.2, 8, 1)
    assert model.epsilon(best, 0.2, 8, 1) == pytest.approx(model.eps_max(0.2, 8, 1), rel=1e-12)


@pytest.mark.parametrize("n", [2, 4, 8, 16])
def test_wellein_bounds_for_one_reserved_thread(n: int) -> None:
    """Sec. 7.2.1 quotes Wellein et al.: 1 - 1/n <= eps <= 2 - 1/n for m = 1
    (f_comp_non = 0 makes both bounds of eqs. 5 and 9 reach these values)."""
    assert model.eps_max(0.0, n, 1) == pytest.approx(2 - 1 / n, rel=1e-12)
    assert model.eps_min(0.0, n, 1) == pytest.approx(1 - 1 / n, rel=1e-12)


def test_m_min_definition() -> None:
    # m_min = f_comm / (f_comp_overlap + f_comm): 0.3 / (0.5 + 0.3)
    assert model.m_min(0.3, 0.2) == pytest.approx(0.375, rel=1e-12)


# --- seed 002 sec. 4.2 and Table 1 (Kaiser & Baden) ---------------------------

def test_kaiser_baden_p8_optimum() -> None:
    """"If P = 8 then there is speedup if C > (1/8) ... the maximum speedup is
    S = 15/8 when C = 8/15"."""
    assert model.kb_c_best(8) == pytest.approx(8 / 15, rel=1e-15)
    assert model.kb_best_gain(8) == pytest.approx(15 / 8, rel=1e-15)
    assert 1 / model.kb_time(8 / 15, 8) == pytest.approx(15 / 8, rel=1e-12)
    assert not model.kb_gain_possible(1 / 8, 8)
    assert model.kb_gain_possible(1 / 8 + 1e-9, 8)
    assert model.kb_time(1 / 8, 8) == pytest.approx(1.0, rel=1e-12)  # break-even exactly at 1/P


def test_kaiser_baden_optimum_is_the_minimum_of_t() -> None:
    grid = [i / 1000 for i in range(1001)]
    best_c = min(grid, key=lambda c: model.kb_time(c, 8))
    assert abs(best_c - 8 / 15) <= 1e-3


# Table 1 of seed 002: communication time, total cycle time (s), P, and the
# printed columns 1/P, normalised communication time C, P/(2P-1).
KB_TABLE_1 = [
    (0.0678, 0.1238, 4, 0.25, 0.55, 0.57),
    (0.0691, 0.1153, 5, 0.20, 0.60, 0.56),
    (0.0714, 0.1118, 6, 0.17, 0.64, 0.55),
    (0.0874, 0.1247, 7, 0.14, 0.70, 0.54),
    (0.0847, 0.1187, 8, 0.13, 0.71, 0.53),
]


@pytest.mark.parametrize("comm, total, p, inv_p, c_printed, limit", KB_TABLE_1)
def test_kaiser_baden_table_1(comm: float, total: float, p: int, inv_p: float,
                              c_printed: float, limit: float) -> None:
    c = comm / total
    assert printed(c, c_printed, 2)
    assert printed(1 / p, inv_p, 2)
    assert printed(model.kb_c_best(p), limit, 2)
    # The table's caption: C > 1/P in every row, so overlap should pay.
    assert model.kb_gain_possible(c, p)
    assert model.kb_time(c, p) < 1.0


# --- seed 000 sec. 6, Table 1 ---------------------------------------------------

# (b_hybrid, b_MPP) accumulated MB/s, b_MPP/b_hybrid as printed, T_hybrid/T_MPP as printed;
# columns: b_eff average, b_eff at Lmax, 3D-cyclic average, 3D-cyclic at Lmax.
TABLE_1 = [
    (1535, 5299, 3.45, 1.73),
    (5565, 16624, 2.99, 1.49),
    (1604, 5000, 3.12, 1.56),
    (5638, 18458, 3.27, 1.64),
]


@pytest.mark.parametrize("b_hybrid, b_mpp, b_ratio, t_ratio", TABLE_1)
def test_table_1_from_measured_bandwidths(b_hybrid: float, b_mpp: float, b_ratio: float,
                                          t_ratio: float) -> None:
    assert printed(b_mpp / b_hybrid, b_ratio, 2)
    assert printed(model.comm_time_ratio(b_mpp / b_hybrid, 2.0), t_ratio, 2)


@pytest.mark.parametrize("b_hybrid, b_mpp, b_ratio, t_ratio", TABLE_1)
def test_table_1_from_printed_ratios(b_hybrid: float, b_mpp: float, b_ratio: float,
                                     t_ratio: float) -> None:
    # From the rounded ratio the result can be off by the ratio's own
    # rounding halved (2.99 / 2 = 1.495 against the printed 1.49).
    assert abs(model.comm_time_ratio(b_ratio, 2.0) - t_ratio) <= 0.005 / 2 + 0.005 + 1e-12


# --- seed 000 Table 2, Hockney ----------------------------------------------------

def test_hockney_table_2_example() -> None:
    """300 MB/s / (1 + 300 MB/s x 10 us / 10 kB) = 232 MB/s, with 1 kB = 1024 B."""
    b = model.hockney_bandwidth(10 * 1024, 10e-6, 300e6)
    assert printed(b / 1e6, 232, 0)
    # With 1 kB = 1000 B the paper's figure would be 231, not 232.
    assert not printed(model.hockney_bandwidth(10 * 1000, 10e-6, 300e6) / 1e6, 232, 0)
    assert model.hockney_time(10 * 1024, 10e-6, 300e6) == pytest.approx(10 * 1024 / b, rel=1e-12)


def test_hockney_latency_bound_word_access() -> None:
    """Table 2: word-based remote access, 8 byte / 0.33 us = 24 MB/s (the b_inf -> inf limit)."""
    b = model.hockney_bandwidth(8, 0.33e-6, 1e18)
    assert printed(b / 1e6, 24, 0)


def test_hockney_half_performance_length() -> None:
    b_inf, t_lat = 300e6, 10e-6
    n_half = model.hockney_n_half(t_lat, b_inf)
    assert model.hockney_bandwidth(n_half, t_lat, b_inf) == pytest.approx(b_inf / 2, rel=1e-12)


# --- seed 001 sec. 3.2, CPU-seconds on the IBM SP ---------------------------------

def test_cpu_seconds_ibm_example() -> None:
    """16 CPUs/node, 1 s of communication at full bandwidth: 16/0.28 = 57 CPU-s
    masteronly, 4/0.883 = 4.5 CPU-s with 4 communicating CPUs."""
    assert printed(model.cpu_seconds_masteronly(16, 1.0, 0.28), 57, 0)
    assert printed(model.cpu_seconds_overlap(4, 1.0, 0.883), 4.5, 1)


# --- seed 000 sec. 7.2.2, eq. (14) ------------------------------------------------

A_HITACHI, B_SPMV = 4.57, 1.0 / 6.0


def test_eq14_crossover_at_nk_loc_32() -> None:
    """x_comm/x_overlap = 4.57 "fixes the crossover-point eps = 1 at nk_loc = 32"
    (n = 8, m = 1, x_non/x_overlap = 1/6)."""
    assert model.eq14_epsilon(32, A_HITACHI, B_SPMV, 8, 1) == pytest.approx(1.0, abs=1e-3)
    cross = model.eq14_crossover(A_HITACHI, 8, 1)
    assert cross == pytest.approx(32, abs=0.05)
    assert model.eq14_epsilon(cross, A_HITACHI, B_SPMV, 8, 1) == pytest.approx(1.0, rel=1e-12)
    # favoured at low and intermediate sizes, not above the crossover
    for nk in (1, 2, 4, 8, 16, 31):
        assert model.eq14_epsilon(nk, A_HITACHI, B_SPMV, 8, 1) > 1.0
    for nk in (33, 64, 128, 512):
        assert model.eq14_epsilon(nk, A_HITACHI, B_SPMV, 8, 1) < 1.0


def test_eq14_profiling_estimate_moves_crossover_below_32() -> None:
    # "x_comm/x_overlap ~ 4.17 was estimated from a profiling run": crossover 29.2
    assert model.eq14_crossover(4.17, 8, 1) == pytest.approx(29.19, abs=0.01)


def test_eq14_peak_and_large_nk_limit() -> None:
    peak = model.eq14_peak(A_HITACHI, 8, 1)
    eps_peak = model.eq14_epsilon(peak, A_HITACHI, B_SPMV, 8, 1)
    for nk in (0.5 * peak, 0.9 * peak, 1.1 * peak, 2 * peak):
        assert model.eq14_epsilon(nk, A_HITACHI, B_SPMV, 8, 1) < eps_peak
    # at the peak no thread idles: eq. (5) for that nk's f_comp_non
    _, f_non, _ = model.eq14_fractions(peak, A_HITACHI, B_SPMV)
    assert eps_peak == pytest.approx(model.eps_max(f_non, 8, 1), rel=1e-12)
    # as nk grows, f_comm -> 0 and epsilon -> eps_min with f_comp_non = b/(1+b)
    far = model.eq14_epsilon(1e9, A_HITACHI, B_SPMV, 8, 1)
    assert far == pytest.approx(model.eps_min(B_SPMV / (1 + B_SPMV), 8, 1), rel=1e-6)


def test_eq14_vectorised_matches_scalar() -> None:
    import numpy as np

    nks = np.array([1.0, 4.0, 32.0, 100.0])
    vec = model.eq14_epsilon(nks, A_HITACHI, B_SPMV, 8, 1)
    assert [float(v) for v in vec] == [model.eq14_epsilon(float(k), A_HITACHI, B_SPMV, 8, 1) for k in nks]
