"""The `hympi-lab` command line: parsing, validation, tables and JSON output.

Each subcommand is a function taking the parsed arguments and returning an
exit code. Bad input of any kind leaves through InputError or argparse and
becomes exit code 2 with one line on stderr; a traceback means a bug.
`study`, `report` and `trace` orchestrate and draw; their work lives in
study.py, report.py and trace.py.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import sys
from typing import Any, Callable, NoReturn, Optional, Sequence, TextIO

import numpy as np

from . import __version__, advise as advise_mod, fit as fit_mod, model, results
from .errors import InputError, OutputError

PROG = "hympi-lab"


class UsageError(Exception):
    """argparse's complaint, raised instead of printed so main() reports it in one line."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


# --- argument types: reject non-numbers and non-finite values early --------

def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def _positive(text: str) -> float:
    value = _finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return value


def _non_negative(text: str) -> float:
    value = _finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return value


# Ranges of the Hockney inputs. Outside them the model's arithmetic leaves
# the floats (1e-320 MB/s made every message time inf) and no link is like
# that: 1 B/s .. 1 PB/s, and up to 1000 s of latency.
MIN_MBPS, MAX_MBPS = 1e-6, 1e9
MAX_LATENCY_US = 1e9
MAX_BYTES = 1e18


def _bandwidth_mbps(text: str) -> float:
    value = _finite(text)
    if not MIN_MBPS <= value <= MAX_MBPS:
        raise argparse.ArgumentTypeError(
            f"a bandwidth must lie in {MIN_MBPS:g} .. {MAX_MBPS:g} MB/s (1 B/s .. 1 PB/s): {text!r}")
    return value


def _latency_us(text: str) -> float:
    value = _finite(text)
    if not 0.0 <= value <= MAX_LATENCY_US:
        raise argparse.ArgumentTypeError(
            f"a latency must lie in 0 .. {MAX_LATENCY_US:g} us (1000 s): {text!r}")
    return value


# Thread counts (--n, --m, --p, --m-max) beyond any node's: advise ranks
# n - 1 candidates over every uncertainty sample, and an int of hundreds of
# digits does not even convert to a float. The lower bounds are the model's
# (model.fraction_problems), with their own messages.
MAX_THREADS = 4096


def _threads(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value > MAX_THREADS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_THREADS} threads: {text!r}")
    if value < -MAX_THREADS:
        raise argparse.ArgumentTypeError(f"not a thread count: {text!r}")
    return value


_SIZE_UNITS = {"": 1, "B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3,
               "kB": 1000, "MB": 1000 ** 2, "GB": 1000 ** 3}


