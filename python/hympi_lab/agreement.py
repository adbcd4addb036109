"""Whether every run of a user's program computed the same fields
(`hympi-lab study --app`): the checksums its reports carry by name
(hympi_report_json_fields, the Fortran wrapper's fields=, C++
write_report's checksum_fields), compared across schemes and across the
repeated runs of each.

What equal means, from what the numbers are: every scheme computes each
point by the same formula, so the fields agree to the last bit and only
the checksum's summation order can differ. hympi sums a rank's points in
one fixed order, then over ranks: runs of the same decomposition (ranks
and process grid) give the same sum bit for bit, and so does every repeated
run of one point. Between decompositions (pure MPI runs ranks x threads
ranks) the order differs, which may change the last bits (heat.c at 2 x 2,
24^3, it did not: docs/study.md), and the checksums agree to RELATIVE_TOLERANCE:
an l2 norm relative to itself, a sum relative to sqrt(points) x l2, which
bounds the sum of |values| (the scale of a sum's rounding; a sum near zero
has no relative digits of its own).

Pure: records in, verdicts out; sections.py and render.py show them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from . import schemes as schemes_mod
from .analysis import KernelAdvice, Study, advice_part, left_out

RELATIVE_TOLERANCE = 1e-12


@dataclass
class Run:
    """One point's record: its label, decomposition and checksums by field."""
    label: str
    decomposition: tuple[Any, ...]      # (ranks, process grid)
    points: float                       # grid points, for a sum's scale
    sums: dict[str, tuple[float, float]]                    # field -> (sum, l2)
    repeats: list[dict[str, tuple[float, float]]] = field(default_factory=list)  # per repetition


@dataclass
class FieldCheck:
    """The verdict on one field of one kernel over all its runs."""
    kernel: str
    field: str
    runs: int
    reference: str                      # the run the others are compared with
    sum: float
    l2: float
    decompositions: int
    largest: float                      # the largest relative difference across decompositions
    problems: list[str]

    @property
    def agree(self) -> bool:
        return not self.problems

    def text(self) -> str:
        if self.agree:
            across = (f"; across its {self.decompositions} decompositions within {RELATIVE_TOLERANCE:g} "
                      f"relative (largest difference {self.largest:.1e})" if self.decompositions > 1 else "")
            return (f"All {self.runs} runs of {self.kernel} agree on {self.field}: sum {self.sum:.15g}, "
                    f"l2 {self.l2:.15g} (bit-equal within each decomposition and between repeated "
                    f"runs{across}).")
        return (f"The runs of {self.kernel} DISAGREE on {self.field}: " + "; ".join(self.problems)
                + f". Compared with {self.reference} (sum {self.sum:.17g}, l2 {self.l2:.17g}); "
                f"expected: bit-equal within a decomposition and between repeated runs, "
                f"{RELATIVE_TOLERANCE:g} relative across decompositions.")


def _pair(entry: Any) -> Optional[tuple[str, tuple[float, float]]]:
    """(field, (sum, l2)) of a checksums entry, None when it is no such entry."""
    if not isinstance(entry, dict) or not isinstance(entry.get("field"), str):
        return None
    values = (entry.get("sum"), entry.get("l2"))
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return None
    return entry["field"], (float(values[0]), float(values[1]))


def _by_field(entries: Any) -> dict[str, tuple[float, float]]:
    pairs = [_pair(e) for e in entries] if isinstance(entries, list) else []
    return dict(p for p in pairs if p is not None)


def user_runs(study: Study) -> dict[str, list[Run]]:
    """The solve records of users' programs by kernel, masteronly first (the
    reference), labelled as the report labels them."""
    out: dict[str, list[Run]] = {}
    for r in study.of("solve", "solve"):
        rec = r["result"]
        if not str(rec.get("kernel", "")).startswith("user:"):
            continue
        meta = study.status.get(r["point"], {}).get("meta", {})
        scheme = "pure-mpi" if meta.get("scheme") == "pure-mpi" else str(rec.get("scheme"))
        grid = rec.get("grid") if isinstance(rec.get("grid"), list) else []
        points = float(math.prod(grid)) if grid else 1.0
        decomposition = (r["context"].get("ranks"), tuple(rec.get("proc_grid") or ()))
        repeats = [_by_field(run.get("checksums")) for run in rec.get("runs", []) if isinstance(run, dict)]
        out.setdefault(rec["kernel"], []).append(Run(
            schemes_mod.label(scheme, int(rec.get("reserved", 0) or 0)), decomposition, points,
            _by_field(rec.get("checksums")), repeats))
    for runs in out.values():
        runs.sort(key=lambda run: run.label != "masteronly")
    return out


