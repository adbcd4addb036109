"""The study's Open MPI runs on one machine read its topology from the file
that lstopo writes into the study directory (machine.write_topology,
launch.with_topology_file), and only those runs: every other launcher,
MPI and setting probes the topology as before. The quick study in
test_study.py checks the file and its use in every logged command."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hympi_lab import machine
from hympi_lab import study
from hympi_lab.launch import Setting, reads_topology_file, topology_file_works, with_topology_file
from hympi_lab.options import StudyOptions

VAR = "OMPI_MCA_hwloc_base_topo_file"
PMIX_VAR = "PMIX_MCA_pmix_hwloc_topo_file"  # mpirun's PMIx server reads it too


def setting(kind: str = "virtual", pure: bool = True) -> Setting:
    return Setting(2, 2, 2, 2 if kind == "virtual" else 1, kind, 1, True, ["mpirun.openmpi", "-n"], "none",
                   {"OMPI_MCA_pml": "ob1"}, ["mpirun.openmpi", "-n"] if pure else [], "none",
                   {"OMP_WAIT_POLICY": "passive"} if pure else {})


def test_write_topology_writes_lstopo_xml_whole(tmp_path: Path) -> None:
    if not (machine.shutil.which("lstopo-no-graphics") or machine.shutil.which("lstopo")):
        pytest.skip("hwloc's lstopo is not installed")
    path = tmp_path / "topology.xml"
    assert machine.write_topology(path)
    root = ET.parse(path).getroot()
    assert root.tag == "topology" and any(o.get("type") == "Core" for o in root.iter("object"))


def test_no_file_without_lstopo_or_room(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not machine.write_topology(tmp_path / "missing-dir" / "topology.xml")
    assert not (tmp_path / "missing-dir").exists()
    monkeypatch.setattr(machine.shutil, "which", lambda name: None)
    assert not machine.write_topology(tmp_path / "topology.xml")
    assert not (tmp_path / "topology.xml").exists()


def test_lstopo_that_fails_or_prints_no_xml_leaves_no_file(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for body in ("exit 3", "echo '<topology><object'"):
        fake = tmp_path / "lstopo"
        fake.write_text(f"#!/bin/sh\n{body}\n")
        fake.chmod(0o755)
        monkeypatch.setattr(machine.shutil, "which", lambda name, f=fake: str(f))
        assert not machine.write_topology(tmp_path / "topology.xml"), body
        assert not (tmp_path / "topology.xml").exists()


def test_open_mpi_on_one_machine_reads_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VAR, raising=False)
    monkeypatch.delenv(PMIX_VAR, raising=False)
    assert reads_topology_file(setting(), StudyOptions(mpi="openmpi"))
    assert reads_topology_file(setting(), StudyOptions(mpi="openmpi", launcher="mpiexec"))
    got = with_topology_file(setting(), Path("/s/topology.xml"))
    assert got.env == {"OMPI_MCA_pml": "ob1", VAR: "/s/topology.xml", PMIX_VAR: "/s/topology.xml"}
    assert got.pure_env == {"OMP_WAIT_POLICY": "passive", VAR: "/s/topology.xml", PMIX_VAR: "/s/topology.xml"}
    for launched in (got.launch(1), got.launch(2)):
        assert launched[2][VAR] == launched[2][PMIX_VAR] == "/s/topology.xml"
    # without a separate pure-MPI launcher its (empty) environment stays empty
    assert with_topology_file(setting(pure=False), Path("/t")).pure_env == {}


@pytest.mark.parametrize("opts, kind", [
    (StudyOptions(mpi="mpich"), "virtual"),                       # MPICH probes for itself
    (StudyOptions(mpi="openmpi", launcher="srun"), "virtual"),    # srun: Slurm starts the ranks
    (StudyOptions(mpi="openmpi", hostfile="hosts"), "virtual"),   # other machines
    (StudyOptions(mpi="openmpi"), "real"),                        # several nodes
    (StudyOptions(mpi="openmpi"), "emulated"),
])
def test_every_other_setting_probes_as_before(opts: StudyOptions, kind: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VAR, raising=False)
    monkeypatch.delenv(PMIX_VAR, raising=False)
    assert not reads_topology_file(setting(kind), opts)


@pytest.mark.parametrize("users_var", [VAR, PMIX_VAR])
def test_the_users_own_topology_file_is_kept(users_var: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VAR, raising=False)
    monkeypatch.delenv(PMIX_VAR, raising=False)
    monkeypatch.setenv(users_var, "/mine.xml")
    assert not reads_topology_file(setting(), StudyOptions(mpi="openmpi"))


def mpirun_setting() -> Setting:
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_pml": "ob1"}
    return Setting(2, 1, 2, 2, "virtual", 1, True, ["mpirun.openmpi", "--oversubscribe", "-n"], "none", env)


@pytest.mark.skipif(not shutil.which("mpirun.openmpi") or not shutil.which("lstopo-no-graphics"),
                    reason="needs Open MPI's mpirun and hwloc's lstopo")
def test_a_file_open_mpi_cannot_read_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VAR, raising=False)
    monkeypatch.delenv(PMIX_VAR, raising=False)
    good = study._topology_from_file(mpirun_setting(), tmp_path / "topology.xml")
    path = str((tmp_path / "topology.xml").resolve())
    assert good.env[VAR] == good.env[PMIX_VAR] == path and topology_file_works(good)
    # An XML this hwloc cannot load (as an older hwloc in Open MPI would find
    # lstopo's): mpirun fails in orte_init, so the study probes as before.
    bad = tmp_path / "bad.xml"
    bad.write_text('<?xml version="1.0"?><topology version="9.0"><object type="Machine"/></topology>\n')
    assert not topology_file_works(with_topology_file(mpirun_setting(), bad))
    monkeypatch.setattr(study, "write_topology", lambda path: bool(path.write_text(bad.read_text())))
    kept = study._topology_from_file(mpirun_setting(), tmp_path / "other.xml")
    assert kept == mpirun_setting() and not (tmp_path / "other.xml").exists()
