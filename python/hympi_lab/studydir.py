"""A study directory's files: their names, writing and reading them, and
checking what they hold. Nothing else in hympi_lab knows the format.

    study.json       what the study is (options, machine, setting, schemes);
                     written once (schema: schemas/study.schema.json)
    results.jsonl    one record per line (schema: schemas/study-record.schema.json)
    commands.log     the exact command of every native run
    raw/             the JSON documents, traces and logs of every run
    fit.json, report.html, results.csv, figures/   written by the report step

results.jsonl and study.json are read back by report, project and --resume,
which divide by their numbers, loop over them and index them. A damaged or
hand-edited value is refused with the file, its line and the field's path
(exit 2), before any of that code sees it, as is a line damaged, deleted or
inserted anywhere before the file's last point line. Only the unfinished
point at the end of a killed study's file (whole result lines, a torn last
line) is no damage: it is dropped and named (load_results_full), and the
report says so.

The shapes, types and limits are the JSON Schemas' (checked with jsonschema's
Draft 2020-12 validator); this module adds only what a schema cannot say:
the study's schema version, finite numbers everywhere (JSON's NaN and
Infinity parse in Python), min <= median <= max, fractions that sum to at
most 1, and a multiple run's reserved threads below its thread count.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import jsonschema
from jsonschema.exceptions import ValidationError

from .atomic import probe_directory, write_atomic
from .errors import InputError, OutputError

STUDY_SCHEMA_VERSION = 1
RESULTS = "results.jsonl"
STUDY_FILE = "study.json"
COMMANDS = "commands.log"
RAW = "raw"
TOPOLOGY = "topology.xml"  # lstopo's XML of the machine, read by Open MPI's runs

SCHEMAS = Path(__file__).resolve().parent / "schemas"
RECORD_SCHEMA = SCHEMAS / "study-record.schema.json"
HEADER_SCHEMA = SCHEMAS / "study.schema.json"


def _is_whole(checker: Any, value: Any) -> bool:
    # A JSON 2.0 or 1e308 is no thread count: range() and indexing need an int.
    return isinstance(value, int) and not isinstance(value, bool)


def _is_finite(checker: Any, value: Any) -> bool:
    # NaN and Infinity are refused where the schema asks for a number, so the
    # error names the field and what it should be.
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _is_whole, "number": _is_finite}))


def _load_schema(path: Path) -> Any:
    schema = json.loads(path.read_text(encoding="utf-8"))
    return _Validator(schema)


_RECORDS = _load_schema(RECORD_SCHEMA)
_HEADER = _load_schema(HEADER_SCHEMA)

# The options a study.json must hold are the schema's required ones; app and
# app_name came after study schema 1 was first written (a study without them
# measured no program of the user's, which their defaults say).
OPTION_NAMES = tuple(_HEADER.schema["properties"]["options"]["properties"])
OPTIONAL_OPTIONS = tuple(k for k in OPTION_NAMES
                         if k not in _HEADER.schema["properties"]["options"]["required"])


# --- error messages: '<where>: <path>: expected <words>, got <value>' ------------------

# A required field that is absent ("got nothing").
_MISSING = object()


def _shown(value: Any) -> str:
    """A value as its JSON text, shortened: what the file holds."""
    if value is _MISSING:
        return "nothing"
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _refuse(where: str, expected: str, value: Any) -> InputError:
    return InputError(f"{where}: expected {expected}, got {_shown(value)}")


def _resolve(validator: Any, node: Any) -> Any:
    """Follow a local $ref ("#/$defs/name") to the schema it names."""
    while isinstance(node, dict) and "$ref" in node:
        target: Any = validator.schema
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def _words(node: Any) -> str:
    """What a schema asks for, in the words of an error message: its
    'expected' keyword, else said from its type and bounds."""
    if not isinstance(node, dict):
        return "a value"
    if "expected" in node:
        return node["expected"]
    if "const" in node:
        return json.dumps(node["const"])
    if "enum" in node:
        return "one of " + ", ".join(json.dumps(v) for v in node["enum"])
    kinds = node.get("type", [])
    kind = next((k for k in ([kinds] if isinstance(kinds, str) else kinds) if k != "null"), "")
    low, high = node.get("minimum"), node.get("maximum")
    if kind == "integer":
        return f"a whole number in {low}..{high}" if high is not None else f"a whole number >= {low}"
    if kind == "number":
        if node.get("exclusiveMinimum") == 0:
            return "a positive finite number"
        if low == 0 and high == 1:
            return "a fraction between 0 and 1"
        return "a finite number >= 0" if low == 0 else "a finite number"
    if kind == "string":
        if "pattern" in node:
            return f"a string matching {node['pattern']}"
        return "a non-empty string" if node.get("minLength") else "a string"
    return {"boolean": "true or false", "object": "an object", "array": "a list"}.get(kind, "a value")


def _named(validator: Any, error: ValidationError) -> tuple[Any, int]:
    """The schema an error is reported against and how many steps of the
    error's instance path lead to its value: the innermost schema with an
    'expected' keyword (a list of numbers, not its one bad number), else the
    schema whose keyword failed."""
    node: Any = validator.schema
    depth = 0
    named: tuple[Any, int] = (error.schema, len(error.path))
    keys = list(error.schema_path)
    i = 0
    while i < len(keys) - 1:  # the last key is the keyword that failed
        key = keys[i]
        if isinstance(node, dict) and key not in node:
            node = _resolve(validator, node)
        if key in ("properties", "patternProperties", "prefixItems"):
            node, depth, i = node[key][keys[i + 1]], depth + 1, i + 2
        elif key in ("additionalProperties", "items"):
            node, depth, i = node[key], depth + 1, i + 1
        elif key in ("allOf", "anyOf", "oneOf"):
            node, i = node[key][keys[i + 1]], i + 2
        else:  # if, then, else, not
            node, i = node[key], i + 1
        node = _resolve(validator, node)
        if isinstance(node, dict) and "expected" in node:
            named = (node, depth)
    return named


def _dotted(parts: Iterable[Any]) -> str:
    return ".".join(str(p) for p in parts)


def _message(validator: Any, error: ValidationError, doc: Any, where: str) -> str:
    """One error of `doc` as '<where>: <path>: expected ..., got ...'."""
    path = list(error.path)
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        node = error.schema
        if "missing" in node:  # the whole list, as study.json's options say it
            return f"{where}: {_dotted(path)}: missing {', '.join(missing)}{node['missing']}"
        schema = node.get("properties", {}).get(missing[0], node.get("additionalProperties", {}))
        return str(_refuse(f"{where}: {_dotted(path + [missing[0]])}",
                           _words(_resolve(validator, schema)), _MISSING))
    if error.validator == "additionalProperties":
        known = error.schema.get("properties", {})
        patterns = error.schema.get("patternProperties", {})
        extra = sorted(str(k) for k in error.instance
                       if k not in known and not any(re.search(p, str(k)) for p in patterns))
        noun = error.schema.get("unknown", "field(s)")
        return f"{where}: {_dotted(path) + ': ' if path else ''}unknown {noun} {', '.join(extra)}"
    node, depth = _named(validator, error)
    value = doc
    for part in path[:depth]:
        value = value[part]
    return str(_refuse(f"{where}: {_dotted(path[:depth])}" if depth else where, _words(node), value))


def _validate(validator: Any, doc: Any, where: str) -> None:
    """The first error of `doc` against the schema, as an InputError."""
    error = next(iter(validator.iter_errors(doc)), None)
    if error is not None:
        raise InputError(_message(validator, error, doc, where))


# --- the meaning checks: what a schema cannot say -----------------------------------

def _non_finite(value: Any, path: list[Any]) -> Iterator[tuple[list[Any], Any]]:
    """(path, value) of every NaN or Infinity anywhere in a document."""
    if isinstance(value, float) and not math.isfinite(value):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _non_finite(item, path + [key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _non_finite(item, path + [index])


def _check_finite(doc: Any, where: str) -> None:
    # Where the schema asks for a number it refused these already; this finds
    # the ones in fields it leaves open (meta, a document's own extras).
    for path, value in _non_finite(doc, []):
        raise _refuse(f"{where}: {_dotted(path)}", "a finite number", value)


def _stats(value: Any, path: list[Any]) -> Iterator[tuple[list[Any], dict[str, Any]]]:
    """Every {"min", "median", "max"} statistic in a record."""
    if isinstance(value, dict):
        if all(isinstance(value.get(k), (int, float)) for k in ("min", "median", "max")):
            yield path, value
        for key, item in value.items():
            yield from _stats(item, path + [key])


def _check_meaning(rec: dict[str, Any], where: str) -> None:
    """A result line's values that agree with the schema but not with each other."""
    result = rec["result"]
    for path, stat in _stats(result, ["result"]):
        if not stat["min"] <= stat["median"] <= stat["max"]:
            raise _refuse(f"{where}: {_dotted(path)}", "min <= median <= max", stat)
    fractions = result.get("fractions")
    if isinstance(fractions, dict):
        # hympi's shares of one iteration; rounding may leave a few ulps over 1.
        total = sum(v for v in fractions.values() if isinstance(v, (int, float)))
        if total > 1 + 1e-9:
            raise _refuse(f"{where}: result.fractions", "shares summing to at most 1", fractions)
    kind = (rec["step"], result.get("kind"))
    runs = (("solve", "solve"), ("depth", "solve"), ("overlap", "point"))
    per_rank = rec["context"].get("threads_per_rank")
    if kind in runs and isinstance(per_rank, int) and result.get("threads") != per_rank:
        # The run's own count is its context's: a record saying 1024 threads
        # of a 1-thread run would make the report judge a hybrid run.
        raise _refuse(f"{where}: result.threads", f"the run's threads per rank "
                      f"(context.threads_per_rank = {per_rank})", result.get("threads"))
    if kind in runs and result.get("scheme") == "multiple":
        # multiple reserves m of its n threads for communication: eq. (3)
        # divides by m and by n - m.
        threads = result["threads"]
        if threads < 2:
            raise _refuse(f"{where}: result.threads", "2 or more for scheme multiple", threads)
        reserved = result.get("reserved", _MISSING)
        if reserved is _MISSING or not 1 <= reserved <= threads - 1:
            raise _refuse(f"{where}: result.reserved", f"a whole number in 1..{threads - 1}", reserved)


