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
issue's 15 % self-consistency), so a reader sees how far to trust it. A
scheme whose own run it misses by more than that is not projected
(`missed`), nor is anything of an oversubscribed study or of a kernel whose
every run it misses (`withheld`): no extrapolation and no crossover comes
from a miss. The efficiency band is clipped to what an efficiency can be,
0..1.

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
plotting.py do those). The study's measurements are read by
project_inputs.py, the decomposition's geometry is geometry.py's, and each
scheme's composition lives in schemes.py's table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from . import judge, schemes as schemes_mod
from .errors import InputError
from .geometry import VALUE_BYTES, RankGeometry, decompose, factor3, worst_rank
from .project_inputs import DEEP_HALO_SCHEMES, DEFAULT_COST_SIGMA, Cost, Inputs, Link, load_inputs
from .schemes import SHARED_WINDOW_INTRA_COST

MAX_NODES = 16384
# The largest node shape projected: threads per rank as hympi allows them
# (launch.py), cores per node well above any node built.
MAX_THREADS = 1024
MAX_CORES = 65536
SAMPLES_RANGE = (10, 100000)  # Monte Carlo draws for the band
SELF_CONSISTENCY_LIMIT = 0.15
# Why an oversubscribed study's own runs are not judged: an error against
# them (+2090 % in one `make test` run) says nothing of the model.
OVERSUBSCRIBED_RUNS = ("the study was oversubscribed (threads shared cores), so its runs measure "
                       "the scheduler, not the model's premise")
# cg reduces twice per iteration (p.q, then r.r; src/kernels/cg.cpp);
# recursive doubling takes ceil(log2 P) latency-bound steps.
ALLREDUCES = {"cg": 2}


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
    idle = (w_non + w_ov) / per_sweep / (1 if s == schemes_mod.PURE_MPI else max(1, n))
    entry = inputs.schemes.get(s)
    if entry is None or entry.sweep is None:
        raise InputError(f"no projection model for scheme {s!r}")
    if h > 1 and not entry.deep_halo:
        raise InputError(f"no projection model for scheme {s!r} with halo depth {h}")

    def exchange(k: int, streams: int = 1, pieces: int = 1, intra_cost: float = 1.0) -> float:
        return comm_time(geo, inputs, inter, intra, k, streams, pieces, intra_cost, idle) * per_sweep

    # With one thread per rank most schemes run as masteronly.
    sweep = inputs.schemes["masteronly"].sweep if n < 2 and entry.one_thread_is_masteronly else entry.sweep
    assert sweep is not None
    return sweep(schemes_mod.Terms(n, m, shape.cores, shape.ranks, w_non, w_ov, pack, exchange))


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
    predicted: Optional[float]   # None: no cost model for the scheme (no prediction)
    spread: float

    @property
    def error(self) -> Optional[float]:
        return None if self.predicted is None else self.predicted / self.measured - 1.0

    @property
    def within(self) -> Optional[bool]:
        return None if self.error is None else abs(self.error) <= SELF_CONSISTENCY_LIMIT


def self_consistency(inputs: Inputs, kernels: Optional[Sequence[str]] = None) -> list[Check]:
    """Each measured run predicted with its own decomposition and shape."""
    out = []
    for kernel, costs in inputs.costs.items():
        if kernels is not None and kernel not in kernels:
            continue
        for c in costs:
            shape = Shape(c.ranks_per_node * c.threads, c.ranks_per_node, c.threads)
            pred = (iteration_time(c, shape, c.grid, c.nodes, inputs, layout=(c.node_grid, c.node_block))
                    if has_model(c, inputs) else None)
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


def has_model(cost: Cost, inputs: Inputs) -> bool:
    """Whether schemes.py has a cost model for the run's scheme (at its depth)."""
    entry = inputs.schemes.get(cost.scheme)
    return entry is not None and entry.sweep is not None and (cost.depth == 1 or entry.deep_halo)


def runs_on(cost: Cost, shape: Shape, schemes: Optional[dict[str, schemes_mod.SchemeModel]] = None) -> bool:
    """Whether a measured scheme run can be carried to `shape` (its fewest
    threads, two ranks on a node where it shares memory between them)."""
    if cost.scheme == schemes_mod.PURE_MPI:
        return True
    entry = schemes_mod.lookup(cost.scheme, schemes)
    if entry is None or shape.threads < entry.threads_needed():
        return False
    if entry.needs_node_peers and shape.ranks < 2:
        return False
    return cost.m < shape.threads


