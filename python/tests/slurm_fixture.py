"""A real Slurm cluster on emulated nodes, for tests (scripts/slurm-cluster,
docs/slurm-cluster.md).

A test module uses it with

    from slurm_fixture import slurm_cluster  # noqa: F401  (the fixture)

    def test_something(slurm_cluster):
        proc = slurm_cluster.exec(["sbatch", "-N", "2", "--wait", "--wrap", "..."])

The fixture is module-scoped: one cluster (2 nodes x 1 CPU unless the module
sets SLURM_CLUSTER = {"nodes": N, "cpus_per_node": C, "link": RATE}) for all
the module's tests, removed afterwards. Without root, or where
`slurm-cluster check` says the machine cannot host it, the tests are skipped
with the reason; with HYMPI_REQUIRE_SLURM=1 (make test) that is a failure.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "slurm-cluster"
STATE_DIR = Path("/run/hympi-slurm-cluster")
DEFAULT = {"nodes": 2, "cpus_per_node": 1, "link": "1gbit"}
# Job states after which a job does not run again (squeue/scontrol names).
FINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                "PREEMPTED", "BOOT_FAIL", "DEADLINE"}


def required() -> bool:
    return os.environ.get("HYMPI_REQUIRE_SLURM") == "1"


def unavailable() -> str | None:
    """Why this machine cannot run the Slurm cluster, or None if it can."""
    if not SCRIPT.is_file():
        return f"{SCRIPT} is missing"
    if os.geteuid() != 0:
        return "the Slurm cluster needs root (namespaces, Slurm's daemons)"
    proc = subprocess.run([str(SCRIPT), "check"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        return lines[-1] if lines else f"slurm-cluster check exited {proc.returncode}"
    return None


def skip_or_fail(reason: str) -> None:
    if required():
        pytest.fail(f"HYMPI_REQUIRE_SLURM=1 but the Slurm cluster cannot run: {reason}",
                    pytrace=False)
    pytest.skip(f"no Slurm cluster: {reason}")


def alive(pid: int, comm: str | None = None) -> bool:
    """True if PID runs (a zombie does not count) and, if comm is given, is
    that program."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
        return False
    return comm is None or stat[stat.index("(") + 1:stat.rindex(")")] == comm