def check_result_record(rec: dict[str, Any], where: str) -> None:
    """A result line of results.jsonl, before report, project or --resume use it."""
    _validate(_RECORDS, rec, where)
    _check_finite(rec, where)
    _check_meaning(rec, where)


def check_point_line(rec: dict[str, Any], where: str) -> None:
    """A point (status) line of results.jsonl."""
    _validate(_RECORDS, rec, where)
    _check_finite(rec, where)


def check_study_header(header: dict[str, Any], where: str) -> None:
    """study.json's options (all of StudyOptions' but OPTIONAL_OPTIONS, of
    their types), setting and machine blocks; InputError naming the first
    field that is wrong."""
    _validate(_HEADER, header, where)
    _check_finite(header, where)


# --- the results file ------------------------------------------------------------------

def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"), allow_nan=False) + "\n"


def append_lines(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Append records as JSON lines in one write, then fsync: what returns is on disk.

    The point's status line is the last of its records, so a study killed in
    the middle of a write leaves at most one incomplete point, which
    load_results() ignores and --resume runs again.
    """
    data = "".join(_line(r) for r in records)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as err:
        raise OutputError(f"cannot write {path}: {err.strerror or err}") from None
    start = os.fstat(fd).st_size
    try:
        view = memoryview(data.encode("utf-8"))
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except OSError as err:
        # Disk full: take the torn lines back so the file ends on a whole point.
        try:
            os.ftruncate(fd, start)
        except OSError:
            pass
        raise OutputError(f"cannot write {path}: {err.strerror or err}") from None
    finally:
        os.close(fd)


@dataclass
class Loaded:
    """What load_results_full reads: the complete points' result records,
    their status by point key, and the unfinished points at the end of the
    file (records without their point line: a study stopped while it ran
    them), which are left out."""
    results: list[dict[str, Any]]
    status: dict[str, dict[str, Any]]
    unfinished: list[str]


def load_results(path: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """(result records, point status by key) of load_results_full."""
    loaded = load_results_full(path)
    return loaded.results, loaded.status


def _parse_lines(path: Path) -> list[tuple[int, Any, str]]:
    """(line number, parsed JSON or None, why it is no JSON) of every
    non-empty line."""
    lines: list[tuple[int, Any, str]] = []
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    lines.append((number, json.loads(line), ""))
                except json.JSONDecodeError as err:
                    what = err.msg[:-3] if err.msg.endswith(" at") else err.msg
                    lines.append((number, None, f"not JSON: {what} at column {err.colno}"))
    except OSError as err:
        raise InputError(f"cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file") from None
    return lines


def _is_point_line(rec: Any) -> bool:
    return isinstance(rec, dict) and rec.get("record") == "point"


def _tail(path: Path, tail: list[tuple[int, Any, str]]) -> list[str]:
    """The unfinished points of the lines after the last point line. A
    killed study leaves whole result lines there and at most one torn line,
    the file's last; anything else there is damage."""
    points: list[str] = []
    for i, (number, rec, why) in enumerate(tail):
        if why and i == len(tail) - 1:
            break  # the torn last line of a killed study
        if why:
            raise InputError(f"{path} line {number}: a damaged line ({why}); only the last line "
                             "of a study killed while writing may be torn")
        if not (isinstance(rec, dict) and rec.get("record") == "result"
                and isinstance(rec.get("point"), str)):
            raise InputError(f"{path} line {number}: a damaged line (neither a result nor a point "
                             "line of a study)")
        if rec["point"] not in points:
            points.append(rec["point"])
    return points


# A report reads the results file twice (its analysis, then the
# projection's inputs), and checking every record against the schemas is most
# of a load (about a second for the default study's 430 records): a file
# unchanged since its last load (the same bytes: a file's time stamp moves
# in steps of milliseconds) is not checked again. Callers get copies.
_last_load: dict[tuple[Any, ...], Loaded] = {}


def load_results_full(path: Path) -> Loaded:
    """The complete points of a results file, checked (load_results_checked),
    or a copy of its last load when the file holds the same bytes."""
    try:
        content = path.read_bytes()
    except OSError:
        return load_results_checked(path)  # missing: nothing; unreadable: its error
    key = (str(path.resolve()), len(content), hashlib.blake2b(content, digest_size=32).digest())
    if key not in _last_load:
        loaded = load_results_checked(path)
        _last_load.clear()
        _last_load[key] = loaded
    return copy.deepcopy(_last_load[key])


def load_results_checked(path: Path) -> Loaded:
    """The complete points of a results file, checked.

    The file is a sequence of points, each its result lines and then its
    point line (append_lines writes them in one write; --resume rewrites the
    file first). So every line up to the last point line belongs to a
    complete point, and damage there (a line that is no JSON or no record,
    a result line no point line closes, a point line announcing results
    that are not there, a value the schemas or meaning checks refuse) is an
    InputError naming its line: report, project and --resume must not
    compute with it, nor silently without it. Only after the last point line
    may a killed study have left an unfinished point (whole result lines and
    a torn last line): it is dropped and named in `unfinished`.
    """
    if not path.exists():
        return Loaded([], {}, [])
    lines = _parse_lines(path)
    last = max((i for i, (_, rec, _) in enumerate(lines) if _is_point_line(rec)), default=-1)
    pending: list[tuple[int, dict[str, Any]]] = []
    results_by_point: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    status: dict[str, dict[str, Any]] = {}
    for number, rec, why in lines[:last + 1]:
        where = f"{path} line {number}"
        if why:
            raise InputError(f"{where}: a damaged line ({why}); only the last line of a study "
                             "killed while writing may be torn")
        if not _is_point_line(rec):
            if not (isinstance(rec, dict) and rec.get("record") == "result"
                    and isinstance(rec.get("point"), str)):
                _validate(_RECORDS, rec, where)  # names the field, where it can
                raise InputError(f"{where}: a damaged line (neither a result nor a point line of "
                                 "a study)")
            pending.append((number, rec))  # checked once its point is known complete
            continue
        check_point_line(rec, where)
        key, count = rec["point"], rec["n_results"]
        stray = next(((n, r) for n, r in pending if r["point"] != key), None)
        if stray is not None:
            raise InputError(f"{path} line {stray[0]}: a result of point {stray[1]['point']!r} "
                             "that no point line closes (a damaged or deleted line)")
        if count != len(pending):
            raise InputError(f"{where}: point {key!r} announces {count} result line(s), "
                             f"{len(pending)} precede it (a damaged or deleted line)")
        # A later run of the same point (a resumed failure) replaces it.
        status.pop(key, None)
        status[key] = rec
        results_by_point[key] = pending
        pending = []
    unfinished = _tail(path, lines[last + 1:])
    results = []
    for key in status:
        for number, rec in results_by_point.get(key, []):
            check_result_record(rec, f"{path} line {number}")
            results.append(rec)
    return Loaded(results, status, unfinished)


def rewrite_results(path: Path, results: list[dict[str, Any]], status: dict[str, dict[str, Any]]) -> None:
    """Rewrite the file with complete points only (before a resume), atomically."""
    by_point: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_point.setdefault(r["point"], []).append(r)
    write_atomic(path, "".join(_line(r) for key, st in status.items() for r in by_point.get(key, []) + [st]))


# --- study.json ---------------------------------------------------------------------

def check_outdir(outdir: Path, resume: bool) -> None:
    """Refuse, before anything runs, a study directory that holds something
    else or where the study's files could not be written: a temporary file
    is created (and flushed) there, or in the nearest directory that exists
    when it is new, and removed; nothing is left. check_room checks the
    space once the plan is known."""
    flag = "--resume" if resume else "--out"
    if outdir.exists() and not outdir.is_dir():
        raise InputError(f"{flag} {outdir}: not a directory")
    if resume:
        if not (outdir / STUDY_FILE).is_file():
            raise InputError(f"--resume {outdir}: not a study directory (no {STUDY_FILE})")
        for directory in (outdir, outdir / RAW):
            if directory.is_dir():
                _probe(flag, outdir, directory)
        return
    if outdir.exists() and any(outdir.iterdir()):
        if (outdir / STUDY_FILE).is_file():
            raise InputError(f"--out {outdir} already holds a study; continue it with "
                             f"'--resume {outdir}', or choose another --out")
        raise InputError(f"--out {outdir} exists and is not empty; choose a new directory")
    existing = outdir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(f"--out {outdir}: {existing} is not a directory")
    _probe(flag, outdir, existing)


def _probe(flag: str, outdir: Path, directory: Path) -> None:
    try:
        probe_directory(directory, PROBE_BYTES)
    except OutputError as err:
        raise InputError(f"{flag} {outdir}: {err}") from None


def prepare_outdir(outdir: Path, header: dict[str, Any], resume: bool) -> None:
    """Create or reopen a study directory (check_outdir first)."""
    check_outdir(outdir, resume)
    try:
        (outdir / RAW).mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"{'--resume' if resume else '--out'} {outdir}: cannot create it "
                         f"({err.strerror or err})") from None
    if not resume:
        write_atomic(outdir / STUDY_FILE, json.dumps(header, indent=2) + "\n")


