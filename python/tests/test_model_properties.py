"""Properties of eq. (3) over its whole valid domain (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hympi_lab import model

REL = 1e-12  # float slack on identities that hold exactly in real arithmetic


@st.composite
def domain(draw: st.DrawFn) -> tuple[int, int, float, float]:
    """(n, m, f_comp_non, f_comm) with 2 <= n, 1 <= m < n, fractions valid."""
    n = draw(st.integers(min_value=2, max_value=256))
    m = draw(st.integers(min_value=1, max_value=n - 1))
    f_non = draw(st.floats(min_value=0.0, max_value=1.0))
    f_comm = draw(st.floats(min_value=0.0, max_value=1.0 - f_non))
    return n, m, f_non, f_comm


@given(domain())
def test_epsilon_between_eps_min_and_eps_max(args: tuple[int, int, float, float]) -> None:
    n, m, f_non, f_comm = args
    eps = model.epsilon(f_comm, f_non, n, m)
    assert model.eps_min(f_non, n, m) * (1 - REL) <= eps <= model.eps_max(f_non, n, m) * (1 + REL)
    # eqs. (7) and (9): bounds that do not depend on the fractions
    assert 1 - m / n - REL <= eps <= 1 + m * (1 - 1 / n) + REL


@given(domain())
def test_epsilon_is_one_at_f_comm_equiv(args: tuple[int, int, float, float]) -> None:
    n, m, f_non, _ = args
    if f_non == 1.0:
        return  # nothing but non-overlappable work: every f_comm is 0
    equiv = model.f_comm_equiv(f_non, n, m)
    assert abs(model.epsilon(equiv, f_non, n, m) - 1.0) <= 1e-12


@given(domain())
def test_eps_max_reached_at_f_comm_best(args: tuple[int, int, float, float]) -> None:
    n, m, f_non, f_comm = args
    best = model.f_comm_best(f_non, n, m)
    top = model.eps_max(f_non, n, m)
    assert abs(model.epsilon(best, f_non, n, m) - top) <= REL * top
    # and nowhere higher: the arbitrary f_comm drawn stays below it
    assert model.epsilon(f_comm, f_non, n, m) <= top * (1 + REL)


@given(domain())
def test_eps_min_reached_at_zero_communication(args: tuple[int, int, float, float]) -> None:
    n, m, f_non, _ = args
    assert abs(model.epsilon(0.0, f_non, n, m) - model.eps_min(f_non, n, m)) <= REL


@given(domain())
def test_break_even_lies_below_the_best_point(args: tuple[int, int, float, float]) -> None:
    """Addendum 4 uses eq. (8), the overlap-dominated branch: valid only if
    f_comm_equiv <= f_comm_best, which holds for every m < n."""
    n, m, f_non, _ = args
    assert model.f_comm_equiv(f_non, n, m) <= model.f_comm_best(f_non, n, m) + REL


@given(st.integers(min_value=2, max_value=256), st.floats(min_value=0.0, max_value=1.0))
def test_kaiser_baden_is_eq3_with_one_thread_and_no_non_overlap(p: int, c: float) -> None:
    assert abs(1 / model.kb_time(c, p) - model.epsilon(c, 0.0, p, 1)) <= REL * (1 / model.kb_time(c, p))
    assert abs(model.kb_best_gain(p) - model.eps_max(0.0, p, 1)) <= REL
    assert abs(model.kb_c_best(p) - model.f_comm_best(0.0, p, 1)) <= REL


@given(domain())
def test_adaptive_bound_dominates_masteronly_and_funneled(args: tuple[int, int, float, float]) -> None:
    n, _, f_non, f_comm = args
    bound = model.epsilon_adaptive_bound(f_comm, f_non, n)
    assert bound >= 1.0 - REL
    assert bound >= model.epsilon(f_comm, f_non, n, 1) * (1 - REL)


@given(st.integers(min_value=2, max_value=64), st.data(),
       st.floats(min_value=0.01, max_value=1e4), st.floats(min_value=0.0, max_value=10.0),
       st.floats(min_value=0.01, max_value=1e4))
def test_eq14_is_eq3_with_the_fractions_of_eqs_11_to_13(
        n: int, data: st.DataObject, a: float, b: float, nk: float) -> None:
    m = data.draw(st.integers(min_value=1, max_value=n - 1))
    f_comm, f_non, f_ov = model.eq14_fractions(nk, a, b)
    assert abs(f_comm + f_non + f_ov - 1.0) <= 1e-12
    eps14 = model.eq14_epsilon(nk, a, b, n, m)
    assert abs(eps14 - model.epsilon(f_comm, f_non, n, m)) <= 1e-9 * eps14


@given(st.integers(min_value=2, max_value=64), st.data(),
       st.floats(min_value=0.01, max_value=1e4), st.floats(min_value=0.0, max_value=10.0))
def test_eq14_crossover_is_where_epsilon_is_one(n: int, data: st.DataObject, a: float, b: float) -> None:
    m = data.draw(st.integers(min_value=1, max_value=n - 1))
    cross = model.eq14_crossover(a, n, m)
    assert abs(model.eq14_epsilon(cross, a, b, n, m) - 1.0) <= 1e-9


# The models of the two schemes beyond the papers (python/README.md).
@pytest.mark.parametrize("f_comm,f_non,n", [(0.3, 0.1, 8), (0.05, 0.0, 4), (0.6, 0.2, 16), (0.2, 0.5, 2)])
def test_shared_window_model_limits(f_comm: float, f_non: float, n: int) -> None:
    # All faces inter-node: exactly funneled (eq. 3 with m = 1).
    assert model.epsilon_shared_window(f_comm, f_non, n, 1.0) == pytest.approx(
        model.epsilon(f_comm, f_non, n, 1))
    # Intra-node faces at a message's cost: funneled again; at zero cost: faster.
    assert model.epsilon_shared_window(f_comm, f_non, n, 0.3, intra_cost=1.0) == pytest.approx(
        model.epsilon(f_comm, f_non, n, 1))
    assert model.epsilon_shared_window(f_comm, f_non, n, 0.3) >= model.epsilon(f_comm, f_non, n, 1) - 1e-12
    # No inter-node faces and free intra-node ones: only the n - 1 computing threads bound it.
    f_ov = 1.0 - f_comm - f_non
    assert model.epsilon_shared_window(f_comm, f_non, n, 0.0) == pytest.approx(
        1.0 / (f_non + f_ov * n / (n - 1)))


def test_shared_window_worked_example() -> None:
    # f_comm 0.4, f_comp_non 0.1, n 4, half the bytes inter-node, zero-copy:
    # f_sw = 0.2, f_ov = 0.5 -> max(0.2, 0.5 * 4/3) = 0.6667 -> 1 / 0.7667.
    assert model.epsilon_shared_window(0.4, 0.1, 4, 0.5) == pytest.approx(1.0 / (0.1 + 0.5 * 4 / 3))
    with pytest.raises(ValueError):
        model.epsilon_shared_window(0.4, 0.1, 4, 1.5)


@pytest.mark.parametrize("f_comm,f_non,n", [(0.3, 0.1, 8), (0.05, 0.0, 4), (0.6, 0.2, 16)])
def test_partitioned_model(f_comm: float, f_non: float, n: int) -> None:
    f_ov = 1.0 - f_comm - f_non
    assert model.epsilon_partitioned(f_comm, f_non, n) == pytest.approx(1.0 / (f_non + max(f_comm, f_ov)))
    # No asynchronous progress: masteronly's time, epsilon 1.
    assert model.epsilon_partitioned(f_comm, f_non, n, async_progress=False) == pytest.approx(1.0)
    # No thread reserved: never below funneled's prediction with progress.
    assert model.epsilon_partitioned(f_comm, f_non, n) >= model.epsilon(f_comm, f_non, n, 1) - 1e-12


def test_report_validates_the_new_schemes_with_their_models() -> None:
    from hympi_lab import report

    def run(scheme: str, median: float, inter_share: float) -> report.SolveRun:
        return report.SolveRun(f"solve-jacobi-{scheme}", "jacobi", scheme, scheme, 0, 4, 4, median,
                               median * 0.99, median * 1.01, 1.0,
                               {"f_comm": 0.4, "f_comp_non": 0.1, "f_comp_overlap": 0.5}, {}, "",
                               None, inter_share)

    runs = {"jacobi": [run("masteronly", 1.0, 0.5), run("shared-window", 0.8, 0.0),
                       run("partitioned", 0.9, 0.5)]}
    rows = {v.label: v for v in report.validations(runs)}
    # masteronly's byte split (0.5) feeds shared-window's model, not its own zero-copy record.
    assert rows["shared-window"].predicted == pytest.approx(model.epsilon_shared_window(0.4, 0.1, 4, 0.5))
    assert rows["shared-window"].measured == pytest.approx(1.25)
    assert rows["partitioned"].predicted == pytest.approx(model.epsilon_partitioned(0.4, 0.1, 4))


def test_deep_halo_divides_latency_by_depth() -> None:
    """Temporal blocking: one exchange of 26 messages every h iterations; the
    faces' bytes per iteration are those of depth 1, the edges and corners
    come on top (divided by h)."""
    t_lat, b_inf, box = 2e-6, 5e9, (64, 48, 32)
    one = model.deep_halo_per_iteration(box, 1, t_lat, b_inf)
    assert one["messages"] == 6
    assert one["latency_s"] == pytest.approx(6 * t_lat)
    faces = 8 * 2 * (48 * 32 + 64 * 32 + 64 * 48)
    assert one["bytes"] == faces
    assert one["bytes_s"] == pytest.approx(faces / b_inf)
    for h in (2, 4, 8):
        deep = model.deep_halo_per_iteration(box, h, t_lat, b_inf)
        assert deep["messages"] == 26
        assert deep["latency_s"] == pytest.approx(26 * t_lat / h)
        edges_corners = 8 * (4 * h * h * (64 + 48 + 32) + 8 * h ** 3)
        assert deep["bytes"] == h * faces + edges_corners
        assert deep["bytes_s"] == pytest.approx((faces + edges_corners / h) / b_inf)
        assert deep["total_s"] == pytest.approx(deep["latency_s"] + deep["bytes_s"])
    # Latency-bound (tiny box, slow start-up): deeper halos pay; at depth 4
    # 26/4 = 6.5 start-ups per iteration is still above depth 1's 6.
    tiny = (8, 8, 8)
    assert (model.deep_halo_per_iteration(tiny, 8, 1e-5, 1e10)["total_s"]
            < model.deep_halo_per_iteration(tiny, 1, 1e-5, 1e10)["total_s"])
    with pytest.raises(ValueError):
        model.deep_halo_per_iteration(tiny, 0, t_lat, b_inf)
    with pytest.raises(ValueError):
        model.deep_halo_per_iteration((4, 8, 8), 5, t_lat, b_inf)
