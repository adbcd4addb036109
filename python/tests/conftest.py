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


# `make test` (scripts/run-tests.sh) runs the tests marked `cluster`
# in one pytest process, one after another, and the rest beside it on
# pytest-xdist workers. The cluster tests bring up the emulated cluster or the
# Slurm test cluster: there is one such cluster per machine (fixed names
# hympi-*), and each module's cluster lives as long as its module's tests.
CLUSTER_MODULES = {"test_slurm_cluster.py", "test_slurm_study.py"}
CLUSTER_TESTS = {"test_study_on_the_emulated_cluster"}


# The python lane gives each pytest-xdist worker a module at a time, in the
# order collected (--dist loadfile --no-loadscope-reorder): the longest
# modules first, so that no long one starts last while the other worker has
# nothing left. Seconds alone on 2 workers (2026-11-28); the rest follow in
# file order. xdist's own order (most tests first) left test_scratch_tree
# and test_study_app last: the workers' shares were 222 s and 174 s.
LONGEST_MODULES = ("test_study_app.py",        # 89 s
                   "test_study.py",            # 70 s
                   "test_scratch_tree.py",     # 62 s
                   "test_report_trust.py",     # 25 s
                   "test_exit_codes.py",       # 19 s
                   "test_report_property.py",  # 19 s
                   "test_readme_commands.py",  # 18 s
                   "test_discover.py")         # 13 s


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0].rsplit("/", 1)[-1]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _module(item) in CLUSTER_MODULES or getattr(item, "originalname", "") in CLUSTER_TESTS:
            item.add_marker(pytest.mark.cluster)
    rank = {name: i for i, name in enumerate(LONGEST_MODULES)}
    items.sort(key=lambda item: rank.get(_module(item), len(rank)))  # stable: file order after
