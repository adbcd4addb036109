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