def project(inputs: Inputs, kernel: str, shape: Shape, grid: Sequence[int], scaling: str,
            max_nodes: int = MAX_NODES, samples: int = 200, seed: int = 1,
            exclude: Sequence[str] = ()) -> list[Series]:
    """Time per iteration over node counts, one series per scheme run measured
    for `kernel` (but those labelled in `exclude`). Weak scaling: every node
    keeps `grid`'s points (the grid grows along its node grid); strong:
    `grid` is the whole problem."""
    # The steady state: a deep halo exchanges once per h sweeps.
    costs = [replace(c, exchanges_per_sweep=0.0) for c in inputs.costs.get(kernel, [])
             if has_model(c, inputs) and runs_on(c, shape, inputs.schemes) and c.label not in exclude]
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
    lacking = sorted({c.label for cs in inputs.costs.values() for c in cs if not has_model(c, inputs)})
    if lacking:
        notes.append(f"no prediction for {', '.join(lacking)}: no cost model for the scheme "
                     "(schemes.py)")
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
    elif s.cores > MAX_CORES or s.threads > MAX_THREADS:
        # hympi runs at most 1024 threads per rank; a node of 10^18 cores would
        # not fail but factor its decomposition for hours.
        problems.append(f"a node of {s.cores} core(s), {s.ranks} rank(s) x {s.threads} thread(s) is out "
                        f"of range: accepted 1 .. {MAX_CORES} cores per node, 1 .. {MAX_THREADS} threads")
    elif s.ranks * s.threads != s.cores:
        problems.append(f"a node of {s.cores} core(s) cannot run {s.ranks} rank(s) x {s.threads} "
                        f"thread(s) (= {s.ranks * s.threads}): cores per node must equal ranks x threads")
    if min(req.grid) < 1:
        problems.append(f"grid {req.grid[0]}x{req.grid[1]}x{req.grid[2]}: every dimension must be >= 1")
    elif s.cores >= 1 and req.grid[0] * req.grid[1] * req.grid[2] < s.cores:
        problems.append(f"grid {req.grid[0]}x{req.grid[1]}x{req.grid[2]} has fewer points than the "
                        f"{s.cores} ranks of pure MPI on one node")
    if not 1 <= req.max_nodes <= MAX_NODES:
        problems.append(f"--max-nodes {req.max_nodes} is out of range: accepted 1 .. {MAX_NODES}")
    if not SAMPLES_RANGE[0] <= req.samples <= SAMPLES_RANGE[1]:
        problems.append(f"--samples {req.samples} is out of range: accepted {SAMPLES_RANGE[0]} .. "
                        f"{SAMPLES_RANGE[1]}")
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


def missed(kernel: str, checks: Sequence[Check]) -> list[str]:
    """The runs of `kernel` the self-check misses by more than
    SELF_CONSISTENCY_LIMIT: a scheme's series is carried to other node
    counts only when the model reproduces that scheme's own run, so no
    extrapolation and no crossover comes from a miss."""
    return [c.label for c in checks if c.kernel == kernel and c.within is False]


def withheld(kernel: str, checks: Sequence[Check], oversubscribed: bool = False) -> str:
    """Why nothing of `kernel` is projected ('' when some of it is): the
    study was oversubscribed (its times are the scheduler's, a run the model
    'reproduces' is luck), or the model misses every run of the kernel."""
    if oversubscribed:
        return f"{OVERSUBSCRIBED_RUNS}: nothing is carried to other node counts"
    mine = [c for c in checks if c.kernel == kernel and c.within is not None]
    if mine and all(not c.within for c in mine):
        return (f"the model misses all {len(mine)} of {kernel}'s measured runs by more than "
                f"{SELF_CONSISTENCY_LIMIT * 100:.0f} %, so it is not carried to other node counts")
    return ""


def _series_doc(s: Series) -> dict[str, Any]:
    """One series of the document. The band of the efficiency is the time's
    band mapped inversely (efficiency is T_best(1) / (T(N) [x N])), clipped
    to 0..1: a wide band of the time must not draw an efficiency of 4.7."""
    e_low, e_high = [], []
    for e, t, lo, hi in zip(s.efficiency, s.time_s, s.low, s.high):
        ok = all(math.isfinite(v) for v in (e, t, lo, hi)) and lo > 0 and hi > 0
        e_low.append(judge.clip01(e * t / hi) if ok else None)
        e_high.append(judge.clip01(e * t / lo) if ok else None)
    return {"scheme": s.label, "nodes": s.nodes, "time_s": _clean(s.time_s),
            "low_s": _clean(s.low), "high_s": _clean(s.high),
            "efficiency": _clean(s.efficiency), "efficiency_low": e_low, "efficiency_high": e_high}


