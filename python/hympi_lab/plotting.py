"""Figures. The only module of hympi_lab that imports matplotlib.

Uses the Agg backend (no display needed); each figure is written to every
path given, in the format its suffix names (.png or .svg).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from numpy.typing import ArrayLike  # noqa: E402

from . import judge, model  # noqa: E402
from .atomic import check_target, write_with  # noqa: E402
from .errors import InputError  # noqa: E402

FORMATS = (".png", ".svg")


def check_outputs(paths: Sequence[str]) -> None:
    """Refuse output paths whose format we do not write (exit 2), or that
    cannot be written (a directory, no such directory: exit 4), before any work."""
    for path in paths:
        if os.path.splitext(path)[1].lower() not in FORMATS:
            raise InputError(f"{path}: output must end in .png or .svg")
    for path in paths:
        check_target(path)


def fig5(n: int, m: int, f_comp_non_values: Sequence[float], outputs: Sequence[str],
         points: Sequence[tuple] = ()) -> None:
    """Seed 000 Fig. 5: epsilon (eq. 3) over f_comm, one curve per f_comp_non.

    Each curve runs over its valid range f_comm in [0, 1 - f_comp_non]; its
    eps_max (at f_comm_best) and eps_min (at f_comm = 0) are marked, and the
    horizontal line epsilon = 1 separates gain from loss. `points` are
    measurements (f_comm, epsilon, label), drawn as stars (the study report).
    """
    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    for i, f_non in enumerate(f_comp_non_values):
        color = f"C{i}"
        f_comm = np.linspace(0.0, 1.0 - f_non, 401)
        eps = [model.epsilon(float(fc), f_non, n, m) for fc in f_comm]
        ax.plot(f_comm, eps, color=color, label=f"f_comp,non = {f_non:g}")
        best = model.f_comm_best(f_non, n, m)
        ax.plot([best], [model.eps_max(f_non, n, m)], "^", color=color)
        ax.plot([0.0], [model.eps_min(f_non, n, m)], "v", color=color)
    for j, (fc, eps, label) in enumerate(points):
        ax.plot([fc], [eps], marker="*", markersize=12, linestyle="none",
                color=f"C{(len(f_comp_non_values) + j) % 10}", label=f"measured: {label}")
    ax.axhline(1.0, color="0.4", linewidth=0.8)
    ax.axhline(1.0 + m * (1.0 - 1.0 / n), color="0.4", linestyle=":", linewidth=0.8,
               label="bound 1 + m(1 - 1/n), eq. (7)")
    ax.axhline(1.0 - m / n, color="0.4", linestyle="--", linewidth=0.8,
               label="bound 1 - m/n, eq. (9)")
    ax.set_xlabel("f_comm (share of masteronly time spent communicating)")
    ax.set_ylabel("epsilon = T_masteronly / T_multiple")
    ax.set_title(f"Performance ratio, eq. (3): n = {n}, m = {m}  (^ eps_max, v eps_min)")
    ax.set_xlim(0.0, 1.0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    _save(fig, outputs)


def eq14(comm_ratio: float, non_ratio: float, n: int, m: int, outputs: Sequence[str],
         nk_points: Optional[ArrayLike] = None,
         eps_points: Optional[ArrayLike] = None) -> None:
    """Seed 000 Fig. 6: epsilon over nk_loc by eq. (14), with measured points if given."""
    cross = model.eq14_crossover(comm_ratio, n, m)
    low, high = 0.5, 4.0 * cross
    if nk_points is not None and np.size(nk_points) > 0:
        low = min(low, 0.5 * float(np.min(nk_points)))
        high = max(high, 2.0 * float(np.max(nk_points)))
    nk = np.geomspace(low, high, 400)
    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    ax.plot(nk, model.eq14_epsilon(nk, comm_ratio, non_ratio, n, m),
            label=f"eq. (14): x_comm/x_overlap = {comm_ratio:.3g}, "
                  f"x_non/x_overlap = {non_ratio:.3g}")
    if nk_points is not None and eps_points is not None:
        ax.plot(nk_points, eps_points, "o", label="measured")
    ax.axhline(1.0, color="0.4", linewidth=0.8)
    ax.axvline(cross, color="0.4", linestyle=":", linewidth=0.8,
               label=f"crossover nk_loc = {cross:.3g}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("nk_loc (local planes per process)")
    ax.set_ylabel("epsilon = T_masteronly / T_multiple")
    ax.set_title(f"Performance ratio over local size, n = {n}, m = {m}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    _save(fig, outputs)


def _save(fig: Figure, outputs: Sequence[str]) -> None:
    """Each figure written atomically (atomic.write_with): a failed write is
    OutputError (exit 4) and leaves no partial or empty file; a symbolic
    link is followed."""
    try:
        for path in outputs:
            # The format from the name the user gave (the temporary name says nothing).
            fmt = Path(path).suffix.lstrip(".").lower() or None
            write_with(path, lambda handle: fig.savefig(handle, dpi=120, bbox_inches="tight", format=fmt))
    finally:
        plt.close(fig)


# --- figures of the study report (hympi-lab report) ----------------------------

PHASE_COLOURS = {"compute_interior": "#4c72b0", "compute_boundary": "#8da0cb", "pack": "#dd8452",
                 "unpack": "#f2b880", "comm": "#c44e52", "idle": "#d9d9d9"}
PHASE_LABELS = {"compute_interior": "interior compute", "compute_boundary": "boundary compute",
                "pack": "pack", "unpack": "unpack", "comm": "MPI", "idle": "idle"}


def _finish(fig: Figure, ax, xlabel: str, ylabel: str, title: str, outputs: Sequence[str],
            log2x: bool = True, grid_which: str = "major") -> None:
    """The common end of the report's line figures: axes, grid, legend, files."""
    if log2x:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which=grid_which, alpha=0.3)
    ax.legend(fontsize="small")
    _save(fig, outputs)


