"""`hympi-lab report DIR`: one self-contained HTML report of a study, plus results.csv.

Reads DIR/study.json and the complete points of DIR/results.jsonl, fits the
model (analysis.py; kept in DIR/fit.json), draws the figures
(DIR/figures/*.png, embedded in the page as base64 so it reads offline) and
writes DIR/report.html (templates/report.html.j2, autoescaped) and
DIR/results.csv. `SECTIONS` orders the sections and numbers them by
position; every section and figure has a stable element id for tests and
links.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import agreement, sections as sec, sections_depth
from .analysis import (DEPTH_SECTION, fits, kernel_advice, load, recommendation, solve_runs,
                       write_csv, write_json)
from .atomic import write_atomic
from .content import Block, Paragraph
from .errors import OutputError
from .figjobs import FigureJobs, default_workers

Section = Callable[[sec.Ctx], list[Block]]

# (element id, title, function): the page's sections in order, numbered 1.. by position.
SECTIONS: list[tuple[str, str, Section]] = [
    ("machine", "Machine and context", sec.machine),
    ("beff", "Effective bandwidth (b_eff) over message length", sec.beff),
    ("internode", "Inter-node bandwidth over communicating CPUs (seed 001 sec. 3.1)", sec.internode),
    ("ratio", "T_hybrid / T_pure over message size (seed 000 Fig. 3)", sec.ratio),
    ("pack", "Thread-parallel packing vs derived datatypes", sec.pack),
    ("overlap", "Measured epsilon over nk_loc with eq. (14) (seed 000 Fig. 6-7)", sec.overlap),
    ("fig5", "The Fig. 5 map with this machine's measured points", sec.fig5),
    ("breakdown", "Where the time goes, per kernel and scheme", sec.breakdown),
    ("validation", "Model vs measurement", sec.validation),
    ("timelines", "Thread timelines", sec.timelines),
    ("recommendation", "Recommendation", sec.recommendation),
    ("projection", "Projection to 16,384 nodes", sec.projection),
    ("depth", "Temporal blocking (jacobi, rbgs, spmv --halo-depth)", sections_depth.depth),
]
# Sections shown only when they hold something, numbered after the others.
OPTIONAL_SECTIONS: list[tuple[str, str, Section]] = [
    ("other", "Other benchmarks", sec.other_benchmarks),
]
SECTION_IDS = tuple(sid for sid, _, _ in SECTIONS)
NUMBERS = {sid: i + 1 for i, sid in enumerate(SECTION_IDS)}
# The recommendation names the temporal-blocking section by number.
assert NUMBERS["depth"] == DEPTH_SECTION, "analysis.DEPTH_SECTION must follow SECTIONS"

TEMPLATE = "report.html.j2"


@dataclass
class RenderedSection:
    id: str
    number: int
    title: str
    blocks: list[Block]


def environment():
    """Jinja2 with autoescape on for every template (the report's strings are data)."""
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader("hympi_lab", "templates"),
                              autoescape=True, undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True)


def render_page(title: str, summary: list[Block], sections: list[RenderedSection]) -> str:
    return environment().get_template(TEMPLATE).render(title=title, summary=summary,
                                                       sections=sections)


def write_report(outdir: Path) -> str:
    """Writes report.html, results.csv, fit.json and figures/; returns the recommendation."""
    from . import plotting, trace as trace_mod  # matplotlib loads only here

    outdir = Path(outdir)
    study = load(outdir)
    figdir = outdir / "figures"
    try:
        figdir.mkdir(exist_ok=True)
    except OSError as err:
        raise OutputError(f"cannot create {figdir}: {err.strerror or err}") from None
    fit = fits(study)
    write_json(outdir / "fit.json", fit)
    runs = solve_runs(study)
    advice = kernel_advice(runs, study.oversubscribed)
    # A user's program whose runs disagree on a field gets no recommendation.
    verdict = agreement.guard(recommendation(study, advice, fit), study, advice,
                              agreement.check(study)[0])
    jobs = FigureJobs(default_workers())
    ctx = sec.Ctx(study, outdir, fit, runs, advice, verdict, plotting, trace_mod, NUMBERS, jobs)
    summary: list[Block] = [Paragraph(verdict, "verdict", "summary", ("recommendation", "Details"))]
    rendered = [RenderedSection(sid, NUMBERS[sid], title, fn(ctx)) for sid, title, fn in SECTIONS]
    for sid, title, fn in OPTIONAL_SECTIONS:
        blocks = fn(ctx)
        if blocks:
            rendered.append(RenderedSection(sid, len(rendered) + 1, title, blocks))
    jobs.finish()  # every figure drawn (or its note) before the page is
    host = study.header.get("machine", {}).get("host", "")
    write_atomic(outdir / "report.html", render_page(f"hympi study report: {host}", summary, rendered))
    write_csv(study, outdir / "results.csv")
    return verdict


__all__ = ["SECTIONS", "OPTIONAL_SECTIONS", "SECTION_IDS", "NUMBERS", "write_report", "render_page", "RenderedSection"]
