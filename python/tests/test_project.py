"""hympi-lab project: geometry, the scaling laws on synthetic parameters,
self-consistency against recorded measurements, bad input."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path

import pytest

from hympi_lab import cli, project as pj

DATA = Path(__file__).resolve().parent / "data"


def synthetic(t_lat: float = 2e-6, b_inf: float = 5e9, interior: float = 4e-9,
              schemes: tuple[str, ...] = ("masteronly", "funneled"), threads: int = 4,
              beta: dict[int, float] | None = None) -> pj.Inputs:
    """Inputs with known parameters: no noise, one cost per scheme."""
    link = pj.Link(t_lat, b_inf, 0.0, 0.0, "synthetic")
    costs = [pj.Cost("jacobi", s, 1 if s == "multiple" else 0, threads, interior, 0.0, 0.0, 0.0, 1,
                     1.0, 1.0, 1.0, (64, 64, 64), (1, 1, 1), (1, 1, 1), False, 1) for s in schemes]
    return pj.Inputs(link, link, beta or {}, {"jacobi": costs}, 1, "real", 1, threads)


def test_geometry_of_a_measured_run():
    """jacobi 24^3 on 2 nodes x 2 ranks (proc grid 1x2x2, node block 1x1x2): every
    rank has one inter-node face (y) and one intra-node face (z) of 24x12 values;
    the solve record counted 9216 bytes each way over the 4 ranks."""
    g = pj.worst_rank((24, 24, 24), (1, 2, 1), (1, 1, 2), False)
    assert (g.msgs_inter, g.bytes_inter, g.msgs_intra, g.bytes_intra) == (1, 2304, 1, 2304)
    assert g.points == 24 * 12 * 12
    assert g.boundary_points == 24 * 12 * 12 - 24 * 11 * 11
    # periodic: two neighbours per split dimension, the wrap across nodes too
    g = pj.worst_rank((24, 24, 24), (1, 2, 1), (1, 1, 2), True)
    assert (g.msgs_inter, g.msgs_intra) == (2, 2)
    # an interior node of a 4x4x4 node grid, one rank per node: six inter-node faces
    g = pj.worst_rank((64, 64, 64), (4, 4, 4), (1, 1, 1), False)
    assert (g.msgs_inter, g.bytes_inter, g.msgs_intra) == (6, 6 * 8 * 16 * 16, 0)


def test_geometry_of_deep_halos():
    """--halo-depth h: faces h deep plus the edges and corners whose neighbour
    exists (as the library exchanges them), and the halo points a block
    recomputes (sweep s of h grows the box by h-1-s layers)."""
    # one rank per node, an inner node of 4x4x4: 26 messages, all inter-node
    g = pj.worst_rank((64, 64, 64), (4, 4, 4), (1, 1, 1), False, 2)
    assert (g.msgs_inter, g.msgs_intra) == (26, 0)
    assert g.bytes_inter == 8 * (6 * 2 * 16 * 16 + 12 * 2 * 2 * 16 + 8 * 2 ** 3)
    assert g.points == 16 ** 3 and g.computed_points == (18 ** 3 + 16 ** 3) / 2
    # depth 1 is the faces alone, and computes its own box
    g1 = pj.worst_rank((64, 64, 64), (4, 4, 4), (1, 1, 1), False)
    assert g1.msgs_inter == 6 and g1.computed_points == g1.points
    # What the library counted: `hympi solve --kernel jacobi --grid 32^3 --iters 6
    # --halo-depth 3 --proc-grid 1x2x2 --ranks-per-node 1 --threads 1` on 4 ranks
    # reported 12 messages and 107520 bytes per exchange over its 4 ranks (each
    # rank: a y face, a z face and the yz edge between them).
    g = pj.worst_rank((32, 32, 32), (1, 2, 2), (1, 1, 1), False, 3)
    assert (4 * g.msgs_inter, 4 * g.bytes_inter) == (12, 107520)
    # and the recorded study's depth runs (2 ranks split along z, one face)
    for line in (DATA / "study-2x1-depth" / "results.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["record"] == "result" and rec["step"] == "depth":
            r = rec["result"]
            g = pj.worst_rank(tuple(r["grid"]), (1, 1, 2), (1, 1, 1), False, r["halo_depth"])
            assert 2 * g.bytes_inter == r["bytes_per_exchange"]["inter_node"]
            assert 2 * g.msgs_inter == r["messages_per_exchange"]["inter_node"]


def test_a_deep_halo_pays_the_model_latency_over_h():
    """One rank per node, an inner node: a depth-h run's time per iteration is
    model.deep_halo_per_iteration's halo term (26 T_lat / h, the bytes over h)
    plus its computation over the points it computes."""
    from hympi_lab import model

    t_lat, b_inf, per_point, threads = 3e-6, 4e9, 2e-9, 4
    link = pj.Link(t_lat, b_inf, 0.0, 0.0, "synthetic")
    for h in (1, 2, 8):
        cost = pj.Cost("jacobi", "masteronly", 0, threads, 0.0, per_point, 0.0, 0.0, 1, 1.0, 1.0, 1.0,
                       (64, 64, 64), (1, 1, 1), (1, 1, 1), False, 1, h)
        inputs = pj.Inputs(link, link, {}, {"jacobi": [cost]}, 1, "real", 1, threads)
        t = pj.iteration_time(cost, pj.Shape(threads, 1, threads), (256, 256, 256), 64, inputs,
                              layout=((4, 4, 4), (1, 1, 1)))
        halo = model.deep_halo_per_iteration((64, 64, 64), h, t_lat, b_inf)["total_s"]
        computed = pj.worst_rank((256, 256, 256), (4, 4, 4), (1, 1, 1), False, h).computed_points
        assert t == pytest.approx(halo + per_point * computed / threads, rel=1e-12)


def deep_inputs(t_lat: float, b_inf: float) -> pj.Inputs:
    """masteronly at depth 1 and 8, the same cost per computed point."""
    link = pj.Link(t_lat, b_inf, 0.0, 0.0, "synthetic")
    costs = [pj.Cost("jacobi", "masteronly", 0, 4, 0.0, 1e-9, 0.0, 0.0, 1, 1.0, 1.0, 1.0,
                     (64, 64, 64), (1, 1, 1), (1, 1, 1), False, 1, h) for h in (1, 8)]
    return pj.Inputs(link, link, {}, {"jacobi": costs}, 1, "real", 1, 4)


def test_deep_halos_win_only_where_latency_dominates():
    """Strong scaling of 128^3 onto many nodes: on a high-latency network the
    depth-8 series (26 T_lat / 8 against 6 T_lat per iteration) overtakes depth
    1 from 2 nodes on, and the crossover is reported; on a network of
    negligible latency it never does (it recomputes halo points for nothing).
    Boxes thinner than 8 points do not fit."""
    shape = pj.Shape(4, 1, 4)
    slow = {s.label: s for s in pj.project(deep_inputs(200e-6, 1e10), "jacobi", shape, (128,) * 3,
                                           "strong", max_nodes=16384, samples=10)}
    assert set(slow) == {"masteronly", "masteronly depth 8"}
    one, deep = slow["masteronly"], slow["masteronly depth 8"]
    assert deep.time_s[0] == pytest.approx(one.time_s[0])   # one node: no neighbour, no extra work
    i = one.nodes.index(64)                                  # 32^3 per node
    assert deep.time_s[i] < 0.6 * one.time_s[i]
    assert pj.crossovers(list(slow.values()))[0] == {"nodes": 2, "from": "masteronly",
                                                     "to": "masteronly depth 8", "separated": True}
    assert one.nodes[-2:] == [8192, 16384]                   # 4 points per rank along some axis
    assert all(math.isnan(t) for t in deep.time_s[-2:]) and math.isfinite(one.time_s[-1])
    fast = {s.label: s for s in pj.project(deep_inputs(1e-9, 1e13), "jacobi", shape, (128,) * 3,
                                           "strong", max_nodes=4096, samples=10)}
    one, deep = fast["masteronly"], fast["masteronly depth 8"]
    assert all(d > o for o, d in zip(one.time_s[1:], deep.time_s[1:]))


def test_factors_follow_the_grid():
    assert pj.factor3(8, (100, 100, 100)) == (2, 2, 2)
    assert pj.factor3(2, (10, 10, 40)) == (1, 1, 2)
    assert pj.factor3(16384, (1000, 1000, 1000)) in {(16, 32, 32), (32, 16, 32), (32, 32, 16)}
    assert math.prod(pj.factor3(12, (30, 20, 10))) == 12


def test_strong_scaling_flattens_at_the_latency_floor():
    """Strong scaling: computation shrinks as 1/N, the message count does not,
    so the time approaches the latency floor 6 T_lat of a rank with six
    inter-node neighbours, and never goes below it."""
    inputs = synthetic()
    shape = pj.Shape(4, 1, 4)
    series = {s.label: s for s in pj.project(inputs, "jacobi", shape, (128, 128, 128), "strong",
                                             max_nodes=16384, samples=10)}
    mo = series["masteronly"]
    floor = 6 * 2e-6
    times = [t for t in mo.time_s if math.isfinite(t)]
    assert len(times) == len(mo.nodes)
    assert all(t >= floor for t in times[1:])
    assert times[-1] == pytest.approx(floor, rel=0.1)
    # Efficiency T(1) / (N T(N)) falls below one half exactly where the
    # exchange starts to take longer than the computation (one node has none).
    i = next(i for i, e in enumerate(mo.efficiency) if e < 0.5)

    def compute(j: int) -> float:
        return 4e-9 * 128 ** 3 / mo.nodes[j] / 4

    assert times[i] - compute(i) > compute(i)
    assert times[i - 1] - compute(i - 1) <= compute(i - 1)


def test_weak_scaling_stays_flat_when_communication_is_overlapped():
    """Weak scaling with a large box per node: funneled hides the exchange
    behind the interior (eq. 3, f_comm / m < f_comp_overlap n / (n - m)), so its
    time is the same on 1 and on 16,384 nodes; masteronly adds the exchange."""
    inputs = synthetic(t_lat=1e-6, b_inf=1e10)
    shape = pj.Shape(4, 1, 4)
    series = {s.label: s for s in pj.project(inputs, "jacobi", shape, (128, 128, 128), "weak",
                                             samples=10)}
    fun, mo = series["funneled"], series["masteronly"]
    # From 64 nodes (4x4x4) on every node has six neighbours and the time is
    # constant; below, fewer faces mean fewer boundary points (computed by all
    # n threads) and the time differs by less than 2 %.
    i64 = fun.nodes.index(64)
    assert max(fun.time_s[i64:]) == pytest.approx(min(fun.time_s[i64:]), rel=1e-12)
    assert max(fun.time_s) / min(fun.time_s) < 1.02
    assert mo.time_s[-1] > mo.time_s[0] * 1.01
    # with a slow network the exchange no longer hides and funneled grows too
    slow = pj.project(synthetic(t_lat=1e-6, b_inf=1e7), "jacobi", shape, (128, 128, 128), "weak",
                      samples=10)
    fun_slow = next(s for s in slow if s.label == "funneled")
    assert fun_slow.time_s[-1] > fun_slow.time_s[0] * 2


def test_the_fastest_scheme_changes_and_is_reported():
    """Small boxes and a latency-bound network: masteronly computes on all n
    threads and wins on one node; with many nodes the exchange dominates and
    funneled, which hides it, wins. The crossover is where the times cross."""
    inputs = synthetic(t_lat=2e-5, b_inf=1e9, schemes=("masteronly", "funneled"), threads=8)
    series = pj.project(inputs, "jacobi", pj.Shape(8, 1, 8), (64, 64, 64), "weak", samples=20)
    cross = pj.crossovers(series)
    assert [(x["from"], x["to"]) for x in cross] == [("masteronly", "funneled")]
    i = series[0].nodes.index(cross[0]["nodes"])
    by = {s.label: s for s in series}
    assert by["funneled"].time_s[i] < by["masteronly"].time_s[i]
    assert by["funneled"].time_s[i - 1] >= by["masteronly"].time_s[i - 1]


def test_link_saturation_slows_pure_mpi():
    """beta(k): with the node's link saturated at 2 streams, pure MPI's 16
    communicating CPUs share it; masteronly's one CPU per node keeps it whole."""
    free = synthetic(b_inf=1e8, schemes=("pure-mpi",), threads=1)
    sat = synthetic(b_inf=1e8, schemes=("pure-mpi",), threads=1, beta={1: 1.0, 2: 2.0, 4: 2.0})
    shape = pj.Shape(16, 16, 1)
    t_free = pj.project(free, "jacobi", shape, (256, 256, 256), "weak", samples=10)[0].time_s[-1]
    t_sat = pj.project(sat, "jacobi", shape, (256, 256, 256), "weak", samples=10)[0].time_s[-1]
    assert t_sat > t_free * 1.5


