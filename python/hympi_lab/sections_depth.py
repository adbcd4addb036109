"""The report's section on temporal blocking (hympi solve --halo-depth):
the depth step's runs against depth 1, judged only where the machine was
not oversubscribed. Split from sections.py, whose Ctx it reads."""

from __future__ import annotations

import math
from typing import Any

from .analysis import depth_rows, fastest_deep
from .content import Block, Blocks
from .judge import num
from .sections import Ctx


_DEPTH_INTRO = (
    "Halos h layers deep (with edges and corners) are exchanged every h sweeps (iterations; "
    "rbgs: colours, two per iteration); the h sweeps between run as a cache-blocked wavefront, masteronly on the study's layout "
    "(spmv matrix-free). Fewer, larger messages and fewer passes over memory, for the same "
    "field to the last bit (the checksum column compares sum and l2 norm with the same "
    "kernel's depth-1 run exactly). Depth 1 writes its output with streaming stores where "
    "a thread's arrays exceed its L2 (hympi solve --stores auto: no write-allocate read), "
    "so deeper halos are compared with the faster one-sweep loop; the blocked sweeps "
    "store cached (the next sweep of a tile reads their output from cache).")


def _depth_table(b: Blocks, rows: list[dict[str, Any]], judged: bool = True) -> None:
    """The depth rows; without `judged` (oversubscribed runs) no speed ratio."""
    b.table(["kernel", "depth h", "exchanges / iterations", "messages per exchange",
             "bytes per exchange", "stores", "median s", "MLUP/s", "speed vs depth 1",
             "checksum = depth 1's"],
            [(r["kernel"], r["depth"], f"{r['exchanges'] if r['exchanges'] is not None else '-'} / "
              f"{r['iters'] if r['iters'] is not None else '-'}", r["messages"], r["bytes"],
              r["stores"] or "-", num(r["median_s"]), num(r["mlups"], ".0f"),
              ("not judged" if not judged else
               f"{r['speedup']:.2f}x" if math.isfinite(r["speedup"]) else "-"),
              {True: "yes", False: "NO", None: "-"}[r["same_field"]]) for r in rows],
            tid="depth-table")


def depth(ctx: Ctx) -> list[Block]:
    """Temporal blocking: each kernel that has it (info) at --halo-depth h against depth 1."""
    b, study = ctx.blocks(), ctx.study
    rows = depth_rows(study)
    if not rows:
        b.missing("depth-table", "no run of the depth step (it runs when --steps includes depth "
                  "and a kernel with temporal blocking is among them)")
        return b.items
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    lacking = [k for k in kernels if min(r["depth"] for r in rows if r["kernel"] == k) != 1]
    if lacking:
        b.p(f"No depth-1 run of {', '.join(lacking)} to compare with (it failed or did not run): "
            "its speed and checksum columns are empty.", "warn")
    b.p(_DEPTH_INTRO)
    over = study.oversubscribed
    _depth_table(b, rows, judged=not over)
    st = study.setting
    if over:
        # A depth-3 run "390x depth 1" on two cores is the scheduler's.
        b.p(f"These runs were oversubscribed ({st.get('ranks', 0) * st.get('threads', 0)} threads "
            f"on {st.get('cores', '?')} cores): their times measure the scheduler, so no depth is "
            "judged faster or slower than another; the exchange counts, bytes and checksums hold.",
            "warn")
    for kernel in (k for k in kernels if k not in lacking and not over):
        mine = [r for r in rows if r["kernel"] == kernel]
        best = fastest_deep(mine)
        if best is not None and best["speedup"] > 1:
            sure = ("" if best["clearly_faster"] else
                    "; not clearly: the repetitions of the two overlap")
            b.p(f"{kernel}: fastest here --halo-depth {best['depth']}, {best['speedup']:.2f}x depth 1 "
                f"({best['exchanges']} exchanges instead of {mine[0]['exchanges']}{sure}).")
        else:
            b.p(f"{kernel}: no depth beat depth 1 here (the grid per rank may already sit in "
                "cache, or the run is too short to tell).")
    b.p("Your own two-array stencil gets the same through Domain::sweep_block / "
        "hympi_sweep_block (docs/user-kernels.md).")
    b.p(f"Section {ctx.numbers.get('projection', '?')} carries these runs to more nodes as their own "
        "series (masteronly depth h, "
        "or pure MPI depth h with one thread per rank): on one machine the gain is fewer passes "
        "over memory; across nodes a deeper halo also divides the start-ups per iteration by h "
        "(an inner rank of a 3-D split sends 26 messages instead of 6 past depth 1, so fewer "
        "from h = 5 on), and pays for the halo points each block recomputes.")
    return b.items


__all__ = ["depth"]
