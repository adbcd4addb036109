"""The `hympi-lab` parser and its argument types.

Every type refuses a non-number, a non-finite value or one out of the range
the model can evaluate while the command line is parsed, with an
argparse.ArgumentTypeError that Parser turns into UsageError (exit 2).
The option helpers (add_json, add_outputs, add_link, add_threads_reserved)
add the flags several commands share, with one help text each.
"""

from __future__ import annotations

import argparse
import decimal
import math
import re
import sys
from typing import IO, Callable, Iterable, NoReturn, Optional, Sequence

from .errors import InputError

PROG = "hympi-lab"

Subparsers = argparse._SubParsersAction  # what add_subparsers returns


class UsageError(Exception):
    """argparse's complaint, raised instead of printed so main() reports it in one line."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")

    def _print_message(self, message: str, file: Optional[IO[str]] = None) -> None:
        # argparse swallows OSError here: --help to a full disk would exit 0
        # having written nothing. Let it reach main(), which says so (exit 4).
        if message:
            (file or sys.stdout).write(message)


def add_family(sub: Subparsers, name: str, help: str, description: str, dest: str, metavar: str,
               builders: Iterable[Callable[[Subparsers], None]]) -> None:
    """A command that only groups sub-commands (`fit`, `plot`): one of them is required."""
    p = sub.add_parser(name, help=help, description=description)
    family = p.add_subparsers(dest=dest, required=True, metavar=metavar)
    for add in builders:
        add(family)


def check(problems: list[str]) -> None:
    """All of a command's input problems as one InputError, or nothing."""
    if problems:
        raise InputError("; ".join(problems))


# --- argument types: reject non-numbers and non-finite values early --------

def finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def positive(text: str) -> float:
    value = finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return value


def non_negative(text: str) -> float:
    value = finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1: {text!r}")
    return value


def int_in(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number in lo..hi, refused before any file is read."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{text!r} is out of range: accepted {lo} .. {hi}")
        return value
    return parse


# Ranges of the Hockney inputs. Outside them the model's arithmetic leaves
# the floats (1e-320 MB/s made every message time inf) and no link is like
# that: 1 B/s .. 1 PB/s, and up to 1000 s of latency.
MIN_MBPS, MAX_MBPS = 1e-6, 1e9
MAX_LATENCY_US = 1e9
MAX_BYTES = 1e18


def bandwidth_mbps(text: str) -> float:
    value = finite(text)
    if not MIN_MBPS <= value <= MAX_MBPS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is out of range: accepted {MIN_MBPS:g} .. {MAX_MBPS:g} MB/s (1 B/s .. 1 PB/s)")
    return value


def latency_us(text: str) -> float:
    value = finite(text)
    if not 0.0 <= value <= MAX_LATENCY_US:
        raise argparse.ArgumentTypeError(
            f"{text!r} is out of range: accepted 0 .. {MAX_LATENCY_US:g} us (1000 s)")
    return value


# Thread counts (--n, --m, --p, --m-max) beyond any node's: advise ranks
# n - 1 candidates over every uncertainty sample, and an int of hundreds of
# digits does not even convert to a float. The lower bounds are the model's
# (model.fraction_problems), with their own messages.
MAX_THREADS = 4096


def thread_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value > MAX_THREADS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_THREADS} threads: {text!r}")
    if value < -MAX_THREADS:
        raise argparse.ArgumentTypeError(f"not a thread count: {text!r}")
    return value


# docs/units.md: the byte counts both commands accept (hympi's
# parse_bytes_checked, app/parse.cpp, reads the same grammar).
_SIZE_UNITS = {"": 1, "B": 1, "k": 1000, "kB": 1000, "M": 1000 ** 2, "MB": 1000 ** 2,
               "G": 1000 ** 3, "GB": 1000 ** 3, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
_SIZE = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?([A-Za-z]*)")


def message_size(text: str) -> int:
    """A byte count (docs/units.md): a number without sign (4096, 1.5, 1e6)
    and an optional unit B, k/kB, M/MB, G/GB (10^3, 10^6, 10^9), KiB, MiB,
    GiB; exact (1.5MB is 1500000), whole bytes, 1 .. 1e18."""
    match = _SIZE.fullmatch(text)
    if not match or match.group(3) not in _SIZE_UNITS:
        raise argparse.ArgumentTypeError(
            f"not a byte count: {text!r} (a number such as 65536, 1.5 or 1e6, optionally with "
            "B, k, kB, M, MB, G, GB, KiB, MiB, GiB)")
    exponent = int(match.group(2) or 0)
    if abs(exponent) > 100:  # 1e999999999 would take Decimal a while; no size is near it
        raise argparse.ArgumentTypeError(f"{text!r} is out of range: accepted 1 .. {MAX_BYTES:.0e} bytes")
    value = decimal.Decimal(match.group(1)).scaleb(exponent) * _SIZE_UNITS[match.group(3)]
    if not 1 <= value <= MAX_BYTES:  # a size beyond 1 EB is a typo
        raise argparse.ArgumentTypeError(f"{text!r} is out of range: accepted 1 .. {MAX_BYTES:.0e} bytes")
    if value != value.to_integral_value():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of bytes")
    return int(value)


def grid(text: str) -> tuple[int, int, int]:
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
        raise argparse.ArgumentTypeError(f"{text!r} is out of range: accepted 1 .. {1 << 30} points "
                                         "per dimension")
    return dims[0], dims[1], dims[2]


def beta_pair(text: str) -> tuple[int, float]:
    """K=V: k communicating CPUs reach the share V of the node's full bandwidth."""
    match = re.fullmatch(r"\s*([0-9]+)\s*=\s*(\S+)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"expected K=SHARE, e.g. 1=0.28, got {text!r}")
    k = int(match.group(1))
    share = finite(match.group(2))
    if k < 1 or not (0.0 < share <= 1.0):
        raise argparse.ArgumentTypeError(f"need K >= 1 and 0 < SHARE <= 1, got {text!r}")
    return k, share


def beta_map(pairs: Optional[Sequence[tuple[int, float]]]) -> Optional[dict[int, float]]:
    """The --beta pairs as {k: share}; a k given twice is an InputError."""
    if pairs is None:
        return None
    result: dict[int, float] = {}
    for k, share in pairs:
        if k in result:
            raise InputError(f"beta({k}) given twice")
        result[k] = share
    return result


# --- options several commands share -----------------------------------------

def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="PATH",
                        help="also write the numbers as a JSON document; '-' writes only JSON to stdout")


def add_outputs(parser: argparse.ArgumentParser, metavar: str = "PATH") -> None:
    parser.add_argument("-o", "--output", action="append", required=True, metavar=metavar,
                        help="file to write (.png or .svg); repeat for both")


def add_link(parser: argparse.ArgumentParser) -> None:
    """--b-inf-mbps and --t-lat-us: the Hockney parameters of a link."""
    parser.add_argument("--b-inf-mbps", type=bandwidth_mbps, required=True, metavar="MBPS",
                        help="asymptotic bandwidth in MB/s (10^6 B/s)")
    parser.add_argument("--t-lat-us", type=latency_us, required=True, metavar="US",
                        help="latency in microseconds")


def add_threads_reserved(parser: argparse.ArgumentParser, required: bool) -> None:
    """--n and --m of the eq. (14) and Fig. 5 commands."""
    parser.add_argument("--n", type=thread_count, required=required, help="threads per process")
    parser.add_argument("--m", type=thread_count, required=required, help="reserved threads")