def document(inputs: Inputs, req: Request) -> dict[str, Any]:
    """Self-consistency, then each kernel's projection: the JSON record of
    `hympi-lab project` and the data of the report's section."""
    problems = request_problems(inputs, req)
    if problems:
        raise InputError("; ".join(problems))
    checks = self_consistency(inputs, req.kernels)
    predicted = [c for c in checks if c.predicted is not None]
    within = [c for c in predicted if c.within]
    judged = not inputs.oversubscribed
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
            "not_judged": "" if judged else OVERSUBSCRIBED_RUNS,
            "within": len(within) if judged else None, "runs": len(predicted),
            "checks": [{"kernel": c.kernel, "scheme": c.label, "measured_s": c.measured,
                        "predicted_s": c.predicted, "error": c.error, "spread": c.spread,
                        "within_limit": c.within if judged else None} for c in checks],
        },
        "request": {"kernels": req.kernels, "grid": list(req.grid), "cores_per_node": req.shape.cores,
                    "ranks_per_node": req.shape.ranks, "threads": req.shape.threads,
                    "scalings": req.scalings, "max_nodes": req.max_nodes, "samples": req.samples},
        "projections": [],
        "limits": limits(inputs, req.max_nodes) + shape_limits(inputs, req),
    }
    for kernel in req.kernels:
        reason, left_out = withheld(kernel, checks, inputs.oversubscribed), missed(kernel, checks)
        for scaling in req.scalings:
            if reason:
                doc["projections"].append({"kernel": kernel, "scaling": scaling, "series": [],
                                           "fastest": [], "crossovers": [], "withheld": reason,
                                           "left_out": left_out})
                continue
            series = project(inputs, kernel, req.shape, req.grid, scaling, req.max_nodes, req.samples,
                             exclude=left_out)
            doc["projections"].append({
                "kernel": kernel, "scaling": scaling,
                "series": [_series_doc(s) for s in series],
                "fastest": [(lambda b: b.label if b else None)(fastest(series, i))
                            for i in range(len(series[0].nodes) if series else 0)],
                "crossovers": crossovers(series),
                "withheld": "",
                "left_out": left_out,
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
    if sc["not_judged"]:
        lines = [f"self-consistency: {sc['runs']} measured runs predicted, not judged: {sc['not_judged']}"]
    else:
        lines = [f"self-consistency: {sc['within']} of {sc['runs']} measured runs predicted within "
                 f"{sc['limit'] * 100:.0f} %"]
    for c in sc["checks"]:
        flag = "" if c["within_limit"] is not False else "   <- outside"
        if c["error"] is None:
            error = schemes_mod.NO_MODEL
        elif sc["not_judged"]:
            error = "not judged"
        else:
            error = f"{c['error'] * 100:+6.0f} %"
        lines.append(f"  {c['kernel']:<8} {c['scheme']:<20} measured {_fmt_time(c['measured_s']):>9}  "
                     f"predicted {_fmt_time(c['predicted_s']):>9}  {error}"
                     f"  (run spread {c['spread'] * 100:.0f} %){flag}")
    for p in doc["projections"]:
        series = p["series"]
        if p.get("withheld"):
            lines += ["", f"{p['kernel']}, {p['scaling']} scaling: no projection: {p['withheld']}"]
            continue
        if not series:
            continue
        lines.append("")
        lines.append(f"{p['kernel']}, {p['scaling']} scaling: time per iteration (parallel "
                     "efficiency against the best one-node run)")
        if p.get("left_out"):
            lines.append(f"  not projected (the model misses their own runs): {', '.join(p['left_out'])}")
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


# Names callers import from here (cli.py, report, tests), defined in the modules above.
__all__ = ["MAX_THREADS", "MAX_CORES", "VALUE_BYTES", "RankGeometry", "decompose", "factor3", "worst_rank", "DEEP_HALO_SCHEMES",
           "DEFAULT_COST_SIGMA", "Cost", "Inputs", "Link", "load_inputs", "SHARED_WINDOW_INTRA_COST",
           "MAX_NODES", "SAMPLES_RANGE", "SELF_CONSISTENCY_LIMIT", "OVERSUBSCRIBED_RUNS", "ALLREDUCES",
           "Shape", "comm_time", "sweep_time", "iteration_time", "Check", "self_consistency", "node_counts", "Series",
           "has_model", "runs_on", "project", "crossovers", "fastest", "limits", "Request", "withheld", "missed",
           "default_request", "request_problems", "shape_limits", "document", "text"]
