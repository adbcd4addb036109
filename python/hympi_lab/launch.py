"""How a study's runs are launched: the layout (ranks x threads on nodes,
Setting), the hostfile, the MPI launcher's command line with its binding, and
the emulated cluster (scripts/emulated-cluster) around a study."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import InputError
from .machine import Machine
from .options import StudyOptions
from .slurm import Allocation, allocation, choose_pmi, layout_problems, srun_path


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


@dataclass
class Setting:
    """What the machine and options resolve to: ranks, threads, nodes, binding."""
    ranks: int
    threads: int
    cores: int
    nodes: int
    nodes_kind: str                      # real | virtual | emulated
    ranks_per_node: int                  # passed as --ranks-per-node for virtual nodes (else 0)
    oversubscribed: bool
    launcher: list[str]                  # argv prefix up to (not including) -n
    binding: str                         # what binding was used, in words
    env: dict[str, str]
    # The same for pure-MPI runs (one core per rank, ranks x threads ranks).
    pure_launcher: list[str] = field(default_factory=list)
    pure_binding: str = ""
    pure_env: dict[str, str] = field(default_factory=dict)
    # srun only: the allocation's node count, spread over with -N and
    # --ntasks-per-node on each line (a job's SLURM_NTASKS_PER_NODE would
    # otherwise shape a step of another size), and the PMI plugin it names.
    srun_nodes: int = 0
    srun_mpi: str = ""

    def launch(self, cores_per_rank: int) -> tuple[list[str], str, dict[str, str]]:
        if cores_per_rank == 1 and self.threads != 1 and self.pure_launcher:
            return self.pure_launcher, self.pure_binding, self.pure_env
        return self.launcher, self.binding, self.env

    def argv(self, ranks: int, cores_per_rank: int) -> list[str]:
        """The launcher's argv for `ranks` ranks, up to the program."""
        launcher, _, _ = self.launch(cores_per_rank)
        if self.nodes_kind == "emulated":
            # scripts/emulated-cluster run takes ranks per node, not in all.
            return launcher + ["--np-per-node", str(max(1, ranks // self.nodes)), "--"]
        if self.srun_nodes:
            nodes = min(self.srun_nodes, ranks)
            spread = [f"--nodes={nodes}"]
            if ranks % nodes == 0:
                spread.append(f"--ntasks-per-node={ranks // nodes}")
            return launcher[:-1] + spread + launcher[-1:] + [str(ranks)]
        return launcher + [str(ranks)]


def resolve_setting(opts: StudyOptions, machine: Machine) -> Setting:
    """Ranks x threads that fit the machine, the node count, and the launcher with binding."""
    problems: list[str] = []
    nodes, kind = 1, "real"
    alloc = allocation(machine.slurm) if not opts.emulated_nodes else None
    if opts.hostfile:
        nodes = len(read_hostfile(opts.hostfile))
    elif alloc is not None:
        nodes = alloc.nodes
    if opts.emulated_nodes:
        nodes, kind = opts.emulated_nodes, "emulated"
    cores = machine.cores
    cores_per_node = max(1, cores // opts.emulated_nodes) if opts.emulated_nodes else cores
    threads = opts.threads
    ranks = opts.ranks
    if alloc is not None:
        # Inside an allocation its layout is the default: the tasks and CPUs
        # per task the user asked Slurm for.
        cores_per_node = min(alloc.cpus_per_node or [cores])
        if not threads:
            threads = alloc.cpus_per_task or (
                max(1, cores_per_node * alloc.nodes // alloc.tasks) if alloc.tasks else 0)
        if not ranks and alloc.tasks:
            ranks = alloc.tasks
    if not threads:
        # One rank per NUMA domain is the hybrid layout the papers measure;
        # at least 2 threads so that the overlap schemes can run.
        per_rank = cores_per_node // max(1, min(machine.numa_domains, cores_per_node))
        threads = max(2, per_rank)
        # The study needs 2 ranks: on one node with one NUMA domain (or too
        # few), split the node's cores between them rather than run twice
        # as many threads as cores (seen on a 16-core, 1-domain machine:
        # 2 x 16 threads on 16 cores, and no recommendation).
        if not ranks and nodes * (cores_per_node // threads) < 2:
            threads = max(2, cores_per_node * nodes // 2 // max(1, nodes))
    if not ranks:
        ranks = max(2, nodes * max(1, cores_per_node // threads))
    if ranks < 2:
        problems.append(f"--ranks {ranks}: the study needs at least 2 ranks (its benchmarks "
                        "exchange messages between ranks)")
    if threads < 1 or threads > 1024:
        problems.append(f"--threads {threads} is out of range: accepted 1 .. 1024")
    if ranks > 4096:
        problems.append(f"--ranks {ranks}: more than 4096 ranks is not a study size")
    if nodes > 1 and ranks % nodes:
        problems.append(f"--ranks {ranks} does not divide into the {nodes} nodes")
    if alloc is not None and not problems:
        problems += layout_problems(alloc, ranks, threads)
    if problems:
        raise InputError("; ".join(problems))
    ranks_per_node = 0
    if nodes == 1:
        # One machine: virtual nodes of half the ranks each, so that the
        # inter-node benchmarks run (labelled virtual everywhere).
        kind = "virtual"
        nodes = 2 if ranks % 2 == 0 else 1
        ranks_per_node = ranks // nodes if nodes == 2 else 0
    if alloc is not None and alloc.cpus:
        total_cores = alloc.cpus
    else:
        total_cores = cores * (1 if kind != "real" or not opts.hostfile else nodes)
    oversubscribed = ranks * threads > total_cores
    pmi = ""
    if (opts.launcher or "mpirun") == "srun":
        pmi = choose_pmi(opts.mpi, srun_path(), (machine.slurm or {}).get("SLURM_MPI_TYPE", ""))
    launcher, binding, env = launcher_command(opts, ranks, threads, oversubscribed, pmi)
    pure = launcher_command(opts, ranks * threads, 1, oversubscribed, pmi)
    # In an allocation "cores" are all its CPUs (what the oversubscription
    # test and the report's layout line count against).
    return Setting(ranks, threads, total_cores if alloc is not None else cores, nodes, kind,
                   ranks_per_node, oversubscribed, launcher, binding, env, *pure,
                   srun_nodes=alloc.nodes if pmi and alloc is not None else 0, srun_mpi=pmi)


# Where Open MPI's mpirun and ranks, then mpirun's PMIx server, take a
# topology file instead of probing the machine (with_topology_file).
TOPOLOGY_FILE_VARS = ("OMPI_MCA_hwloc_base_topo_file", "PMIX_MCA_pmix_hwloc_topo_file")


def reads_topology_file(setting: Setting, opts: StudyOptions) -> bool:
    """Whether the study's runs read this machine's topology from a file
    (with_topology_file): Open MPI's mpirun with every rank on this machine
    (no hostfile, not srun, one node), and no topology file of the user's."""
    return (opts.mpi == "openmpi" and (opts.launcher or "mpirun") != "srun" and not opts.hostfile
            and setting.nodes_kind == "virtual"
            and not any(var in os.environ for var in TOPOLOGY_FILE_VARS))


def with_topology_file(setting: Setting, path: Path) -> Setting:
    """`setting` with Open MPI's runs reading this machine's topology from
    `path` (machine.write_topology) instead of probing it in mpirun and in
    every rank: a 2-rank `hympi info` took 0.175 s against 0.216 s of wall
    time, 0.166 against 0.217 CPU-s (2-core VM, 2026-11-28). mpirun's PMIx
    server probes it once more, PCI devices included, unless its own
    variable names the file too: 0.151 CPU-s with both, 0.162 with Open
    MPI's alone (2026-11-28). Only for a setting where reads_topology_file
    holds."""
    topo = {var: str(path) for var in TOPOLOGY_FILE_VARS}
    return replace(setting, env={**setting.env, **topo},
                   pure_env={**setting.pure_env, **topo} if setting.pure_launcher else setting.pure_env)


def topology_file_works(setting: Setting) -> bool:
    """Whether mpirun starts with the setting's topology file: an hwloc in
    Open MPI that cannot read lstopo's XML fails every launch in orte_init.
    One rank of `true` (about 0.1 s)."""
    try:
        proc = subprocess.run(setting.launcher + ["1", "true"], env={**os.environ, **setting.env},
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def read_hostfile(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            hosts = []
            for line in handle:
                word = line.split("#", 1)[0].split()
                if word and word[0] not in hosts:
                    hosts.append(word[0])
    except OSError as err:
        raise InputError(f"--hostfile {path}: {err.strerror or err}") from None
    if not hosts:
        raise InputError(f"--hostfile {path}: names no host")
    return hosts


LAUNCHERS = {"openmpi": {"mpirun": "mpirun.openmpi", "mpiexec": "mpiexec.openmpi"},
             "mpich": {"mpirun": "mpirun.mpich", "mpiexec": "mpiexec.mpich"}}


def ucx_pml_devices() -> list[str]:
    """This machine's InfiniBand devices that Open MPI's ucx PML would use (mlx*)."""
    return sorted(p.name for p in Path("/sys/class/infiniband").glob("mlx*"))


def launcher_command(opts: StudyOptions, ranks: int, threads: int, oversubscribed: bool,
                     pmi: str = "") -> tuple[list[str], str, dict[str, str]]:
    """The launcher's argv up to the rank count, the binding in words, and the environment.

    Open MPI binds by default (to core or socket) and MPICH's Hydra does not,
    so each gets its binding said explicitly: every rank on `threads`
    consecutive cores with its OpenMP threads pinned close, or, when the
    machine is oversubscribed, no binding at all (pinned threads that share a
    core would serialise). srun names its PMI plugin (`pmi`, slurm.choose_pmi).
    """
    env = {"OMP_NUM_THREADS": str(threads)}
    name = opts.launcher or "mpirun"
    if name == "srun":
        argv = [srun_path(), f"--mpi={pmi or 'pmix'}", f"--cpus-per-task={threads}"]
        if oversubscribed:
            argv += ["--overcommit", "--cpu-bind=none"]
            binding = "none (srun --cpu-bind=none: oversubscribed)"
        else:
            argv += ["--cpu-bind=cores"]
            env.update(OMP_PROC_BIND="close", OMP_PLACES="cores")
            binding = f"srun --cpu-bind=cores, {threads} cores per rank; OMP_PROC_BIND=close"
        return argv + ["-n"], binding, env
    candidates = [LAUNCHERS[opts.mpi][name], name]
    exe = next((shutil.which(c) for c in candidates if shutil.which(c)), None)
    if not exe:
        raise InputError(f"--launcher {name}: none of {', '.join(candidates)} is installed "
                         f"(install the {'openmpi-bin' if opts.mpi == 'openmpi' else 'mpich'} package)")
    if opts.mpi == "openmpi":
        argv = [exe]
        if not opts.hostfile and "OMPI_MCA_pml" not in os.environ and not ucx_pml_devices():
            # Open MPI 4.1 raises its ucx PML above ob1 only for the devices of
            # pml_ucx_devices (default mlx*); without one it runs ob1, but only
            # after probing UCX: 0.2-0.3 s of each launch here. Naming ob1 skips
            # the probe and changes nothing that runs (one machine, no hostfile).
            env["OMPI_MCA_pml"] = "ob1"
        if os.geteuid() == 0:
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        if opts.hostfile:
            argv += ["--hostfile", opts.hostfile]
        if oversubscribed:
            argv += ["--oversubscribe", "--bind-to", "none"]
            binding = "none (Open MPI --bind-to none: oversubscribed)"
            env["OMP_WAIT_POLICY"] = "passive"
            # Open MPI counts ranks, not threads: 2 ranks x 2 threads on 2
            # cores is not oversubscribed to it, so a rank waiting in a
            # reduction spins while its peer's threads want the core (cg's
            # points took 2x the wall time and CPU time without this).
            env["OMPI_MCA_mpi_yield_when_idle"] = "1"
        else:
            argv += ["--map-by", f"slot:PE={threads}", "--bind-to", "core"]
            env.update(OMP_PROC_BIND="close", OMP_PLACES="cores")
            binding = (f"Open MPI --map-by slot:PE={threads} --bind-to core ({threads} cores per "
                       "rank); OMP_PROC_BIND=close, OMP_PLACES=cores")
    else:
        argv = [exe]
        if opts.hostfile:
            argv += ["-f", opts.hostfile]
        if oversubscribed:
            binding = "none (MPICH Hydra default; oversubscribed)"
            env["OMP_WAIT_POLICY"] = "passive"
        else:
            argv += ["-bind-to", f"core:{threads}"]
            env.update(OMP_PROC_BIND="close", OMP_PLACES="cores")
            binding = (f"MPICH Hydra -bind-to core:{threads} ({threads} cores per rank); "
                       "OMP_PROC_BIND=close, OMP_PLACES=cores")
    return argv + ["-n"], binding, env


class EmulatedCluster:
    """scripts/emulated-cluster up/down around the study (root only)."""

    def __init__(self, opts: StudyOptions, setting: Setting):
        self.script = repo_root() / "scripts" / "emulated-cluster"
        if not self.script.is_file():
            raise InputError(f"--emulated-nodes needs {self.script}, which is missing")
        self.opts = opts
        self.is_up = False
        self.per_node = setting.ranks // opts.emulated_nodes
        cpus = max(1, setting.cores // opts.emulated_nodes)
        self.up_argv = [str(self.script), "up", "--nodes", str(opts.emulated_nodes),
                        "--cpus-per-node", str(cpus), "--link", opts.link, "--mpi", opts.mpi]
        launcher = [str(self.script), "run", "--mpi", opts.mpi]
        env = {"OMP_NUM_THREADS": str(setting.threads), "OMP_WAIT_POLICY": "passive"}
        self.setting = Setting(setting.ranks, setting.threads, setting.cores, opts.emulated_nodes,
                               "emulated", 0, setting.oversubscribed, launcher,
                               f"emulated-cluster run ({self.per_node} ranks per node, no binding)",
                               env)

    def up(self) -> None:
        proc = subprocess.run(self.up_argv, capture_output=True, text=True)
        if proc.returncode != 0:
            raise InputError(f"emulated cluster did not come up: {proc.stderr.strip()[-300:]}")
        self.is_up = True

    def down(self) -> None:
        """Takes down the cluster this study brought up, and only that: after
        a failed up (one already up, e.g. scripts/slurm-cluster's) nothing."""
        if self.is_up:
            subprocess.run([str(self.script), "down"], capture_output=True, text=True)
            self.is_up = False
