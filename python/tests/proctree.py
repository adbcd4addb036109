"""A process and everything below it, for tests that kill a running study
as a scheduler would (its cgroup, ranks included)."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def descendants(pid: int) -> list[int]:
    """Every live process below pid, from /proc (Open MPI's mpirun starts its
    ranks in process groups of their own, so killpg does not reach them)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL pid's process group and every process below it, as a
    scheduler ends a job's cgroup, and wait until none is left: a rank of the
    killed job still running while the next job starts is not what a killed
    study leaves behind."""
    below = descendants(pid)
    os.killpg(pid, signal.SIGKILL)
    for p in below:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() and
                                              "Z" not in _state(p) for p in below):
        time.sleep(0.05)


def _state(pid: int) -> str:
    try:
        return (Path(f"/proc/{pid}") / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "X"