def _size(text: str) -> int:
    """Message length in bytes: 4096, 10KiB (binary), 1MB (10^6 B, SYSTEM.md units)."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z]*)\s*", text)
    if not match or match.group(2) not in _SIZE_UNITS:
        raise argparse.ArgumentTypeError(
            f"not a message size: {text!r} (bytes, or a number with B, KiB, MiB, GiB, kB, MB, GB)")
    value = float(match.group(1)) * _SIZE_UNITS[match.group(2)]
    # A size beyond 1 EB is a typo (and 400 digits overflow the float).
    if not value <= MAX_BYTES:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_BYTES:.0e} bytes: {text!r}")
    if value <= 0 or value != int(value):
        raise argparse.ArgumentTypeError(f"must be a whole number of bytes > 0: {text!r}")
    return int(value)


def _beta(text: str) -> tuple[int, float]:
    """K=V: k communicating CPUs reach the share V of the node's full bandwidth."""
    match = re.fullmatch(r"\s*([0-9]+)\s*=\s*(\S+)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"expected K=SHARE, e.g. 1=0.28, got {text!r}")
    k = int(match.group(1))
    share = _finite(match.group(2))
    if k < 1 or not (0.0 < share <= 1.0):
        raise argparse.ArgumentTypeError(f"need K >= 1 and 0 < SHARE <= 1, got {text!r}")
    return k, share


def _beta_map(pairs: Optional[Sequence[tuple[int, float]]]) -> Optional[dict[int, float]]:
    if pairs is None:
        return None
    result: dict[int, float] = {}
    for k, share in pairs:
        if k in result:
            raise InputError(f"beta({k}) given twice")
        result[k] = share
    return result


# --- output ----------------------------------------------------------------

def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(value)
    return f"{value:.{digits}g}" if abs(value) >= 1e5 or (0 < abs(value) < 1e-3) else f"{value:.{digits}f}"


def _table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """OSU-style: '#' comment lines, then fixed-width columns."""
    cells = [[_fmt(v) if not isinstance(v, str) else v for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = [f"# {title}", "# " + "  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    lines += ["  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines)


def _emit(args: argparse.Namespace, kind: str, data: dict[str, Any], text: str,
          out: TextIO) -> None:
    """The table on stdout, and/or the JSON document (--json PATH, or - for stdout only).

    The document has the native documents' shape (docs/json-schema.md): a
    `context` (results.tool_context) and a `results` list with one record,
    whose "kind" is the subcommand ("model", "model hockney", "fit eq14",
    "advise", ...), so results.load_document reads it back.
    """
    _require_finite(args, kind, data)
    document = {"context": results.tool_context(args.command_line, PROG),
                "results": [{"kind": kind, **data}]}
    # allow_nan=False: NaN and Infinity are not JSON; _require_finite has
    # refused them already, this keeps an invalid document from ever being written.
    encoded = json.dumps(document, indent=2, default=_json_default, allow_nan=False)
    if args.json == "-":
        print(encoded, file=out)
        return
    if args.json:  # first, so that a bad path fails before anything is printed
        # Atomic: a failed write (full disk, no permission) is OutputError
        # (exit 1), leaves no partial file and keeps an earlier good one; a
        # symbolic link is followed.
        results.write_atomic(args.json, encoded + "\n")
    print(text, file=out)


def _non_finite(value: Any, where: str) -> Optional[tuple[str, float]]:
    """The first number in `value` (nested dicts and lists) that is nan or
    infinite, with where it sits ("points[0].time_s"); None if all are finite."""
    if isinstance(value, dict):
        for key, item in value.items():
            found = _non_finite(item, f"{where}.{key}" if where else str(key))
            if found:
                return found
    elif isinstance(value, (list, tuple, np.ndarray)):
        for i, item in enumerate(value):
            found = _non_finite(item, f"{where}[{i}]")
            if found:
                return found
    elif isinstance(value, (float, np.floating)) and not math.isfinite(value):
        return where, float(value)
    return None


def _null_non_finite(value: Any) -> Any:
    """A copy of `value` (nested dicts and lists) with nan and inf as None."""
    if isinstance(value, dict):
        return {key: _null_non_finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_null_non_finite(item) for item in value]
    if isinstance(value, (float, np.floating)) and not math.isfinite(value):
        return None
    return value


def _require_finite(args: argparse.Namespace, kind: str, data: dict[str, Any]) -> None:
    """Refuse a result that is nan or infinite: the inputs are beyond what the
    model's floating-point arithmetic can evaluate, and printing "nan" (or
    writing Infinity, which is not JSON) would pass for an answer."""
    found = _non_finite(data, "")
    if found:
        where, value = found
        raise InputError(f"{kind}: {where} comes out as {value}, not a finite number: the inputs "
                         f"are out of the range the model can evaluate ({args.command_line})")


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="PATH",
                        help="also write the numbers as a JSON document; '-' writes only JSON to stdout")


def _add_outputs(parser: argparse.ArgumentParser, metavar: str = "PATH") -> None:
    parser.add_argument("-o", "--output", action="append", required=True, metavar=metavar,
                        help="file to write (.png or .svg); repeat for both")


def _check(problems: list[str]) -> None:
    if problems:
        raise InputError("; ".join(problems))


# --- model -----------------------------------------------------------------

def cmd_model(args: argparse.Namespace, out: TextIO) -> int:
    have_rw = [x is not None for x in (args.n, args.m, args.f_comp_non)]
    have_kb = [x is not None for x in (args.kb_c, args.p)]
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
            problems.append(f"--kb-c must lie in [0, 1] (got {args.kb_c:g})")
        if args.p < 2:
            problems.append(f"--p must be at least 2 (got {args.p})")
    _check(problems)

    data: dict[str, Any] = {}
    parts = []
    if all(have_rw):
        summary = model.summary(args.n, args.m, args.f_comp_non, args.f_comm)
        data.update({"n": args.n, "m": args.m, "f_comp_non": args.f_comp_non,
                     "f_comm": args.f_comm, **summary})
        notes = {
            "epsilon": "T_masteronly / T_multiple at --f-comm, eq. (3)",
            "eps_max": "upper bound, reached at f_comm_best, eq. (5)",
            "f_comm_best": "f_comm where no thread idles, eq. (6)",
            "f_comm_equiv": "break-even, epsilon = 1",
            "eps_min": "lower bound, at f_comm = 0, eq. (9)",
            "m_min": "natural lower bound on m",
            "f_comp_overlap": "1 - f_comm - f_comp_non, eq. (1)",
        }
        rows = [(k, summary[k], notes[k]) for k in notes]
        fc = "-" if args.f_comm is None else f"{args.f_comm:g}"
        parts.append(_table(f"hympi-lab model (seed 000 sec. 7.2.1): n = {args.n}, m = {args.m}, "
                            f"f_comp_non = {args.f_comp_non:g}, f_comm = {fc}",
                            ["quantity", "value", "meaning"], rows))
    if all(have_kb):
        kb = model.kb_summary(args.kb_c, args.p)
        data["kaiser_baden"] = kb
        rows = [
            ("T", kb["T"], "step time, one thread communicating (1 = no overlap)"),
            ("gain", kb["gain"], "1 / T"),
            ("gain_possible", kb["gain_possible"], f"C > 1/P = {kb['threshold']:.4f}"),
            ("C_best", kb["C_best"], "P / (2P - 1), where T is smallest"),
            ("gain_best", kb["gain_best"], "(2P - 1) / P"),
        ]
        parts.append(_table(f"Kaiser & Baden (seed 002 sec. 4.2): C = {args.kb_c:g}, P = {args.p}",
                            ["quantity", "value", "meaning"], rows))
    _emit(args, "model", data, "\n".join(parts), out)
    return 0


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
    text = _table(f"Hockney (seed 000 Table 2): t(L) = T_lat + L / b_inf, b_inf = {args.b_inf_mbps:g} MB/s, "
                  f"T_lat = {args.t_lat_us:g} us, half of b_inf at L = {n_half:.0f} B",
                  ["bytes", "time_us", "bandwidth_MBps"], rows)
    _emit(args, "model hockney", data, text, out)
    return 0


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
    text = _table(f"communication time, hybrid masteronly vs pure MPI (seed 000 sec. 6): {verdict}",
                  ["quantity", "value"], rows)
    _emit(args, "model ratio", data, text, out)
    return 0


def cmd_cpu_seconds(args: argparse.Namespace, out: TextIO) -> int:
    beta = _beta_map(args.beta)
    assert beta is not None  # required argument
    problems = []
    if args.n < 2:
        problems.append(f"--n must be at least 2 (got {args.n})")
    if 1 not in beta:
        problems.append("beta(1) is needed: masteronly communicates with one CPU")
    too_many = sorted(k for k in beta if k > args.n)
    if too_many:
        problems.append(f"beta({too_many[0]}) names more CPUs than --n {args.n}")
    _check(problems)
    masteronly = model.cpu_seconds_masteronly(args.n, args.t_comm, beta[1])
    pure = args.n * args.t_comm / beta.get(args.n, 1.0)
    rows = [("masteronly", 1, beta[1], masteronly)]
    rows += [("overlap", k, beta[k], model.cpu_seconds_overlap(k, args.t_comm, beta[k]))
             for k in sorted(beta)]
    data = {"n": args.n, "t_comm_s": args.t_comm, "pure_mpi_cpu_s": pure,
            "masteronly_cpu_s": masteronly,
            "overlap_cpu_s": {str(k): model.cpu_seconds_overlap(k, args.t_comm, beta[k]) for k in sorted(beta)}}
    text = _table(f"CPU-seconds of communication (seed 001 sec. 3.2): n = {args.n}, "
                  f"{args.t_comm:g} s at full bandwidth = {pure:.4g} CPU-s with pure MPI",
                  ["style", "k", "beta(k)", "cpu_s"], rows)
    _emit(args, "model cpu-seconds", data, text, out)
    return 0


def cmd_eq14(args: argparse.Namespace, out: TextIO) -> int:
    _check(model.fraction_problems(args.n, args.m, None, None))
    nks = args.nk_loc or [1, 2, 4, 8, 16, 32, 64, 128, 256]
    # Huge ratios or depths overflow to inf or nan: _emit refuses those with
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
    text = _table(f"eq. (14) (seed 000 sec. 7.2.2): x_comm/x_overlap = {args.comm_ratio:g}, "
                  f"x_non/x_overlap = {args.non_ratio:g}, n = {args.n}, m = {args.m}; {summary}",
                  ["nk_loc", "epsilon"], [(f"{nk:g}", e) for nk, e in zip(nks, values)])
    _emit(args, "model eq14", data, text, out)
    return 0


# --- fit -------------------------------------------------------------------

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
    text = _table(f"eq. (14) fit (seed 000 sec. 7.2.2): {result.n_points} points, n = {points.n}, "
                  f"m = {ms}, rms residual {result.rms_residual:.3g}; sigma = 1 standard error",
                  ["parameter", "value", "sigma"], _fit_rows(result))
    _emit(args, "fit eq14", _fit_data(result), text, out)
    return 0


def cmd_fit_hockney(args: argparse.Namespace, out: TextIO) -> int:
    lengths, times = results.hockney_points(args.files)
    result = fit_mod.fit_hockney(lengths, times)
    p = result.params
    rows = [("T_lat_us", p["T_lat"].value * 1e6, p["T_lat"].sigma * 1e6),
            ("b_inf_MBps", p["b_inf"].value / 1e6, p["b_inf"].sigma / 1e6),
            ("n_half_bytes", p["n_half"].value, p["n_half"].sigma)]
    text = _table(f"Hockney fit t(L) = T_lat + L / b_inf: {result.n_points} points, "
                  f"relative weights; sigma = 1 standard error",
                  ["parameter", "value", "sigma"], rows)
    _emit(args, "fit hockney", _fit_data(result), text, out)
    return 0


# --- advise ----------------------------------------------------------------

def _needs(route: str, flags: Sequence[tuple[str, Any]]) -> None:
    _check([f"advise {route} needs {flag}" for flag, value in flags if value is None])


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


def cmd_advise(args: argparse.Namespace, out: TextIO) -> int:
    beta = _beta_map(args.beta)
    given = _advise_source(args)
    n, f_comm, f_non, source = given.n, given.f_comm, given.f_comp_non, given.source
    result = advise_mod.advise_input(given, args.m_max, beta)
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
    text = "\n".join([
        _table(f"hympi-lab advise: n = {n}, f_comm = {f_comm:.4f}, f_comp_non = {f_non:.4f} "
               f"(from {source}); uncertainty: {uncertainty}",
               ["scheme", "m", "epsilon"], rows),
        "# adaptive (bound): ideal load balancing, an upper bound that is not ranked",
        "# partitioned (bound): asynchronous progress assumed (without it: masteronly's time); not ranked",
        ("# shared-window (bound): zero-copy intra-node faces, inter-node share of the bytes "
         f"{result.inter_share:.2f}; with hympi's packed faces it is funneled's value; not ranked"
         if result.shared_window_bound is not None else
         "# shared-window: needs the inter-node share of the bytes (give masteronly solve records)"),
        f"recommendation: {result.verdict}",
    ])
    data = {
        "source": source, "n": n, "f_comm": f_comm, "f_comp_non": f_non,
        "f_comp_overlap": model.f_comp_overlap(f_comm, f_non),
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
    _emit(args, "advise", data, text, out)
    return 0


# --- plot ------------------------------------------------------------------

def cmd_plot_fig5(args: argparse.Namespace, out: TextIO) -> int:
    values = args.f_comp_non or [0.0, 0.1, 0.2, 0.4, 0.6]
    problems = model.fraction_problems(args.n, args.m, None, None)
    problems += [f"--f-comp-non must lie in [0, 1) (got {v:g})" for v in values if not 0.0 <= v < 1.0]
    _check(problems)
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
    _check([f"plot eq14 needs {flag}" for flag, v in
            (("--comm-ratio (or --points to fit)", a), ("--non-ratio (or --points to fit)", b),
             ("--n", n), ("--m", m)) if v is None])
    _check(model.fraction_problems(n, m, None, None))
    plotting.eq14(a, b, n, m, args.output, nk, eps)
    print(f"wrote {', '.join(args.output)}", file=out)
    return 0


# --- study, report, trace ----------------------------------------------------

def cmd_study(args: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path

    from . import report, study as study_mod

    if args.resume:
        if any(v for v in (args.out, args.ranks, args.threads, args.hostfile, args.emulated_nodes,
                           args.launcher, args.mpi, args.quick, args.full, args.steps, args.kernels,
                           args.app, args.app_name)):
            raise InputError("--resume DIR continues a study with the options it was started "
                             "with; give no other study options")
        outdir = Path(args.resume)
        opts = study_mod.StudyOptions()
    else:
        stamp = study_mod.now_iso().replace(":", "").replace("-", "")
        outdir = Path(args.out or f"results/study-{stamp}")
        opts = study_mod.StudyOptions(
            level="quick" if args.quick else "full" if args.full else "default",
            mpi=args.mpi or "openmpi", launcher=args.launcher or "", hympi=args.hympi or "",
            hostfile=args.hostfile or "", ranks=args.ranks or 0, threads=args.threads or 0,
            emulated_nodes=args.emulated_nodes or 0, link=args.link,
            steps=_csv_list(args.steps) if args.steps else list(study_mod.STEPS),
            # With --app the study measures the user's program; the built-in
            # kernels run only when asked for.
            kernels=(_csv_list(args.kernels) if args.kernels
                     else [] if args.app else list(study_mod.KERNELS)),
            run_timeout_s=args.run_timeout or 0.0,
            app=args.app or "", app_name=args.app_name or "")
        if args.hostfile and not os.path.isfile(args.hostfile):
            raise InputError(f"--hostfile {args.hostfile}: no such file")
    if args.hympi:
        opts.hympi = args.hympi
    return study_mod.run_study(opts, outdir, bool(args.resume), out,
                               write_report=None if args.no_report else report.write_report)


def _csv_list(text: str) -> list[str]:
    return [w.strip() for w in text.split(",") if w.strip()]


def cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    from . import report

    outdir = report.check_study_dir(args.dir)
    verdict = report.write_report(outdir)
    print(f"wrote {outdir / 'report.html'} and {outdir / 'results.csv'}\n{verdict}", file=out)
    return 0


def cmd_trace(args: argparse.Namespace, out: TextIO) -> int:
    from . import plotting, trace

    plotting.check_outputs(args.output)
    tr = trace.load_trace(args.path)
    plotting.gantt(tr, args.output, max_ranks=args.max_ranks)
    share = trace.busy_share(tr)
    print(f"{tr.title}: " + ", ".join(f"{k} {v * 100:.0f} %" for k, v in sorted(share.items())),
          file=out)
    print(f"wrote {', '.join(args.output)}", file=out)
    return 0


def _grid(text: str) -> tuple[int, int, int]:
    """NXxNYxNZ or N^3, as hympi solve --grid."""
    t = text.strip().lower()
    parts = [t[:-2]] * 3 if t.endswith("^3") else t.split("x")
    try:
        dims = [int(p) for p in parts]
    except ValueError:
        dims = []
    if len(dims) != 3:
        raise argparse.ArgumentTypeError(f"expected NXxNYxNZ or N^3 (e.g. 512x512x256, 256^3), got {text!r}")
    if min(dims) < 1 or max(dims) > 1 << 30:
        raise argparse.ArgumentTypeError(f"every grid dimension must lie in 1..{1 << 30} (got {text!r})")
    return dims[0], dims[1], dims[2]


def cmd_project(args: argparse.Namespace, out: TextIO) -> int:
    from . import project
    from .report import check_study_dir

    outdir = check_study_dir(args.dir)
    if args.output:
        from . import plotting  # matplotlib loads only when a plot is asked for
        plotting.check_outputs(args.output)
    inputs = project.load_inputs(outdir)
    req = project.default_request(inputs)
    # The study's node shape, with what was given replacing its part. Cores
    # follow from ranks x threads unless given; given, a missing count follows
    # from it (request_problems refuses a shape where they do not multiply).
    ranks = args.ranks or req.shape.ranks
    threads = args.threads or req.shape.threads
    cores = args.cores_per_node or ranks * threads
    if args.cores_per_node and not (args.ranks and args.threads):
        if args.ranks:
            threads = max(1, cores // ranks)
        else:
            ranks = max(1, cores // threads)
    req = project.Request(args.kernel or req.kernels, project.Shape(cores, ranks, threads),
                          args.grid or req.grid,
                          ["weak", "strong"] if args.scaling == "both" else [args.scaling],
                          args.max_nodes, args.samples)
    doc = project.document(inputs, req)
    if args.output:
        plotting.projection(doc, args.output)
    text = project.text(doc)
    if args.output:
        text += "\nwrote " + ", ".join(args.output)
    # The projection marks what it cannot predict as null (project._clean);
    # a parameter it reports as inf (a sigma no fit could bound) goes the
    # same way, rather than refusing the whole projection.
    _emit(args, "project", _null_non_finite(doc), text, out)
    return 0


def _int_in(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number in lo..hi, refused before any file is read."""
    def parse(text: str) -> int:
        value = _positive_int(text)
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must lie in {lo}..{hi} (got {text!r})")
        return value
    return parse


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1: {text!r}")
    return value


# --- parser: one function per (sub-)command --------------------------------

Subparsers = argparse._SubParsersAction  # what add_subparsers returns


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
    text = _table(f"Halo exchange per iteration of an inner rank, box {box[0]}x{box[1]}x{box[2]}, "
                  f"exchanged every depth iterations (hympi solve --halo-depth): Hockney T_lat = "
                  f"{args.t_lat_us:g} us, b_inf = {args.b_inf_mbps:g} MB/s",
                  ["depth", "messages", "bytes/exchange", "latency_us/iter", "bytes_us/iter",
                   "total_us/iter"], rows)
    _emit(args, "model halo", data, text, out)
    return 0


def _add_model(sub: Subparsers) -> None:
    """`model` with its own flags (seed 000 eq. 3-9, Kaiser & Baden) and its sub-commands."""
    p = sub.add_parser("model", help="the papers' equations for given fractions",
                       description="Seed 000 sec. 7.2.1: epsilon = T_masteronly / T_multiple for "
                       "n threads with m reserved for communication, its bounds and break-even; "
                       "with --kb-c and --p the Kaiser & Baden view (seed 002 sec. 4.2). "
                       "Sub-commands: hockney, ratio, cpu-seconds, eq14, halo.")
    p.add_argument("--n", type=_threads, help="threads per process (>= 2)")
    p.add_argument("--m", type=_threads, help="threads reserved for communication (1 <= m < n)")
    p.add_argument("--f-comp-non", type=_finite, metavar="X",
                   help="share of masteronly time in computation that cannot overlap")
    p.add_argument("--f-comm", type=_finite, metavar="Y",
                   help="share of masteronly time in communication (f_comp_overlap = 1 - X - Y)")
    p.add_argument("--kb-c", type=_finite, metavar="C", help="Kaiser & Baden: communication share C")
    p.add_argument("--p", type=_threads, metavar="P", help="Kaiser & Baden: threads P")
    _add_json(p)
    p.set_defaults(func=cmd_model)
    msub = p.add_subparsers(dest="model_command", metavar="SUBCOMMAND")
    for add in (_add_model_hockney, _add_model_ratio, _add_model_cpu_seconds, _add_model_eq14,
                _add_model_halo):
        add(msub)


def _add_model_hockney(msub: Subparsers) -> None:
    """`model hockney`."""
    p = msub.add_parser("hockney", help="message time and bandwidth, t(L) = T_lat + L / b_inf",
                        description="Hockney model (seed 000 Table 2). Sizes in bytes or with a "
                        "unit: 10KiB = 10240 B (the paper's 10 kB), 1MB = 10^6 B.")
    p.add_argument("--b-inf-mbps", type=_bandwidth_mbps, required=True, metavar="MBPS",
                   help="asymptotic bandwidth in MB/s (10^6 B/s)")
    p.add_argument("--t-lat-us", type=_latency_us, required=True, metavar="US",
                   help="latency in microseconds")
    p.add_argument("--bytes", type=_size, nargs="+", required=True, metavar="SIZE",
                   help="message lengths")
    _add_json(p)
    p.set_defaults(func=cmd_hockney)


def _add_model_halo(msub: Subparsers) -> None:
    """`model halo`."""
    p = msub.add_parser("halo", help="halo exchange per iteration with halos D deep (temporal blocking)",
                        description="model.deep_halo_per_iteration: one exchange every D iterations of "
                        "6 faces (D = 1) or 26 faces, edges and corners D deep (D > 1); per "
                        "iteration the latency term is messages T_lat / D.")
    p.add_argument("--box", type=_grid, required=True, metavar="NXxNYxNZ", help="a rank's local box")
    p.add_argument("--b-inf-mbps", type=_bandwidth_mbps, required=True, metavar="MBPS",
                   help="asymptotic bandwidth in MB/s (10^6 B/s)")
    p.add_argument("--t-lat-us", type=_latency_us, required=True, metavar="US",
                   help="latency in microseconds")
    p.add_argument("--depth", type=_positive_int, nargs="+", default=[1, 2, 4, 8], metavar="D",
                   help="halo depths (iterations per exchange; default 1 2 4 8)")
    _add_json(p)
    p.set_defaults(func=cmd_halo)


def _add_model_ratio(msub: Subparsers) -> None:
    """`model ratio`."""
    p = msub.add_parser("ratio", help="T_hybrid / T_MPP from bandwidth and byte ratios",
                        description="Seed 000 sec. 6: T_hybrid / T_MPP = (b_MPP / b_hybrid) / "
                        "(s_MPP / s_hybrid). Bandwidths are accumulated over all processes.")
    p.add_argument("--b-ratio", type=_positive, help="measured b_MPP / b_hybrid")
    p.add_argument("--b-mpp", type=_positive, metavar="B", help="pure-MPI bandwidth (any unit)")
    p.add_argument("--b-hybrid", type=_positive, metavar="B", help="hybrid bandwidth (same unit)")
    p.add_argument("--s-ratio", type=_positive, required=True,
                   help="bytes moved by pure MPI / bytes moved by hybrid (2 in the paper)")
    _add_json(p)
    p.set_defaults(func=cmd_ratio)


def _add_model_cpu_seconds(msub: Subparsers) -> None:
    """`model cpu-seconds`."""
    p = msub.add_parser("cpu-seconds", help="CPU cost of communication, masteronly vs k CPUs",
                        description="Seed 001 sec. 3.2: masteronly holds all n CPUs for T / beta(1); "
                        "k communicating CPUs cost k T / beta(k) CPU-seconds while the others compute.")
    p.add_argument("--n", type=_threads, required=True, help="CPUs (threads) per node")
    p.add_argument("--t-comm", type=_positive, required=True, metavar="T",
                   help="communication time at the node's full bandwidth, seconds")
    p.add_argument("--beta", type=_beta, nargs="+", required=True, metavar="K=SHARE",
                   help="bandwidth share k CPUs reach, e.g. 1=0.28 4=0.883 (beta(1) required)")
    _add_json(p)
    p.set_defaults(func=cmd_cpu_seconds)


def _add_model_eq14(msub: Subparsers) -> None:
    """`model eq14`."""
    p = msub.add_parser("eq14", help="epsilon over the local depth nk_loc, eq. (14)",
                        description="Seed 000 eq. (14): epsilon(nk_loc) = (a + (b+1) nk) / "
                        "(b nk + max(a/m, n/(n-m) nk)), a = x_comm/x_overlap, b = x_non/x_overlap.")
    p.add_argument("--comm-ratio", type=_non_negative, required=True, metavar="A", help="x_comm / x_overlap")
    p.add_argument("--non-ratio", type=_non_negative, required=True, metavar="B", help="x_non / x_overlap")
    p.add_argument("--n", type=_threads, required=True, help="threads per process")
    p.add_argument("--m", type=_threads, required=True, help="reserved threads")
    p.add_argument("--nk-loc", type=_positive, nargs="+", metavar="K",
                   help="local depths to evaluate (default 1 2 4 ... 256)")
    _add_json(p)
    p.set_defaults(func=cmd_eq14)


def _add_fit(sub: Subparsers) -> None:
    """`fit eq14` and `fit hockney`."""
    p = sub.add_parser("fit", help="least-squares fits with 1-sigma uncertainties",
                       description="Fit model parameters to measurements from CSV files or "
                       "hympi result documents (JSON, schema_version 1).")
    fsub = p.add_subparsers(dest="fit_command", required=True, metavar="MODEL")
    _add_fit_eq14(fsub)
    _add_fit_hockney(fsub)


def _add_fit_eq14(fsub: Subparsers) -> None:
    """`fit eq14`."""
    p = fsub.add_parser("eq14", help="x_comm/x_overlap and x_non/x_overlap from (nk_loc, epsilon)",
                        description="Fit eq. (14) to overlap points: CSV with columns nk_loc, "
                        "epsilon [, threads, reserved], or `hympi bench overlap` documents "
                        "(funneled and multiple points; median epsilon).")
    p.add_argument("files", nargs="+", metavar="FILE", help="CSV (.csv) or JSON result documents")
    p.add_argument("--n", type=_threads, help="threads: for CSV without a threads column, or to select")
    p.add_argument("--m", type=_threads, help="reserved threads: for CSV without a reserved column, or to select")
    p.add_argument("--fix-non-ratio", type=_non_negative, metavar="B",
                   help="hold x_non/x_overlap at B (the paper's spmv: 1/6 = 0.1667)")
    _add_json(p)
    p.set_defaults(func=cmd_fit_eq14)


def _add_fit_hockney(fsub: Subparsers) -> None:
    """`fit hockney`."""
    p = fsub.add_parser("hockney", help="T_lat and b_inf from (bytes, time) points",
                        description="Fit t(L) = T_lat + L / b_inf: CSV with columns bytes, time_s "
                        "(or L, t) in bytes and seconds, or ping-pong records of result documents.")
    p.add_argument("files", nargs="+", metavar="FILE", help="CSV (.csv) or JSON result documents")
    _add_json(p)
    p.set_defaults(func=cmd_fit_hockney)


def _add_advise(sub: Subparsers) -> None:
    """`advise`."""
    p = sub.add_parser("advise", help="recommend a scheme and the number of reserved threads",
                       description="Rank masteronly, funneled (m = 1) and multiple (m = 2..n-1) by "
                       "eq. (3) of seed 000. Inputs: measured fractions (--f-comm, --f-comp-non, "
                       "--n), eq. (14) ratios (--comm-ratio, --non-ratio, --nk-loc, --n), or result "
                       "documents (masteronly solve records; with --nk-loc, overlap benchmark "
                       "points fitted by eq. (14)). With uncertainties, says 'no clear winner' "
                       "when the ranking can flip within 1 sigma.")
    p.add_argument("files", nargs="*", metavar="FILE", help="hympi result documents (JSON)")
    p.add_argument("--n", type=_threads, help="threads per process (selects records with documents)")
    p.add_argument("--f-comm", type=_finite, metavar="X", help="measured communication share")
    p.add_argument("--f-comp-non", type=_finite, metavar="Y", help="measured non-overlappable share")
    p.add_argument("--f-comm-err", type=_non_negative, metavar="DX", help="1-sigma uncertainty of --f-comm")
    p.add_argument("--f-comp-non-err", type=_non_negative, metavar="DY",
                   help="1-sigma uncertainty of --f-comp-non")
    p.add_argument("--comm-ratio", type=_non_negative, metavar="A", help="eq. (14) x_comm / x_overlap")
    p.add_argument("--comm-ratio-err", type=_non_negative, metavar="DA", help="1 sigma of A")
    p.add_argument("--non-ratio", type=_non_negative, metavar="B", help="eq. (14) x_non / x_overlap")
    p.add_argument("--non-ratio-err", type=_non_negative, metavar="DB", help="1 sigma of B")
    p.add_argument("--nk-loc", type=_positive, metavar="K", help="local depth to advise for (eq. 14)")
    p.add_argument("--m-max", type=_threads, metavar="K",
                   help="reserve at most K threads (e.g. the threads that saturate the link)")
    p.add_argument("--beta", type=_beta, nargs="+", metavar="K=SHARE",
                   help="bandwidth share k threads reach (seed 001 sec. 3.1); replaces the "
                   "model's f_comm/m by f_comm beta(1)/beta(m)")
    _add_json(p)
    p.set_defaults(func=cmd_advise)


def _add_plot(sub: Subparsers) -> None:
    """`plot fig5` and `plot eq14`."""
    p = sub.add_parser("plot", help="figures as PNG or SVG",
                       description="Figures of seed 000: fig5 (eq. 3 over f_comm) and eq14 "
                       "(epsilon over nk_loc, with measured points).")
    psub = p.add_subparsers(dest="plot_command", required=True, metavar="FIGURE")
    _add_plot_fig5(psub)
    _add_plot_eq14(psub)


def _add_plot_fig5(psub: Subparsers) -> None:
    """`plot fig5`."""
    p = psub.add_parser("fig5", help="epsilon over f_comm for several f_comp_non (seed 000 Fig. 5)",
                        description="Seed 000 Fig. 5: epsilon (eq. 3) over f_comm for several "
                        "f_comp_non, with eps_max and eps_min marked.")
    p.add_argument("--n", type=_threads, required=True, help="threads per process")
    p.add_argument("--m", type=_threads, required=True, help="reserved threads")
    p.add_argument("--f-comp-non", type=_finite, nargs="+", metavar="X",
                   help="one curve per value (default 0 0.1 0.2 0.4 0.6)")
    _add_outputs(p)
    p.set_defaults(func=cmd_plot_fig5)


def _add_plot_eq14(psub: Subparsers) -> None:
    """`plot eq14`."""
    p = psub.add_parser("eq14", help="epsilon over nk_loc by eq. (14) with measured points",
                        description="Seed 000 Fig. 6: eq. (14) curve; --points adds measured "
                        "points (CSV or documents, as for fit eq14) and, without --comm-ratio "
                        "and --non-ratio, fits them first.")
    p.add_argument("--comm-ratio", type=_non_negative, metavar="A", help="x_comm / x_overlap")
    p.add_argument("--non-ratio", type=_non_negative, metavar="B", help="x_non / x_overlap")
    p.add_argument("--n", type=_threads, help="threads per process")
    p.add_argument("--m", type=_threads, help="reserved threads")
    p.add_argument("--points", nargs="+", metavar="FILE", help="measured points to show")
    _add_outputs(p)
    p.set_defaults(func=cmd_plot_eq14)


def _add_study(sub: Subparsers) -> None:
    """`study`."""
    p = sub.add_parser("study", help="run the whole campaign here and write the report",
                       description="Runs hympi info, the benchmarks (beff, cyclic3d, pack, internode, "
                       "ratio), the overlap sweep, every kernel under every scheme (with thread "
                       "traces) and jacobi and spmv with temporal blocking (--halo-depth) on this "
                       "machine or allocation, appending each measurement to "
                       "DIR/results.jsonl as it is made, then fits the model and writes "
                       "DIR/report.html. Exit 0: all runs succeeded; 1: some failed (listed); "
                       "2: bad input; 130: interrupted (resume with --resume DIR).")
    p.add_argument("--out", metavar="DIR", help="new study directory (default results/study-<UTC time>)")
    p.add_argument("--resume", metavar="DIR", help="continue the study in DIR: run only what is missing")
    level = p.add_mutually_exclusive_group()
    level.add_argument("--quick", action="store_true", help="small sizes (a smoke test, ~1 minute)")
    level.add_argument("--full", action="store_true", help="the papers' sizes (long)")
    p.add_argument("--mpi", choices=("openmpi", "mpich"), help="MPI library of the hympi build (default openmpi)")
    p.add_argument("--launcher", choices=("mpirun", "mpiexec", "srun"),
                   help="launcher (default: the MPI library's mpirun)")
    p.add_argument("--hympi", metavar="PATH", help="the hympi executable (default build/bin/hympi, "
                   "build-mpich/bin/hympi with --mpi mpich)")
    p.add_argument("--hostfile", metavar="F", help="hosts to run on (mpirun/mpiexec); one node per host")
    p.add_argument("--ranks", type=_positive_int, metavar="N", help="MPI ranks (default: from the machine)")
    p.add_argument("--threads", type=_positive_int, metavar="T", help="OpenMP threads per rank (default: "
                   "cores per NUMA domain, at least 2)")
    p.add_argument("--emulated-nodes", type=_positive_int, metavar="N",
                   help="run on an emulated cluster of N nodes (scripts/emulated-cluster; root)")
    p.add_argument("--link", default="1gbit", metavar="RATE", help="emulated link rate (tc syntax, default 1gbit)")
    p.add_argument("--steps", metavar="LIST", help="only these steps, comma-separated "
                   "(info, beff, cyclic3d, pack, internode, ratio, overlap, solve, depth)")
    p.add_argument("--kernels", metavar="LIST", help="only these kernels (jacobi, rbgs, spmv, cg; "
                   "default all, none with --app)")
    p.add_argument("--app", metavar="CMD",
                   help="measure your own program (built on hympi's Domain API, calling "
                   "Domain::write_report or hympi_report_json) under every scheme: its command "
                   "without a launcher, with {scheme} and {threads} (and optionally {reserved}, "
                   "{json}) put in per run, e.g. \"./heat_c --scheme {scheme} --threads {threads}\"")
    p.add_argument("--app-name", metavar="NAME", help="the name of your kernel in the report "
                   "(default: the program's file name)")
    p.add_argument("--run-timeout", type=_positive, metavar="S",
                   help="per-run time limit in seconds (default 120 quick, 300, 1800 full)")
    p.add_argument("--no-report", action="store_true", help="measure only; write the report later "
                   "with 'hympi-lab report DIR'")
    p.set_defaults(func=cmd_study)


def _add_report(sub: Subparsers) -> None:
    """`report`."""
    p = sub.add_parser("report", help="write DIR/report.html and DIR/results.csv of a study",
                       description="Fits the model to a study's measurements and writes one "
                       "self-contained HTML report (figures embedded) and results.csv.")
    p.add_argument("dir", metavar="DIR", help="a study directory (hympi-lab study --out DIR)")
    p.set_defaults(func=cmd_report)


def _add_trace(sub: Subparsers) -> None:
    """`trace`."""
    p = sub.add_parser("trace", help="draw a thread timeline (Gantt chart) of a solve trace",
                       description="Reads the Chrome Trace Event document of 'hympi solve --trace "
                       "PATH' and draws one row per thread, coloured by phase.")
    p.add_argument("path", metavar="PATH", help="trace document")
    _add_outputs(p, metavar="PNG")
    p.add_argument("--max-ranks", type=_positive_int, default=4, metavar="R",
                   help="draw the first R ranks (default 4)")
    p.set_defaults(func=cmd_trace)


def _add_project(sub: Subparsers) -> None:
    """`project`."""
    from .project import MAX_NODES, SAMPLES_RANGE
    p = sub.add_parser("project", help=f"carry a study's fitted model to 1..{MAX_NODES} nodes",
                       description="Predicts the time per iteration and the parallel efficiency of "
                       f"each kernel under each measured scheme (and m) for 1 to {MAX_NODES} nodes, weak and "
                       "strong scaling, from a study's ping-pong (Hockney), internode (link "
                       "saturation) and solve runs (cost per point). First predicts the study's own "
                       "runs and prints the error against each. Exit 0; 2: bad input or a study "
                       "without the runs a projection needs (names the step).")
    p.add_argument("dir", metavar="DIR", help="a study directory (hympi-lab study --out DIR)")
    p.add_argument("--grid", type=_grid, metavar="NXxNYxNZ",
                   help="the problem on one node: weak scaling gives every node this many points, "
                   "strong scaling divides it (default: the study's solve grid)")
    p.add_argument("--cores-per-node", type=_positive_int, metavar="C",
                   help="cores of a node (default: ranks x threads; given alone, it keeps the study's threads per rank)")
    p.add_argument("--ranks", type=_positive_int, metavar="R", help="MPI ranks per node of the hybrid schemes")
    p.add_argument("--threads", type=_positive_int, metavar="T", help="threads per rank (R x T = C)")
    p.add_argument("--kernel", action="append", choices=("jacobi", "rbgs", "spmv", "cg"),
                   help="project this kernel (repeat; default every kernel the study measured)")
    p.add_argument("--scaling", choices=("weak", "strong", "both"), default="both",
                   help="default both")
    # The ranges of project.request_problems, checked here so that a bad
    # value is refused before the study is loaded.
    p.add_argument("--max-nodes", type=_int_in(1, MAX_NODES), default=MAX_NODES, metavar="N",
                   help=f"largest node count (default {MAX_NODES})")
    p.add_argument("--samples", type=_int_in(*SAMPLES_RANGE), default=200, metavar="S",
                   help="Monte Carlo draws of the fitted parameters for the 16-84 %% band (default 200)")
    p.add_argument("-o", "--output", action="append", metavar="PNG",
                   help="efficiency plot (.png or .svg), one panel per kernel and scaling; repeatable")
    _add_json(p)
    p.set_defaults(func=cmd_project)


def build_parser() -> Parser:
    parser = Parser(prog=PROG, description="Performance model, fits and advice for hybrid "
                    "MPI+OpenMP schemes (the equations of the hympi seed papers).")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_add_model, _add_fit, _add_advise, _add_plot, _add_study, _add_report, _add_project, _add_trace):
        add(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the console script; returns the exit code (2: bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        args.command_line = shlex.join([PROG, *(sys.argv[1:] if argv is None else argv)])
        func: Callable[[argparse.Namespace, TextIO], int] = args.func
        return func(args, sys.stdout)
    except (UsageError, InputError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    except OutputError as err:  # the input was fine; a result file could not be written
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except SystemExit as exit_:  # --help and --version
        return exit_.code if isinstance(exit_.code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
