"""`hympi-lab project DIR`: the model fitted to a study, carried to 16,384 nodes.

From a study directory it takes
  - the Hockney parameters (T_lat, b_inf) of the ping-pong (beff step): the
    inter-node link, and the intra-node link when the study's nodes are
    virtual (one machine, so its "inter-node" ping-pong is shared memory);
  - the saturation of a node's link, beta(k) = bandwidth per node with k
    communicating CPUs / with one (internode step);
  - each kernel's cost per point under each scheme, split into what can
    overlap communication (the interior) and what cannot (the boundary, and
    for cg the vector updates), from the solve runs' phase breakdowns;
and predicts the time per iteration of a user-given grid and node shape
(cores per node = ranks x threads) for 1 .. 16,384 nodes, weak and strong
scaling, per scheme and per m, with an uncertainty band, plus the node
count where the fastest scheme changes. Before it projects anything it
predicts the study's own runs and reports the error against each (the
issue's 15 % self-consistency), so a reader sees how far to trust it.

Each rank's messages come from the geometry of a node-aware decomposition
(nodes on a 3-D grid, a 3-D block of ranks in each node, one halo layer of
8-byte values per face of the 7-point stencil); the worst rank (most bytes,
largest box) sets the time. The study's temporal-blocking runs (its depth
step, hympi solve --halo-depth h) are projected too, as their own series:
an exchange every h iterations of faces h deep plus the edges and corners
(up to 26 messages), and the redundant halo points the block recomputes
counted in its computation. Every scheme's iteration time is the papers'
composition (seed 000 eq. 3 and its relatives in model.py) written in
seconds instead of fractions; see python/README.md "Projection".

Pure: numbers from records; no printing, no figures (cli.py and
plotting.py do those).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from . import fit as fit_mod
from .errors import InputError
from .studydir import RESULTS, load_results, load_study

VALUE_BYTES = 8              # doubles
MAX_NODES = 16384
SAMPLES_RANGE = (10, 100000)  # Monte Carlo draws for the band
SELF_CONSISTENCY_LIMIT = 0.15
# cg reduces twice per iteration (p.q, then r.r; src/kernels/cg.cpp);
# recursive doubling takes ceil(log2 P) latency-bound steps.
ALLREDUCES = {"cg": 2}
# What an intra-node face still costs shared-window relative to a message:
# hympi packs each face and copies it out after a node barrier, measured on
# 16 cores at about the cost of a shared-memory message (model.py).
SHARED_WINDOW_INTRA_COST = 1.0
# Relative 1-sigma of a compute cost when the run has one repetition.
DEFAULT_COST_SIGMA = 0.05
# Schemes whose temporal-blocking runs the projection carries: they exchange,
# then compute the whole block, so nothing overlaps. Under an overlapping
# scheme only a block's first sweep overlaps its exchange (src/domain.cpp),
# a composition the model does not have.
DEEP_HALO_SCHEMES = ("pure-mpi", "masteronly", "masteronly-threaded")


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
        if self.scheme == "pure-mpi":
            name = "pure MPI"
        else:
            name = self.scheme + (f" m={self.m}" if self.scheme == "multiple" else "")
        return name + (f" depth {self.depth}" if self.depth > 1 else "")


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


# --- reading a study ------------------------------------------------------------------

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
    inter = Link(lat.value, b.value, lat.sigma, b.sigma, f"ping-pong between {nodes_kind} nodes")
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
    costs: dict[str, list[Cost]] = {}
    for r in solve + deep:
        meta = status.get(r["point"], {}).get("meta", {})
        cost = _cost(r, meta)
        if cost is not None and (cost.depth == 1 or cost.scheme in DEEP_HALO_SCHEMES):
            costs.setdefault(cost.kernel, []).append(cost)
    if not costs:
        raise InputError(f"{outdir}: no solve run carries a phase breakdown (breakdown_s); "
                         "rerun its solve step with this hympi")
    if setting.get("oversubscribed") or any(r["context"].get("oversubscribed") is True for r in records):
        assumptions.append("the study ran more threads than cores (oversubscribed): its times "
                           "measure the scheduler, and so will the projection")
    ranks = int(setting.get("ranks", 1))
    nodes = max(1, int(setting.get("nodes", 1)))
    threads = int(setting.get("threads", 1))
    rpn = int(setting.get("ranks_per_node") or max(1, ranks // nodes))
    return Inputs(inter, intra, beta, costs, nodes, nodes_kind, rpn, threads, assumptions)


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


# --- geometry ---------------------------------------------------------------------------

@dataclass(frozen=True)
class RankGeometry:
    points: int
    boundary_points: int     # within one layer of a face that has a neighbour
    msgs_inter: int
    bytes_inter: int
    msgs_intra: int
    bytes_intra: int
    computed_points: float   # points computed per sweep (deep halos: halo points too)


# The 26 neighbour offsets: the 6 faces first, then the 12 edges and 8 corners
# that a halo deeper than 1 exchanges too (src/exchange.cpp, `corners`).
_OFFSETS = sorted((o for o in itertools.product((-1, 0, 1), repeat=3) if any(o)),
                  key=lambda o: sum(map(abs, o)))


def _positions(parts: int) -> list[int]:
    """Representative positions on a line of `parts`: first, one inside, last."""
    return sorted({0, min(1, parts - 1), parts - 1})


def worst_rank(grid: Sequence[int], node_grid: Sequence[int], block: Sequence[int],
               periodic: bool, depth: int = 1) -> RankGeometry:
    return _worst_rank(tuple(grid), tuple(node_grid), tuple(block), periodic, depth)


@functools.lru_cache(maxsize=4096)
def _worst_rank(grid: tuple[int, ...], node_grid: tuple[int, ...], block: tuple[int, ...],
                periodic: bool, depth: int = 1) -> RankGeometry:
    """The rank with the most halo bytes (then the largest box) of a
    node-aware decomposition: `node_grid` nodes per dimension, a `block` of
    ranks in each node. Local sizes are the ceiling of grid / ranks (the
    largest box).

    depth 1: one message per face with a neighbour, one layer deep. depth h
    > 1 (hympi solve --halo-depth h): faces h layers deep, and one message
    per edge (h x h x side) and corner (h^3) whose neighbour exists, as the
    library exchanges them; a block's sweep s (0..h-1) computes the own box
    grown by h-1-s layers on every side with a neighbour, so
    `computed_points` is the mean over the block's sweeps."""
    parts = [n * b for n, b in zip(node_grid, block)]
    local = [-(-g // p) for g, p in zip(grid, parts)]
    offsets = _OFFSETS if depth > 1 else _OFFSETS[:6]
    best: Optional[RankGeometry] = None
    # A rank's messages depend on its position only through whether it is
    # first, inner or last in its node's block (neighbour in another node)
    # and on the whole grid (neighbour at all), so first, one inner and last
    # of each stand for all: the same worst rank as visiting every rank,
    # in time independent of the rank count.
    per_dim = [[(npos, rpos) for npos in _positions(node_grid[d]) for rpos in _positions(block[d])]
               for d in range(3)]
    for combo in itertools.product(*per_dim):
        # Per dimension and side (-1 lower, +1 upper): is there a neighbour,
        # and does it lie in another node? The rank at its block's edge whose
        # neighbour lies in another node crosses (with one node per
        # dimension, a periodic wrap stays on the node).
        has: list[dict[int, bool]] = []
        crosses: list[dict[int, bool]] = []
        for d, (npos, rpos) in enumerate(combo):
            g = npos * block[d] + rpos
            has.append({side: parts[d] >= 2 and (periodic or g != (0 if side < 0 else parts[d] - 1))
                        for side in (-1, 1)})
            crosses.append({side: node_grid[d] > 1 and rpos == (0 if side < 0 else block[d] - 1)
                            for side in (-1, 1)})
        mi = bi = ma = ba = 0
        for off in offsets:
            if not all(o == 0 or has[d][o] for d, o in enumerate(off)):
                continue
            size = VALUE_BYTES * math.prod(local[d] if o == 0 else depth for d, o in enumerate(off))
            if any(o != 0 and crosses[d][o] for d, o in enumerate(off)):
                mi, bi = mi + 1, bi + size
            else:
                ma, ba = ma + 1, ba + size
        sides = [int(has[d][-1]) + int(has[d][1]) for d in range(3)]
        inner = math.prod(max(0, local[d] - sides[d]) for d in range(3))
        pts = math.prod(local)
        computed = sum(math.prod(local[d] + sides[d] * (depth - 1 - s) for d in range(3))
                       for s in range(depth)) / depth
        geo = RankGeometry(pts, pts - inner, mi, bi, ma, ba, computed)
        if best is None or (geo.bytes_inter, geo.bytes_intra) > (best.bytes_inter, best.bytes_intra):
            best = geo
    assert best is not None
    return best


def factor3(count: int, shape: Sequence[int]) -> tuple[int, int, int]:
    return _factor3(count, tuple(float(x) for x in shape))


@functools.lru_cache(maxsize=4096)
def _factor3(count: int, shape: tuple[float, ...]) -> tuple[int, int, int]:
    """Split `count` into 3 factors that cut `shape` into the most cube-like
    pieces (least cut surface), larger factors on larger dimensions."""
    best: Optional[tuple[float, tuple[int, int, int]]] = None
    divisors = [d for d in range(1, int(math.isqrt(count)) + 1) if count % d == 0]
    divisors = sorted(set(divisors + [count // d for d in divisors]))
    for a in divisors:
        for b in range(1, count // a + 1):
            if (count // a) % b:
                continue
            f = (a, b, count // a // b)
            sizes = [s / p for s, p in zip(shape, f)]
            surface = sizes[0] * sizes[1] + sizes[1] * sizes[2] + sizes[0] * sizes[2]
            if best is None or surface < best[0] - 1e-12:
                best = (surface, f)
    assert best is not None
    return best[1]


def decompose(grid: Sequence[int], nodes: int, ranks_per_node: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Node grid and rank block of a node-aware decomposition (as hympi's
    choose_grid_for_nodes: nodes first, then the ranks inside a node's box)."""
    node_grid = factor3(nodes, grid)
    node_box = [g / n for g, n in zip(grid, node_grid)]
    return node_grid, factor3(ranks_per_node, node_box)


# --- the time of one iteration ---------------------------------------------------------

@dataclass(frozen=True)
class Shape:
    cores: int
    ranks: int          # per node
    threads: int        # per rank


def _share(beta: dict[int, float], k: int) -> float:
    """Bandwidth of one of k concurrent streams of a node, relative to a lone
    stream: beta(k)/k, beta held at its last measured value beyond it."""
    if k <= 1:
        return 1.0
    if not beta:
        return 1.0
    known = [kk for kk in beta if kk <= k]
    b = beta[max(known)] if known else 1.0
    return min(1.0, b / k)


def comm_time(geo: RankGeometry, inputs: Inputs, inter: Link, intra: Link, k: int, streams: int,
              pieces: int, intra_cost: float = 1.0, idle: float = 0.0) -> float:
    """One exchange of the worst rank: Hockney per message, the node's link
    shared by k communicating CPUs, the rank's faces spread over `streams`
    threads, each face cut into `pieces` messages. `idle`: seconds the link
    rested before (an emulated link's bucket refills meanwhile)."""
    share = _share(inputs.beta, k)
    t_inter = geo.msgs_inter * pieces * inter.t_lat
    if inter.rate > 0:
        # The node's ranks draw on one bucket, refilled at the rate while idle.
        credit = min(inter.burst, inter.rate * idle)
        node_bytes = geo.bytes_inter * max(1, k // max(1, streams))
        fast = min(1.0, credit / node_bytes) if node_bytes else 1.0
        t_inter += geo.bytes_inter * (fast / (inter.b_inf * share) + (1 - fast) / (inter.rate * share))
    else:
        t_inter += geo.bytes_inter / (inter.b_inf * share)
    t_intra = geo.msgs_intra * pieces * intra.t_lat + geo.bytes_intra / intra.b_inf
    return (t_inter + intra_cost * t_intra) / streams


def sweep_time(cost: Cost, shape: Shape, geo: RankGeometry, inputs: Inputs, inter: Link,
               intra: Link, scale: float = 1.0) -> float:
    """Seconds of one sweep of the worst rank under the run's scheme: one
    exchange per sweep, or with deep halos (depth h) one per h sweeps, whose
    cost each sweep carries a 1/h share of."""
    n, m, s, h = shape.threads, cost.m, cost.scheme, cost.depth
    per_sweep = cost.exchange_share  # exchanges per sweep: 1, or 1/h with deep halos
    w_ov = scale * cost.interior_s * (geo.points - geo.boundary_points)
    w_non = scale * (cost.interior_s * geo.boundary_points + cost.non_overlap_s * geo.computed_points)
    pack = scale * cost.pack_s_per_byte * (geo.bytes_inter + geo.bytes_intra) * per_sweep
    # Between two exchanges the link rests for about 1/per_sweep sweeps'
    # computation (a pure-MPI rank computes alone).
    idle = (w_non + w_ov) / per_sweep / (1 if s == "pure-mpi" else max(1, n))
    if h > 1 and s not in DEEP_HALO_SCHEMES:
        raise InputError(f"no projection model for scheme {s!r} with halo depth {h}")

    def exchange(k: int, streams: int = 1, pieces: int = 1, intra_cost: float = 1.0) -> float:
        return comm_time(geo, inputs, inter, intra, k, streams, pieces, intra_cost, idle) * per_sweep

    if s == "pure-mpi":
        return exchange(shape.cores, 1, 1) + pack + w_non + w_ov
    if s in ("masteronly", "masteronly-threaded") or n < 2 and s != "multiple-own":
        return exchange(shape.ranks, 1, 1) + pack + (w_non + w_ov) / n
    if s in ("funneled", "multiple"):
        m = max(1, m)
        t_c = exchange(shape.ranks * m, m, 1) + pack
        return w_non / n + max(t_c, w_ov / (n - m))
    if s == "adaptive":
        t_c = exchange(shape.ranks, 1, 1) + pack
        return w_non / n + max(t_c, (w_ov + t_c) / n)
    if s == "multiple-own":
        # Each thread's messages progress only inside its own MPI calls (no
        # progress thread in Open MPI or MPICH by default), and it waits after
        # its interior: a face above the eager limit moves then, so the
        # exchange adds to the computation (measured on the emulated cluster:
        # comm + compute add up).
        t_c = exchange(shape.ranks * n, n, n) + pack / n
        return w_non / n + t_c + w_ov / n
    if s == "partitioned":
        t_c = exchange(shape.ranks, 1, 1) + pack / n
        return w_non / n + max(t_c, w_ov / n)
    if s == "shared-window":
        t_c = exchange(shape.ranks, 1, 1, SHARED_WINDOW_INTRA_COST) + pack
        return w_non / n + max(t_c, w_ov / (n - 1))
    raise InputError(f"no projection model for scheme {s!r}")


def iteration_time(cost: Cost, shape: Shape, grid: Sequence[int], nodes: int, inputs: Inputs,
                   inter: Optional[Link] = None, intra: Optional[Link] = None, scale: float = 1.0,
                   layout: Optional[tuple[tuple[int, int, int], tuple[int, int, int]]] = None) -> float:
    """Seconds per iteration of `cost`'s kernel and scheme on `nodes` nodes."""
    inter = inter or inputs.inter
    intra = intra or inputs.intra
    ranks_per_node = shape.cores if cost.scheme == "pure-mpi" else shape.ranks
    node_grid, block = layout or decompose(grid, nodes, ranks_per_node)
    geo = worst_rank(grid, node_grid, block, cost.periodic, cost.depth)
    t = cost.sweeps * sweep_time(cost, shape, geo, inputs, inter, intra, scale)
    reductions = ALLREDUCES.get(cost.kernel, 0)
    ranks_total = nodes * ranks_per_node
    if reductions and ranks_total > 1:
        link = inter if nodes > 1 else intra
        t += reductions * math.ceil(math.log2(ranks_total)) * link.t_lat
    return t


# --- self-consistency and projection ---------------------------------------------------

@dataclass(frozen=True)
class Check:
    kernel: str
    label: str
    measured: float
    predicted: float
    spread: float

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1.0


def self_consistency(inputs: Inputs, kernels: Optional[Sequence[str]] = None) -> list[Check]:
    """Each measured run predicted with its own decomposition and shape."""
    out = []
    for kernel, costs in inputs.costs.items():
        if kernels is not None and kernel not in kernels:
            continue
        for c in costs:
            shape = Shape(c.ranks_per_node * c.threads, c.ranks_per_node, c.threads)
            pred = iteration_time(c, shape, c.grid, c.nodes, inputs, layout=(c.node_grid, c.node_block))
            spread = (c.measured_high - c.measured_low) / c.measured_s if c.measured_s > 0 else 0.0
            out.append(Check(kernel, c.label, c.measured_s, pred, spread))
    return out


def node_counts(max_nodes: int) -> list[int]:
    counts, n = [], 1
    while n <= max_nodes:
        counts.append(n)
        n *= 2
    if counts[-1] != max_nodes:
        counts.append(max_nodes)
    return counts


@dataclass
class Series:
    label: str
    nodes: list[int]
    time_s: list[float]           # median of the samples (nan where the grid does not fit)
    low: list[float]              # 16th percentile
    high: list[float]             # 84th percentile
    efficiency: list[float]       # T_best(1) / T(N) weak; T_best(1) / (N T(N)) strong


def runs_on(cost: Cost, shape: Shape) -> bool:
    """Whether a measured scheme run can be carried to `shape`."""
    if cost.scheme == "pure-mpi":
        return True
    if cost.scheme in ("funneled", "multiple", "adaptive", "shared-window") and shape.threads < 2:
        return False
    if cost.scheme == "shared-window" and shape.ranks < 2:
        return False
    return cost.m < shape.threads


def project(inputs: Inputs, kernel: str, shape: Shape, grid: Sequence[int], scaling: str,
            max_nodes: int = MAX_NODES, samples: int = 200, seed: int = 1) -> list[Series]:
    """Time per iteration over node counts, one series per scheme run measured
    for `kernel`. Weak scaling: every node keeps `grid`'s points (the grid
    grows along its node grid); strong: `grid` is the whole problem."""
    # The steady state: a deep halo exchanges once per h sweeps.
    costs = [replace(c, exchanges_per_sweep=0.0) for c in inputs.costs.get(kernel, [])
             if runs_on(c, shape)]
    counts = node_counts(max_nodes)
    rng = np.random.default_rng(seed)
    draws = [(inputs.inter.sample(rng), inputs.intra.sample(rng), rng.standard_normal())
             for _ in range(samples)]
    series = []
    for c in costs:
        med, low, high = [], [], []
        rpn = shape.cores if c.scheme == "pure-mpi" else shape.ranks
        for nodes in counts:
            if scaling == "weak":
                node_grid = factor3(nodes, grid)
                g = [a * b for a, b in zip(grid, node_grid)]
                layout = (node_grid, factor3(rpn, grid))
            else:
                g = list(grid)
                layout = decompose(g, nodes, rpn)
            # Every rank's box must hold at least one point; with deep halos
            # `depth` points along every divided or periodic axis (as hympi
            # solve checks).
            if not all(a // (n * b) >= (c.depth if n * b > 1 or c.periodic else 1)
                       for a, n, b in zip(g, *layout)):
                med.append(math.nan), low.append(math.nan), high.append(math.nan)
                continue
            base = iteration_time(c, shape, g, nodes, inputs, layout=layout)
            vals = [iteration_time(c, shape, g, nodes, inputs, inter, intra,
                                   max(0.05, 1.0 + c.sigma_rel * z), layout=layout)
                    for inter, intra, z in draws]
            med.append(base)
            low.append(float(np.percentile(vals, 16)))
            high.append(float(np.percentile(vals, 84)))
        series.append(Series(c.label, counts, med, low, high, []))
    finite_first = [s.time_s[0] for s in series if math.isfinite(s.time_s[0])]
    t1 = min(finite_first) if finite_first else math.nan
    for s in series:
        s.efficiency = [(t1 / t if scaling == "weak" else t1 / (n * t)) if math.isfinite(t) else math.nan
                        for n, t in zip(s.nodes, s.time_s)]
    return series


def crossovers(series: Sequence[Series]) -> list[dict[str, Any]]:
    """Where the fastest scheme changes: [{nodes, from, to}], and whether the
    two are separated by their bands at that point."""
    out = []
    prev: Optional[Series] = None
    for i in range(len(series[0].nodes) if series else 0):
        ranked = sorted((s for s in series if math.isfinite(s.time_s[i])), key=lambda s: s.time_s[i])
        if not ranked:
            continue
        best = ranked[0]
        if prev is not None and best.label != prev.label:
            separated = len(ranked) < 2 or best.high[i] < ranked[1].low[i]
            out.append({"nodes": best.nodes[i], "from": prev.label, "to": best.label,
                        "separated": separated})
        prev = best
    return out


def fastest(series: Sequence[Series], i: int) -> Optional[Series]:
    ranked = [s for s in series if math.isfinite(s.time_s[i])]
    return min(ranked, key=lambda s: s.time_s[i]) if ranked else None


def limits(inputs: Inputs, max_nodes: int) -> list[str]:
    """Where the projection's assumptions stop holding, in words."""
    notes = [f"measured on {inputs.nodes_measured} {inputs.nodes_kind} node(s); every node count "
             f"above that is an extrapolation",
             "the network is assumed free of contention with full bisection bandwidth: each node "
             "keeps the bandwidth it had alone. On a fat tree with oversubscribed upper levels, a "
             "torus or a dragonfly, many nodes exchanging at once get less, so large node counts "
             "are optimistic for communication-bound schemes",
             "latency is taken as constant with distance (no hop count) and messages as "
             "independent (no LogGP overhead/gap per message)",
             "compute cost per point is the measured one: a local box that falls into a faster "
             "cache level when strong scaling makes the projection pessimistic"]
    if inputs.beta:
        notes.append(f"link saturation beta(k) measured for k = 1..{max(inputs.beta)}; held at "
                     "its last value beyond")
    depths = sorted({c.depth for cs in inputs.costs.values() for c in cs if c.depth > 1})
    if depths:
        notes.append(f"the deep-halo series (depth {', '.join(map(str, depths))}) keep the time per "
                     "computed point of the study's run at that depth: its cache blocking is assumed "
                     "to work as well on other boxes; the halo points a block recomputes are counted, "
                     "so they cost more as boxes shrink")
    return notes + inputs.assumptions


# --- the whole projection, as a document ------------------------------------------------

@dataclass(frozen=True)
class Request:
    kernels: list[str]
    shape: Shape
    grid: tuple[int, int, int]
    scalings: list[str]
    max_nodes: int = MAX_NODES
    samples: int = 200


def default_request(inputs: Inputs) -> Request:
    """The study's own node shape and grid, both scalings, every kernel measured."""
    grids = {c.grid for cs in inputs.costs.values() for c in cs}
    grid = max(grids, key=lambda g: g[0] * g[1] * g[2])
    shape = Shape(inputs.ranks_per_node * inputs.threads, inputs.ranks_per_node, inputs.threads)
    return Request(sorted(inputs.costs), shape, grid, ["weak", "strong"])


def request_problems(inputs: Inputs, req: Request) -> list[str]:
    """Everything wrong with a request, as phrases (empty: valid)."""
    problems = []
    unknown = [k for k in req.kernels if k not in inputs.costs]
    if unknown:
        problems.append(f"kernel {', '.join(unknown)} not measured in this study (measured: "
                        f"{', '.join(sorted(inputs.costs))})")
    s = req.shape
    if min(s.cores, s.ranks, s.threads) < 1:
        problems.append("cores per node, ranks and threads must be >= 1")
    elif s.ranks * s.threads != s.cores:
        problems.append(f"a node of {s.cores} core(s) cannot run {s.ranks} rank(s) x {s.threads} "
                        f"thread(s) (= {s.ranks * s.threads}): cores per node must equal ranks x threads")
    if min(req.grid) < 1:
        problems.append(f"grid {req.grid[0]}x{req.grid[1]}x{req.grid[2]}: every dimension must be >= 1")
    elif s.cores >= 1 and req.grid[0] * req.grid[1] * req.grid[2] < s.cores:
        problems.append(f"grid {req.grid[0]}x{req.grid[1]}x{req.grid[2]} has fewer points than the "
                        f"{s.cores} ranks of pure MPI on one node")
    if not 1 <= req.max_nodes <= MAX_NODES:
        problems.append(f"--max-nodes must lie in 1..{MAX_NODES} (got {req.max_nodes})")
    if not SAMPLES_RANGE[0] <= req.samples <= SAMPLES_RANGE[1]:
        problems.append(f"--samples must lie in {SAMPLES_RANGE[0]}..{SAMPLES_RANGE[1]} (got {req.samples})")
    return problems


def shape_limits(inputs: Inputs, req: Request) -> list[str]:
    """What carrying the measured costs to another node shape assumes."""
    notes = []
    measured = sorted({c.threads for cs in inputs.costs.values() for c in cs if c.scheme != "pure-mpi"})
    if measured and req.shape.threads not in measured:
        notes.append(f"the hybrid schemes' costs were measured with {', '.join(map(str, measured))} "
                     f"thread(s) per rank and are carried to {req.shape.threads}")
    busy = inputs.ranks_per_node * inputs.threads
    if req.shape.cores != busy:
        notes.append(f"the costs per point were measured with {busy} core(s) of a node computing and "
                     f"are carried to {req.shape.cores}: each core is assumed to keep its speed, i.e. "
                     "no more memory-bandwidth contention per core than measured (optimistic for "
                     "memory-bound kernels on a fuller node)")
    return notes


def _clean(values: Iterable[float]) -> list[Optional[float]]:
    return [v if math.isfinite(v) else None for v in values]


def document(inputs: Inputs, req: Request) -> dict[str, Any]:
    """Self-consistency, then each kernel's projection: the JSON record of
    `hympi-lab project` and the data of the report's section."""
    problems = request_problems(inputs, req)
    if problems:
        raise InputError("; ".join(problems))
    checks = self_consistency(inputs, req.kernels)
    within = [c for c in checks if abs(c.error) <= SELF_CONSISTENCY_LIMIT]
    doc: dict[str, Any] = {
        "parameters": {
            "inter_node": {"T_lat_s": inputs.inter.t_lat, "T_lat_sigma": inputs.inter.sigma_lat,
                           "b_inf_Bps": inputs.inter.b_inf, "b_inf_sigma": inputs.inter.sigma_b,
                           "source": inputs.inter.source},
            "intra_node": {"T_lat_s": inputs.intra.t_lat, "b_inf_Bps": inputs.intra.b_inf,
                           "source": inputs.intra.source},
            "beta": {str(k): v for k, v in inputs.beta.items()},
            "costs": [{"kernel": c.kernel, "scheme": c.label, "threads": c.threads,
                       "halo_depth": c.depth,
                       "interior_thread_s_per_point": c.interior_s,
                       "non_overlap_thread_s_per_point": c.non_overlap_s,
                       "pack_s_per_byte": c.pack_s_per_byte, "sigma_rel": c.sigma_rel}
                      for cs in inputs.costs.values() for c in cs],
        },
        "self_consistency": {
            "limit": SELF_CONSISTENCY_LIMIT,
            "within": len(within), "runs": len(checks),
            "checks": [{"kernel": c.kernel, "scheme": c.label, "measured_s": c.measured,
                        "predicted_s": c.predicted, "error": c.error, "spread": c.spread,
                        "within_limit": abs(c.error) <= SELF_CONSISTENCY_LIMIT} for c in checks],
        },
        "request": {"kernels": req.kernels, "grid": list(req.grid), "cores_per_node": req.shape.cores,
                    "ranks_per_node": req.shape.ranks, "threads": req.shape.threads,
                    "scalings": req.scalings, "max_nodes": req.max_nodes, "samples": req.samples},
        "projections": [],
        "limits": limits(inputs, req.max_nodes) + shape_limits(inputs, req),
    }
    for kernel in req.kernels:
        for scaling in req.scalings:
            series = project(inputs, kernel, req.shape, req.grid, scaling, req.max_nodes, req.samples)
            doc["projections"].append({
                "kernel": kernel, "scaling": scaling,
                "series": [{"scheme": s.label, "nodes": s.nodes, "time_s": _clean(s.time_s),
                            "low_s": _clean(s.low), "high_s": _clean(s.high),
                            "efficiency": _clean(s.efficiency)} for s in series],
                "fastest": [(lambda b: b.label if b else None)(fastest(series, i))
                            for i in range(len(series[0].nodes) if series else 0)],
                "crossovers": crossovers(series),
            })
    return doc


def _fmt_time(v: Optional[float]) -> str:
    if v is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if v >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v / 1e-9:.3g} ns"


def text(doc: dict[str, Any], rows: Sequence[int] = (1, 2, 4, 16, 64, 256, 1024, 4096, 16384)) -> str:
    """The tables `hympi-lab project` prints."""
    sc = doc["self_consistency"]
    lines = [f"self-consistency: {sc['within']} of {sc['runs']} measured runs predicted within "
             f"{sc['limit'] * 100:.0f} %"]
    for c in sc["checks"]:
        flag = "" if c["within_limit"] else "   <- outside"
        lines.append(f"  {c['kernel']:<8} {c['scheme']:<20} measured {_fmt_time(c['measured_s']):>9}  "
                     f"predicted {_fmt_time(c['predicted_s']):>9}  {c['error'] * 100:+6.0f} %"
                     f"  (run spread {c['spread'] * 100:.0f} %){flag}")
    for p in doc["projections"]:
        series = p["series"]
        if not series:
            continue
        lines.append("")
        lines.append(f"{p['kernel']}, {p['scaling']} scaling: time per iteration (parallel "
                     "efficiency against the best one-node run)")
        head = "  nodes  " + "".join(f"{s['scheme']:>22}" for s in series) + "   fastest"
        lines.append(head)
        for i, n in enumerate(series[0]["nodes"]):
            if n not in rows and n != series[0]["nodes"][-1]:
                continue
            cells = []
            for s in series:
                t, e = s["time_s"][i], s["efficiency"][i]
                cells.append(f"{'does not fit':>22}" if t is None else
                             f"{_fmt_time(t) + f' ({e * 100:.0f} %)':>22}")
            lines.append(f"  {n:>5}  " + "".join(cells) + f"   {p['fastest'][i] or '-'}")
        for x in p["crossovers"]:
            sep = "" if x["separated"] else " (inside the uncertainty bands)"
            lines.append(f"  at {x['nodes']} nodes the fastest changes from {x['from']} to {x['to']}{sep}")
        if not p["crossovers"]:
            lines.append("  the fastest scheme does not change up to "
                         f"{series[0]['nodes'][-1]} nodes")
    lines.append("")
    lines.append("where the projection stops holding:")
    lines += [f"  - {n}" for n in doc["limits"]]
    return "\n".join(lines)
