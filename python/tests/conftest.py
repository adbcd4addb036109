"""Shared test helpers. Hypothesis runs derandomized and without an example
database, so CI runs are reproducible and leave no .hypothesis/ directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import settings

settings.register_profile("hympi", derandomize=True, database=None, deadline=None)
settings.load_profile("hympi")


def document(results: list[dict[str, Any]], schema_version: Any = 1) -> dict[str, Any]:
    """A minimal hympi result document (docs/json-schema.md)."""
    return {"context": {"schema_version": schema_version, "hympi_version": "0.1.0",
                        "ranks": 2, "threads_per_rank": 8},
            "results": results}


@pytest.fixture
def write_json(tmp_path: Path) -> Callable[..., str]:
    counter = iter(range(10 ** 6))

    def write(data: Any, name: str = "") -> str:
        path = tmp_path / (name or f"doc{next(counter)}.json")
        path.write_text(json.dumps(data), encoding="utf-8")
        return str(path)

    return write


@pytest.fixture
def write_text(tmp_path: Path) -> Callable[[str, str], str]:
    def write(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    return write


# `make test` (scripts/run-python-tests.sh) runs the tests marked `cluster`
# in one pytest process, one after another, and the rest beside it on
# pytest-xdist workers. The cluster tests bring up the emulated cluster or the
# Slurm test cluster: there is one such cluster per machine (fixed names
# hympi-*), and each module's cluster lives as long as its module's tests.
CLUSTER_MODULES = {"test_slurm_cluster.py", "test_slurm_study.py"}
CLUSTER_TESTS = {"test_study_on_the_emulated_cluster"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = item.nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
        if module in CLUSTER_MODULES or getattr(item, "originalname", "") in CLUSTER_TESTS:
            item.add_marker(pytest.mark.cluster)
