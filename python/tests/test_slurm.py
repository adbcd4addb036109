"""The study's reading of a Slurm allocation (hympi_lab/slurm.py, launch.py),
without a Slurm: SLURM_* variables as sbatch sets them, and a stand-in srun
that answers --mpi=list like Slurm 22.05 does (on standard error)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hympi_lab.errors import InputError
from hympi_lab.launch import resolve_setting
from hympi_lab.machine import Machine
from hympi_lab.options import StudyOptions
from hympi_lab.slurm import allocation, choose_pmi, expand_counts, layout_problems

# What sbatch -N 2 --ntasks-per-node=2 --cpus-per-task=4 sets (22.05).
JOB = {"SLURM_JOB_ID": "4242", "SLURM_JOB_NUM_NODES": "2", "SLURM_JOB_NODELIST": "n[0-1]",
       "SLURM_JOB_CPUS_PER_NODE": "8(x2)", "SLURM_NTASKS": "4", "SLURM_CPUS_PER_TASK": "4",
       "SLURM_NTASKS_PER_NODE": "2", "SLURM_TASKS_PER_NODE": "2(x2)"}


def fake_srun(tmp_path: Path, plugins: list[str]) -> Path:
    """An srun whose --mpi=list offers `plugins`; anything else fails."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    srun = bin_dir / "srun"
    listing = "".join(f"echo 'srun: {p}' >&2\n" for p in plugins)
    srun.write_text("#!/bin/sh\nif [ \"$1\" = --mpi=list ]; then\n"
                    "echo 'srun: MPI types are...' >&2\n" + listing + "exit 0\nfi\nexit 1\n")
    srun.chmod(srun.stat().st_mode | stat.S_IXUSR)
    return srun


def test_a_failing_srun_is_named(tmp_path):
    srun = fake_srun(tmp_path, [])
    srun.write_text("#!/bin/sh\necho 'srun: fatal: Could not establish a configuration source' >&2\n"
                    "exit 1\n")
    with pytest.raises(InputError, match="failed \\(exit 1\\): srun: fatal: Could not establish"):
        choose_pmi("openmpi", str(srun))


def machine(env: dict[str, str]) -> Machine:
    return Machine("n0", 8, 1, {}, 1 << 30, env, "test")


def test_expand_counts():
    assert expand_counts("8(x2),4") == [8, 8, 4]
    assert expand_counts("1") == [1]
    with pytest.raises(ValueError):
        expand_counts("8(x)")


def test_allocation_reads_the_job():
    alloc = allocation(JOB)
    assert (alloc.job_id, alloc.nodes, alloc.cpus, alloc.tasks, alloc.cpus_per_task) == \
        ("4242", 2, 16, 4, 4)
    assert allocation({}) is None and allocation({"SLURM_CONF": "x"}) is None
    with pytest.raises(InputError, match="cannot be read"):
        allocation({**JOB, "SLURM_JOB_CPUS_PER_NODE": "eight"})


def test_layout_problems_name_the_allocation():
    alloc = allocation(JOB)
    assert layout_problems(alloc, 4, 4) == []
    assert layout_problems(alloc, 2, 8) and "CPUs per task" in layout_problems(alloc, 2, 8)[0]
    too_many = layout_problems(allocation({**JOB, "SLURM_CPUS_PER_TASK": ""}), 8, 4)
    assert len(too_many) == 1 and "needs 32 CPUs" in too_many[0] and "has 16" in too_many[0]
    # 16 CPUs in all, but 4 ranks of 4 threads on one node do not fit its 8.
    uneven = allocation({**JOB, "SLURM_CPUS_PER_TASK": "", "SLURM_JOB_CPUS_PER_NODE": "8,8"})
    assert layout_problems(uneven, 2, 8) == [] and layout_problems(uneven, 4, 4) == []


def test_choose_pmi_matches_the_mpi(tmp_path):
    srun = str(fake_srun(tmp_path, ["cray_shasta", "none", "pmi2", "pmix", "pmix_v4"]))
    assert choose_pmi("openmpi", srun) == "pmix"
    assert choose_pmi("mpich", srun) == "pmi2"
    assert choose_pmi("mpich", srun, chosen="pmix") == "pmix"
    with pytest.raises(InputError, match="SLURM_MPI_TYPE=pmi3"):
        choose_pmi("openmpi", srun, chosen="pmi3")
    (tmp_path / "b").mkdir()
    bare = str(fake_srun(tmp_path / "b", ["none"]))
    with pytest.raises(InputError, match="needs the PMI plugin pmix.*offers none"):
        choose_pmi("openmpi", bare)


def test_srun_lines_name_plugin_binding_and_spread(tmp_path, monkeypatch):
    fake_srun(tmp_path, ["none", "pmi2", "pmix"])
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    opts = StudyOptions(launcher="srun", mpi="openmpi")
    st = resolve_setting(opts, machine(JOB))
    # The allocation's layout is the default: 4 tasks of 4 CPUs on 2 nodes.
    assert (st.ranks, st.threads, st.nodes, st.nodes_kind, st.oversubscribed) == (4, 4, 2, "real", False)
    argv = st.argv(4, 4)
    assert argv[1:] == ["--mpi=pmix", "--cpus-per-task=4", "--cpu-bind=cores", "--nodes=2",
                        "--ntasks-per-node=2", "-n", "4"]
    assert st.argv(1, 1)[-4:] == ["--nodes=1", "--ntasks-per-node=1", "-n", "1"]
    pure = st.argv(16, 1)
    assert "--cpus-per-task=1" in pure and "--ntasks-per-node=8" in pure
    assert st.srun_mpi == "pmix" and st.srun_nodes == 2
    mpich = resolve_setting(StudyOptions(launcher="srun", mpi="mpich"), machine(JOB))
    assert "--mpi=pmi2" in mpich.argv(4, 4)
    monkeypatch.setenv("SLURM_MPI_TYPE", "pmix")
    chosen = resolve_setting(StudyOptions(launcher="srun", mpi="mpich"),
                             machine({**JOB, "SLURM_MPI_TYPE": "pmix"}))
    assert "--mpi=pmix" in chosen.argv(4, 4)


def test_a_layout_larger_than_the_allocation_is_refused(tmp_path, monkeypatch):
    fake_srun(tmp_path, ["pmix"])
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(InputError, match="--threads 8 is more than the 4 CPUs per task"):
        resolve_setting(StudyOptions(launcher="srun", ranks=2, threads=8), machine(JOB))
    with pytest.raises(InputError, match="needs 32 CPUs.*has 16"):
        resolve_setting(StudyOptions(launcher="srun", ranks=8, threads=4),
                        machine({**JOB, "SLURM_CPUS_PER_TASK": ""}))
    # mpirun inside the allocation is held to the same CPUs.
    with pytest.raises(InputError, match="needs 32 CPUs"):
        resolve_setting(StudyOptions(ranks=8, threads=4), machine({**JOB, "SLURM_CPUS_PER_TASK": ""}))
    with pytest.raises(InputError, match="offers none"):
        fake_srun(tmp_path, ["none"])
        resolve_setting(StudyOptions(launcher="srun"), machine(JOB))
