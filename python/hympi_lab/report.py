"""`hympi-lab report DIR`: the study report's entry points, for cli.py,
study.py and tests.

The work lives in analysis.py (numbers and verdicts from the records,
results.csv, fit.json), sections.py (each section's paragraphs, tables and
figures), render.py (their order and numbers, and the page from
templates/report.html.j2 with autoescape on) and content.py (the blocks a
section holds).
"""

from __future__ import annotations

from .analysis import (DEPTH_SECTION, NOISE_FLOOR, KernelAdvice, SolveRun, Study, Validation,
                       check_study_dir, depth_advice, depth_rows, fits, kernel_advice, load,
                       recommendation, solve_runs, user_kernels, validations, write_csv)
from .render import SECTION_IDS, SECTIONS, write_report

__all__ = ["write_report", "check_study_dir", "write_csv", "SECTION_IDS", "SECTIONS", "fits", "load",
           "Study", "SolveRun", "Validation", "KernelAdvice", "solve_runs", "validations",
           "kernel_advice", "recommendation", "depth_rows", "depth_advice", "user_kernels",
           "NOISE_FLOOR", "DEPTH_SECTION"]
