"""What the report says about a user's program (`hympi-lab study --app`)
and about what the plan left out: the program's own compiler and flags
beside hympi's, the schemes and steps not run with their reasons, and
whether every run computed the same fields (agreement.py). sections.py
puts these into its sections."""

from __future__ import annotations

from typing import Any

from . import agreement
from .analysis import Study
from .content import Blocks

# How a program gets its build into its report, for the line that says it did not.
HOW_TO_REPORT_BUILD = ("C, C++: HYMPI_REPORT_BUILD(domain) before hympi_report_json (flags from "
                       "-DHYMPI_APP_FLAGS=...); Fortran: hympi_report_json(..., "
                       "compiler=compiler_version(), flags=compiler_options())")


def _user_contexts(study: Study) -> dict[str, dict[str, Any]]:
    """The context of one solve record of each user kernel."""
    out: dict[str, dict[str, Any]] = {}
    for r in study.of("solve", "solve"):
        kernel = str(r["result"].get("kernel", ""))
        if kernel.startswith("user:"):
            out.setdefault(kernel, r["context"])
    return out


def build_rows(study: Study, hympi_ctx: dict[str, Any]) -> list[tuple[str, Any]]:
    """The machine table's compiler rows: hympi's, and each user program's
    as its reports give it (labelled as the program's)."""
    hympi = f"{hympi_ctx.get('compiler', '?')} / {hympi_ctx.get('flags', '?')}"
    users = _user_contexts(study)
    if not users:
        return [("compiler / flags", hympi)]
    rows: list[tuple[str, Any]] = [("hympi's compiler / flags (the library and hympi)", hympi)]
    for kernel, ctx in users.items():
        if "app_compiler" in ctx or "app_flags" in ctx:
            text = f"{ctx.get('app_compiler') or 'not given'} / {ctx.get('app_flags') or 'not given'}"
        else:
            text = f"not reported by the program ({HOW_TO_REPORT_BUILD})"
        rows.append((f"your program's compiler / flags ({kernel})", text))
    return rows


def left_out(b: Blocks, study: Study) -> None:
    """Every step, depth and scheme the plan left out, with its reason
    (study.json's left_out; a study from before it was recorded says nothing)."""
    entries = study.header.get("left_out") or []
    if entries:
        b.p("Left out of the plan (what was asked for that this build, MPI library or layout cannot "
            "run): " + "; ".join(f"{e['what']}: {e['why']}" for e in entries) + ".", "", "left-out")


def agreement_blocks(b: Blocks, study: Study) -> None:
    """One line per field of each user program: all runs agree, or which
    disagree and by how much (a warning); a program without checksums is
    told how to report them."""
    checks, silent = agreement.check(study)
    for c in checks:
        b.p(c.text(), "" if c.agree else "warn")
    for kernel in silent:
        b.p(agreement.silent_text(kernel), "warn")


__all__ = ["build_rows", "left_out", "agreement_blocks", "HOW_TO_REPORT_BUILD"]
