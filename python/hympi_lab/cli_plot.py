"""`hympi-lab plot fig5` and `plot eq14`: the figures of seed 000. matplotlib
loads (through plotting) only when a figure is drawn."""

from __future__ import annotations

import argparse
from typing import TextIO

from . import fit as fit_mod, model, results
from .cli_args import Subparsers, add_family, add_outputs, add_threads_reserved, check, finite, non_negative
from .errors import InputError


def add_plot(sub: Subparsers) -> None:
    """`plot fig5` and `plot eq14`."""
    add_family(sub, "plot", help="figures as PNG or SVG",
               description="Figures of seed 000: fig5 (eq. 3 over f_comm) and eq14 "
               "(epsilon over nk_loc, with measured points).",
               dest="plot_command", metavar="FIGURE", builders=(_add_plot_fig5, _add_plot_eq14))


def _add_plot_fig5(psub: Subparsers) -> None:
    p = psub.add_parser("fig5", help="epsilon over f_comm for several f_comp_non (seed 000 Fig. 5)",
                        description="Seed 000 Fig. 5: epsilon (eq. 3) over f_comm for several "
                        "f_comp_non, with eps_max and eps_min marked.")
    add_threads_reserved(p, required=True)
    p.add_argument("--f-comp-non", type=finite, nargs="+", metavar="X",
                   help="one curve per value (default 0 0.1 0.2 0.4 0.6)")
    add_outputs(p)
    p.set_defaults(func=cmd_plot_fig5)


def _add_plot_eq14(psub: Subparsers) -> None:
    p = psub.add_parser("eq14", help="epsilon over nk_loc by eq. (14) with measured points",
                        description="Seed 000 Fig. 6: eq. (14) curve; --points adds measured "
                        "points (CSV or documents, as for fit eq14) and, without --comm-ratio "
                        "and --non-ratio, fits them first.")
    p.add_argument("--comm-ratio", type=non_negative, metavar="A", help="x_comm / x_overlap")
    p.add_argument("--non-ratio", type=non_negative, metavar="B", help="x_non / x_overlap")
    add_threads_reserved(p, required=False)
    p.add_argument("--points", nargs="+", metavar="FILE", help="measured points to show")
    add_outputs(p)
    p.set_defaults(func=cmd_plot_eq14)


def cmd_plot_fig5(args: argparse.Namespace, out: TextIO) -> int:
    values = args.f_comp_non or [0.0, 0.1, 0.2, 0.4, 0.6]
    problems = model.fraction_problems(args.n, args.m, None, None)
    problems += [f"--f-comp-non {v:g} is out of range: accepted 0 <= f < 1" for v in values
                 if not 0.0 <= v < 1.0]
    check(problems)
    from . import plotting  # matplotlib loads only when a plot is asked for

    plotting.check_outputs(args.output)
    plotting.fig5(args.n, args.m, values, args.output)
    print(f"wrote {', '.join(args.output)}", file=out)
    return 0


def cmd_plot_eq14(args: argparse.Namespace, out: TextIO) -> int:
    from . import plotting

    plotting.check_outputs(args.output)
    nk = eps = None
    a, b, n, m = args.comm_ratio, args.non_ratio, args.n, args.m
    if args.points:
        points = results.eq14_points(args.points, args.n, args.m)
        if len(set(points.m.tolist())) > 1:
            raise InputError("the points mix several --m; choose one with --m")
        nk, eps, n, m = points.nk_loc, points.epsilon, points.n, int(points.m[0])
        if a is None and b is None:
            fitted = fit_mod.fit_eq14(nk, eps, n, m)
            a, b = fitted.params["comm_ratio"].value, fitted.params["non_ratio"].value
    check([f"plot eq14 needs {flag}" for flag, v in
           (("--comm-ratio (or --points to fit)", a), ("--non-ratio (or --points to fit)", b),
            ("--n", n), ("--m", m)) if v is None])
    check(model.fraction_problems(n, m, None, None))
    plotting.eq14(a, b, n, m, args.output, nk, eps)
    print(f"wrote {', '.join(args.output)}", file=out)
    return 0
