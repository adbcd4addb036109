"""`hympi-lab model` and its sub-commands: the papers' equations evaluated for
given inputs (hockney, halo, ratio, cpu-seconds, eq14)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

import numpy as np

from . import model
from .cli_args import (Subparsers, UsageError, add_json, add_link, add_threads_reserved, beta_map,
                       beta_pair, check, finite, grid, message_size, non_negative, positive,
                       positive_int, thread_count)
from .cli_output import emit, table
from .errors import InputError


def add_model(sub: Subparsers) -> None:
    """`model` with its own flags (seed 000 eq. 3-9, Kaiser & Baden) and its sub-commands."""
    p = sub.add_parser("model", help="the papers' equations for given fractions",
                       description="Seed 000 sec. 7.2.1: epsilon = T_masteronly / T_multiple for "
                       "n threads with m reserved for communication, its bounds and break-even; "
                       "with --kb-c and --p the Kaiser & Baden view (seed 002 sec. 4.2). "
                       "Sub-commands: hockney, ratio, cpu-seconds, eq14, halo.")
    p.add_argument("--n", type=thread_count, help="threads per process (>= 2)")
    p.add_argument("--m", type=thread_count, help="threads reserved for communication (1 <= m < n)")
    p.add_argument("--f-comp-non", type=finite, metavar="X",
                   help="share of masteronly time in computation that cannot overlap")
    p.add_argument("--f-comm", type=finite, metavar="Y",
                   help="share of masteronly time in communication (f_comp_overlap = 1 - X - Y)")
    p.add_argument("--kb-c", type=finite, metavar="C", help="Kaiser & Baden: communication share C")
    p.add_argument("--p", type=thread_count, metavar="P", help="Kaiser & Baden: threads P")
    add_json(p)
    p.set_defaults(func=cmd_model)
    msub = p.add_subparsers(dest="model_command", metavar="SUBCOMMAND")
    for add in (_add_hockney, _add_ratio, _add_cpu_seconds, _add_eq14, _add_halo):
        add(msub)


# --- model ------------------------------------------------------------------

def _model_problems(args: argparse.Namespace, have_rw: list[bool], have_kb: list[bool]) -> list[str]:
    """Which of the two views the flags ask for, each given whole, and in range."""
    problems = []
    if not any(have_rw) and not any(have_kb):
        problems.append("model needs --n, --m and --f-comp-non (and/or --kb-c and --p)")
    if any(have_rw) and not all(have_rw):
        problems.append("model needs all of --n, --m and --f-comp-non")
    if args.f_comm is not None and not any(have_rw):
        problems.append("--f-comm needs --n, --m and --f-comp-non")
    if any(have_kb) and not all(have_kb):
        problems.append("the Kaiser & Baden view needs both --kb-c and --p")
    if all(have_rw):
        problems += model.fraction_problems(args.n, args.m, args.f_comp_non, args.f_comm)
    if all(have_kb):
        if not 0.0 <= args.kb_c <= 1.0:
            problems.append(f"--kb-c {args.kb_c:g} is out of range: accepted 0 .. 1")
        if args.p < 2:
            problems.append(f"--p must be at least 2 (got {args.p})")
    return problems


_EPSILON_NOTES = {
    "epsilon": "T_masteronly / T_multiple at --f-comm, eq. (3)",
    "eps_max": "upper bound, reached at f_comm_best, eq. (5)",
    "f_comm_best": "f_comm where no thread idles, eq. (6)",
    "f_comm_equiv": "break-even, epsilon = 1",
    "eps_min": "lower bound, at f_comm = 0, eq. (9)",
    "m_min": "natural lower bound on m",
    "f_comp_overlap": "1 - f_comm - f_comp_non, eq. (1)",
}


def _epsilon_view(args: argparse.Namespace, data: dict[str, Any]) -> str:
    """Seed 000 sec. 7.2.1 for --n, --m, --f-comp-non (and --f-comm): its table, its numbers into `data`."""
    summary = model.summary(args.n, args.m, args.f_comp_non, args.f_comm)
    data.update({"n": args.n, "m": args.m, "f_comp_non": args.f_comp_non,
                 "f_comm": args.f_comm, **summary})
    rows = [(k, summary[k], note) for k, note in _EPSILON_NOTES.items()]
    fc = "-" if args.f_comm is None else f"{args.f_comm:g}"
    return table(f"hympi-lab model (seed 000 sec. 7.2.1): n = {args.n}, m = {args.m}, "
                 f"f_comp_non = {args.f_comp_non:g}, f_comm = {fc}",
                 ["quantity", "value", "meaning"], rows)


def _kaiser_baden_view(args: argparse.Namespace, data: dict[str, Any]) -> str:
    """Seed 002 sec. 4.2 for --kb-c and --p: its table, its numbers into `data`."""
    kb = model.kb_summary(args.kb_c, args.p)
    data["kaiser_baden"] = kb
    rows = [
        ("T", kb["T"], "step time, one thread communicating (1 = no overlap)"),
        ("gain", kb["gain"], "1 / T"),
        ("gain_possible", kb["gain_possible"], f"C > 1/P = {kb['threshold']:.4f}"),
        ("C_best", kb["C_best"], "P / (2P - 1), where T is smallest"),
        ("gain_best", kb["gain_best"], "(2P - 1) / P"),
    ]
    return table(f"Kaiser & Baden (seed 002 sec. 4.2): C = {args.kb_c:g}, P = {args.p}",
                 ["quantity", "value", "meaning"], rows)


def cmd_model(args: argparse.Namespace, out: TextIO) -> int:
    have_rw = [x is not None for x in (args.n, args.m, args.f_comp_non)]
    have_kb = [x is not None for x in (args.kb_c, args.p)]
    check(_model_problems(args, have_rw, have_kb))
    data: dict[str, Any] = {}
    parts = []
    if all(have_rw):
        parts.append(_epsilon_view(args, data))
    if all(have_kb):
        parts.append(_kaiser_baden_view(args, data))
    emit(args, "model", data, "\n".join(parts), out)
    return 0


# --- model hockney ------------------------------------------------------------

def _add_hockney(msub: Subparsers) -> None:
    p = msub.add_parser("hockney", help="message time and bandwidth, t(L) = T_lat + L / b_inf",
                        description="Hockney model (seed 000 Table 2). Sizes in bytes or with a "
                        "unit: 10KiB = 10240 B (the paper's 10 kB), 1MB = 10^6 B.")
    add_link(p)
    p.add_argument("--bytes", type=message_size, nargs="+", required=True, metavar="SIZE",
                   help="message lengths")
    add_json(p)
    p.set_defaults(func=cmd_hockney)


def cmd_hockney(args: argparse.Namespace, out: TextIO) -> int:
    b_inf = args.b_inf_mbps * 1e6
    t_lat = args.t_lat_us * 1e-6
    points = [{"bytes": length,
               "time_s": model.hockney_time(length, t_lat, b_inf),
               "bandwidth_MBps": model.hockney_bandwidth(length, t_lat, b_inf) / 1e6}
              for length in args.bytes]
    n_half = model.hockney_n_half(t_lat, b_inf)
    data = {"b_inf_MBps": args.b_inf_mbps, "T_lat_s": t_lat, "n_half_bytes": n_half, "points": points}
    rows = [(p["bytes"], p["time_s"] * 1e6, p["bandwidth_MBps"]) for p in points]
    text = table(f"Hockney (seed 000 Table 2): t(L) = T_lat + L / b_inf, b_inf = {args.b_inf_mbps:g} MB/s, "
                 f"T_lat = {args.t_lat_us:g} us, half of b_inf at L = {n_half:.0f} B",
                 ["bytes", "time_us", "bandwidth_MBps"], rows)
    emit(args, "model hockney", data, text, out)
    return 0


# --- model halo ---------------------------------------------------------------

def _add_halo(msub: Subparsers) -> None:
    p = msub.add_parser("halo", help="halo exchange per iteration with halos D deep (temporal blocking)",
                        description="model.deep_halo_per_iteration: one exchange every D iterations of "
                        "6 faces (D = 1) or 26 faces, edges and corners D deep (D > 1); per "
                        "iteration the latency term is messages T_lat / D.")
    p.add_argument("--box", type=grid, required=True, metavar="NXxNYxNZ", help="a rank's local box")
    add_link(p)
    p.add_argument("--depth", type=positive_int, nargs="+", default=[1, 2, 4, 8], metavar="D",
                   help="halo depths (iterations per exchange; default 1 2 4 8)")
    add_json(p)
    p.set_defaults(func=cmd_halo)


def cmd_halo(args: argparse.Namespace, out: TextIO) -> int:
    t_lat = args.t_lat_us * 1e-6
    b_inf = args.b_inf_mbps * 1e6
    box = args.box
    rows_data = []
    for depth in args.depth:
        if depth > min(box):
            raise UsageError(f"--depth {depth} is deeper than the box {box[0]}x{box[1]}x{box[2]} "
                             f"(a halo comes from one neighbour: at most {min(box)})")
        rows_data.append({"depth": depth, **model.deep_halo_per_iteration(box, depth, t_lat, b_inf)})
    data = {"box": list(box), "T_lat_s": t_lat, "b_inf_MBps": args.b_inf_mbps, "depths": rows_data}
    rows = [(r["depth"], int(r["messages"]), int(r["bytes"]), r["latency_s"] * 1e6, r["bytes_s"] * 1e6,
             r["total_s"] * 1e6) for r in rows_data]
    text = table(f"Halo exchange per iteration of an inner rank, box {box[0]}x{box[1]}x{box[2]}, "
                 f"exchanged every depth iterations (hympi solve --halo-depth): Hockney T_lat = "
                 f"{args.t_lat_us:g} us, b_inf = {args.b_inf_mbps:g} MB/s",
                 ["depth", "messages", "bytes/exchange", "latency_us/iter", "bytes_us/iter",
                  "total_us/iter"], rows)
    emit(args, "model halo", data, text, out)
    return 0


# --- model ratio ----------------------------------------------------------------

def _add_ratio(msub: Subparsers) -> None:
    p = msub.add_parser("ratio", help="T_hybrid / T_MPP from bandwidth and byte ratios",
                        description="Seed 000 sec. 6: T_hybrid / T_MPP = (b_MPP / b_hybrid) / "
                        "(s_MPP / s_hybrid). Bandwidths are accumulated over all processes.")
    p.add_argument("--b-ratio", type=positive, help="measured b_MPP / b_hybrid")
    p.add_argument("--b-mpp", type=positive, metavar="B", help="pure-MPI bandwidth (any unit)")
    p.add_argument("--b-hybrid", type=positive, metavar="B", help="hybrid bandwidth (same unit)")
    p.add_argument("--s-ratio", type=positive, required=True,
                   help="bytes moved by pure MPI / bytes moved by hybrid (2 in the paper)")
    add_json(p)
    p.set_defaults(func=cmd_ratio)


def cmd_ratio(args: argparse.Namespace, out: TextIO) -> int:
    if args.b_ratio is not None and (args.b_mpp is not None or args.b_hybrid is not None):
        raise InputError("give either --b-ratio or --b-mpp with --b-hybrid, not both")
    if args.b_ratio is None:
        if args.b_mpp is None or args.b_hybrid is None:
            raise InputError("ratio needs --b-ratio, or both --b-mpp and --b-hybrid")
        b_ratio = args.b_mpp / args.b_hybrid
    else:
        b_ratio = args.b_ratio
    ratio = model.comm_time_ratio(b_ratio, args.s_ratio)
    data = {"b_ratio": b_ratio, "s_ratio": args.s_ratio, "T_hybrid_over_T_MPP": ratio}
    rows = [("b_MPP / b_hybrid", b_ratio), ("s_MPP / s_hybrid", args.s_ratio),
            ("T_hybrid / T_MPP", ratio)]
    verdict = "pure MPI communicates faster" if ratio > 1 else "hybrid masteronly communicates as fast or faster"
    text = table(f"communication time, hybrid masteronly vs pure MPI (seed 000 sec. 6): {verdict}",
                 ["quantity", "value"], rows)
    emit(args, "model ratio", data, text, out)
    return 0


# --- model cpu-seconds -------------------------------------------------------------

def _add_cpu_seconds(msub: Subparsers) -> None:
    p = msub.add_parser("cpu-seconds", help="CPU cost of communication, masteronly vs k CPUs",
                        description="Seed 001 sec. 3.2: masteronly holds all n CPUs for T / beta(1); "
                        "k communicating CPUs cost k T / beta(k) CPU-seconds while the others compute.")
    p.add_argument("--n", type=thread_count, required=True, help="CPUs (threads) per node")
    p.add_argument("--t-comm", type=positive, required=True, metavar="T",
                   help="communication time at the node's full bandwidth, seconds")
    p.add_argument("--beta", type=beta_pair, nargs="+", required=True, metavar="K=SHARE",
                   help="bandwidth share k CPUs reach, e.g. 1=0.28 4=0.883 (beta(1) required)")
    add_json(p)
    p.set_defaults(func=cmd_cpu_seconds)


def cmd_cpu_seconds(args: argparse.Namespace, out: TextIO) -> int:
    beta = beta_map(args.beta)
    assert beta is not None  # required argument
    problems = []
    if args.n < 2:
        problems.append(f"--n must be at least 2 (got {args.n})")
    if 1 not in beta:
        problems.append("beta(1) is needed: masteronly communicates with one CPU")
    too_many = sorted(k for k in beta if k > args.n)
    if too_many:
        problems.append(f"beta({too_many[0]}) names more CPUs than --n {args.n}")
    check(problems)
    masteronly = model.cpu_seconds_masteronly(args.n, args.t_comm, beta[1])
    pure = args.n * args.t_comm / beta.get(args.n, 1.0)
    rows = [("masteronly", 1, beta[1], masteronly)]
    rows += [("overlap", k, beta[k], model.cpu_seconds_overlap(k, args.t_comm, beta[k]))
             for k in sorted(beta)]
    data = {"n": args.n, "t_comm_s": args.t_comm, "pure_mpi_cpu_s": pure,
            "masteronly_cpu_s": masteronly,
            "overlap_cpu_s": {str(k): model.cpu_seconds_overlap(k, args.t_comm, beta[k]) for k in sorted(beta)}}
    text = table(f"CPU-seconds of communication (seed 001 sec. 3.2): n = {args.n}, "
                 f"{args.t_comm:g} s at full bandwidth = {pure:.4g} CPU-s with pure MPI",
                 ["style", "k", "beta(k)", "cpu_s"], rows)
    emit(args, "model cpu-seconds", data, text, out)
    return 0


# --- model eq14 -------------------------------------------------------------------

def _add_eq14(msub: Subparsers) -> None:
    p = msub.add_parser("eq14", help="epsilon over the local depth nk_loc, eq. (14)",
                        description="Seed 000 eq. (14): epsilon(nk_loc) = (a + (b+1) nk) / "
                        "(b nk + max(a/m, n/(n-m) nk)), a = x_comm/x_overlap, b = x_non/x_overlap.")
    p.add_argument("--comm-ratio", type=non_negative, required=True, metavar="A", help="x_comm / x_overlap")
    p.add_argument("--non-ratio", type=non_negative, required=True, metavar="B", help="x_non / x_overlap")
    add_threads_reserved(p, required=True)
    p.add_argument("--nk-loc", type=positive, nargs="+", metavar="K",
                   help="local depths to evaluate (default 1 2 4 ... 256)")
    add_json(p)
    p.set_defaults(func=cmd_eq14)


def cmd_eq14(args: argparse.Namespace, out: TextIO) -> int:
    check(model.fraction_problems(args.n, args.m, None, None))
    nks = args.nk_loc or [1, 2, 4, 8, 16, 32, 64, 128, 256]
    # Huge ratios or depths overflow to inf or nan: emit refuses those with
    # one message, so numpy's warnings would only add noise.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        values = [model.eq14_epsilon(nk, args.comm_ratio, args.non_ratio, args.n, args.m) for nk in nks]
        cross = model.eq14_crossover(args.comm_ratio, args.n, args.m)
        peak = model.eq14_peak(args.comm_ratio, args.n, args.m)
        # With no communication (a = 0) the peak sits at nk_loc = 0, where
        # eq. (14) is 0/0; epsilon is then the same at every nk_loc, so its
        # value at nk_loc = 1 is the limit.
        eps_peak = model.eq14_epsilon(peak if peak > 0 else 1.0, args.comm_ratio, args.non_ratio,
                                      args.n, args.m)
    data = {"comm_ratio": args.comm_ratio, "non_ratio": args.non_ratio, "n": args.n, "m": args.m,
            "nk_cross": cross, "nk_peak": peak, "eps_peak": eps_peak,
            "points": [{"nk_loc": nk, "epsilon": e} for nk, e in zip(nks, values)]}
    if args.comm_ratio > 0:
        summary = f"epsilon = 1 at nk_loc = {cross:.4g}, peak {eps_peak:.4f} at nk_loc = {peak:.4g}"
    else:  # no crossing and no peak: 'epsilon = 1 at nk_loc = 0' read as a result
        summary = (f"no communication: epsilon = {eps_peak:.4f} at every nk_loc (the {args.m} "
                   f"reserved thread(s) have nothing to overlap)")
    text = table(f"eq. (14) (seed 000 sec. 7.2.2): x_comm/x_overlap = {args.comm_ratio:g}, "
                 f"x_non/x_overlap = {args.non_ratio:g}, n = {args.n}, m = {args.m}; {summary}",
                 ["nk_loc", "epsilon"], [(f"{nk:g}", e) for nk, e in zip(nks, values)])
    emit(args, "model eq14", data, text, out)
    return 0
