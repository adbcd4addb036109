"""The geometry of a node-aware decomposition, for the projection (project.py).

Nodes on a 3-D grid, a 3-D block of ranks in each node, halos of 8-byte
values (one layer per face of the 7-point stencil, or h layers with edges
and corners for temporal blocking); `worst_rank` finds the rank with the
most halo bytes, whose exchange sets the time of an iteration.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Optional, Sequence

VALUE_BYTES = 8              # doubles


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

