"""The runs of one `--app` point as one document (`hympi-lab study --app`,
--app-repeat): a user's program reports one run of its timed loop
(hympi_report_json, Domain::write_report), so the study runs it several
times and keeps what hympi solve --repeat keeps for a built-in kernel:
min, median and max of the loop's time over the runs, and the phases,
fractions and trace of the median run. Each run's checksums stay in the
record ("runs"), so that the report can check that they agree.

Pure: documents in, a document out; runpoint.py reads and writes the files.
"""

from __future__ import annotations

import statistics
from typing import Any


def one_result(doc: Any) -> bool:
    """Whether a user's report holds the one solve result the study reads."""
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list) or len(results) != 1 or not isinstance(results[0], dict):
        return False
    rec = results[0]
    time_s = rec.get("time_s")
    return (isinstance(rec.get("kernel"), str) and isinstance(time_s, dict)
            and _number(time_s.get("median")))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def median_run(times: list[float]) -> int:
    """The index of the median run (of an even count, the faster of the two
    middle ones): its phases and trace stand for the point."""
    order = sorted(range(len(times)), key=lambda i: (times[i], i))
    return order[(len(order) - 1) // 2]


def merge(docs: list[dict[str, Any]]) -> tuple[dict[str, Any], int]:
    """One document of the runs (each passed one_result) and the index of
    the run whose record, context and trace it keeps. time_s is min, median
    and max of the runs' loop times; mlups is that of the median time;
    repeat is the count of runs; runs lists each run's time and checksums."""
    records = [doc["results"][0] for doc in docs]
    times = [float(rec["time_s"]["median"]) for rec in records]
    mid = median_run(times)
    merged = dict(records[mid])
    median = statistics.median(times)
    merged["time_s"] = {"min": min(times), "median": median, "max": max(times)}
    merged["repeat"] = len(records)
    if _number(merged.get("mlups")) and median > 0:
        merged["mlups"] = merged["mlups"] * times[mid] / median
    merged["runs"] = [{"time_s": t, "checksum": rec.get("checksum"), "l2": rec.get("l2"),
                       "checksums": rec.get("checksums", [])} for t, rec in zip(times, records)]
    return {"context": docs[mid].get("context", {}), "results": [merged]}, mid


__all__ = ["one_result", "median_run", "merge"]
