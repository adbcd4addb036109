"""The papers' performance equations as pure functions: no I/O, no printing.

Notation (seed 000 sec. 7.2.1): a process runs n threads; m of them are
reserved for communication in the funneled (m = 1) and multiple schemes.
The masteronly run time is split into fractions

    f_comm + f_comp_non + f_comp_overlap = 1                         (eq. 1)

f_comm: the master thread communicates while the others sleep;
f_comp_non: computation that needs the halo (cannot overlap);
f_comp_overlap: computation that can overlap with the communication.

epsilon = T_masteronly / T_scheme, so epsilon > 1 means the overlapping
scheme wins. Inputs are validated by the callers (see `fraction_problems`);
these functions assume a valid domain.
"""

from __future__ import annotations

from typing import Optional, Union, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

# Sums of fractions read from measurements carry rounding; a sum this close
# to 1 counts as 1 rather than as "above 1".
FRACTION_TOL = 1e-9


def fraction_problems(n: int, m: Optional[int], f_comp_non: Optional[float],
                      f_comm: Optional[float]) -> list[str]:
    """Everything wrong with a model input, as short phrases (empty: valid).

    Collects all problems at once so that a caller can report them together.
    """
    problems: list[str] = []
    if n < 2:
        problems.append(f"n must be at least 2 (got {n}): one thread cannot both "
                        "communicate and compute")
    if m is not None:
        if m < 1:
            problems.append(f"m must be at least 1 (got {m})")
        elif m >= n >= 2:
            problems.append(f"m must be less than n (got m = {m}, n = {n}): "
                            "at least one thread must compute")
    for name, value in (("f_comp_non", f_comp_non), ("f_comm", f_comm)):
        if value is not None and not (0.0 <= value <= 1.0):
            problems.append(f"{name} {value:g} is out of range: accepted 0 .. 1")
    if (f_comp_non is not None and f_comm is not None
            and f_comp_non + f_comm > 1.0 + FRACTION_TOL):
        problems.append(f"f_comm + f_comp_non must not exceed 1 "
                        f"(got {f_comm:g} + {f_comp_non:g} = {f_comm + f_comp_non:g})")
    return problems


def f_comp_overlap(f_comm: float, f_comp_non: float) -> float:
    """The remaining fraction, eq. (1); clamps rounding noise below zero."""
    return max(0.0, 1.0 - f_comm - f_comp_non)


def epsilon(f_comm: float, f_comp_non: float, n: int, m: int,
            comm_speedup: Optional[float] = None) -> float:
    """Performance ratio T_masteronly / T_multiple, seed 000 eq. (3).

        epsilon = 1 / (f_comp_non + max(f_comm / m, f_comp_overlap * n / (n - m)))

    f_comp_non runs on all n threads (as in masteronly); the overlappable part
    runs on the n - m computing threads while the m reserved threads
    communicate. The paper divides the communication time by m, i.e. it
    assumes m threads reach m times the bandwidth of one. `comm_speedup`
    replaces that m with a measured beta(m) / beta(1) (seed 001 sec. 3.1:
    one thread often cannot saturate the link, and more threads stop helping
    once it is saturated).
    """
    speedup = float(m) if comm_speedup is None else comm_speedup
    f_ov = f_comp_overlap(f_comm, f_comp_non)
    return 1.0 / (f_comp_non + max(f_comm / speedup, f_ov * n / (n - m)))


def eps_max(f_comp_non: float, n: int, m: int) -> float:
    """Upper bound of epsilon over f_comm, eq. (5).

    Reached when both terms of the max in eq. (3) are equal (no thread idles):
    eps_max = (1 + m (1 - 1/n)) / (1 + f_comp_non m (1 - 1/n)).
    """
    g = m * (1.0 - 1.0 / n)
    return (1.0 + g) / (1.0 + f_comp_non * g)


def f_comm_best(f_comp_non: float, n: int, m: int) -> float:
    """The f_comm at which eps_max is reached, eq. (6)."""
    return (1.0 - f_comp_non) / (1.0 + 1.0 / m - 1.0 / n)


