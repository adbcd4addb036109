"""The advisor's ranking, runner-up, margin and 'no clear winner'."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from hympi_lab import advise, model, results
from hympi_lab.errors import InputError

from conftest import document


def test_paper_example_at_f_comm_best_recommends_funneled() -> None:
    # m = 1, n = 8, f_comp_non = 0.2 at f_comm = 43 %: funneled reaches ~eps_max.
    result = advise.advise(0.43, 0.2, 8)
    assert (result.best.scheme, result.best.m) == ("funneled", 1)
    assert result.best.epsilon == pytest.approx(model.epsilon(0.43, 0.2, 8, 1))
    assert (result.runner_up.scheme, result.runner_up.m) == ("multiple", 2)
    assert result.margin == pytest.approx(result.best.epsilon - result.runner_up.epsilon)
    # No uncertainty given: the ranking is nominal, no winner is claimed.
    assert not result.clear_winner and "funneled (m = 1)" in result.verdict
    assert result.verdict.startswith("no clear winner claimed: no uncertainty was given")
    sure = advise.advise(0.43, 0.2, 8, samples=advise.box_samples(0.43, 0.01, 0.2, 0.01))
    assert sure.clear_winner and sure.verdict.startswith("funneled (m = 1)")


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
    result = advise.advise(0.02, 0.2, 8, samples=advise.box_samples(0.02, 0.005, 0.2, 0.01))
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


# --- where the fractions come from -------------------------------------------

def test_from_fractions_samples_the_error_box() -> None:
    given = advise.from_fractions(8, 0.16, 0.2, f_comm_err=0.08)
    assert (given.n, given.f_comm, given.f_comp_non, given.source) == (8, 0.16, 0.2, "flags")
    assert given.uncertainty_samples() == advise.box_samples(0.16, 0.08, 0.2, 0.0)
    assert advise.from_fractions(8, 0.16, 0.2).uncertainty_samples() == []
    assert not advise.advise_input(given).clear_winner


def test_from_ratios_evaluates_eq14_at_the_depth() -> None:
    given = advise.from_ratios(8, 8, 4.57, 1 / 6, comm_ratio_err=0.1)
    fc, fn, _ = model.eq14_fractions(8, 4.57, 1 / 6)
    assert (given.f_comm, given.f_comp_non) == (pytest.approx(fc), pytest.approx(fn))
    assert list(given.samples) == advise.eq14_samples(8, 4.57, 0.1, 1 / 6, 0.0)
    assert given.uncertainty_samples() == list(given.samples)
    assert advise.from_ratios(8, 8, 4.57, 1 / 6).samples == ()
    assert advise.advise_input(given).best.scheme == "funneled"


def _solve(f_comm: float, threads: int = 8, scheme: str = "masteronly") -> dict[str, Any]:
    return {"kind": "solve", "scheme": scheme, "threads": threads,
            "fractions": {"f_comm": f_comm, "f_comp_non": 0.05, "f_comp_overlap": 0.95 - f_comm}}


def test_from_solve_records_mean_and_spread(write_json: Callable[..., str]) -> None:
    docs = results.load_documents([write_json(document([_solve(f) for f in (0.69, 0.70, 0.71)]
                                                       + [_solve(0.1, scheme="funneled")]))])
    given = advise.from_solve_records(docs)
    assert given.n == 8 and given.f_comm == pytest.approx(0.70)
    assert given.f_comm_err == pytest.approx(0.01) and given.f_comp_non_err == pytest.approx(0.0, abs=1e-12)
    assert "3 masteronly solve record(s)" in given.source
    # explicit errors take precedence over the spread
    assert advise.from_solve_records(docs, f_comm_err=0.2).f_comm_err == 0.2
    result = advise.advise_input(given)
    assert (result.best.scheme, result.best.m) == ("multiple", 2) and result.clear_winner


def test_from_solve_records_needs_one_thread_count(write_json: Callable[..., str]) -> None:
    docs = results.load_documents([write_json(document([_solve(0.3, 4), _solve(0.3, 8)]))])
    with pytest.raises(InputError, match="different thread counts"):
        advise.from_solve_records(docs)
    assert advise.from_solve_records(docs, n=4).n == 4
    with pytest.raises(InputError, match="no masteronly solve records with fractions at --n 2"):
        advise.from_solve_records(docs, n=2)


def test_from_overlap_points_fits_eq14(tmp_path: Path) -> None:
    path = tmp_path / "points.csv"
    rows = [f"{nk},{m},{model.eq14_epsilon(nk, 4.57, 1 / 6, 8, m)}"
            for m in (1, 2) for nk in (1, 2, 4, 8, 16, 32, 64, 128, 256)]
    path.write_text("nk_loc,reserved,epsilon\n" + "\n".join(rows) + "\n")
    given = advise.from_overlap_points([str(path)], nk_loc=4, n=8)
    fc, fn, _ = model.eq14_fractions(4, 4.57, 1 / 6)
    assert given.n == 8 and given.f_comm == pytest.approx(fc, rel=1e-6)
    assert given.f_comp_non == pytest.approx(fn, rel=1e-6)
    assert "fitted to 18 overlap points" in given.source and given.samples
    assert advise.advise_input(given).best.scheme == "funneled"


# --- inputs that cannot back a choice --------------------------------------------

def _masteronly(f_comm: float, idle: float = 0.01, repeat: int = 3) -> dict[str, Any]:
    return {"kind": "solve", "scheme": "masteronly", "threads": 2, "repeat": repeat,
            "time_s": {"min": 0.1, "median": 0.1, "max": 0.1},
            "breakdown_s": {"idle": [idle, idle]},
            "fractions": {"f_comm": f_comm, "f_comp_non": 0.05, "f_comp_overlap": 0.95 - f_comm}}


def _docs(records: list[dict[str, Any]], context: dict[str, Any]) -> list[results.Document]:
    return [results.Document("run.json", context, records)]


def test_oversubscribed_runs_are_refused() -> None:
    # The case: 2 ranks x 2 threads on a 2-core machine.
    context = {"nodes": {"node_of_rank": [0, 0]},
               "thread_affinity": [["0-1", "0-1"], ["0-1", "0-1"]]}
    given = advise.from_solve_records(_docs([_masteronly(f) for f in (0.4, 0.42, 0.44)], context))
    result = advise.advise_input(given)
    assert not result.clear_winner
    assert result.verdict == ("cannot recommend: the run was oversubscribed: 4 threads on node 0 "
                              "shared 2 CPU(s)")
    # The same on 4 CPUs is trusted.
    roomy = {"nodes": {"node_of_rank": [0, 0]}, "thread_affinity": [["0-1", "0-1"], ["2-3", "2-3"]]}
    assert not advise.from_solve_records(_docs([_masteronly(f) for f in (0.4, 0.42)], roomy)).refused
    # A context that says so itself (hympi's native tools) is believed.
    assert advise.untrusted_reasons(_docs([_masteronly(0.4)] * 2, {"oversubscribed": True}))


def test_idle_dominated_and_single_repetition_runs_are_refused() -> None:
    idle = advise.untrusted_reasons(_docs([_masteronly(0.4, idle=0.07)] * 2, {}))
    assert len(idle) == 1 and idle[0].startswith("idle time dominates the loop (70% of it")
    single = advise.untrusted_reasons(_docs([_masteronly(0.4, repeat=1)], {}))
    assert single == ["a single repetition: no spread to judge the noise by (repeat the run)"]
    assert advise.untrusted_reasons(_docs([_masteronly(0.4, repeat=1)] * 2, {})) == []


def test_schemes_beyond_the_papers_are_reported_as_bounds() -> None:
    """partitioned (asynchronous progress) and shared-window (zero-copy faces)
    are upper bounds beside the ranking, like adaptive: never ranked."""
    result = advise.advise(0.3, 0.1, 8)
    assert all(c.scheme not in ("partitioned", "shared-window") for c in result.ranking)
    assert result.partitioned_bound == pytest.approx(model.epsilon_partitioned(0.3, 0.1, 8))
    assert result.partitioned_bound >= result.best.epsilon
    assert result.shared_window_bound is None  # no inter-node share from flags
    with_share = advise.advise(0.3, 0.1, 8, inter_share=0.5)
    assert with_share.shared_window_bound == pytest.approx(
        1 / (0.1 + max(0.3 * 0.5, 0.6 * 8 / 7)))
    with pytest.raises(InputError, match="inter-node share"):
        advise.advise(0.3, 0.1, 8, inter_share=1.5)


def test_solve_records_give_the_inter_node_share() -> None:
    """bytes_per_exchange of the masteronly records: inter / (intra + inter +
    zero-copy), averaged; the shared-window bound follows."""
    roomy = {"nodes": {"node_of_rank": [0, 0]}, "thread_affinity": [["0-1", "0-1"], ["2-3", "2-3"]]}
    recs = [dict(_masteronly(f), bytes_per_exchange={"intra_node": 3000, "inter_node": 1000,
                                                     "zero_copy": 0}) for f in (0.4, 0.42)]
    given = advise.from_solve_records(_docs(recs, roomy))
    assert given.inter_share == pytest.approx(0.25)
    result = advise.advise_input(given)
    assert result.shared_window_bound == pytest.approx(
        model.epsilon_shared_window(given.f_comm, given.f_comp_non, 2, 0.25, 0.0))
