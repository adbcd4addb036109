"""`hympi-lab advise`: rank masteronly, funneled and multiple by eq. (3) of
seed 000 from exactly one source of inputs, with its uncertainty."""

from __future__ import annotations

import argparse
from typing import Any, Sequence, TextIO

from . import advise as advise_mod, model, results
from .cli_args import (Subparsers, add_json, beta_map, beta_pair, check, finite, non_negative, positive,
                       thread_count)
from .cli_output import emit, table
from .errors import InputError


def add_advise(sub: Subparsers) -> None:
    """`advise`."""
    p = sub.add_parser("advise", help="recommend a scheme and the number of reserved threads",
                       description="Rank masteronly, funneled (m = 1) and multiple (m = 2..n-1) by "
                       "eq. (3) of seed 000. Inputs: measured fractions (--f-comm, --f-comp-non, "
                       "--n), eq. (14) ratios (--comm-ratio, --non-ratio, --nk-loc, --n), or result "
                       "documents (masteronly solve records; with --nk-loc, overlap benchmark "
                       "points fitted by eq. (14)). With uncertainties, says 'no clear winner' "
                       "when the ranking can flip within 1 sigma.")
    p.add_argument("files", nargs="*", metavar="FILE", help="hympi result documents (JSON)")
    p.add_argument("--n", type=thread_count, help="threads per process (selects records with documents)")
    p.add_argument("--f-comm", type=finite, metavar="X", help="measured communication share")
    p.add_argument("--f-comp-non", type=finite, metavar="Y", help="measured non-overlappable share")
    p.add_argument("--f-comm-err", type=non_negative, metavar="DX", help="1-sigma uncertainty of --f-comm")
    p.add_argument("--f-comp-non-err", type=non_negative, metavar="DY",
                   help="1-sigma uncertainty of --f-comp-non")
    p.add_argument("--comm-ratio", type=non_negative, metavar="A", help="eq. (14) x_comm / x_overlap")
    p.add_argument("--comm-ratio-err", type=non_negative, metavar="DA", help="1 sigma of A")
    p.add_argument("--non-ratio", type=non_negative, metavar="B", help="eq. (14) x_non / x_overlap")
    p.add_argument("--non-ratio-err", type=non_negative, metavar="DB", help="1 sigma of B")
    p.add_argument("--nk-loc", type=positive, metavar="K", help="local depth to advise for (eq. 14)")
    p.add_argument("--m-max", type=thread_count, metavar="K",
                   help="reserve at most K threads (e.g. the threads that saturate the link)")
    p.add_argument("--beta", type=beta_pair, nargs="+", metavar="K=SHARE",
                   help="bandwidth share k threads reach (seed 001 sec. 3.1); replaces the "
                   "model's f_comm/m by f_comm beta(1)/beta(m)")
    add_json(p)
    p.set_defaults(func=cmd_advise)


def _needs(route: str, flags: Sequence[tuple[str, Any]]) -> None:
    check([f"advise {route} needs {flag}" for flag, value in flags if value is None])


def _refuses(route: str, args: argparse.Namespace, names: Sequence[str]) -> None:
    """Flags that do not belong to the chosen source are an error, not ignored."""
    stray = ["--" + name.replace("_", "-") for name in names if getattr(args, name) is not None]
    if stray:
        raise InputError(f"advise {route} does not use {', '.join(stray)}")