def relative(a: tuple[float, float], b: tuple[float, float], points: float) -> float:
    """The larger of the sums' and the l2 norms' relative differences
    (a sum relative to sqrt(points) x l2: see the module's text)."""
    scale = max(abs(a[1]), abs(b[1]))
    sum_scale = math.sqrt(max(points, 1.0)) * scale
    d_sum = abs(a[0] - b[0]) / sum_scale if sum_scale > 0 else (0.0 if a[0] == b[0] else math.inf)
    d_l2 = abs(a[1] - b[1]) / scale if scale > 0 else 0.0
    return max(d_sum, d_l2)


def check_field(kernel: str, name: str, runs: list[Run]) -> FieldCheck:
    """One field over a kernel's runs: each against the first run of its
    decomposition bit for bit, the decompositions' first runs against the
    reference within RELATIVE_TOLERANCE, each run's repetitions bit for bit."""
    problems, largest = [], 0.0
    having = [run for run in runs if name in run.sums]
    problems += [f"{run.label} reported no checksum of {name}" for run in runs if name not in run.sums]
    ref = having[0]
    firsts: dict[tuple[Any, ...], Run] = {}
    for run in having:
        first = firsts.setdefault(run.decomposition, run)
        value = run.sums[name]
        if first is not run and value != first.sums[name]:
            problems.append(f"{run.label}: sum {value[0]:.17g}, l2 {value[1]:.17g} against "
                            f"{first.label}'s {first.sums[name][0]:.17g}, {first.sums[name][1]:.17g} "
                            f"(same decomposition, relative difference "
                            f"{relative(value, first.sums[name], run.points):.1e})")
        if first is run and run is not ref:
            diff = relative(value, ref.sums[name], run.points)
            largest = max(largest, diff)
            if not diff <= RELATIVE_TOLERANCE:
                problems.append(f"{run.label}: sum {value[0]:.17g}, l2 {value[1]:.17g} "
                                f"(relative difference {diff:.1e})")
        seen = {rep[name] for rep in run.repeats if name in rep}
        if len(seen) > 1:
            spread = max(relative(a, b, run.points) for a in seen for b in seen)
            problems.append(f"the {len(run.repeats)} runs of {run.label} gave {len(seen)} different "
                            f"checksums (relative difference up to {spread:.1e})")
    return FieldCheck(kernel, name, len(runs), ref.label, ref.sums[name][0], ref.sums[name][1],
                      len(firsts), largest, problems)


def check(study: Study) -> tuple[list[FieldCheck], list[str]]:
    """The verdict on every named field of every user kernel, and the user
    kernels whose reports carry no checksum at all (nothing to compare)."""
    checks, silent = [], []
    for kernel, runs in user_runs(study).items():
        names = list(dict.fromkeys(n for run in runs for n in run.sums))
        if not names:
            silent.append(kernel)
        checks += [check_field(kernel, n, runs) for n in names]
    return checks, silent


def silent_text(kernel: str) -> str:
    return (f"{kernel} reports no checksum, so the study cannot check that its schemes computed the "
            "same result: name the fields in its report (C: hympi_report_json_fields; Fortran: "
            "hympi_report_json's fields= and field_names=; C++: write_report's checksum_fields "
            "and field names).")


def guard(verdict: str, study: Study, advice: list[KernelAdvice], checks: list[FieldCheck]) -> str:
    """The recommendation, unless a user kernel's runs disagree on a field:
    then none for that code (a scheme that computes another result is no
    faster way to the same answer), the disagreement first, the timings for
    the record."""
    wrong = list(dict.fromkeys(c.kernel for c in checks if not c.agree))
    if not wrong:
        return verdict
    timings = "; ".join(advice_part(a) for a in advice if a.kernel in wrong)
    fields = "; ".join(f"{c.field} of {c.kernel} ({c.problems[0]})" for c in checks if not c.agree)
    return (f"No recommendation for your code ({', '.join(wrong)}): its runs do not compute the same "
            f"result: {fields}. Find why before comparing speed (a callback that writes outside its "
            f"box or races with another thread, a halo read before it was exchanged, an "
            f"uninitialised value). For the record, the timings: {timings or 'none'}."
            + left_out(study))


__all__ = ["RELATIVE_TOLERANCE", "Run", "FieldCheck", "user_runs", "relative", "check_field", "check",
           "silent_text", "guard"]