def beff(patterns: dict, pingpong: Optional[tuple], hockney: Optional[tuple],
         outputs: Sequence[str]) -> None:
    """Bandwidth over message length: each b_eff pattern (best method), the
    ping-pong, and the Hockney line fitted to the ping-pong times.

    patterns: {name: (kind, lengths, MB/s)}; pingpong: (lengths, MB/s);
    hockney: (T_lat s, b_inf B/s).
    """
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    styles = {"ring": "-", "random": "--"}
    for i, (name, (kind, lengths, bw)) in enumerate(sorted(patterns.items())):
        ax.plot(lengths, bw, styles.get(kind, ":"), marker=".", color=f"C{i}",
                label=f"{name} ({kind})")
    if pingpong is not None:
        ax.plot(pingpong[0], pingpong[1], "k.", label="ping-pong (one-way)")
    if hockney is not None:
        t_lat, b_inf = hockney
        lengths = np.geomspace(1, max(max(v[1]) for v in patterns.values()) if patterns else 1e7, 200)
        ax.plot(lengths, model.hockney_bandwidth(lengths, t_lat, b_inf) / 1e6, "k-", linewidth=1,
                alpha=0.6, label=f"Hockney: T_lat {t_lat * 1e6:.3g} us, b_inf {b_inf / 1e6:.4g} MB/s")
    ax.set_yscale("log")
    _finish(fig, ax, "message length L (bytes)", "bandwidth (MB/s)",
            "b_eff patterns (best of Sendrecv, Alltoallv, Irecv/Isend) and ping-pong", outputs,
            grid_which="both")


def internode(series: dict, nodes_label: str, outputs: Sequence[str]) -> None:
    """Seed 001 sec. 3.1: bandwidth per node over the communicating CPUs k. series: {bytes: (k, MB/s)}."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for i, (size, (ks, bw)) in enumerate(sorted(series.items())):
        ax.plot(ks, bw, "o-", color=f"C{i}", label=f"{size / 1e6:g} MB messages")
    ax.set_ylim(bottom=0)
    ax.xaxis.get_major_locator().set_params(integer=True)
    _finish(fig, ax, "communicating CPUs per node k", "bandwidth per node (MB/s)",
            f"Inter-node bandwidth over communicating CPUs ({nodes_label})", outputs, log2x=False)


def ratio(lengths: Sequence[float], med: Sequence[float], low: Sequence[float],
          high: Sequence[float], nodes_label: str, outputs: Sequence[str]) -> None:
    """Seed 000 Fig. 3: T_hybrid / T_pure over the pure-MPI message size."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    med_a = np.asarray(med)
    ax.errorbar(lengths, med_a, yerr=[med_a - np.asarray(low), np.asarray(high) - med_a],
                fmt="o-", capsize=3, label="T_hybrid / T_pure (median; min-max)")
    ax.axhline(1.0, color="0.4", linewidth=0.8)
    _finish(fig, ax, "pure-MPI message size L (bytes)", "T_hybrid / T_pure",
            f"Hybrid masteronly against pure MPI ({nodes_label})", outputs)


