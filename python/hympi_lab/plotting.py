"""Figures. The only module of hympi_lab that imports matplotlib.

Uses the Agg backend (no display needed); each figure is written to every
path given, in the format its suffix names (.png or .svg).
"""

from __future__ import annotations

import os
from typing import Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from numpy.typing import ArrayLike  # noqa: E402

from . import model  # noqa: E402
from .errors import InputError  # noqa: E402

FORMATS = (".png", ".svg")


def check_outputs(paths: Sequence[str]) -> None:
    """Refuse output paths whose format we do not write, before any work."""
    for path in paths:
        if os.path.splitext(path)[1].lower() not in FORMATS:
            raise InputError(f"{path}: output must end in .png or .svg")


def fig5(n: int, m: int, f_comp_non_values: Sequence[float], outputs: Sequence[str]) -> None:
    """Seed 000 Fig. 5: epsilon (eq. 3) over f_comm, one curve per f_comp_non.

    Each curve runs over its valid range f_comm in [0, 1 - f_comp_non]; its
    eps_max (at f_comm_best) and eps_min (at f_comm = 0) are marked, and the
    horizontal line epsilon = 1 separates gain from loss.
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
    try:
        for path in outputs:
            try:
                fig.savefig(path, dpi=120, bbox_inches="tight")
            except OSError as err:
                raise InputError(f"cannot write {path}: {err.strerror or err}") from None
    finally:
        plt.close(fig)
