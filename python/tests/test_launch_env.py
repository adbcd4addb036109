"""The launcher's environment: Open MPI's PML named where naming it changes
nothing that runs (one machine, no UCX device), left alone elsewhere."""

from __future__ import annotations

import shutil

import pytest

from hympi_lab import launch
from hympi_lab.options import StudyOptions

pytestmark = pytest.mark.skipif(not shutil.which("mpirun.openmpi"), reason="Open MPI is not installed")


def env_of(monkeypatch, devices, **opts):
    monkeypatch.setattr(launch, "ucx_pml_devices", lambda: devices)
    _, _, env = launch.launcher_command(StudyOptions(mpi="openmpi", **opts), 2, 2, True)
    return env


def test_ob1_on_one_machine_without_a_ucx_device(monkeypatch):
    monkeypatch.delenv("OMPI_MCA_pml", raising=False)
    assert env_of(monkeypatch, [])["OMPI_MCA_pml"] == "ob1"


def test_pml_left_to_open_mpi_where_ucx_could_win(monkeypatch, tmp_path):
    monkeypatch.delenv("OMPI_MCA_pml", raising=False)
    assert "OMPI_MCA_pml" not in env_of(monkeypatch, ["mlx5_0"])
    hosts = tmp_path / "hosts"
    hosts.write_text("node1\nnode2\n")
    # Other hosts may have a device this one lacks.
    assert "OMPI_MCA_pml" not in env_of(monkeypatch, [], hostfile=str(hosts))


def test_the_users_pml_is_kept(monkeypatch):
    monkeypatch.setenv("OMPI_MCA_pml", "ucx")
    assert "OMPI_MCA_pml" not in env_of(monkeypatch, [])


def test_devices_are_read_from_sysfs():
    assert all(name.startswith("mlx") for name in launch.ucx_pml_devices())
