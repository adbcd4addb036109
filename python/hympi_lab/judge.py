"""Whether the data can carry a statement, before the report, `project`
or `advise` make it (issue 28: a report on two cores printed model errors of
+40627 %, crossovers after "6 of 30 runs within 15 %", efficiency bands up to
4.7 and Python's None in a sentence).

Pure functions of numbers, no I/O and no imports of the package: analysis.py,
sections.py and project.py ask here and say what the answer is.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Optional, Sequence

# A bar taller than this many times the median bar of its panel flattens the
# others into the axis: it is cut (and labelled with its value) instead.
OUTLIER_FACTOR = 10.0


def finite(value: Any) -> bool:
    """A real number (not None, bool, NaN or infinity)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def num(value: Any, spec: str = ".4g", none: str = "-") -> str:
    """A number as text, or `none` where there is no finite number: no
    'None', 'nan' or 'inf' ever reaches a sentence or a cell."""
    return format(value, spec) if finite(value) else none


@dataclass(frozen=True)
class Compared:
    """A model's prediction against a measurement with its run-to-run spread."""
    error: Optional[float]   # predicted / measured - 1; None: not judged (see verdict)
    verdict: str             # "no model", "not judged", "inside the spread", "within", "misses"

    def text(self, limit: float) -> str:
        """The error column: the signed error, marked when the spread covers
        it; the reason instead when it is not judged."""
        if self.verdict == "no model":
            return "-"
        if self.error is None:
            return self.verdict
        shown = f"{self.error * 100:+.0f} %"
        return shown + " (inside the spread)" if self.verdict == "inside the spread" else shown


def compare(predicted: Optional[float], measured: float, spread: float, limit: float,
            oversubscribed: bool = False) -> Compared:
    """Judge one model-vs-measurement row.

    - no prediction: "no model";
    - oversubscribed runs (threads sharing cores) or a measurement that is no
      positive finite number: "not judged", no error at all (the model's
      premise of n threads computing at once does not hold; a +40627 % error
      measures the scheduler);
    - the run-to-run spread (min..max over the median) at least the
      difference: "inside the spread" (the data cannot tell model and
      measurement apart);
    - otherwise "within" `limit` or "misses".
    """
    if predicted is None:
        return Compared(None, "no model")
    if oversubscribed:
        return Compared(None, "not judged (oversubscribed)")
    if not (finite(predicted) and finite(measured) and measured > 0):
        return Compared(None, "not judged (no finite numbers)")
    error = predicted / measured - 1.0
    if finite(spread) and abs(error) <= spread:
        return Compared(error, "inside the spread")
    return Compared(error, "within" if abs(error) <= limit else "misses")


def clip01(value: Optional[float]) -> Optional[float]:
    """An efficiency (or its band edge) clipped to what an efficiency can be."""
    if value is None or not finite(value):
        return None
    return min(1.0, max(0.0, float(value)))


def bar_cap(totals: Sequence[float]) -> Optional[float]:
    """Where to cut a panel's bars so that an outlier does not flatten the
    others: None when no bar exceeds OUTLIER_FACTOR times the median bar;
    else 1.5 times the tallest bar that does not (the cut bars are then drawn
    to the cap and labelled with their value)."""
    values = [t for t in totals if finite(t) and t > 0]
    if len(values) < 3:
        return None
    limit = OUTLIER_FACTOR * statistics.median(values)
    kept = [t for t in values if t <= limit]
    if len(kept) == len(values) or not kept:
        return None
    return 1.5 * max(kept)


def one_point(series: Sequence[Sequence[Any]]) -> bool:
    """Whether a figure's series (x lists) hold no curve: at most one
    distinct x each. A single point is a sentence or a table, not a plot."""
    return all(len(set(xs)) <= 1 for xs in series)


__all__ = ["OUTLIER_FACTOR", "finite", "num", "Compared", "compare", "clip01", "bar_cap", "one_point"]
