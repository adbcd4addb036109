"""hympi_lab's modules import each other without a circle: the study's
modules (options, machine, launch, plan, studydir, runpoint, study) form
layers, and the report (report, analysis, sections, render) and project
(project, project_inputs) read a study through studydir.py only.
Function-local imports count as much as those at the top."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hympi_lab"


def import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports (`from . import x`, `from .x import y`)."""
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module in modules:
        tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    graph[module].add(node.module.split(".")[0])
                else:
                    graph[module].update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                graph[module].update(n.split(".")[1] for n in names
                                     if n.startswith("hympi_lab.") and n.split(".")[1] in modules)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, found by depth-first search (one path per circle)."""
    found, state = [], {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for other in sorted(graph[module]):
            if state.get(other) == "open":
                found.append(path[path.index(other):] + [other])
            elif other not in state:
                visit(other, path + [other])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


def test_no_module_imports_itself_through_others():
    graph = import_graph()
    assert "study" in graph and "studydir" in graph
    assert cycles(graph) == []


def test_the_report_side_knows_the_study_directory_only():
    graph = import_graph()
    for module in ("analysis", "project_inputs"):  # where the report and project load a study
        assert "studydir" in graph[module], module
    for module in ("report", "analysis", "sections", "render", "project", "project_inputs"):
        assert not graph[module] & {"study", "runpoint", "launch", "plan"}, module
    assert "report" not in graph["study"]


def test_cycles_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
