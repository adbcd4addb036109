"""Thread timelines: reading the Chrome Trace Event documents of `hympi solve --trace`.

The format (docs/json-schema.md, "Trace documents"): complete events
("ph": "X") with the phase as "name", the rank as "pid", the thread as
"tid", "ts" and "dur" in microseconds from that rank's loop start; every
gap on a thread is an explicit "idle" event. Drawing is plotting.gantt().
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from .errors import InputError
from .results import read_json

PHASES = ("compute_interior", "compute_boundary", "pack", "unpack", "comm", "idle")


@dataclass(frozen=True)
class Event:
    rank: int
    thread: int
    phase: str
    start: float  # seconds from the rank's loop start
    end: float


@dataclass(frozen=True)
class Trace:
    path: str
    events: list[Event]
    ranks: int
    threads: int
    info: dict[str, Any]  # otherData: kernel, scheme, reserved, iters, context

    def thread_events(self, rank: int, thread: int) -> list[Event]:
        return sorted((e for e in self.events if e.rank == rank and e.thread == thread),
                      key=lambda e: e.start)

    @property
    def title(self) -> str:
        i = self.info
        scheme = i.get("scheme", "?")
        if i.get("reserved"):
            scheme += f" (m = {i['reserved']})"
        if scheme == "masteronly" and self.threads == 1:
            scheme = "pure MPI (masteronly, 1 thread)"
        return (f"{i.get('kernel', '?')} under {scheme}: {self.ranks} ranks x "
                f"{self.threads} threads")


# Bounds for what a trace may hold. pid/tid index rows of the timeline (the
# drawing allocates per thread), so an absurd id must be refused before
# anything is sized by it. Declared counts (otherData.ranks / .threads, which
# hympi writes) bound the ids exactly; these caps bound the declared counts
# and the ids of a trace that declares none. Threads: no node has more than
# a few hundred hardware threads per process. Ranks only count (the drawing
# shows the first few), so their cap is generous.
MAX_RANKS = 1 << 20
MAX_THREADS = 1024
# ts + dur in microseconds: 1e12 us is 11.6 days, longer than any traced loop
# (the document grows with every iteration). Beyond it the nanoseconds the
# events are rounded to, and then whole durations, vanish in the float
# (ts = 1e300 left every duration 0).
MAX_TIME_US = 1e12


def _declared(path: str, info: dict[str, Any], key: str, cap: int) -> Optional[int]:
    """otherData[key] as a count in 1 .. cap, None when the trace does not say."""
    if key not in info:
        return None
    value = info[key]
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= cap:
        raise InputError(f"{path}: otherData.{key} {value!r} is out of range: accepted whole "
                         f"numbers 1 .. {cap}")
    return value


def _index(path: str, i: int, ev: dict[str, Any], key: str, what: str,
           declared: Optional[int], cap: int) -> int:
    """The event's pid or tid, checked against the declared count or the cap."""
    value = ev[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{path}: traceEvents[{i}] has {key} {value!r}: not a whole number")
    if declared is not None:
        if not 0 <= value < declared:
            raise InputError(f"{path}: traceEvents[{i}] has {key} {value}, outside the "
                             f"{declared} {what} the trace declares (otherData.{what}: "
                             f"{key}s 0 .. {declared - 1})")
    elif not 0 <= value < cap:
        raise InputError(f"{path}: traceEvents[{i}] has {key} {value}, outside 0 .. {cap - 1} "
                         f"(the trace declares no otherData.{what}; at most {cap} {what})")
    return value


def _time_us(path: str, i: int, ev: dict[str, Any], key: str) -> float:
    value = ev[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{path}: traceEvents[{i}] has {key} {value!r}: not a number")
    if not (math.isfinite(value) and 0.0 <= value <= MAX_TIME_US):
        raise InputError(f"{path}: traceEvents[{i}] has {key} {value!r}: microseconds must be "
                         f"finite and in 0 .. {MAX_TIME_US:g}")
    return float(value)


def load_trace(path: str) -> Trace:
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise InputError(f"{path}: not a hympi trace (no traceEvents list; write one with "
                         "'hympi solve --trace PATH')")
    info = data.get("otherData") if isinstance(data.get("otherData"), dict) else {}
    declared_ranks = _declared(path, info, "ranks", MAX_RANKS)
    declared_threads = _declared(path, info, "threads", MAX_THREADS)
    events = []
    for i, ev in enumerate(data["traceEvents"]):
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        if not all(k in ev for k in ("pid", "tid", "ts", "dur", "name")):
            raise InputError(f"{path}: traceEvents[{i}] is not a complete event with "
                             "pid, tid, ts, dur and name")
        rank = _index(path, i, ev, "pid", "ranks", declared_ranks, MAX_RANKS)
        thread = _index(path, i, ev, "tid", "threads", declared_threads, MAX_THREADS)
        ts, dur = _time_us(path, i, ev, "ts"), _time_us(path, i, ev, "dur")
        if ts + dur > MAX_TIME_US:
            raise InputError(f"{path}: traceEvents[{i}] ends at {ts + dur:g} us, beyond "
                             f"{MAX_TIME_US:g} us")
        events.append(Event(rank, thread, str(ev["name"]), ts * 1e-6, (ts + dur) * 1e-6))
    if not events:
        raise InputError(f"{path}: the trace holds no events")
    if not any(e.end > e.start for e in events):
        # busy_share would divide by zero and report 0 % for every phase.
        raise InputError(f"{path}: every event of the trace has zero duration")
    ranks = declared_ranks or max(e.rank for e in events) + 1
    threads = declared_threads or max(e.thread for e in events) + 1
    return Trace(path, events, ranks, threads, info)


def busy_share(trace: Trace) -> dict[str, float]:
    """Share of all thread-time in each phase (for captions)."""
    total: dict[str, float] = {}
    for e in trace.events:
        total[e.phase] = total.get(e.phase, 0.0) + (e.end - e.start)
    whole = sum(total.values()) or 1.0
    return {k: v / whole for k, v in total.items()}
