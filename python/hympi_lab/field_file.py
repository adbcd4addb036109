"""Field files that hympi writes (docs/field-io.md): FILE is the global
array as raw little-endian float64, i fastest (numpy shape (NZ, NY, NX)),
and FILE.json its sidecar (grid, dtype, order, name, the writer's ranks and
process grid). Reading goes through the sidecar, checked, and np.memmap:
nothing is loaded but the plane asked for.

Every problem is one InputError naming the file (exit 2).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .errors import InputError

__all__ = ["AXES", "FieldFile", "grid_text", "open_field", "plane"]

SIDECAR_SUFFIX = ".json"
# The sidecar versions this reader knows (hympi's kFieldFileVersion, field_io.hpp).
KNOWN_VERSIONS = (1,)
# Axis name -> its index in the grid (NX, NY, NZ).
AXES = {"x": 0, "y": 1, "z": 2}


@dataclass(frozen=True)
class FieldFile:
    path: str
    name: str
    grid: tuple[int, int, int]  # NX, NY, NZ
    writer_ranks: Optional[int]
    writer_proc_grid: Optional[tuple[int, int, int]]

    def array(self) -> np.ndarray:
        """The whole field, shape (NZ, NY, NX), mapped read-only (not loaded)."""
        nx, ny, nz = self.grid
        return np.memmap(self.path, dtype="<f8", mode="r", shape=(nz, ny, nx))


def open_field(path: str) -> FieldFile:
    """The field file `path` with its sidecar, checked: the sidecar exists and
    describes float64 i fastest on a grid of positive sizes, and the file
    holds exactly that many bytes."""
    sidecar = path + SIDECAR_SUFFIX
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file" if not os.path.exists(path) else f"{path}: not a file")
    if not os.path.isfile(sidecar):
        raise InputError(f"{path}: no sidecar {sidecar} (hympi writes it beside the data: it gives "
                         "the grid)")
    try:
        with open(sidecar, encoding="utf-8") as handle:
            doc = json.load(handle)
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise InputError(f"{sidecar}: not a readable JSON document ({err})") from None
    grid = _grid(doc, sidecar)
    version = doc.get("hympi_field_version")
    if version not in KNOWN_VERSIONS:
        raise InputError(f"{sidecar}: \"hympi_field_version\" {version!r} is not one this hympi-lab "
                         f"reads ({', '.join(map(str, KNOWN_VERSIONS))})")
    if doc.get("dtype") != "<f8" or doc.get("order") != "i-fastest":
        raise InputError(f"{sidecar}: the data are not \"dtype\": \"<f8\", \"order\": \"i-fastest\"")
    need = 8 * grid[0] * grid[1] * grid[2]
    size = os.path.getsize(path)
    if size != need:
        raise InputError(f"{path} has {size} bytes, the {grid_text(grid)} grid of float64 in "
                         f"{sidecar} has {need} (an incomplete file, or not the one the sidecar describes)")
    writer = doc.get("writer") if isinstance(doc.get("writer"), dict) else {}
    ranks = writer.get("ranks")
    procs = writer.get("proc_grid")
    name = doc.get("name")
    return FieldFile(path=path, name=name if isinstance(name, str) and name else os.path.basename(path),
                     grid=grid, writer_ranks=ranks if _whole(ranks) else None,
                     writer_proc_grid=tuple(procs) if _is_grid(procs) else None)


def plane(field: FieldFile, axis: str, index: Optional[int]) -> tuple[np.ndarray, int, str, str]:
    """The plane `axis` = `index` (default: the middle one) as a 2-D array
    indexed [vertical, horizontal], with the index used and the names of its
    horizontal and vertical axes: z planes are (y, x), y planes (z, x), x
    planes (z, y)."""
    n = field.grid[AXES[axis]]
    chosen = n // 2 if index is None else index
    if not 0 <= chosen < n:
        raise InputError(f"--index {chosen} is out of range: accepted 0 .. {n - 1} "
                         f"({axis} planes of the {grid_text(field.grid)} grid)")
    data = field.array()
    if axis == "z":
        values, horizontal, vertical = data[chosen, :, :], "x", "y"
    elif axis == "y":
        values, horizontal, vertical = data[:, chosen, :], "x", "z"
    else:
        values, horizontal, vertical = data[:, :, chosen], "y", "z"
    return np.array(values), chosen, horizontal, vertical


def grid_text(grid: tuple[int, ...]) -> str:
    """NXxNYxNZ, as hympi's messages write a grid."""
    return "x".join(str(n) for n in grid)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _is_grid(value: object) -> bool:
    return isinstance(value, list) and len(value) == 3 and all(_whole(v) for v in value)


def _grid(doc: object, sidecar: str) -> tuple[int, int, int]:
    grid = doc.get("grid") if isinstance(doc, dict) else None
    if not _is_grid(grid):
        raise InputError(f"{sidecar}: no \"grid\" of three whole numbers >= 1 (not a hympi field "
                         "sidecar)")
    return (grid[0], grid[1], grid[2])
