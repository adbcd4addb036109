"""What a report section holds, as data: paragraphs, tables and figures.

A section function (sections.py) fills a `Blocks` and returns its items;
the template (templates/report.html.j2) renders them with autoescape on,
so every string here, a record's included, reaches the page as text. Ids
and figure file names are fixed names or `slug()`s, never a raw record
string.
"""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

from .figjobs import FigureJobs

_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def safe_id(value: str) -> str:
    """An element id the code chose: checked, so that a mistake is loud."""
    if not _ID.fullmatch(value):
        raise ValueError(f"not a safe element id: {value!r}")
    return value


def slug(prefix: str, text: str, index: int, taken: Sequence[str] = ()) -> str:
    """`prefix` + `text` with spaces as '-' and everything but letters,
    digits, '-' and '_' dropped ('multiple m=1' -> 'multiple-m1'); the
    index where nothing is left or the id is taken."""
    tail = re.sub(r"[^A-Za-z0-9_-]", "", text.replace(" ", "-"))
    fid = prefix + tail
    if not tail or fid in taken:
        fid = f"{prefix}{tail}-{index}" if tail else f"{prefix}{index}"
    return safe_id(fid)


@dataclass
class Paragraph:
    text: str
    cls: str = ""          # "", "warn" or "verdict"
    id: str = ""
    link: Optional[tuple[str, str]] = None   # (section id, text) of a link after the text
    kind: str = "p"


@dataclass
class Table:
    columns: list[str]
    rows: list[list[str]]
    id: str = ""
    kind: str = "table"


@dataclass
class Figure:
    id: str
    caption: str           # shown under the image and as its alt text
    data: str = ""         # base64 PNG; empty: not drawn
    note: str = ""         # why there is no image ("Figure not drawn: ..." / "Not measured: ...")
    kind: str = "figure"


Block = Union[Paragraph, Table, Figure]


def cell(v: Any) -> str:
    """A table cell's text: '-' for none (None, NaN, infinity: no such
    word reaches the page), yes/no, 4 significant digits."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        if v == 0:
            return "0"
        return f"{v:.4g}"
    return str(v)


@dataclass
class Blocks:
    """A section's content in order; figures are drawn into `figdir`."""
    figdir: Path
    items: list[Block] = field(default_factory=list)
    jobs: Optional[FigureJobs] = None     # where figures are drawn; None: here, in turn

    def p(self, text: str, cls: str = "", pid: str = "") -> None:
        self.items.append(Paragraph(text, cls, safe_id(pid) if pid else ""))

    def table(self, columns: Sequence[str], rows: Sequence[Sequence[Any]], tid: str = "") -> None:
        self.items.append(Table([str(c) for c in columns], [[cell(v) for v in row] for row in rows],
                                safe_id(tid) if tid else ""))

    def figure(self, fid: str, draw: Callable[[list[str]], Any], caption: str) -> None:
        """draw(paths) writes the PNG, in `jobs` (side by side with other
        figures; the image is in the Figure once jobs.finish() returned) or
        here; a failure becomes a note, never a lost report."""
        fid = safe_id(fid)
        path = self.figdir / f"{fid}.png"
        fig = Figure(fid, caption)
        self.items.append(fig)

        def done(note: Optional[str]) -> None:
            if note is None:
                try:
                    fig.data = base64.b64encode(path.read_bytes()).decode("ascii")
                    return
                except OSError as err:
                    note = str(err)
            fig.caption, fig.note = "", f"Figure not drawn: {note}"

        (self.jobs or FigureJobs(1)).submit(fid, lambda: draw([str(path)]), done)

    def missing(self, fid: str, why: str) -> None:
        self.items.append(Figure(safe_id(fid), "", note=f"Not measured: {why}"))


__all__ = ["Paragraph", "Table", "Figure", "Block", "Blocks", "cell", "slug", "safe_id"]
