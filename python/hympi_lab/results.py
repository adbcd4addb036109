"""Reading measurements: hympi result documents (JSON) and plain CSV tables.

The JSON layout is docs/json-schema.md (schema_version 1). Everything wrong
with an input file becomes an InputError naming the file, so the CLI can
report it in one line; nothing here prints. `tool_context` is the `context`
block of the documents hympi-lab writes itself, so that they read back with
`load_document` like the native ones.
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import math
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

from . import __version__
from .errors import InputError

SCHEMA_VERSION = 1

# Schemes with a fixed number of reserved communication threads: the ones
# eq. (14) describes. multiple-own and adaptive balance differently.
FIXED_RESERVATION_SCHEMES = ("funneled", "multiple")


@dataclass(frozen=True)
class Document:
    path: str
    context: Mapping[str, Any]
    results: Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Fractions:
    """Model inputs measured by one masteronly `hympi solve` run."""
    f_comm: float
    f_comp_non: float
    f_comp_overlap: float
    threads: int
    source: str
    # inter-node bytes / all bytes of one exchange (bytes_per_exchange); None
    # when the record does not say
    inter_share: Optional[float] = None


@dataclass(frozen=True)
class Eq14Points:
    """(nk_loc, epsilon) points measured with n threads and m[i] reserved.

    The ratios of eq. (14) are per-plane costs of the masteronly run with n
    threads, so points of one n share them whatever m; points of different
    n do not (x_overlap shrinks with more threads) and are never mixed.
    """
    nk_loc: NDArray[np.float64]
    epsilon: NDArray[np.float64]
    n: int
    m: NDArray[np.int_]


def now_iso() -> str:
    """The current time as ISO 8601 UTC, to the second (as the native context's date)."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def git_revision(where: Optional[Path] = None) -> str:
    """`git describe --always --dirty` of the checkout holding hympi_lab, or "unknown"
    (installed without a checkout, or no git)."""
    where = where or Path(__file__).resolve().parent
    try:
        done = subprocess.run(["git", "-C", str(where), "describe", "--always", "--dirty"],
                              capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    revision = done.stdout.strip()
    return revision if done.returncode == 0 and revision else "unknown"


def tool_context(command: str, tool: str = "hympi-lab") -> dict[str, Any]:
    """The `context` of a document hympi-lab writes (docs/json-schema.md).

    Filled: schema_version, hympi_version (this package's version),
    git_revision (of the checkout, at run time), date, hosts (this host) and
    command (the command line), plus `tool`. The keys describing an MPI run
    (mpi_library, mpi_version, thread levels, ranks, threads_per_rank, nodes,
    thread_cpus, compiler, flags) are absent: hympi-lab runs no MPI job.
    """
    return {"schema_version": SCHEMA_VERSION, "tool": tool, "hympi_version": __version__,
            "git_revision": git_revision(), "date": now_iso(), "hosts": [socket.gethostname()],
            "command": command}


def read_json(path: str) -> Any:
    """The parsed JSON of a file; unreadable, non-text or invalid JSON is an InputError."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as err:
        raise InputError(f"cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file") from None
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: not valid JSON ({err.msg} at line {err.lineno})") from None


def load_document(path: str) -> Document:
    """One result document, after checking context.schema_version."""
    data = read_json(path)
    context = data.get("context") if isinstance(data, dict) else None
    if not isinstance(context, dict) or "schema_version" not in context:
        raise InputError(f"{path}: not a hympi result document (no context.schema_version)")
    version = context["schema_version"]
    if version != SCHEMA_VERSION:
        raise InputError(f"{path}: schema_version {version!r} is not supported "
                         f"(this hympi-lab reads {SCHEMA_VERSION})")
    results = data.get("results")
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        raise InputError(f"{path}: 'results' must be a list of objects")
    return Document(path, context, results)


def load_documents(paths: Iterable[str]) -> list[Document]:
    return [load_document(p) for p in paths]


def is_csv(path: str) -> bool:
    return path.lower().endswith(".csv")


def read_csv(path: str, columns: Mapping[str, Sequence[str]],
             optional: Optional[Mapping[str, Sequence[str]]] = None) -> dict[str, NDArray[np.float64]]:
    """Numeric columns of a CSV file with a header row.

    `columns` maps each needed column to the header names accepted for it
    (first match wins); `optional` columns are returned only when present.
    Blank lines and lines starting with '#' are skipped.
    """
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            lines = [ln for ln in handle if ln.strip() and not ln.lstrip().startswith("#")]
    except OSError as err:
        raise InputError(f"cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file") from None
    rows = list(csv.reader(lines))
    if not rows:
        raise InputError(f"{path}: empty CSV file")
    header = [h.strip() for h in rows[0]]
    index: dict[str, int] = {}
    for name, aliases in list(columns.items()) + list((optional or {}).items()):
        found = [a for a in aliases if a in header]
        if found:
            index[name] = header.index(found[0])
        elif name in columns:
            raise InputError(f"{path}: no column {' or '.join(aliases)} in header "
                             f"({', '.join(header)})")
    values: dict[str, list[float]] = {name: [] for name in index}
    for row_number, row in enumerate(rows[1:], start=2):
        for name, col in index.items():
            if col >= len(row):
                raise InputError(f"{path}: data row {row_number} has no column {name}")
            values[name].append(_number(row[col].strip(), f"{path}: data row {row_number}, column {name}"))
    return {name: np.array(v, dtype=float) for name, v in values.items()}


def is_masteronly_one_sweep(rec: Any) -> bool:
    """A masteronly solve record with one exchange per sweep (no
    --halo-depth, or depth 1): the runs the model's fractions come from."""
    if not isinstance(rec, dict) or rec.get("kind") != "solve" or rec.get("scheme") != "masteronly":
        return False
    return rec.get("halo_depth") in (None, 1)


def masteronly_fractions(documents: Iterable[Document], n: Optional[int] = None) -> list[Fractions]:
    """The fractions of masteronly solve records (the model's inputs).

    Only masteronly runs measure the fractions the model means (seed 000
    sec. 7.2.1). With `n`, only records run with n threads are kept. Runs
    with temporal blocking (halo_depth > 1) are left out: their sweeps run
    in a wavefront booked as non-overlappable computation, not the
    exchange-then-sweep iteration the model describes.
    """
    found = []
    for doc in documents:
        for i, rec in enumerate(doc.results):
            if not is_masteronly_one_sweep(rec):
                continue
            where = f"{doc.path}: results[{i}] (masteronly solve)"
            fractions = rec.get("fractions")
            if not isinstance(fractions, dict):
                raise InputError(f"{where}: no 'fractions' object")
            threads = _integer(rec.get("threads"), f"{where}: threads")
            if n is not None and threads != n:
                continue
            found.append(Fractions(
                f_comm=_number(fractions.get("f_comm"), f"{where}: fractions.f_comm"),
                f_comp_non=_number(fractions.get("f_comp_non"), f"{where}: fractions.f_comp_non"),
                f_comp_overlap=_number(fractions.get("f_comp_overlap"),
                                       f"{where}: fractions.f_comp_overlap"),
                threads=threads,
                source=doc.path,
                inter_share=inter_share(rec.get("bytes_per_exchange")),
            ))
    return found


def inter_share(b: Any) -> Optional[float]:
    """inter / (intra + inter + zero-copy) of a solve record's bytes_per_exchange."""
    if not isinstance(b, dict):
        return None
    parts = [b.get("intra_node"), b.get("inter_node"), b.get("zero_copy") or 0]
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 for x in parts):
        return None
    total = sum(parts)
    return parts[1] / total if total > 0 else None


def eq14_points(paths: Sequence[str], n: Optional[int], m: Optional[int]) -> Eq14Points:
    """Eq. (14) points from CSV files and/or result documents.

    CSV: columns nk_loc, epsilon and optionally threads, reserved (without
    them --n and --m say what the rows are). Documents: overlap benchmark
    points of the fixed-reservation schemes; masteronly points are left out
    (their epsilon is 1 by definition). Given n or m filter the points; the
    points left must share one thread count.
    """
    rows: list[tuple[int, int, float, float]] = []  # (threads, reserved, nk_loc, epsilon)
    for path in paths:
        if is_csv(path):
            rows.extend(_eq14_csv_rows(path, n, m))
        else:
            doc = load_document(path)
            found = _eq14_document_rows(doc)
            if not found and not any(rec.get("benchmark") == "overlap" for rec in doc.results):
                raise InputError(f"{doc.path} holds no overlap benchmark records "
                                 f"({record_kinds(doc)}); `hympi bench overlap` writes them")
            rows.extend(found)
    kept = [r for r in rows if (n is None or r[0] == n) and (m is None or r[1] == m)]
    if not kept:
        found = sorted({(r[0], r[1]) for r in rows})
        listing = ", ".join(f"n={t} m={r}" for t, r in found) or "none"
        raise InputError("no overlap points (funneled or multiple) to fit"
                         + (f" with the requested --n/--m; the input has {listing}" if rows else ""))
    threads = sorted({r[0] for r in kept})
    if len(threads) > 1:
        raise InputError(f"the points come from runs with different thread counts "
                         f"({', '.join(map(str, threads))}); choose one with --n")
    return Eq14Points(nk_loc=np.array([r[2] for r in kept]),
                      epsilon=np.array([r[3] for r in kept]),
                      n=threads[0], m=np.array([r[1] for r in kept], dtype=int))


def _eq14_csv_rows(path: str, n: Optional[int], m: Optional[int]) -> list[tuple[int, int, float, float]]:
    cols = read_csv(path, {"nk_loc": ("nk_loc",), "epsilon": ("epsilon",)},
                    optional={"threads": ("threads", "n"), "reserved": ("reserved", "m")})
    count = len(cols["nk_loc"])
    threads = _count_column(path, cols, "threads", n, "--n", count)
    reserved = _count_column(path, cols, "reserved", m, "--m", count)
    return list(zip(threads, reserved, cols["nk_loc"].tolist(), cols["epsilon"].tolist()))


def _count_column(path: str, cols: Mapping[str, NDArray[np.float64]], name: str,
                  given: Optional[int], flag: str, count: int) -> list[int]:
    """A whole-number CSV column, or the value of `flag` for every row when it is absent."""
    if name in cols:
        return [_whole(x, f"{path}: column {name}") for x in cols[name]]
    if given is None:
        raise InputError(f"{path}: no {name} column: give {flag}")
    return [given] * count


def _eq14_document_rows(doc: Document) -> list[tuple[int, int, float, float]]:
    rows = []
    for i, rec in enumerate(doc.results):
        if rec.get("benchmark") != "overlap" or rec.get("kind") != "point":
            continue
        scheme = rec.get("scheme")
        if scheme not in FIXED_RESERVATION_SCHEMES:
            continue
        where = f"{doc.path}: results[{i}] (overlap point)"
        threads = _integer(rec.get("threads"), f"{where}: threads")
        # funneled reserves thread 0 by definition, whatever the record says
        reserved = 1 if scheme == "funneled" else _integer(rec.get("reserved"), f"{where}: reserved")
        rows.append((threads, reserved,
                     _number(rec.get("nk_loc"), f"{where}: nk_loc"),
                     _median(rec.get("epsilon"), f"{where}: epsilon")))
    return rows


def hockney_points(paths: Sequence[str]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(bytes, seconds) message-time points: CSV columns bytes,time_s (or L,t),
    or ping-pong records of result documents (one-way time, median)."""
    lengths: list[float] = []
    times: list[float] = []
    for path in paths:
        if is_csv(path):
            cols = read_csv(path, {"bytes": ("bytes", "L"), "time_s": ("time_s", "t")})
            lengths.extend(cols["bytes"])
            times.extend(cols["time_s"])
            continue
        doc = load_document(path)
        found = 0
        for i, rec in enumerate(doc.results):
            if rec.get("kind") != "pingpong":
                continue
            found += 1
            where = f"{doc.path}: results[{i}] (pingpong)"
            lengths.append(_number(rec.get("bytes"), f"{where}: bytes"))
            times.append(_median(rec.get("time_s"), f"{where}: time_s"))
        if not found:
            raise InputError(f"{doc.path} holds no ping-pong records ({record_kinds(doc)}); "
                             "`hympi bench beff` writes them")
    return np.array(lengths, dtype=float), np.array(times, dtype=float)


def record_kinds(doc: Document) -> str:
    """'records of kind overlap, solve' or 'no records': what a document holds."""
    kinds = sorted({str(rec.get("kind")) + (f" ({rec['benchmark']})" if rec.get("benchmark") else "")
                    for rec in doc.results})
    return "records of kind " + ", ".join(kinds) if kinds else "no records"


def _number(value: Any, where: str) -> float:
    """A finite float from a JSON value or CSV cell, or an InputError."""
    if isinstance(value, bool):  # JSON true is not a measurement
        raise InputError(f"{where}: expected a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        shown = "nothing" if value is None else repr(value)
        raise InputError(f"{where}: expected a number, got {shown}") from None
    if not math.isfinite(x):
        raise InputError(f"{where}: expected a finite number, got {value!r}")
    return x


def _integer(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where}: expected an integer, got {value!r}")
    return value


def _whole(value: float, where: str) -> int:
    if value != int(value):
        raise InputError(f"{where}: expected a whole number, got {value:g}")
    return int(value)


def _median(value: Any, where: str) -> float:
    """The median of a {"min","median","max"} statistic (a bare number is accepted)."""
    if isinstance(value, dict):
        return _number(value.get("median"), f"{where}.median")
    return _number(value, where)