def eps_min(f_comp_non: float, n: int, m: int) -> float:
    """Lower bound of epsilon over f_comm, eq. (9), reached at f_comm = 0.

    With nothing to communicate the m reserved threads only idle:
    eps_min = (1 - m/n) / (1 - f_comp_non m/n).
    """
    return (1.0 - m / n) / (1.0 - f_comp_non * m / n)


def f_comm_equiv(f_comp_non: float, n: int, m: int) -> float:
    """Break-even: epsilon = 1 at f_comm = (m/n)(1 - f_comp_non) (addendum 4)."""
    return (m / n) * (1.0 - f_comp_non)


def m_min(f_comm: float, f_comp_non: float) -> float:
    """Natural lower bound on m, seed 000 sec. 7.2.1: f_comm / (f_comp_overlap + f_comm).

    Zero when there is neither communication nor overlappable work.
    """
    denominator = f_comp_overlap(f_comm, f_comp_non) + f_comm
    return f_comm / denominator if denominator > 0.0 else 0.0


def epsilon_adaptive_bound(f_comm: float, f_comp_non: float, n: int) -> float:
    """Upper bound for the `adaptive` scheme: ideal dynamic load balancing.

    A model assumption of this package, not a formula of the papers (seed 000
    sec. 7.2 only names "full load balancing with different mixes of
    computation and communication on all threads" as an alternative to fixed
    reservation). One thread drives the exchange and takes interior tiles
    between polls. During the overlap phase the node has n threads; the
    work is f_comm (one thread's communication) plus n * f_comp_overlap
    (thread-seconds of overlappable computation), and the phase cannot end
    before the communication does:

        T_phase = max(f_comm, f_comp_overlap + f_comm / n)
        epsilon = 1 / (f_comp_non + T_phase)

    It ignores polling overhead and tile granularity, so it is >= 1 and >=
    the funneled value always: a bound, not a prediction.
    """
    f_ov = f_comp_overlap(f_comm, f_comp_non)
    return 1.0 / (f_comp_non + max(f_comm, f_ov + f_comm / n))


def epsilon_shared_window(f_comm: float, f_comp_non: float, n: int, inter_share: float,
                          intra_cost: float = 0.0) -> float:
    """Performance ratio T_masteronly / T_shared-window (this package's model;
    the papers predate MPI-3 shared memory). As funneled (m = 1: one thread
    exchanges while n - 1 compute the overlappable part), but only the
    inter-node share of the communication time is message time; an
    intra-node face is read from the neighbour's memory:

        f_sw    = f_comm * (inter_share + (1 - inter_share) * intra_cost)
        epsilon = 1 / (f_comp_non + max(f_sw, f_comp_overlap * n / (n - 1)))

    inter_share: the inter-node part of masteronly's communication time (the
    solve record's bytes_per_exchange inter/(intra + inter) is a proxy when the
    two links have similar latency; weight by Hockney fits otherwise).
    intra_cost: what an intra-node face still costs relative to a message (0:
    the ideal zero-copy of the issue; hympi's implementation packs each face
    and copies it out after a node barrier, measured on 16 cores at about the
    cost of a shared-memory message, i.e. intra_cost near 1).
    With n = 1 there is no overlap: epsilon = 1 / (f_comp_non +
    f_comp_overlap + f_sw). ValueError where nothing remains of the time
    (f_comm = 1, all of it intra-node, intra_cost 0): no finite ratio.
    """
    if not 0.0 <= inter_share <= 1.0 or intra_cost < 0.0:
        raise ValueError("inter_share must lie in [0, 1] and intra_cost be >= 0")
    f_ov = f_comp_overlap(f_comm, f_comp_non)
    f_sw = f_comm * (inter_share + (1.0 - inter_share) * intra_cost)
    left = f_comp_non + f_ov + f_sw if n < 2 else f_comp_non + max(f_sw, f_ov * n / (n - 1))
    if left <= 0.0:
        # All of masteronly's time was intra-node communication, which this
        # model makes free: no finite ratio (a user's app can report that).
        raise ValueError(f"no finite value: f_comm = {f_comm:.3g} is all intra-node "
                         f"(inter-node share {inter_share:.3g}) and nothing else remains")
    return 1.0 / left