def pack(series: dict, outputs: Sequence[str]) -> None:
    """Halo exchange bandwidth: thread-parallel packing vs derived datatypes vs a
    plain MPI_Sendrecv exchange. series: {label: (bytes, MB/s)}."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for i, (label, (sizes, bw)) in enumerate(sorted(series.items())):
        ax.plot(sizes, bw, "o-", color=f"C{i}", label=label)
    _finish(fig, ax, "face size (bytes)", "exchange bandwidth (MB/s)",
            "Packing by threads vs derived datatypes vs MPI_Sendrecv", outputs, grid_which="both")


def overlap(series: dict, n: int, fit: Optional[tuple], outputs: Sequence[str]) -> None:
    """Seed 000 Fig. 6-7: measured epsilon over nk_loc with the fitted eq. (14) curves.

    series: {(scheme, m): (nk, median, min, max)}; fit: (comm_ratio, non_ratio),
    drawn once per m (funneled is multiple with m = 1 in the model).
    """
    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    all_nk = [x for v in series.values() for x in v[0]] or [1.0]
    grid = np.geomspace(0.5 * min(all_nk), 2.0 * max(all_nk), 300)
    markers = {"funneled": "o", "multiple": "s"}
    for (scheme, m), (nk, med, low, high) in sorted(series.items()):
        med_a = np.asarray(med)
        ax.errorbar(nk, med_a, yerr=[med_a - np.asarray(low), np.asarray(high) - med_a],
                    fmt=markers.get(scheme, "^"), color=f"C{m - 1}", capsize=2,
                    mfc="none" if scheme == "multiple" else None,
                    label=f"{scheme} (m = {m}), measured")
    if fit is not None:
        a, b = fit
        for m in sorted({m for _, m in series}):
            ax.plot(grid, model.eq14_epsilon(grid, a, b, n, m), "-", color=f"C{m - 1}", alpha=0.8,
                    label=f"eq. (14) m = {m}, crossover nk_loc = {model.eq14_crossover(a, n, m):.3g}")
    ax.axhline(1.0, color="0.4", linewidth=0.8)
    _finish(fig, ax, "nk_loc (local planes per process)", "epsilon = T_masteronly / T_scheme",
            f"Overlap against masteronly over the local size, n = {n}", outputs)


def breakdown(kernels: dict, outputs: Sequence[str]) -> None:
    """Stacked bars: per kernel and scheme, seconds per phase (mean over threads,
    so a bar's height is about the wall time). kernels: {kernel: [(label, {phase: s})]}."""
    count = max(1, len(kernels))
    fig, axes = plt.subplots(1, count, figsize=(3.6 * count + 1.0, 4.6), squeeze=False)
    for ax, (kernel, bars) in zip(axes[0], kernels.items()):
        bottom = np.zeros(len(bars))
        for phase in PHASE_COLOURS:
            values = np.array([b[1].get(phase, 0.0) for b in bars]) * 1e3
            ax.bar(range(len(bars)), values, bottom=bottom, color=PHASE_COLOURS[phase],
                   label=PHASE_LABELS[phase])
            bottom += values
        # An outlier (a run 1000x the others on a crowded machine) would
        # flatten every other bar: the axis is cut, the cut bars marked.
        cap = judge.bar_cap(list(bottom))
        if cap is not None:
            ax.set_ylim(0, cap)
            for i, total in enumerate(bottom):
                if total > cap:
                    ax.text(i, cap * 0.97, f"cut: {total:.3g} ms", ha="center", va="top",
                            fontsize="x-small", rotation=90, color="black",
                            bbox={"facecolor": "white", "edgecolor": "black", "pad": 1.5})
            ax.set_title(f"{kernel} (axis cut)")
        else:
            ax.set_title(kernel)
        ax.set_xticks(range(len(bars)))
        ax.set_xticklabels([b[0] for b in bars], rotation=60, ha="right", fontsize="small")
        ax.set_ylabel("ms per run (mean over threads)")
        ax.grid(True, axis="y", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=6, fontsize="small")
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    _save(fig, outputs)


GANTT_MAX_ROWS = 1024


def gantt(trace, outputs: Sequence[str], max_ranks: int = 4) -> None:
    """One row per thread of each rank (the first max_ranks ranks), each event a bar
    coloured by phase: sleeping or waiting threads show as grey idle bars."""
    # At most GANTT_MAX_ROWS rows (fewer ranks than asked when the ranks are
    # wide): the figure is 0.32 in per row, and matplotlib refuses images
    # over 2^16 pixels high. At least one rank is drawn; trace.load_trace
    # caps its threads (1024 rows at most).
    ranks = max(1, min(trace.ranks, max_ranks, GANTT_MAX_ROWS // trace.threads))
    rows = [(r, t) for r in range(ranks) for t in range(trace.threads)]
    # Events grouped once: asking per row would scan all events for every row.
    per_row: dict = {}
    for e in trace.events:
        if e.rank < ranks:
            per_row.setdefault((e.rank, e.thread), []).append(e)
    fig, ax = plt.subplots(figsize=(9.0, 0.9 + 0.32 * len(rows)))
    end = 0.0
    for y, (r, t) in enumerate(rows):
        by_phase: dict = {}
        for e in sorted(per_row.get((r, t), []), key=lambda e: e.start):
            by_phase.setdefault(e.phase, []).append((e.start * 1e3, (e.end - e.start) * 1e3))
            end = max(end, e.end)
        for phase, spans in by_phase.items():
            ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=PHASE_COLOURS.get(phase, "black"))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"rank {r} thread {t}" for r, t in rows], fontsize="small")
    ax.invert_yaxis()
    ax.set_xlim(0, end * 1e3 if end > 0 else 1)
    ax.set_xlabel("ms from the start of the timed iterations")
    more = f" (first {ranks} of {trace.ranks} ranks)" if trace.ranks > ranks else ""
    ax.set_title(trace.title + more, fontsize="medium")
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color=c, label=PHASE_LABELS[p]) for p, c in PHASE_COLOURS.items()],
              loc="upper center", bbox_to_anchor=(0.5, -0.18 - 0.6 / max(1, len(rows))), ncol=6,
              fontsize="small")
    _save(fig, outputs)