def recorded(tmp_path: Path, name: str = "study-2x1") -> Path:
    """A study recorded on this project's 2-core machine (see data/README.md)."""
    dst = tmp_path / name
    shutil.copytree(DATA / name, dst)
    return dst


@pytest.mark.parametrize("name", ["study-2x1", "study-emulated-2x1"])
def test_self_consistency_against_recorded_measurements(tmp_path, name):
    """The projection reproduces the runs it was fitted to within 15 %: on
    this machine (virtual nodes) and on the emulated cluster (token-bucket
    links), every kernel under every scheme the study ran."""
    inputs = pj.load_inputs(recorded(tmp_path, name))
    checks = pj.self_consistency(inputs)
    assert {c.kernel for c in checks} == {"jacobi", "rbgs", "spmv", "cg"}
    assert len(checks) == 12
    for c in checks:
        assert abs(c.error) <= pj.SELF_CONSISTENCY_LIMIT, (c.kernel, c.label, c.measured, c.predicted)
    if name == "study-emulated-2x1":
        assert inputs.inter.rate == pytest.approx(1e9 / 8) and inputs.inter.burst == 125000


@pytest.mark.parametrize("name", ["study-2x1-depth", "study-emulated-2x1-depth"])
def test_self_consistency_of_the_recorded_temporal_blocking(tmp_path, capsys, name):
    """The depth step's runs (halo depth 2, 4, 8, exchanged every h
    iterations) are projected as their own series and predicted within 15 %,
    as the one-sweep runs, on this machine and over the emulated 1 Gbit
    links; their depth-1 run is the solve step's twin and is not counted
    twice."""
    d = recorded(tmp_path, name)
    checks = pj.self_consistency(pj.load_inputs(d))
    labels = {c.label for c in checks}
    assert {"pure MPI depth 2", "pure MPI depth 4", "pure MPI depth 8"} <= labels
    assert len(labels) == len(checks)
    for c in checks:
        assert abs(c.error) <= pj.SELF_CONSISTENCY_LIMIT, (c.label, c.measured, c.predicted)
    if name == "study-emulated-2x1-depth":
        # Over the token bucket: depth 2's 262 kB faces are twice the 125 kB
        # bucket (depth 1's 131 kB about fill it), so most of their bytes move
        # at the link's rate: measured a third slower than depth 1, predicted so.
        by = {c.label: c for c in checks}
        assert by["pure MPI depth 2"].measured > 1.2 * by["pure MPI"].measured
        assert by["pure MPI depth 2"].predicted > 1.2 * by["pure MPI"].predicted
        return
    assert cli.main(["project", str(d), "--max-nodes", "64", "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)["results"][0]
    assert {c["halo_depth"] for c in doc["parameters"]["costs"]} == {1, 2, 4, 8}
    strong = next(p for p in doc["projections"] if p["scaling"] == "strong")
    assert "pure MPI depth 8" in {s["scheme"] for s in strong["series"]}
    assert any("deep-halo series (depth 2, 4, 8)" in n for n in doc["limits"])


def test_a_short_last_block_is_costed_as_measured(tmp_path):
    """20 iterations at depth 8 made 3 exchanges, not 2.5: the self-consistency
    check costs the run's own exchanges; the projection the steady state
    (one per 8 sweeps). With a slow link that half exchange is what the
    check would otherwise miss."""
    inputs = pj.load_inputs(recorded(tmp_path, "study-2x1-depth"))
    deep = next(c for c in inputs.costs["jacobi"] if c.depth == 8)
    assert deep.exchanges_per_sweep == pytest.approx(3 / 20) and deep.exchange_share == pytest.approx(0.15)
    slow = pj.Link(500e-6, 1e8, 0.0, 0.0, "slow")
    inputs = dataclasses.replace(inputs, inter=slow, intra=slow)
    shape = pj.Shape(1, 1, 1)
    layout = (deep.node_grid, deep.node_block)
    measured_blocks = pj.iteration_time(deep, shape, deep.grid, deep.nodes, inputs, layout=layout)
    steady = pj.iteration_time(dataclasses.replace(deep, exchanges_per_sweep=0.0), shape, deep.grid,
                               deep.nodes, inputs, layout=layout)
    geo = pj.worst_rank(deep.grid, deep.node_grid, deep.node_block, False, 8)
    exchange = geo.msgs_inter * slow.t_lat + geo.bytes_inter / slow.b_inf   # and its packing:
    exchange += deep.pack_s_per_byte * geo.bytes_inter
    assert measured_blocks - steady == pytest.approx((3 / 20 - 1 / 8) * exchange, rel=1e-9)
    series = pj.project(inputs, "jacobi", shape, deep.grid, "weak", max_nodes=1, samples=10)
    assert next(s for s in series if s.label == "pure MPI depth 8").time_s[0] == pytest.approx(
        pj.iteration_time(dataclasses.replace(deep, exchanges_per_sweep=0.0), shape, deep.grid, 1, inputs,
                          layout=((1, 1, 1), (1, 1, 1))))


def test_a_deep_halo_needs_depth_points_only_along_divided_axes():
    """As hympi solve: 512x512x4 split over 2x2x1 nodes runs at depth 8 (z is
    not divided, so its 4 planes need no halo)."""
    series = pj.project(deep_inputs(2e-6, 1e10), "jacobi", pj.Shape(4, 1, 4), (512, 512, 4), "strong",
                        max_nodes=4, samples=10)
    deep = next(s for s in series if s.label == "masteronly depth 8")
    assert all(math.isfinite(t) for t in deep.time_s)


def test_a_study_of_the_depth_step_alone_is_projected(tmp_path):
    d = recorded(tmp_path, "study-2x1-depth")
    results = d / "results.jsonl"
    results.write_text("\n".join(ln for ln in results.read_text().splitlines()
                                  if json.loads(ln).get("step") != "solve") + "\n")
    costs = pj.load_inputs(d).costs["jacobi"]
    assert sorted(c.depth for c in costs) == [2, 4, 8]


@pytest.mark.parametrize("name, sentence", [
    ("study-2x1-depth", "Temporal blocking (section 13): jacobi --halo-depth 4 ran 1.55x its depth-1 "
                        "speed, clearly (repetitions do not overlap)."),
    ("study-emulated-2x1-depth", "Temporal blocking (section 13): jacobi did not gain from it."),
])
def test_the_recommendation_says_what_temporal_blocking_gave(name, sentence):
    """The study's closing recommendation adds the depth step's verdict:
    on this machine depth 4 ran 1.55x depth 1 with every repetition faster;
    over the emulated 1 Gbit link no depth beat depth 1."""
    from hympi_lab import report

    st = report.load(DATA / name)
    verdict = report.recommendation(st, report.kernel_advice(report.solve_runs(st)), report.fits(st))
    # one thread per rank: no scheme is recommended, but temporal blocking is judged
    assert verdict.startswith("No scheme recommendation from 2 ranks x 1 threads") and verdict.endswith(sentence)
    # an oversubscribed study recommends nothing, temporal blocking included
    st.header["setting"] = dict(st.setting, oversubscribed=True)
    verdict = report.recommendation(st, report.kernel_advice(report.solve_runs(st)), report.fits(st))
    assert verdict.startswith("No recommendation") and "Temporal blocking" not in verdict


def _edit_depth_runs(d: Path, edit) -> None:
    """Rewrite the depth step's result records of study `d` through edit(result) -> result or None;
    a point whose results are all gone goes with its point line (it did not run)."""
    results = d / "results.jsonl"
    out = []
    kept: dict[str, int] = {}
    for line in results.read_text().splitlines():
        rec = json.loads(line)
        if rec["record"] == "result" and rec["step"] == "depth":
            new = edit(rec["result"])
            kept.setdefault(rec["point"], 0)
            if new is None:
                continue
            kept[rec["point"]] += 1
            rec["result"] = new
        elif rec["record"] == "point" and kept.get(rec["point"]) == 0:
            continue
        out.append(json.dumps(rec))
    results.write_text("\n".join(out) + "\n")


def test_depth_rows_and_advice_when_runs_are_missing_or_mixed(tmp_path):
    """What a resumed, partial or broken depth step gives: speeds per
    iteration (a resumed older study mixes 20 and 24 iterations), no checksum
    verdict across iteration counts, and a recommendation that names why it
    cannot compare instead of saying 'did not gain'."""
    from hympi_lab import report

    def advice(d: Path) -> str:
        return report.depth_advice(report.load(d))

    before = {r["depth"]: r for r in report.depth_rows(report.load(DATA / "study-2x1-depth"))}
    # depth 1 ran twice the iterations in twice the time: same speeds, no checksum verdict
    d = recorded(tmp_path / "a", "study-2x1-depth")

    def twice(r):
        if r["halo_depth"] == 1:
            r = dict(r, iters=2 * r["iters"], time_s={k: 2 * v for k, v in r["time_s"].items()})
        return r
    _edit_depth_runs(d, twice)
    rows = {r["depth"]: r for r in report.depth_rows(report.load(d))}
    for h in (2, 4, 8):
        assert rows[h]["speedup"] == pytest.approx(before[h]["speedup"])
        assert rows[h]["same_field"] is None and before[h]["same_field"] is True
    assert "jacobi --halo-depth 4 ran 1.55x" in advice(d)
    # no depth-1 run
    d = recorded(tmp_path / "b", "study-2x1-depth")
    _edit_depth_runs(d, lambda r: None if r["halo_depth"] == 1 else r)
    assert advice(d) == " Temporal blocking (section 13): jacobi has no depth-1 run to compare with."
    page = report.write_report(d) and (d / "report.html").read_text()
    assert "No depth-1 run of jacobi to compare with" in page and 'id="depth-table"' in page
    # only depth 1
    d = recorded(tmp_path / "c", "study-2x1-depth")
    _edit_depth_runs(d, lambda r: r if r["halo_depth"] == 1 else None)
    assert "jacobi ran no depth above 1" in advice(d)
    # a depth that changed the field
    d = recorded(tmp_path / "d", "study-2x1-depth")
    _edit_depth_runs(d, lambda r: dict(r, checksum=r["checksum"] + 1) if r["halo_depth"] == 8 else r)
    assert "jacobi at --halo-depth 8 did NOT give depth 1's field" in advice(d)


def test_the_emulated_link_without_its_bucket_misses(tmp_path):
    """The check can fail: costing the emulated cluster's exchange with the
    plain ping-pong line (no token bucket) overestimates it by about a third."""
    inputs = pj.load_inputs(recorded(tmp_path, "study-emulated-2x1"))
    plain = pj.Inputs(dataclasses.replace(inputs.inter, rate=0.0, burst=0.0), inputs.intra, inputs.beta,
                      inputs.costs, 2, "real", 1, 1)
    records = [json.loads(x) for x in (DATA / "study-emulated-2x1" / "results.jsonl").read_text().splitlines()]
    pp = [r for r in records if r["record"] == "result" and r["result"].get("kind") == "pingpong"]
    from hympi_lab import fit
    h = fit.fit_hockney([r["result"]["bytes"] for r in pp], [r["result"]["time_s"]["median"] for r in pp])
    plain = dataclasses.replace(plain, inter=pj.Link(h.params["T_lat"].value, h.params["b_inf"].value,
                                                     0, 0, "plain"))
    errors = [c.error for c in pj.self_consistency(plain) if c.kernel == "jacobi"]
    assert all(e > pj.SELF_CONSISTENCY_LIMIT for e in errors)


def test_cli_end_to_end_on_the_recorded_study(tmp_path, capsys):
    d = recorded(tmp_path)
    png, doc_path = tmp_path / "eff.png", tmp_path / "p.json"
    assert cli.main(["project", str(d), "--max-nodes", "4096", "-o", str(png),
                     "--json", str(doc_path)]) == 0
    out = capsys.readouterr().out
    assert "self-consistency:" in out and "weak scaling" in out and "strong scaling" in out
    assert png.stat().st_size > 10000
    doc = json.loads(doc_path.read_text())["results"][0]
    assert doc["kind"] == "project"
    assert {p["scaling"] for p in doc["projections"]} == {"weak", "strong"}
    for p in doc["projections"]:
        for s in p["series"]:
            assert s["nodes"][-1] == 4096 and len(s["time_s"]) == len(s["nodes"])
            for t, lo, hi in zip(s["time_s"], s["low_s"], s["high_s"]):
                if t is not None:
                    assert lo <= t * 1.05 and hi >= t * 0.95 and lo <= hi


@pytest.mark.parametrize("args, message", [
    (["--cores-per-node", "4", "--ranks", "3", "--threads", "2"], "cores per node must equal ranks x threads"),
    (["--grid", "1x1x1", "--cores-per-node", "2", "--ranks", "2", "--threads", "1"], "fewer points than"),
])
def test_bad_requests(tmp_path, capsys, args, message):
    assert cli.main(["project", str(recorded(tmp_path)), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("args", [["--max-nodes", "0"], ["--max-nodes", "-4"], ["--grid", "0x8x8"],
                                  ["--grid", "8x8"], ["--ranks", "0"], ["--samples", "5"]])
def test_bad_numbers(tmp_path, capsys, args):
    assert cli.main(["project", str(recorded(tmp_path)), *args]) == 2
    assert "error:" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--max-nodes", "20000"], "argument --max-nodes: '20000' is out of range: accepted 1 .. 16384"),
    (["--samples", "1000000"], "argument --samples: '1000000' is out of range: accepted 10 .. 100000")])
def test_out_of_range_refused_before_the_study_is_read(tmp_path, capsys, args, message):
    # No study directory at all: the range is what gets reported.
    assert cli.main(["project", str(tmp_path / "no-such-study"), *args]) == 2
    assert message in capsys.readouterr().err


def test_a_kernel_the_study_did_not_measure(tmp_path, capsys):
    d = recorded(tmp_path)
    results = d / "results.jsonl"
    kept = [ln for ln in results.read_text().splitlines()
            if json.loads(ln).get("result", {}).get("kernel") != "cg" and "solve-cg" not in ln]
    results.write_text("\n".join(kept) + "\n")
    assert cli.main(["project", str(d), "--kernel", "cg"]) == 2
    err = capsys.readouterr().err
    assert "kernel cg not measured in this study (measured: jacobi, rbgs, spmv)" in err


def test_a_study_without_the_runs_it_needs(tmp_path, capsys):
    d = recorded(tmp_path)
    results = d / "results.jsonl"
    lines = results.read_text().splitlines()
    no_beff = [ln for ln in lines if json.loads(ln).get("step") != "beff"]
    results.write_text("\n".join(no_beff) + "\n")
    assert cli.main(["project", str(d)]) == 2
    assert "run its beff step" in capsys.readouterr().err
    results.write_text("\n".join(ln for ln in lines if json.loads(ln).get("step") != "solve") + "\n")
    assert cli.main(["project", str(d)]) == 2
    assert "run its solve step" in capsys.readouterr().err
    assert cli.main(["project", str(tmp_path / "nowhere")]) == 2
    assert "not a study directory" in capsys.readouterr().err


def test_another_node_shape_says_what_it_assumes(tmp_path, capsys):
    """Carrying 1-core costs to a 16-core node of 2 ranks x 8 threads is allowed,
    and the output names the assumption (no more bandwidth contention per core)."""
    doc_path = tmp_path / "p.json"
    assert cli.main(["project", str(recorded(tmp_path)), "--cores-per-node", "16", "--ranks", "2",
                     "--threads", "8", "--max-nodes", "64", "--json", str(doc_path)]) == 0
    doc = json.loads(doc_path.read_text())["results"][0]
    assert doc["request"]["ranks_per_node"] == 2 and doc["request"]["threads"] == 8
    assert any("carried to 16" in n for n in doc["limits"])
    assert any("carried to 8" in n for n in doc["limits"])
    assert "carried to 16" in capsys.readouterr().out


@pytest.mark.parametrize("args, shape", [
    (["--threads", "3"], (3, 1, 3)),                         # the study's 1 rank per node, 3 threads
    (["--ranks", "4"], (4, 4, 1)),
    (["--cores-per-node", "16", "--ranks", "2"], (16, 2, 8)),
    (["--cores-per-node", "16", "--threads", "8"], (16, 2, 8)),
])
def test_a_partial_node_shape_is_completed(tmp_path, capsys, args, shape):
    assert cli.main(["project", str(recorded(tmp_path)), *args, "--max-nodes", "2", "--json", "-"]) == 0
    req = json.loads(capsys.readouterr().out)["results"][0]["request"]
    assert (req["cores_per_node"], req["ranks_per_node"], req["threads"]) == shape
