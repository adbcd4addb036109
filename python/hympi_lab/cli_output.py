"""What `hympi-lab` commands print and write: tables and JSON documents.

A table is OSU-style ('#' header lines, fixed-width columns). The JSON
document (--json PATH, or - for stdout only) has the native documents' shape
(docs/json-schema.md). A result that is nan or infinite is refused
(InputError, exit 2) rather than printed as if it were an answer.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any, Optional, Sequence, TextIO

import numpy as np

from . import results
from .atomic import write_atomic
from .cli_args import PROG
from .errors import InputError


def fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(value)
    return f"{value:.{digits}g}" if abs(value) >= 1e5 or (0 < abs(value) < 1e-3) else f"{value:.{digits}f}"


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """OSU-style: '#' comment lines, then fixed-width columns."""
    cells = [[fmt(v) if not isinstance(v, str) else v for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = [f"# {title}", "# " + "  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    lines += ["  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines)


def emit(args: argparse.Namespace, kind: str, data: dict[str, Any], text: str,
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
        # Atomic (atomic.py): a failed write (full disk, no permission) is
        # OutputError (exit 4), leaves no partial file and keeps an earlier
        # good one; a symbolic link is followed.
        write_atomic(args.json, encoded + "\n")
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


def null_non_finite(value: Any) -> Any:
    """A copy of `value` (nested dicts and lists) with nan and inf as None."""
    if isinstance(value, dict):
        return {key: null_non_finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [null_non_finite(item) for item in value]
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
