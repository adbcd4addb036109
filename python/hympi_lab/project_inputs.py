"""A study's measurements as the projection's inputs (`hympi-lab project`).

From a study directory: the Hockney parameters of the ping-pong (the
inter-node link, and the intra-node one when the nodes are virtual), the
saturation beta(k) of a node's link (internode step), and each solve run's
costs per point split into what can overlap communication and what cannot
(from its phase breakdown). project.py carries them to other node counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from . import fit as fit_mod, schemes as schemes_mod
from .errors import InputError
from .geometry import worst_rank
from .schemes import SchemeModel
from .studydir import RESULTS, load_results, load_study

# Relative 1-sigma of a compute cost when the run has one repetition.
DEFAULT_COST_SIGMA = 0.05
# Schemes whose temporal-blocking runs the projection carries (the built-in
# table's; a study's recorded scheme list may say otherwise): see
# schemes.SchemeModel.deep_halo.
DEEP_HALO_SCHEMES = tuple(name for name, s in schemes_mod.TABLE.items() if s.deep_halo)


@dataclass(frozen=True)
class Link:
    """Hockney parameters of one kind of link, 1-sigma included.

    An emulated cluster's link is a tc token bucket (scripts/emulated-cluster):
    `rate` bytes/s with a bucket of `burst` bytes that refills while the link
    idles; bytes covered by the bucket move at the fast path's b_inf, the
    rest at `rate`. rate = 0: a plain Hockney link.
    """
    t_lat: float
    b_inf: float            # bytes/s
    sigma_lat: float
    sigma_b: float
    source: str
    rate: float = 0.0       # token bucket rate, bytes/s (emulated links only)
    burst: float = 0.0      # token bucket size, bytes

    def sample(self, rng: np.random.Generator) -> "Link":
        # Truncated at small positive values: a latency or bandwidth cannot
        # change sign, however wide the fit's band.
        lat = max(self.t_lat * 0.05, rng.normal(self.t_lat, self.sigma_lat))
        b = max(self.b_inf * 0.05, rng.normal(self.b_inf, self.sigma_b))
        return replace(self, t_lat=lat, b_inf=b)


@dataclass(frozen=True)
class Cost:
    """One measured solve run: its costs per point and what it measured."""
    kernel: str
    scheme: str             # hympi scheme name, or "pure-mpi"
    m: int                  # reserved threads (multiple), else 0
    threads: int
    interior_s: float       # thread-seconds per interior point per sweep
    non_overlap_s: float    # thread-seconds per point per sweep that cannot overlap
    pack_s_per_byte: float  # wall seconds per halo byte of a rank (pack + unpack)
    sigma_rel: float        # relative 1-sigma of the costs (run-to-run spread)
    sweeps: int             # exchanges (sweeps) per iteration
    measured_s: float       # measured time per iteration (median)
    measured_low: float
    measured_high: float
    grid: tuple[int, int, int]
    proc_grid: tuple[int, int, int]
    node_block: tuple[int, int, int]
    periodic: bool
    nodes: int
    depth: int = 1          # halo depth: one exchange every `depth` iterations
    # Exchanges per sweep the run made: 1/depth in the steady state, more
    # when its sweeps were not a multiple of the depth (a short last block).
    # 0: the steady state (what a projection assumes).
    exchanges_per_sweep: float = 0.0

    @property
    def exchange_share(self) -> float:
        return self.exchanges_per_sweep or 1.0 / self.depth

    @property
    def ranks_per_node(self) -> int:
        return max(1, self.proc_grid[0] * self.proc_grid[1] * self.proc_grid[2] // self.nodes)

    @property
    def node_grid(self) -> tuple[int, int, int]:
        p, b = self.proc_grid, self.node_block
        return (p[0] // b[0], p[1] // b[1], p[2] // b[2])

    @property
    def label(self) -> str:
        return schemes_mod.label(self.scheme, self.m) + (f" depth {self.depth}" if self.depth > 1 else "")


@dataclass
class Inputs:
    inter: Link
    intra: Link
    beta: dict[int, float]          # k -> node bandwidth with k CPUs / with 1
    costs: dict[str, list[Cost]]    # by kernel
    nodes_measured: int
    nodes_kind: str
    ranks_per_node: int
    threads: int
    assumptions: list[str] = field(default_factory=list)
    # threads shared cores in the study (its setting or a run's context says so)
    oversubscribed: bool = False
    # Each scheme's cost model, with the facts the study recorded (schemes.table).
    schemes: dict[str, SchemeModel] = field(default_factory=lambda: dict(schemes_mod.TABLE))



def load_inputs(outdir: Path) -> Inputs:
    """The parameters of the projection from a study directory; InputError
    naming the step to run when one is missing."""
    header = load_study(outdir)
    records, status = load_results(outdir / RESULTS)
    setting = header.get("setting", {})
    assumptions: list[str] = []

    pp = [r for r in records if r["step"] == "beff" and r["result"].get("kind") == "pingpong"]
    if not pp:
        raise InputError(f"{outdir}: no ping-pong in the study, so no link parameters: run its beff "
                         f"step (hympi-lab study --resume {outdir}, or a new study with --steps "
                         "beff,internode,solve)")
    try:
        hockney = fit_mod.fit_hockney([r["result"]["bytes"] for r in pp],
                                      [r["result"]["time_s"]["median"] for r in pp])
    except InputError as err:
        raise InputError(f"{outdir}: the ping-pong does not give link parameters ({err})") from None
    nodes_kind = str(setting.get("nodes_kind", "real"))
    lat, b = hockney.params["T_lat"], hockney.params["b_inf"]
    inter = Link(_latency(lat, assumptions), b.value, lat.sigma, b.sigma,
                 f"ping-pong between {nodes_kind} nodes")
    if nodes_kind == "emulated":
        inter = _bucket_link(pp, str(header.get("options", {}).get("link", "")), outdir)
        assumptions.append(f"the study's nodes are emulated: {inter.source}; a projection of them "
                           "describes the emulator, not a cluster (it is there to test the model)")
    if nodes_kind == "virtual":
        intra = replace(inter, source="ping-pong (virtual nodes share one machine's memory)")
        assumptions.append("the study's nodes are virtual (one machine): its 'inter-node' link is "
                           "shared memory, so the projection describes a cluster whose network is as "
                           "fast as this machine's memory; run the study on 2+ real nodes to project "
                           "a real network")
    else:
        intra = replace(inter, source="inter-node ping-pong (no intra-node ping-pong measured)")
        assumptions.append("intra-node messages are costed like inter-node ones (the study measures "
                           "no intra-node ping-pong): pessimistic for pure MPI")

    beta = _beta(records)
    if not beta:
        assumptions.append("no internode step: a node's link is assumed not to saturate "
                           "(k communicating CPUs reach k times one's bandwidth)")

    solve = [r for r in records if r["step"] == "solve" and r["result"].get("kind") == "solve"]
    # The depth step's runs deeper than 1 (its depth-1 run repeats the solve
    # step's masteronly one).
    deep = [r for r in records if r["step"] == "depth" and r["result"].get("kind") == "solve"
            and int(r["result"].get("halo_depth") or 1) > 1]
    if not solve and not deep:
        raise InputError(f"{outdir}: no solve runs in the study, so no kernel costs: run its solve "
                         f"step (hympi-lab study --resume {outdir})")
    table = schemes_mod.table(header.get("schemes"))
    costs: dict[str, list[Cost]] = {}
    for r in solve + deep:
        meta = status.get(r["point"], {}).get("meta", {})
        cost = _cost(r, meta)
        if cost is not None and (cost.depth == 1 or _deep_halo(cost.scheme, table)):
            costs.setdefault(cost.kernel, []).append(cost)
    if not costs:
        raise InputError(f"{outdir}: no solve run carries a phase breakdown (breakdown_s); "
                         "rerun its solve step with this hympi")
    crowded = setting.get("oversubscribed") or any(r["context"].get("oversubscribed") is True for r in records)
    if crowded:
        assumptions.append("the study ran more threads than cores (oversubscribed): its times "
                           "measure the scheduler, and so will the projection")
    ranks = int(setting.get("ranks", 1))
    nodes = max(1, int(setting.get("nodes", 1)))
    threads = int(setting.get("threads", 1))
    rpn = int(setting.get("ranks_per_node") or max(1, ranks // nodes))
    return Inputs(inter, intra, beta, costs, nodes, nodes_kind, rpn, threads, assumptions, bool(crowded), table)


def _latency(lat: fit_mod.Param, assumptions: list[str]) -> float:
    """The fitted latency, or 0 where the fit is negative (a ping-pong on
    shared memory can fit -2 +- 9 us): a latency cannot be, and a negative
    one made strong scaling's times negative at many nodes."""
    if lat.value >= 0:
        return lat.value
    assumptions.append(f"the ping-pong fits a negative latency ({lat.value * 1e6:.3g} +- "
                       f"{lat.sigma * 1e6:.2g} us), which no link has: it is taken as 0")
    return 0.0


