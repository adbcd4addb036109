"""The advisor's ranking, runner-up, margin and 'no clear winner'."""

from __future__ import annotations

import pytest

from hympi_lab import advise, model
from hympi_lab.errors import InputError


def test_paper_example_at_f_comm_best_recommends_funneled() -> None:
    # m = 1, n = 8, f_comp_non = 0.2 at f_comm = 43 %: funneled reaches ~eps_max.
    result = advise.advise(0.43, 0.2, 8)
    assert (result.best.scheme, result.best.m) == ("funneled", 1)
    assert result.best.epsilon == pytest.approx(model.epsilon(0.43, 0.2, 8, 1))
    assert (result.runner_up.scheme, result.runner_up.m) == ("multiple", 2)
    assert result.margin == pytest.approx(result.best.epsilon - result.runner_up.epsilon)
    assert result.clear_winner and "funneled (m = 1)" in result.verdict


def test_heavy_communication_reserves_more_threads() -> None:
    # m = 2: max(0.35, 0.25 * 8/6) = 0.35 -> eps = 1/0.4 = 2.5; m = 3 gives 1/0.45
    result = advise.advise(0.7, 0.05, 8)
    assert (result.best.scheme, result.best.m) == ("multiple", 2)
    assert result.best.epsilon == pytest.approx(2.5)
    assert (result.runner_up.m, result.runner_up.epsilon) == (3, pytest.approx(1 / 0.45))
    assert len(result.ranking) == 8  # masteronly + m = 1..7


def test_m_max_limits_the_reservation() -> None:
    result = advise.advise(0.7, 0.05, 8, m_max=1)
    assert [c.m for c in result.ranking] == [1, 0]
    assert result.best.epsilon == pytest.approx(1 / 0.75)


def test_measured_bandwidth_shares_replace_linear_scaling() -> None:
    # With beta(1) = 0.28, beta(2) = 0.5, beta(4) = 0.883 (seed 001's IBM style):
    # m = 2 communicates in 0.7 * 0.28/0.5 = 0.392 -> eps = 1/(0.05 + 0.392).
    result = advise.advise(0.7, 0.05, 8, beta={1: 0.28, 2: 0.5, 4: 0.883})
    assert sorted(c.m for c in result.ranking) == [0, 1, 2, 4]
    assert (result.best.m, result.best.epsilon) == (2, pytest.approx(1 / (0.05 + 0.392)))


def test_little_communication_keeps_masteronly() -> None:
    result = advise.advise(0.02, 0.2, 8)
    assert result.best.scheme == "masteronly" and result.best.epsilon == 1.0
    assert result.runner_up.scheme == "funneled"
    assert result.clear_winner and result.verdict.startswith("masteronly")


def test_exact_break_even_is_no_clear_winner() -> None:
    # f_comm_equiv: funneled and masteronly predict the same epsilon; the
    # simpler scheme is listed first but no winner is claimed.
    result = advise.advise(model.f_comm_equiv(0.2, 8, 1), 0.2, 8)
    assert result.best.scheme == "masteronly" and result.runner_up.scheme == "funneled"
    assert not result.clear_winner
    assert result.verdict.startswith("no clear winner")


def test_uncertainty_decides_clear_or_not() -> None:
    # f_comm = 0.16 is past break-even (0.10): funneled wins by ~0.07 ...
    sure = advise.advise(0.16, 0.2, 8, advise.box_samples(0.16, 0.005, 0.2, 0.005))
    assert sure.best.scheme == "funneled" and sure.clear_winner
    assert sure.margin_range is not None and sure.margin_range[0] > 0
    # ... but with +-0.08 on f_comm masteronly can win inside the uncertainty.
    unsure = advise.advise(0.16, 0.2, 8, advise.box_samples(0.16, 0.08, 0.2, 0.0))
    assert unsure.best.scheme == "funneled" and not unsure.clear_winner
    assert unsure.margin_range is not None and unsure.margin_range[0] <= 0 < unsure.margin_range[1]
    assert "no clear winner" in unsure.verdict and "masteronly" in unsure.verdict


def test_box_samples_stay_in_the_valid_domain() -> None:
    samples = advise.box_samples(0.9, 0.2, 0.05, 0.1)
    assert samples and all(0 <= fc <= 1 and 0 <= fn <= 1 and fc + fn <= 1 + 1e-9 for fc, fn in samples)
    assert (0.9, 0.05) in [(round(a, 12), round(b, 12)) for a, b in samples]


def test_eq14_samples_cover_the_ratio_uncertainty() -> None:
    samples = advise.eq14_samples(32, 4.57, 0.5, 1 / 6, 0.0)
    f_comms = sorted(s[0] for s in samples)
    assert f_comms[0] == pytest.approx(model.eq14_fractions(32, 4.07, 1 / 6)[0])
    assert f_comms[-1] == pytest.approx(model.eq14_fractions(32, 5.07, 1 / 6)[0])


def test_adaptive_is_reported_as_a_bound_not_ranked() -> None:
    result = advise.advise(0.3, 0.1, 8)
    assert all(c.scheme != "adaptive" for c in result.ranking)
    assert result.adaptive_bound == pytest.approx(model.epsilon_adaptive_bound(0.3, 0.1, 8))
    assert result.best.scheme == "funneled" and result.adaptive_bound > result.best.epsilon


def test_two_threads_leave_two_candidates() -> None:
    # funneled: 1 / max(0.6, 0.4 * 2/1) = 1.25
    result = advise.advise(0.6, 0.0, 2)
    assert [c.scheme for c in result.ranking] == ["funneled", "masteronly"]
    assert result.best.epsilon == pytest.approx(1.25)


@pytest.mark.parametrize("kwargs, message", [
    (dict(f_comm=0.5, f_comp_non=0.6, n=8), "must not exceed 1"),
    (dict(f_comm=0.5, f_comp_non=0.1, n=1), "n must be at least 2"),
    (dict(f_comm=0.5, f_comp_non=0.1, n=8, m_max=0), "--m-max must be at least 1"),
    (dict(f_comm=0.5, f_comp_non=0.1, n=8, beta={2: 0.5}), r"beta\(1\) is needed"),
])
def test_bad_advise_input(kwargs: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        advise.advise(**kwargs)
