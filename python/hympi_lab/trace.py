"""Thread timelines: reading the Chrome Trace Event documents of `hympi solve --trace`.

The format (docs/json-schema.md, "Trace documents"): complete events
("ph": "X") with the phase as "name", the rank as "pid", the thread as
"tid", "ts" and "dur" in microseconds from that rank's loop start; every
gap on a thread is an explicit "idle" event. Drawing is plotting.gantt().
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


def load_trace(path: str) -> Trace:
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise InputError(f"{path}: not a hympi trace (no traceEvents list; write one with "
                         "'hympi solve --trace PATH')")
    info = data.get("otherData") if isinstance(data.get("otherData"), dict) else {}
    events = []
    for i, ev in enumerate(data["traceEvents"]):
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        try:
            rank, thread = int(ev["pid"]), int(ev["tid"])
            start, dur = float(ev["ts"]) * 1e-6, float(ev["dur"]) * 1e-6
            name = str(ev["name"])
        except (KeyError, TypeError, ValueError):
            raise InputError(f"{path}: traceEvents[{i}] is not a complete event with "
                             "pid, tid, ts, dur and name") from None
        if dur < 0:
            raise InputError(f"{path}: traceEvents[{i}] has a negative duration")
        events.append(Event(rank, thread, name, start, start + dur))
    if not events:
        raise InputError(f"{path}: the trace holds no events")
    ranks = max(e.rank for e in events) + 1
    threads = max(e.thread for e in events) + 1
    return Trace(path, events, ranks, threads, info)


def busy_share(trace: Trace) -> dict[str, float]:
    """Share of all thread-time in each phase (for captions)."""
    total: dict[str, float] = {}
    for e in trace.events:
        total[e.phase] = total.get(e.phase, 0.0) + (e.end - e.start)
    whole = sum(total.values()) or 1.0
    return {k: v / whole for k, v in total.items()}
