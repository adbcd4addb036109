"""What a build of hympi offers, read from its `hympi info --json` document:
the schemes, the kernels and the benchmarks of `hympi bench`. The facts live
once, in C++ (the registries); the study plans from them, so that a new
kernel, scheme or benchmark reaches the plan with no Python edit.

Pure functions of the document; nothing here runs hympi (study.py does).
"""

from __future__ import annotations

from typing import Any, Optional

Info = dict[str, Any]


def _entries(info: Info, key: str) -> list[dict[str, Any]]:
    listed = info.get(key) if isinstance(info, dict) else None
    return [e for e in listed or [] if isinstance(e, dict) and isinstance(e.get("name"), str)]


def schemes(info: Info) -> list[dict[str, Any]]:
    """The schemes, in the registry's order."""
    return _entries(info, "schemes")


def kernels(info: Info) -> list[dict[str, Any]]:
    """The kernels, in the registry's order."""
    return _entries(info, "kernels")


def kernel_names(info: Info) -> list[str]:
    return [k["name"] for k in kernels(info)]


def default_kernel_names(info: Info) -> list[str]:
    """The kernels a study runs when --kernels is not given: those whose
    info entry does not say default_study false (pipecg: a variant of cg
    that would only make the default study longer)."""
    return [k["name"] for k in kernels(info) if k.get("default_study", True) is not False]


def kernel(info: Info, name: str) -> dict[str, Any]:
    """The kernel's entry ({} when info does not list it)."""
    return next((k for k in kernels(info) if k["name"] == name), {})


def depth_kernels(info: Info) -> list[str]:
    """The kernels with temporal blocking (hympi solve --halo-depth > 1)."""
    return [k["name"] for k in kernels(info) if k.get("temporal_blocking")]


def converges(info: Info, name: str) -> bool:
    """Whether the kernel runs to a tolerance (--max-iters), not a fixed --iters."""
    return bool(kernel(info, name).get("converges"))


def benchmarks(info: Info) -> Optional[list[dict[str, Any]]]:
    """The benchmarks of `hympi bench`, in the registry's order; None when
    the document has no list (a build from before info listed them)."""
    if not isinstance(info, dict) or "benchmarks" not in info:
        return None
    return _entries(info, "benchmarks")