# What one run leaves in the directory at most, per level (its JSON
# document, thread trace and log), and the report with its figures.
POINT_BYTES = {"quick": 1 << 20, "default": 4 << 20, "full": 16 << 20}
REPORT_BYTES = 16 << 20
PROBE_BYTES = 64 << 10


def check_room(outdir: Path, level: str, points: int) -> None:
    """Refuse a study whose runs would not fit on the disk (exit 2, before
    the first run): an hour of measuring must not end in "cannot write"."""
    need = points * POINT_BYTES.get(level, POINT_BYTES["full"]) + REPORT_BYTES
    try:
        fs = os.statvfs(outdir)
    except OSError as err:
        raise InputError(f"{outdir}: {err.strerror or err}") from None
    free = fs.f_bavail * fs.f_frsize
    if free < need:
        raise InputError(f"{outdir}: {free / 2**20:.1f} MiB free, the study's {points} runs and "
                         f"report need up to {need / 2**20:.0f} MiB; free space or choose "
                         "another --out")


def rewrite_study(outdir: Path, header: dict[str, Any]) -> None:
    """study.json again, once what it records is known (an emulated
    cluster's info runs after the directory was prepared)."""
    write_atomic(outdir / STUDY_FILE, json.dumps(header, indent=2) + "\n")


def load_study(outdir: Path) -> dict[str, Any]:
    """study.json of a study directory, checked (check_study_header)."""
    if not (outdir / STUDY_FILE).is_file():
        raise InputError(f"{outdir}: not a study directory (no {STUDY_FILE}; start one with "
                         "'hympi-lab study --out DIR')")
    try:
        header = json.loads((outdir / STUDY_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise InputError(f"{outdir / STUDY_FILE}: unreadable ({err})") from None
    version = header.get("study_schema_version") if isinstance(header, dict) else None
    if not isinstance(header, dict) or "options" not in header:
        raise InputError(f"{outdir}: not a study directory ({STUDY_FILE} holds no study options)")
    if version != STUDY_SCHEMA_VERSION:
        raise InputError(f"{outdir}: a study of schema version {version!r}; this hympi-lab "
                         f"continues version {STUDY_SCHEMA_VERSION} only (start a new study)")
    check_study_header(header, str(outdir / STUDY_FILE))
    return header
