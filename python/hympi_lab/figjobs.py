"""The report's figures, drawn side by side in forked processes.

Drawing is most of a report's time (13 figures, about 5 of 8 s on a
2-core machine) and each figure is independent: a forked child draws one
into its file and exits, at most `workers` at a time. The child starts
with a copy of the parent's data, so a figure's draw function is the same
closure that would run in the parent. What a child reports goes back
through a pipe as one JSON line:

- ok: the file is written;
- note: the figure could not be drawn (the errors content.Blocks.figure
  turns into "Figure not drawn: ..."), with the message;
- output: OutputError (the file could not be written), raised again in the
  parent, so that a full disk is still exit 4;
- crash: any other exception, raised again in the parent as RuntimeError
  with the child's traceback: a bug stays loud.

Without fork (or with one worker) the figures are drawn in turn, here.
"""

from __future__ import annotations

import json
import os
import select
import sys
import traceback
from dataclasses import dataclass
from typing import Callable, Optional

from .errors import InputError, OutputError

# The errors a figure's data can cause: a note on the page, not a lost report.
FIGURE_ERRORS = (InputError, ValueError, OSError, KeyError, IndexError, ZeroDivisionError)


@dataclass
class Job:
    """One figure: its draw call, and once finished its outcome."""
    name: str
    draw: Callable[[], None]
    on_done: Callable[[Optional[str]], None]   # None: drawn; else the note's message
    pid: int = 0
    read_fd: int = -1


def default_workers() -> int:
    """The CPUs this process may run on (its affinity mask, so a Slurm
    step's share), at most 4 (a report has about 13 figures; measured on 2)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


class FigureJobs:
    """Draws figures in forked children, `workers` at a time; `finish()`
    waits for all. Each job's on_done runs in the parent as the job ends
    (whichever child ends first: waiting for the oldest left a core idle
    behind a long figure)."""

    def __init__(self, workers: int):
        self.workers = workers if hasattr(os, "fork") else 1
        self.running: list[Job] = []

    def submit(self, name: str, draw: Callable[[], None],
               on_done: Callable[[Optional[str]], None]) -> None:
        job = Job(name, draw, on_done)
        if self.workers <= 1:
            on_done(_draw_here(draw))
            return
        while len(self.running) >= self.workers:
            self._wait_any()
        self._start(job)
        self.running.append(job)

    def finish(self) -> None:
        while self.running:
            self._wait_any()

    def _start(self, job: Job) -> None:
        read_fd, write_fd = os.pipe()
        # Buffered output would be written twice: by the child and the parent.
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: draw, report, leave without cleanup (os._exit)
            os.close(read_fd)
            status = 0
            try:
                message = _outcome_line(job.draw)
                os.write(write_fd, message.encode("utf-8"))
            except BaseException:  # noqa: BLE001 - nothing may escape a forked child
                status = 1
            finally:
                os._exit(status)
        os.close(write_fd)
        job.pid, job.read_fd = pid, read_fd

    def _wait_any(self) -> None:
        # A child's pipe turns readable when it writes its outcome or exits.
        ready, _, _ = select.select([job.read_fd for job in self.running], [], [])
        job = next(job for job in self.running if job.read_fd in ready)
        self.running.remove(job)
        chunks = []
        while True:
            chunk = os.read(job.read_fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(job.read_fd)
        _, status = os.waitpid(job.pid, 0)
        text = b"".join(chunks).decode("utf-8", errors="replace")
        try:
            outcome = json.loads(text)
        except json.JSONDecodeError:
            raise RuntimeError(f"drawing figure {job.name} ended without an outcome "
                               f"(wait status {status})") from None
        if outcome["kind"] == "output":
            self._abandon()
            raise OutputError(outcome["message"])
        if outcome["kind"] == "crash":
            self._abandon()
            raise RuntimeError(f"drawing figure {job.name} failed:\n{outcome['message']}")
        job.on_done(outcome["message"] if outcome["kind"] == "note" else None)

    def _abandon(self) -> None:
        """After a failure: let the other children finish (no half-written
        file left behind) and wait for them, without taking their outcomes."""
        for job in self.running:
            while os.read(job.read_fd, 65536):
                pass
            os.close(job.read_fd)
            os.waitpid(job.pid, 0)
        self.running = []


def _draw_here(draw: Callable[[], None]) -> Optional[str]:
    try:
        draw()
    except FIGURE_ERRORS as err:
        return str(err)
    return None


def _outcome_line(draw: Callable[[], None]) -> str:
    try:
        draw()
    except OutputError as err:
        return json.dumps({"kind": "output", "message": str(err)})
    except FIGURE_ERRORS as err:
        return json.dumps({"kind": "note", "message": str(err)})
    except Exception:  # noqa: BLE001 - sent to the parent, raised there
        return json.dumps({"kind": "crash", "message": traceback.format_exc()})
    return json.dumps({"kind": "ok", "message": ""})


__all__ = ["FigureJobs", "FIGURE_ERRORS", "default_workers"]