@dataclass
class SlurmCluster:
    nodes: list[str]
    cpus_per_node: int
    link: str
    state_dir: Path = STATE_DIR

    def exec(self, args: Sequence[str], timeout: float = 120, cwd: Path | str = ROOT,
             env: Mapping[str, str] | None = None, check: bool = False) -> subprocess.CompletedProcess:
        """Runs a Slurm client command (sbatch, srun, salloc, squeue, ...) on
        the cluster, in cwd (the repository by default). env replaces the
        environment (default: this process's)."""
        proc = subprocess.run([str(SCRIPT), "exec", "--", *args], capture_output=True, text=True,
                              timeout=timeout, cwd=cwd, env=dict(env) if env is not None else None)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(args)} exited {proc.returncode}:\n"
                                 f"{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
        return proc

    def _script(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        proc = subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise AssertionError(f"slurm-cluster {' '.join(args)} exited {proc.returncode}:\n"
                                 f"{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
        return proc

    def stop_node(self, k: int, slurmd_only: bool = False) -> None:
        """Loses node k: kills everything on it (or only its slurmd)."""
        self._script("stop-node", str(k), *(["--slurmd-only"] if slurmd_only else []))

    def start_node(self, k: int, timeout: float = 30) -> None:
        """Restarts node k's slurmd and waits until Slurm has the node back."""
        self._script("start-node", str(k), "--timeout", str(int(timeout)), timeout=timeout + 30)

    def node_states(self) -> dict[str, str]:
        """sinfo's state of every node: idle, allocated, down*, idle*, ..."""
        out = self.exec(["sinfo", "-h", "-N", "-o", "%N %T"], timeout=30, check=True).stdout
        return dict(line.split() for line in out.splitlines() if line.strip())

    def wait_node_state(self, k: int, states: Sequence[str], timeout: float = 60) -> str:
        """Waits until node k's state (without the '*' of "not responding")
        is one of states; returns it."""
        name, deadline, state = self.nodes[k], time.monotonic() + timeout, "?"
        while time.monotonic() < deadline:
            state = self.node_states().get(name, "?")
            if state.rstrip("*~#") in states:
                return state
            time.sleep(0.5)
        raise AssertionError(f"{name} is still '{state}' after {timeout:.0f}s (wanted {list(states)})")

    def job(self, job_id: str) -> dict[str, str]:
        """scontrol show job: every Key=Value of the job (JobState, ExitCode,
        NodeList, Restarts, Reason, ...). Kept MinJobAge = 600 s after it ends."""
        out = self.exec(["scontrol", "show", "job", "-o", str(job_id)], timeout=90, check=True).stdout
        return dict(re.findall(r"(\w+)=(\S*)", out))

    def wait_job(self, job_id: str, timeout: float = 120) -> dict[str, str]:
        """Waits until the job has ended (a state in FINAL_STATES); returns
        job(). Polls every 0.3 s: sbatch --wait sleeps 2 s, then 8 s between
        its checks, so a 2-second job takes it 10 s."""
        deadline, record = time.monotonic() + timeout, {}
        while time.monotonic() < deadline:
            record = self.job(job_id)
            if record.get("JobState") in FINAL_STATES:
                return record
            time.sleep(0.3)
        raise AssertionError(f"job {job_id} has not ended after {timeout:.0f}s: {record.get('JobState')}")

    def sbatch(self, args: Sequence[str], timeout: float = 120, **kwargs: Any) -> tuple[str, dict[str, str]]:
        """Submits a batch job (sbatch --parsable ARGS), waits until it has
        ended; returns its id and job() record."""
        proc = self.exec(["sbatch", "--parsable", *args], timeout=60, check=True, **kwargs)
        job_id = proc.stdout.strip().split(";")[0]
        return job_id, self.wait_job(job_id, timeout)

    def daemon_pids(self) -> dict[str, int]:
        """The daemons started (name -> last recorded PID), from the state dir."""
        pids: dict[str, int] = {}
        path = self.state_dir / "pids"
        if path.is_file():
            for line in path.read_text().splitlines():
                name, pid = line.split()
                pids[name] = int(pid)
        return pids

    def running_daemons(self) -> dict[str, int]:
        """The recorded daemons that still run (name -> PID)."""
        return {name: pid for name, pid in self.daemon_pids().items()
                if alive(pid, "slurmd" if name.startswith("slurmd-") else name)}


def start_cluster(nodes: int = 2, cpus_per_node: int = 1, link: str = "1gbit",
                  timeout: float = 90) -> SlurmCluster:
    if STATE_DIR.exists():
        running = SlurmCluster([], 0, "").running_daemons()
        if running:   # someone else's cluster (another test run, or by hand): not ours to remove
            raise AssertionError(f"a Slurm cluster is already up and running ({STATE_DIR}, daemons {running}); "
                                 "one per machine: wait for it, or remove it with scripts/slurm-cluster down")
        # left by a run that was killed: its daemons are gone
        subprocess.run([str(SCRIPT), "down"], capture_output=True, text=True, timeout=120)
    proc = subprocess.run([str(SCRIPT), "up", "--nodes", str(nodes), "--cpus-per-node", str(cpus_per_node),
                           "--link", link, "--timeout", str(int(timeout))],
                          capture_output=True, text=True, timeout=timeout + 60)
    if proc.returncode != 0:
        raise AssertionError(f"slurm-cluster up exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return SlurmCluster([f"hympi-n{i}" for i in range(nodes)], cpus_per_node, link)


def stop_cluster() -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), "down"], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def slurm_cluster(request: pytest.FixtureRequest) -> Iterator[SlurmCluster]:
    reason = unavailable()
    if reason:
        skip_or_fail(reason)
    spec: dict[str, Any] = {**DEFAULT, **getattr(request.module, "SLURM_CLUSTER", {})}
    cluster = start_cluster(spec["nodes"], spec["cpus_per_node"], spec["link"])
    try:
        yield cluster
    finally:
        proc = stop_cluster()
        assert proc.returncode == 0, f"slurm-cluster down exited {proc.returncode}:\n{proc.stderr}"