def epsilon_partitioned(f_comm: float, f_comp_non: float, n: int,
                        async_progress: bool = True) -> float:
    """Performance ratio T_masteronly / T_partitioned (this package's model;
    MPI 4.0 partitioned communication postdates the papers). Every thread
    packs its partition of each face and marks it ready (MPI_Pready), then all
    n threads compute the overlappable part; no thread is reserved. Per-
    partition readiness lets the transfer start with the first partition, so
    with asynchronous progress (offload, or a library progress thread) the
    message time hides behind the computation:

        epsilon = 1 / (f_comp_non + max(f_comm, f_comp_overlap))

    Assumptions: packing is negligible against the transfer; the link is the
    same as masteronly's (one aggregated message per face). Without
    asynchronous progress the transfer advances only inside MPI calls (the
    MPI_Parrived polls after the interior), and epsilon falls to
    1 / (f_comp_non + f_comp_overlap + f_comm) = 1, masteronly's time.
    MPICH 4.0.2 sends a partitioned message only after its last MPI_Pready
    (docs/architecture.md): the start is no earlier than funneled's.
    """
    f_ov = f_comp_overlap(f_comm, f_comp_non)
    if not async_progress:
        return 1.0 / (f_comp_non + f_ov + f_comm)
    return 1.0 / (f_comp_non + max(f_comm, f_ov))


def summary(n: int, m: int, f_comp_non: float, f_comm: Optional[float] = None) -> dict[str, Optional[float]]:
    """All quantities of `hympi-lab model`, under the names the CLI prints.

    `epsilon`, `m_min` and `f_comp_overlap` need f_comm and are None without it.
    """
    return {
        "epsilon": None if f_comm is None else epsilon(f_comm, f_comp_non, n, m),
        "eps_max": eps_max(f_comp_non, n, m),
        "f_comm_best": f_comm_best(f_comp_non, n, m),
        "f_comm_equiv": f_comm_equiv(f_comp_non, n, m),
        "eps_min": eps_min(f_comp_non, n, m),
        "m_min": None if f_comm is None else m_min(f_comm, f_comp_non),
        "f_comp_overlap": None if f_comm is None else f_comp_overlap(f_comm, f_comp_non),
    }


# --- Kaiser & Baden, seed 002 sec. 4.2 ------------------------------------
# Normalised step time 1, communication share C, P threads; one thread is
# given an empty region and communicates while P - 1 threads compute. This is
# eq. (3) above with f_comp_non = 0, m = 1, n = P (T = 1 / epsilon).

def kb_time(c: float, p: int) -> float:
    """Run time with one communicating thread: T = max(C, P (1 - C) / (P - 1))."""
    return max(c, p * (1.0 - c) / (p - 1))


def kb_gain_possible(c: float, p: int) -> bool:
    """Overlap pays (T < 1) iff C > 1/P."""
    return c > 1.0 / p


def kb_c_best(p: int) -> float:
    """The C at which T is smallest: both terms equal, C = P / (2P - 1)."""
    return p / (2.0 * p - 1.0)


def kb_best_gain(p: int) -> float:
    """The largest speedup 1/T = (2P - 1) / P (15/8 for P = 8)."""
    return (2.0 * p - 1.0) / p


def kb_summary(c: float, p: int) -> dict[str, Union[float, bool]]:
    t = kb_time(c, p)
    return {
        "C": c,
        "P": p,
        "T": t,
        "gain": 1.0 / t,
        "gain_possible": kb_gain_possible(c, p),
        "threshold": 1.0 / p,
        "C_best": kb_c_best(p),
        "T_best": kb_c_best(p),  # at C_best both terms equal C_best
        "gain_best": kb_best_gain(p),
    }


# --- Communication time of hybrid masteronly vs pure MPI, seed 000 sec. 6 ---

