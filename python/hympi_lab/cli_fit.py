"""`hympi-lab fit eq14` and `fit hockney`: least-squares fits of the model to
measurements (CSV files or hympi result documents)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from . import fit as fit_mod, results
from .cli_args import Subparsers, add_family, add_json, non_negative, thread_count
from .cli_output import emit, table

_FILES_HELP = "CSV (.csv) or JSON result documents"


def add_fit(sub: Subparsers) -> None:
    """`fit eq14` and `fit hockney`."""
    add_family(sub, "fit", help="least-squares fits with 1-sigma uncertainties",
               description="Fit model parameters to measurements from CSV files or "
               "hympi result documents (JSON, schema_version 1).",
               dest="fit_command", metavar="MODEL", builders=(_add_fit_eq14, _add_fit_hockney))


def _add_fit_eq14(fsub: Subparsers) -> None:
    p = fsub.add_parser("eq14", help="x_comm/x_overlap and x_non/x_overlap from (nk_loc, epsilon)",
                        description="Fit eq. (14) to overlap points: CSV with columns nk_loc, "
                        "epsilon [, threads, reserved], or `hympi bench overlap` documents "
                        "(funneled and multiple points; median epsilon).")
    p.add_argument("files", nargs="+", metavar="FILE", help=_FILES_HELP)
    p.add_argument("--n", type=thread_count, help="threads: for CSV without a threads column, or to select")
    p.add_argument("--m", type=thread_count, help="reserved threads: for CSV without a reserved column, or to select")
    p.add_argument("--fix-non-ratio", type=non_negative, metavar="B",
                   help="hold x_non/x_overlap at B (the paper's spmv: 1/6 = 0.1667)")
    add_json(p)
    p.set_defaults(func=cmd_fit_eq14)


def _add_fit_hockney(fsub: Subparsers) -> None:
    p = fsub.add_parser("hockney", help="T_lat and b_inf from (bytes, time) points",
                        description="Fit t(L) = T_lat + L / b_inf: CSV with columns bytes, time_s "
                        "(or L, t) in bytes and seconds, or ping-pong records of result documents.")
    p.add_argument("files", nargs="+", metavar="FILE", help=_FILES_HELP)
    add_json(p)
    p.set_defaults(func=cmd_fit_hockney)


def _fit_rows(result: fit_mod.FitResult) -> list[tuple[str, Any, Any]]:
    return [(name, p.value, "(fixed)" if p.fixed else p.sigma) for name, p in result.params.items()]


def _fit_data(result: fit_mod.FitResult) -> dict[str, Any]:
    return {"model": result.model, "n_points": result.n_points, "dof": result.dof,
            "rms_residual": result.rms_residual, **result.setting,
            "params": {name: {"value": p.value, "sigma": p.sigma, "fixed": p.fixed}
                       for name, p in result.params.items()}}


def cmd_fit_eq14(args: argparse.Namespace, out: TextIO) -> int:
    points = results.eq14_points(args.files, args.n, args.m)
    result = fit_mod.fit_eq14(points.nk_loc, points.epsilon, points.n, points.m, args.fix_non_ratio)
    ms = ", ".join(str(x) for x in sorted(set(points.m.tolist())))
    text = table(f"eq. (14) fit (seed 000 sec. 7.2.2): {result.n_points} points, n = {points.n}, "
                 f"m = {ms}, rms residual {result.rms_residual:.3g}; sigma = 1 standard error",
                 ["parameter", "value", "sigma"], _fit_rows(result))
    emit(args, "fit eq14", _fit_data(result), text, out)
    return 0


def cmd_fit_hockney(args: argparse.Namespace, out: TextIO) -> int:
    lengths, times = results.hockney_points(args.files)
    result = fit_mod.fit_hockney(lengths, times)
    p = result.params
    rows = [("T_lat_us", p["T_lat"].value * 1e6, p["T_lat"].sigma * 1e6),
            ("b_inf_MBps", p["b_inf"].value / 1e6, p["b_inf"].sigma / 1e6),
            ("n_half_bytes", p["n_half"].value, p["n_half"].sigma)]
    text = table(f"Hockney fit t(L) = T_lat + L / b_inf: {result.n_points} points, "
                 f"relative weights; sigma = 1 standard error",
                 ["parameter", "value", "sigma"], rows)
    emit(args, "fit hockney", _fit_data(result), text, out)
    return 0
