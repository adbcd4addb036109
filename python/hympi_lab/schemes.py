"""One table: each hympi scheme's cost model.

`TABLE` maps a scheme name to the two places the package models it:
  - `sweep`: the seconds of one sweep of the worst rank (project.py's
    iteration time, the papers' composition written in seconds);
  - `epsilon`: the predicted speed-up over masteronly from masteronly's
    fractions (the report's model-vs-measurement check, seed 000 eq. 3 and
    its relatives in model.py).
A scheme without an entry, or whose entry lacks one of the two, gets "no
prediction" from the caller, never an error.

The facts about a scheme (whether it overlaps communication, its fewest
threads, whether it needs two ranks on a node) are hympi's own
(src/schemes/*.cpp). A study records them in study.json ("schemes", the
list of `hympi info --json`); `table(recorded)` takes them from there and
keeps the built-in copy below for a study without the list.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Optional, Sequence

from . import model

PURE_MPI = "pure-mpi"


@dataclass(frozen=True)
class Terms:
    """What one sweep of the worst rank is made of (project.sweep_time):
    n threads per rank (m of them reserved), the node's cores and ranks,
    the computation that cannot overlap (w_non) and can (w_ov), packing, and
    exchange(k, streams, pieces, intra_cost): one exchange's seconds with k
    CPUs of a node communicating."""
    n: int
    m: int
    cores: int
    ranks: int
    w_non: float
    w_ov: float
    pack: float
    exchange: Callable[..., float]


def _pure_mpi(t: Terms) -> float:
    return t.exchange(t.cores, 1, 1) + t.pack + t.w_non + t.w_ov


def _masteronly(t: Terms) -> float:
    return t.exchange(t.ranks, 1, 1) + t.pack + (t.w_non + t.w_ov) / t.n


def _reserved(t: Terms) -> float:
    """funneled (m = 1) and multiple: m threads exchange while n - m compute."""
    m = max(1, t.m)
    t_c = t.exchange(t.ranks * m, m, 1) + t.pack
    return t.w_non / t.n + max(t_c, t.w_ov / (t.n - m))


def _adaptive(t: Terms) -> float:
    t_c = t.exchange(t.ranks, 1, 1) + t.pack
    return t.w_non / t.n + max(t_c, (t.w_ov + t_c) / t.n)


def _multiple_own(t: Terms) -> float:
    # Each thread's messages progress only inside its own MPI calls (no
    # progress thread in Open MPI or MPICH by default), and it waits after
    # its interior: a face above the eager limit moves then, so the exchange
    # adds to the computation (measured on the emulated cluster: comm +
    # compute add up).
    t_c = t.exchange(t.ranks * t.n, t.n, t.n) + t.pack / t.n
    return t.w_non / t.n + t_c + t.w_ov / t.n


def _partitioned(t: Terms) -> float:
    t_c = t.exchange(t.ranks, 1, 1) + t.pack / t.n
    return t.w_non / t.n + max(t_c, t.w_ov / t.n)


# What an intra-node face still costs shared-window relative to a message:
# hympi packs each face and copies it out after a node barrier, measured on
# 16 cores at about the cost of a shared-memory message (model.py).
SHARED_WINDOW_INTRA_COST = 1.0


def _shared_window(t: Terms) -> float:
    t_c = t.exchange(t.ranks, 1, 1, SHARED_WINDOW_INTRA_COST) + t.pack
    return t.w_non / t.n + max(t_c, t.w_ov / (t.n - 1))


# epsilon(f_comm, f_comp_non, n, m, inter_share) -> (value, note), or None
# where the model does not apply (too few threads, no byte split measured);
# (None, why) where it applies but gives no finite value.
Epsilon = Callable[[float, float, int, int, Optional[float]], Optional[tuple[Optional[float], str]]]


def _eps_reserved(fixed_m: Optional[int]) -> Epsilon:
    def eps(fc: float, fn: float, n: int, m: int, share: Optional[float]) -> Optional[tuple[float, str]]:
        if n < 2:
            return None
        m = fixed_m if fixed_m is not None else m
        return model.epsilon(fc, fn, n, m), f"eq. (3), n = {n}, m = {m}"
    return eps


def _eps_adaptive(fc: float, fn: float, n: int, m: int, share: Optional[float]) -> Optional[tuple[float, str]]:
    return model.epsilon_adaptive_bound(fc, fn, n), "upper bound (ideal load balancing)"


def _eps_shared_window(fc: float, fn: float, n: int, m: int,
                       share: Optional[float]) -> Optional[tuple[float, str]]:
    # masteronly's split of the bytes: shared-window's own moves its
    # intra-node faces as zero-copy.
    if share is None:
        return None
    try:
        eps = model.epsilon_shared_window(fc, fn, n, share)
    except ValueError as err:
        return None, f"this package's model: {err}"
    return eps, f"zero-copy intra-node faces, inter-node share {share:.2f} (this package's model)"


def _eps_partitioned(fc: float, fn: float, n: int, m: int, share: Optional[float]) -> Optional[tuple[float, str]]:
    return model.epsilon_partitioned(fc, fn, n), "asynchronous progress assumed (this package's model)"


@dataclass(frozen=True)
class SchemeModel:
    name: str
    sweep: Optional[Callable[[Terms], float]] = None
    epsilon: Optional[Epsilon] = None
    # Facts (hympi info --json; replaced by a study's recorded ones):
    overlap: bool = True             # overlaps communication with computation
    min_threads: int = 1             # fewest threads hympi runs it with
    needs_node_peers: bool = False   # needs 2+ ranks on a node
    takes_reserved: bool = False     # accepts --reserved m
    # The model's own needs:
    model_threads: int = 1           # fewest threads per rank its `sweep` holds for
    # With one thread per rank it runs (and is costed) as masteronly.
    one_thread_is_masteronly: bool = True

    @property
    def reference(self) -> bool:
        """A baseline of epsilon (no overlap): not itself predicted."""
        return not self.overlap

    @property
    def deep_halo(self) -> bool:
        """Whether its temporal-blocking runs can be projected: it exchanges,
        then computes the whole block, so nothing overlaps. Under an
        overlapping scheme only a block's first sweep overlaps its exchange
        (src/domain.cpp), a composition the model does not have."""
        return not self.overlap

    def threads_needed(self) -> int:
        return max(self.model_threads, self.min_threads)


TABLE: dict[str, SchemeModel] = {s.name: s for s in (
    SchemeModel(PURE_MPI, _pure_mpi, overlap=False, one_thread_is_masteronly=False),
    SchemeModel("masteronly", _masteronly, overlap=False),
    SchemeModel("masteronly-threaded", _masteronly, overlap=False),
    SchemeModel("funneled", _reserved, _eps_reserved(1), min_threads=2, model_threads=2),
    SchemeModel("multiple", _reserved, _eps_reserved(None), min_threads=2, takes_reserved=True,
                model_threads=2),
    SchemeModel("multiple-own", _multiple_own, one_thread_is_masteronly=False),
    SchemeModel("adaptive", _adaptive, _eps_adaptive, min_threads=2, model_threads=2),
    SchemeModel("partitioned", _partitioned, _eps_partitioned),
    SchemeModel("shared-window", _shared_window, _eps_shared_window, needs_node_peers=True,
                model_threads=2),
)}

_FACTS = {"overlap": bool, "min_threads": int, "needs_node_peers": bool, "takes_reserved": bool}


def table(recorded: Optional[Sequence[Any]] = None) -> dict[str, SchemeModel]:
    """TABLE with each scheme's facts as a study recorded them (the list of
    `hympi info --json`; None or malformed entries: the built-in facts).
    A recorded scheme the table has no model for is listed without one."""
    out = dict(TABLE)
    for entry in recorded or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        name = entry["name"]
        facts = {k: cast(entry[k]) for k, cast in _FACTS.items()
                 if isinstance(entry.get(k), (bool, int)) and name != PURE_MPI}
        out[name] = replace(out.get(name, SchemeModel(name)), **facts)
    return out


def lookup(name: str, schemes: Optional[Mapping[str, SchemeModel]] = None) -> Optional[SchemeModel]:
    return (TABLE if schemes is None else schemes).get(name)


def has_sweep(name: str, schemes: Optional[Mapping[str, SchemeModel]] = None) -> bool:
    entry = lookup(name, schemes)
    return entry is not None and entry.sweep is not None


def label(scheme: str, m: int, schemes: Optional[Mapping[str, SchemeModel]] = None) -> str:
    """A run's name in tables: 'pure MPI', 'multiple m=2', 'funneled'."""
    if scheme == PURE_MPI:
        return "pure MPI"
    entry = lookup(scheme, schemes)
    return scheme + (f" m={m}" if entry is not None and entry.takes_reserved else "")


NO_MODEL = "no prediction: no cost model for this scheme"

__all__ = ["TABLE", "SchemeModel", "Terms", "table", "lookup", "has_sweep", "label", "NO_MODEL",
           "PURE_MPI", "SHARED_WINDOW_INTRA_COST"]