def comm_time_ratio(b_ratio: float, s_ratio: float) -> float:
    """T_hybrid / T_MPP = (b_MPP / b_hybrid) / (s_MPP / s_hybrid).

    Time = bytes / bandwidth on each side; the pure-MPI (MPP) run moves
    s_MPP / s_hybrid times the bytes (intra-node messages too) at its own
    accumulated bandwidth.
    """
    return b_ratio / s_ratio


# --- Hockney message time, seed 000 Table 2 --------------------------------

@overload
def hockney_time(length: float, t_lat: float, b_inf: float) -> float: ...
@overload
def hockney_time(length: NDArray[np.float64], t_lat: float, b_inf: float) -> NDArray[np.float64]: ...


def hockney_time(length: ArrayLike, t_lat: float, b_inf: float) -> Union[float, NDArray[np.float64]]:
    """t(L) = T_lat + L / b_inf (seconds; L in bytes, b_inf in bytes/s)."""
    return _scalar_or_array(t_lat + np.asarray(length, dtype=float) / b_inf)


@overload
def hockney_bandwidth(length: float, t_lat: float, b_inf: float) -> float: ...
@overload
def hockney_bandwidth(length: NDArray[np.float64], t_lat: float, b_inf: float) -> NDArray[np.float64]: ...


def hockney_bandwidth(length: ArrayLike, t_lat: float, b_inf: float) -> Union[float, NDArray[np.float64]]:
    """b(L) = L / t(L) = b_inf / (1 + b_inf T_lat / L), bytes/s."""
    length_arr = np.asarray(length, dtype=float)
    return _scalar_or_array(b_inf / (1.0 + b_inf * t_lat / length_arr))


def hockney_n_half(t_lat: float, b_inf: float) -> float:
    """Message length that reaches half of b_inf: L = b_inf T_lat."""
    return b_inf * t_lat


def deep_halo_per_iteration(box: tuple[int, int, int], depth: int, t_lat: float, b_inf: float,
                            word: int = 8) -> dict[str, float]:
    """Halo exchange of an inner rank (a neighbour on all 26 sides) per
    iteration, with halos `depth` deep (temporal blocking, hympi solve
    --halo-depth): one exchange every `depth` iterations, each message costed
    by Hockney, T_lat + bytes / b_inf.

    depth 1: the 6 faces, one layer each. depth h > 1: the 6 faces h layers
    deep plus the 12 edges (h x h) and 8 corners (h x h x h) that later sweeps
    of the block read, 26 messages. Per iteration the latency term is
    26 T_lat / h (divided by h, against 6 T_lat at depth 1), and the byte
    term is the faces' (unchanged) plus the edges and corners over h.
    Returns {"latency_s", "bytes_s", "total_s", "messages", "bytes"}, the last
    two per exchange.
    """
    if depth < 1:
        raise ValueError(f"depth must be >= 1 (got {depth})")
    if min(box) < depth:
        raise ValueError(f"a box of {box} points is thinner than the halo depth {depth}")
    nx, ny, nz = box
    h = depth
    points = 2 * h * (ny * nz + nx * nz + nx * ny)
    messages = 6
    if h > 1:
        points += 4 * h * h * (nx + ny + nz) + 8 * h ** 3
        messages = 26
    nbytes = float(points * word)
    latency = messages * t_lat / h
    bandwidth = nbytes / b_inf / h
    return {"latency_s": latency, "bytes_s": bandwidth, "total_s": latency + bandwidth,
            "messages": float(messages), "bytes": nbytes}


# --- CPU cost of communication, seed 001 sec. 3.2 --------------------------
# beta(k): share of the node's full inter-node bandwidth that k concurrently
# communicating CPUs reach. t_full: communication time at full bandwidth
# (what pure MPI needs when all n CPUs communicate at once).

def cpu_seconds_masteronly(n: int, t_full: float, beta_1: float) -> float:
    """Masteronly: one thread communicates, all n CPUs are held: n T / beta(1)."""
    return n * t_full / beta_1


def cpu_seconds_overlap(k: int, t_full: float, beta_k: float) -> float:
    """k communicating CPUs, the others compute meanwhile: k T / beta(k)."""
    return k * t_full / beta_k