def _advise_source(args: argparse.Namespace) -> advise_mod.AdviseInput:
    """The one source the flags name, checked for missing and stray flags."""
    ratios = args.comm_ratio is not None or args.non_ratio is not None
    fractions = args.f_comm is not None or args.f_comp_non is not None
    if sum([bool(args.files), ratios, fractions]) != 1:
        raise InputError("advise needs exactly one source: --f-comm with --f-comp-non, "
                         "or --comm-ratio with --non-ratio and --nk-loc, or result files")
    if fractions:
        route = "from fractions"
        _needs(route, [("--f-comm", args.f_comm), ("--f-comp-non", args.f_comp_non), ("--n", args.n)])
        _refuses(route, args, ["nk_loc", "comm_ratio_err", "non_ratio_err"])
        return advise_mod.from_fractions(args.n, args.f_comm, args.f_comp_non,
                                         args.f_comm_err or 0.0, args.f_comp_non_err or 0.0)
    if ratios:
        route = "from eq. (14) ratios"
        _needs(route, [("--comm-ratio", args.comm_ratio), ("--non-ratio", args.non_ratio),
                       ("--nk-loc", args.nk_loc), ("--n", args.n)])
        _refuses(route, args, ["f_comm_err", "f_comp_non_err"])
        return advise_mod.from_ratios(args.n, args.nk_loc, args.comm_ratio, args.non_ratio,
                                      args.comm_ratio_err or 0.0, args.non_ratio_err or 0.0)
    if args.nk_loc is not None:
        _refuses("from overlap points", args,
                 ["f_comm_err", "f_comp_non_err", "comm_ratio_err", "non_ratio_err"])
        return advise_mod.from_overlap_points(args.files, args.nk_loc, args.n)
    _refuses("from solve records", args, ["comm_ratio_err", "non_ratio_err"])
    return advise_mod.from_solve_records(results.load_documents(args.files), args.n,
                                         args.f_comm_err, args.f_comp_non_err)


def _advise_text(given: advise_mod.AdviseInput, result: advise_mod.Advice) -> str:
    """The ranking table, the bounds' notes and the recommendation."""
    rows: list[tuple[str, Any, float]] = [(c.scheme, c.m, c.epsilon) for c in result.ranking]
    rows.append(("adaptive (bound)", "-", result.adaptive_bound))
    rows.append(("partitioned (bound)", "-", result.partitioned_bound))
    if result.shared_window_bound is not None:
        rows.append(("shared-window (bound)", "-", result.shared_window_bound))
    if result.margin_range is None:
        uncertainty = "none given"
    else:
        low, high = result.margin_range
        uncertainty = f"within it the margin spans {low:.4f} .. {high:.4f}"
    return "\n".join([
        table(f"hympi-lab advise: n = {given.n}, f_comm = {given.f_comm:.4f}, "
              f"f_comp_non = {given.f_comp_non:.4f} (from {given.source}); uncertainty: {uncertainty}",
              ["scheme", "m", "epsilon"], rows),
        "# adaptive (bound): ideal load balancing, an upper bound that is not ranked",
        "# partitioned (bound): asynchronous progress assumed (without it: masteronly's time); not ranked",
        ("# shared-window (bound): zero-copy intra-node faces, inter-node share of the bytes "
         f"{result.inter_share:.2f}; with hympi's packed faces it is funneled's value; not ranked"
         if result.shared_window_bound is not None else
         "# shared-window: needs the inter-node share of the bytes (give masteronly solve records)"),
        f"recommendation: {result.verdict}",
    ])


def _advise_data(given: advise_mod.AdviseInput, result: advise_mod.Advice) -> dict[str, Any]:
    """The JSON record of `advise`."""
    return {
        "source": given.source, "n": given.n, "f_comm": given.f_comm, "f_comp_non": given.f_comp_non,
        "f_comp_overlap": model.f_comp_overlap(given.f_comm, given.f_comp_non),
        "f_comm_err": given.f_comm_err, "f_comp_non_err": given.f_comp_non_err,
        "ranking": [{"scheme": c.scheme, "m": c.m, "epsilon": c.epsilon} for c in result.ranking],
        "best": {"scheme": result.best.scheme, "m": result.best.m, "epsilon": result.best.epsilon},
        "runner_up": {"scheme": result.runner_up.scheme, "m": result.runner_up.m,
                      "epsilon": result.runner_up.epsilon},
        "margin": result.margin,
        "margin_range": list(result.margin_range) if result.margin_range else None,
        "clear_winner": result.clear_winner,
        "refused": list(result.refused),
        "verdict": result.verdict,
        "adaptive_bound": result.adaptive_bound,
        "partitioned_bound": result.partitioned_bound,
        "shared_window_bound": result.shared_window_bound,
        "inter_share": result.inter_share,
        "m_min": result.m_min,
    }


def cmd_advise(args: argparse.Namespace, out: TextIO) -> int:
    beta = beta_map(args.beta)
    given = _advise_source(args)
    result = advise_mod.advise_input(given, args.m_max, beta)
    emit(args, "advise", _advise_data(given, result), _advise_text(given, result), out)
    return 0