def _deep_halo(scheme: str, table: dict[str, SchemeModel]) -> bool:
    entry = table.get(scheme)
    return entry is not None and entry.deep_halo


_RATE_UNITS = {"": 1, "bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
               "bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9}
# scripts/emulated-cluster: the bucket holds 1 ms at the rate, at least 64 KiB.
_TBF_MIN_BURST = 65536


def _bucket_link(pingpong: Sequence[dict[str, Any]], link: str, outdir: Path) -> Link:
    """The emulated link: tc tbf at the study's --link rate, its bucket as the
    emulator sets it, the fast path (veth, TCP) fitted to the ping-pong's
    messages small enough to pass on a full bucket."""

    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([a-z]*)", link.strip().lower())
    if not m or m.group(2) not in _RATE_UNITS:
        raise InputError(f"{outdir}: emulated study with an unreadable link rate {link!r}")
    bits = float(m.group(1)) * _RATE_UNITS[m.group(2)]
    rate = bits / 8
    burst = max(_TBF_MIN_BURST, bits / 8 / 1000)
    # A ping-pong leaves each direction idle while the reply travels, so a
    # message of up to a fraction of the bucket finds it full.
    small = [r for r in pingpong if r["result"]["bytes"] <= burst / 8]
    try:
        fast = fit_mod.fit_hockney([r["result"]["bytes"] for r in small],
                                   [r["result"]["time_s"]["median"] for r in small])
    except InputError as err:
        raise InputError(f"{outdir}: the ping-pong's small messages do not give the emulated "
                         f"link's fast path ({err})") from None
    lat, b = fast.params["T_lat"], fast.params["b_inf"]
    return Link(lat.value, b.value, lat.sigma, b.sigma,
                f"tc tbf {link} (bucket {burst / 1000:.0f} kB) over a fast path fitted to the "
                f"ping-pong up to {burst / 8000:.0f} kB", rate=rate, burst=burst)


def _beta(records: Sequence[dict[str, Any]]) -> dict[int, float]:
    """beta(k) at the largest message size the internode step measured."""
    points = [r["result"] for r in records
              if r["step"] == "internode" and r["result"].get("kind") == "point"]
    if not points:
        return {}
    size = max(p["bytes"] for p in points)
    by_k = {int(p["k"]): float(p["bandwidth_per_node_MBps"]) for p in points if p["bytes"] == size}
    if 1 not in by_k or by_k[1] <= 0:
        return {}
    return {k: v / by_k[1] for k, v in sorted(by_k.items())}


def _triple(value: Any) -> Optional[tuple[int, int, int]]:
    if isinstance(value, list) and len(value) == 3 and all(isinstance(x, int) for x in value):
        return (value[0], value[1], value[2])
    return None


def _cost(record: dict[str, Any], meta: dict[str, Any]) -> Optional[Cost]:
    """A solve record's costs per point, or None when it lacks what they need
    (a user's program without a breakdown, a failed run)."""
    rec = record["result"]
    grid, pgrid = _triple(rec.get("grid")), _triple(rec.get("proc_grid"))
    block = _triple(rec.get("node_block")) or (1, 1, 1)
    bd = rec.get("breakdown_s")
    iters = rec.get("iters")
    if not (grid and pgrid and isinstance(bd, dict) and isinstance(iters, int) and iters > 0):
        return None
    sweeps = 2 if rec["kernel"] == "rbgs" else 1
    depth = int(rec.get("halo_depth") or 1)
    nodes = max(1, int(record.get("context", {}).get("nodes", {}).get("count", 1)))
    node_grid = tuple(p // b for p, b in zip(pgrid, block))
    geo = worst_rank(grid, node_grid, block, bool(rec.get("periodic")), depth)
    n_sweeps = iters * sweeps
    # Deep halos: one exchange per block of `depth` sweeps (the last block may be short).
    exchanges = int(rec.get("exchanges") or -(-n_sweeps // depth)) if depth > 1 else n_sweeps

    def total(phase: str) -> float:
        return float(sum(bd.get(phase, [])))

    interior_pts = max(1, geo.points - geo.boundary_points)
    interior_s = total("compute_interior") / (interior_pts * n_sweeps)
    # What the boundary compute took beyond its points at the interior's rate
    # is volume work that cannot overlap (cg's vector updates; with deep
    # halos, the whole block: its sweeps run after the exchange); for the
    # one-sweep stencils it is about zero. Per point computed, halo points a
    # deep block recomputes included.
    extra = total("compute_boundary") - interior_s * geo.boundary_points * n_sweeps
    non_overlap_s = max(0.0, extra) / (geo.computed_points * n_sweeps)
    pack_wall = max((a + b for a, b in zip(bd.get("pack", []), bd.get("unpack", []))), default=0.0)
    rank_bytes = geo.bytes_inter + geo.bytes_intra
    pack_per_byte = pack_wall / (exchanges * rank_bytes) if rank_bytes else 0.0
    t = rec["time_s"]
    median = float(t["median"])
    spread = (float(t["max"]) - float(t["min"])) / median if median > 0 else 0.0
    sigma = max(DEFAULT_COST_SIGMA if rec.get("repeat", 1) < 2 else 0.0, spread / 2)
    scheme = "pure-mpi" if meta.get("scheme") == "pure-mpi" or (
        rec.get("pure_mpi") and int(rec["threads"]) == 1 and rec["scheme"] == "masteronly") else rec["scheme"]
    return Cost(rec["kernel"], scheme, int(rec.get("reserved", 0)) if scheme == "multiple" else 0,
                int(rec["threads"]), interior_s, non_overlap_s, pack_per_byte, sigma, sweeps,
                median / iters, float(t["min"]) / iters, float(t["max"]) / iters, grid, pgrid, block,
                bool(rec.get("periodic")), nodes, depth, exchanges / n_sweeps if depth > 1 else 0.0)