def projection(doc: dict, outputs: Sequence[str]) -> None:
    """hympi-lab project: parallel efficiency over nodes, one line per scheme
    with its 16-84 % band, one panel per kernel and scaling."""
    panels = [p for p in doc["projections"] if p["series"]]
    if not panels:
        held = [p["withheld"] for p in doc["projections"] if p.get("withheld")]
        raise InputError("nothing to plot: " + (held[0] if held else
                                                 "no scheme of the study runs on the requested node shape"))
    cols = len({p["scaling"] for p in panels})
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.0 * cols, 3.8 * rows), squeeze=False,
                             constrained_layout=True)
    for ax, p in zip(axes.flat, panels):
        for i, s in enumerate(p["series"]):
            nodes = np.array(s["nodes"], dtype=float)
            t = np.array([np.nan if v is None else v for v in s["time_s"]])
            eff = np.array([np.nan if v is None else v for v in s["efficiency"]])
            lo = np.array([np.nan if v is None else v for v in s["low_s"]])
            hi = np.array([np.nan if v is None else v for v in s["high_s"]])
            # Efficiency is T_best(1) / (T(N) [x N]): the time band maps onto it
            # inversely (project._series_doc, clipped to 0..1 there).
            if "efficiency_low" in s:
                e_lo = np.array([np.nan if v is None else v for v in s["efficiency_low"]])
                e_hi = np.array([np.nan if v is None else v for v in s["efficiency_high"]])
            else:
                with np.errstate(invalid="ignore", divide="ignore"):
                    e_hi, e_lo = np.clip(eff * t / lo, 0, 1), np.clip(eff * t / hi, 0, 1)
            # Past ten series the colours repeat: a dashed line tells them apart.
            ax.plot(nodes, eff, marker=".", color=f"C{i % 10}", linestyle=("-", "--", ":")[i // 10 % 3],
                    label=s["scheme"])
            ax.fill_between(nodes, e_lo, e_hi, color=f"C{i % 10}", alpha=0.15, linewidth=0)
        for x in p["crossovers"]:
            ax.axvline(x["nodes"], color="0.5", linestyle=":", linewidth=0.8)
        ax.set_xscale("log", base=2)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("nodes")
        ax.set_ylabel("parallel efficiency")
        ax.set_title(f"{p['kernel']}, {p['scaling']} scaling")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="x-small")
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle("projection: efficiency against the best one-node run (dotted: the fastest "
                 "scheme changes)", fontsize="small")
    _save(fig, outputs)


# --- a plane of a field file (hympi-lab slice) ----------------------------------

def field_slice(values: np.ndarray, horizontal: str, vertical: str, title: str, label: str,
                outputs: Sequence[str]) -> None:
    """A 2-D plane of a field, values[vertical, horizontal], as an image: one
    cell per grid point, centred on its global index, with a colour bar."""
    rows, cols = values.shape
    width = 7.0
    height = min(max(width * rows / max(cols, 1), 2.5), 12.0)
    fig, ax = plt.subplots(figsize=(width + 1.2, height))
    image = ax.imshow(values, origin="lower", cmap="viridis", interpolation="nearest", aspect="equal",
                      extent=(-0.5, cols - 0.5, -0.5, rows - 0.5))
    fig.colorbar(image, ax=ax, label=label)
    ax.set_xlabel(f"{horizontal} (global index)")
    ax.set_ylabel(f"{vertical} (global index)")
    ax.set_title(title)
    _save(fig, outputs)