# --- Eq. (14): epsilon over the local depth, seed 000 sec. 7.2.2 -----------

@overload
def eq14_epsilon(nk_loc: float, comm_ratio: float, non_ratio: float, n: int, m: int) -> float: ...
@overload
def eq14_epsilon(nk_loc: NDArray[np.float64], comm_ratio: float, non_ratio: float, n: int,
                 m: ArrayLike) -> NDArray[np.float64]: ...


def eq14_epsilon(nk_loc: ArrayLike, comm_ratio: float, non_ratio: float,
                 n: int, m: ArrayLike) -> Union[float, NDArray[np.float64]]:
    """Seed 000 eq. (14) in ratio form (vectorised over nk_loc and m).

    Derivation. The spmv grid (ni x nj x nk) is split along k; each process
    holds nk_loc planes of ni*nj points. Per plane point, x_comm is the
    communication cost (the halo is one ni x nj plane per neighbour whatever
    nk_loc is), x_non and x_overlap the cost of the non-overlappable and
    overlappable computation. Eqs. (11)-(13) give the masteronly fractions

        f_comm         T_mo = x_comm    * ni nj
        f_comp_non     T_mo = x_non     * ni nj * nk_loc
        f_comp_overlap T_mo = x_overlap * ni nj * nk_loc

    so T_mo = ni nj (x_comm + (x_non + x_overlap) nk_loc) by eq. (1), and
    eq. (2), T_multiple = [f_comp_non + max(f_comm/m, f_comp_overlap n/(n-m))] T_mo,
    becomes ni nj (x_non nk_loc + max(x_comm/m, n/(n-m) x_overlap nk_loc)).
    Their ratio is eq. (14); ni nj cancels, and dividing through by
    x_overlap leaves two parameters, a = x_comm/x_overlap, b = x_non/x_overlap:

        epsilon(nk) = (a + (b + 1) nk) / (b nk + max(a/m, n/(n-m) nk))

    For nk < nk_peak = a (n-m) / (m n) communication dominates; at nk_peak
    no thread idles (eq. 4), so epsilon there is eps_max of eq. (5) for the
    f_comp_non of that nk. Beyond it epsilon falls, crossing 1 at
    nk_cross = a (n-m) / m (see `eq14_crossover`), towards eps_min of eq. (9)
    with f_comp_non = b / (1 + b) as nk grows and f_comm vanishes.
    The paper's Hitachi fit (a = 4.57, b = 1/6, n = 8, m = 1) gives
    nk_cross = 31.99, "the crossover-point epsilon = 1 at nk_loc = 32".
    """
    nk = np.asarray(nk_loc, dtype=float)
    ms = np.asarray(m, dtype=float)
    a, b = comm_ratio, non_ratio
    value = (a + (b + 1.0) * nk) / (b * nk + np.maximum(a / ms, n / (n - ms) * nk))
    return _scalar_or_array(value)


def eq14_crossover(comm_ratio: float, n: int, m: int) -> float:
    """nk_loc where eq. (14) gives epsilon = 1 (overlap-dominated branch).

    a + (b+1) nk = b nk + n/(n-m) nk  <=>  a = nk m/(n-m); b drops out. In the
    communication-dominated branch epsilon > 1 always (a >= a/m), so this is
    the only crossing.
    """
    return comm_ratio * (n - m) / m


def eq14_peak(comm_ratio: float, n: int, m: int) -> float:
    """nk_loc where both terms of the max in eq. (14) are equal."""
    return comm_ratio * (n - m) / (m * n)


def eq14_fractions(nk_loc: float, comm_ratio: float, non_ratio: float) -> tuple[float, float, float]:
    """(f_comm, f_comp_non, f_comp_overlap) of the masteronly run, eqs. (11)-(13)."""
    total = comm_ratio + (non_ratio + 1.0) * nk_loc
    return comm_ratio / total, non_ratio * nk_loc / total, nk_loc / total


def _scalar_or_array(value: NDArray[np.float64]) -> Union[float, NDArray[np.float64]]:
    return float(value) if value.ndim == 0 else value
