"""First contact: the commands of README.md and docs/*.md (their ```sh
blocks) run as written, in order, in a scratch directory that holds only
links to the build and the Python environment, as on a fresh clone; and no
text a user reads points outside the repository.

A command that cannot run here is listed in SKIP with the reason. The study
chain (`study --quick --out results/q` and the commands that read it) takes
a minute or more: it runs with HYMPI_README_STUDY=1."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HYMPI = ROOT / "build" / "bin" / "hympi"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# (pattern of a command, why it does not run here).
SKIP = [
    (r"^make (study|test)\b", "make study and make test run for minutes (the whole campaign, every "
     "suite); CI runs make test, and test_study.py runs the study make study starts"),
    (r"--ranks 4 --threads 4|results/mine", "a default study of 4 ranks x 4 threads (and the commands "
     "that read it) takes many minutes on 2 cores"),
    (r"^make build python$|^sbatch ", "a build on a login node and jobs for a Slurm cluster; "
     "test_slurm_study.py submits examples/slurm-study.sh to a real Slurm on emulated nodes"),
    (r"--app ", "needs your own program (./heat_c); test_study_app.py runs the same with examples/heat.c"),
]
STUDY = r"results/q\b"  # the quick study and what reads it: HYMPI_README_STUDY=1


def commands(path: Path) -> list[str]:
    """The commands of `path`'s ```sh blocks: continuation lines joined,
    comments dropped."""
    out = []
    for block in re.findall(r"```sh\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                out.append(shlex.join(words))
    return out


def skip_reason(command: str) -> str:
    for pattern, why in SKIP:
        if re.search(pattern, command):
            return why
    if re.search(STUDY, command) and not os.environ.get("HYMPI_README_STUDY"):
        return "the quick study takes a minute or more (HYMPI_README_STUDY=1 runs it)"
    return ""


def test_the_readme_and_docs_hold_commands_and_every_skip_is_used() -> None:
    found = {p.name: commands(p) for p in DOCS}
    assert len(found["README.md"]) >= 10
    every = [c for cs in found.values() for c in cs]
    for pattern, _ in SKIP:
        assert any(re.search(pattern, c) for c in every), f"SKIP entry {pattern!r} matches no command"


@pytest.mark.parametrize("doc", [p for p in DOCS if commands(p)], ids=lambda p: p.name)
def test_the_commands_run_as_written(doc: Path, tmp_path: Path) -> None:
    if not HYMPI.is_file():
        if os.environ.get("HYMPI_REQUIRE_NATIVE"):
            pytest.fail(f"{HYMPI} is not built")
        pytest.skip(f"{HYMPI} is not built")
    # A fresh clone with its build and environment made: links, nothing else.
    for name in ("build", ".venv"):
        (tmp_path / name).symlink_to(ROOT / name)
    # Root (the CI container) must allow mpirun to run as root, as the
    # Makefile does; and the docs' 4-rank examples need 4 slots, which a
    # 2-core machine gives only oversubscribed.
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMP_NUM_THREADS": "1"}
    if not (ROOT / ".venv" / "bin" / "hympi-lab").exists():
        pytest.skip(".venv is not set up (scripts/setup-python.sh)")
    ran = 0
    for command in commands(doc):
        if skip_reason(command):
            continue
        proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=600, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, f"{doc.name}: `{command}` exit {proc.returncode}: {proc.stderr[-800:]}"
        assert "Traceback" not in proc.stderr
        ran += 1
    assert ran or doc.name == "study.md", doc


# --- nothing a user reads points outside the repository ---------------------------------

OUTSIDE = re.compile(r"\.\./shared|shared/seeds|SYSTEM\.md")


def user_texts() -> list[Path]:
    """What a user reads: the READMEs, docs, public headers, examples, and
    the sources of the two command lines (their --help and messages)."""
    paths = [ROOT / "README.md", ROOT / "python" / "README.md", ROOT / "bench" / "README.md"]
    paths += sorted((ROOT / "docs").rglob("*.md"))
    paths += sorted((ROOT / "include").rglob("*.h*")) + sorted((ROOT / "examples").glob("*.*"))
    paths += sorted((ROOT / "app").rglob("*.[ch]pp")) + sorted((ROOT / "python" / "hympi_lab").rglob("*.py"))
    return [p for p in paths if p.is_file()]


def test_no_text_points_outside_the_repository() -> None:
    hits = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in user_texts()
            for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            if OUTSIDE.search(line)]
    assert not hits, "\n".join(hits)


def test_no_help_text_points_outside_the_repository() -> None:
    from hympi_lab.cli import build_parser

    parser = build_parser()
    helps = [parser.format_help()]
    stack = [parser]
    while stack:  # every sub-command's help, at every depth
        for action in stack.pop()._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    helps.append(sub.format_help())
                    stack.append(sub)
    assert len(helps) > 10
    if HYMPI.is_file():
        for args in (["--help"], ["solve", "--help"], ["info", "--help"], ["bench", "--help"],
                     ["bench", "beff", "--help"], ["bench", "overlap", "--help"]):
            helps.append(subprocess.run([str(HYMPI), *args], capture_output=True, text=True, timeout=60,
                                        env={**os.environ, "OMP_NUM_THREADS": "1"}).stdout)
    assert not [h for h in helps if OUTSIDE.search(h)]


def test_make_study_is_described_as_the_makefile_runs_it() -> None:
    """`make study` runs `hympi-lab study $(STUDY_ARGS)`: the default level,
    and STUDY_ARGS="--quick" the quick one, as the README and study.md say."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^study: build python\n\t@\.venv/bin/hympi-lab study \$\(STUDY_ARGS\)$", makefile, re.M)
    assert re.search(r"^STUDY_ARGS \?=\s*$", makefile, re.M)
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert '`make study` runs `hympi-lab study` with defaults (`STUDY_ARGS="--quick"`' in readme
    study_md = " ".join((ROOT / "docs" / "study.md").read_text(encoding="utf-8").split())
    assert "make study STUDY_ARGS=\"--quick\"" in study_md
    # The run counts the README gives for this 2-core machine (2 ranks x 2
    # threads on 2 virtual nodes) are the plan's, from this build's info.
    import json

    from hympi_lab import plan
    from hympi_lab.launch import Setting
    from hympi_lab.options import StudyOptions
    info = json.loads((ROOT / "python" / "tests" / "data" / "info.json").read_text(encoding="utf-8"))
    layout = Setting(2, 2, 2, 2, "virtual", 1, True, [], "", {})
    runs = {level: len(plan.build_plan(StudyOptions(level=level), layout, info, 8 << 30))
            for level in ("default", "quick")}
    assert f"the default study is {runs['default']} runs" in readme
    assert f'`STUDY_ARGS="--quick"` makes it {runs["quick"]} runs' in readme
