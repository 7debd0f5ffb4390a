"""ROSE regions: the numeric and visual regions a ROSE task restricts to, and how they are sampled.

A region is an axis-aligned block of grid cells, 1-based from the image's top-left:
a single row or column, a range of rows or columns, or a rectangle that spans
neither all rows nor all columns (so every kind names a different family of
blocks). A task's *permitted* cells are the region's cells, or, for the exclusion
task (T5), every cell outside it. The *case* says how many of the exceptions the
permitted cells hold: `none` (the answer is COUNT(0) / DONE / SUBMIT(0)), `some`,
or `all` (ROSE's zero / partial / all split).

Sampling is case-first: a task's case is given (scenes/families/rose/rose_plan.py
draws it, or for T2 derives it from the scheduled count), then a region kind is
drawn uniformly among the kinds that can realise that case (and, for T2, hold
exactly the planned number of exceptions) for the scene's exceptions, then a
region uniformly among that kind's blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Cell = tuple[int, int]
CASES = ("none", "some", "all")
NUMERIC_KINDS = ("row", "rows", "column", "columns", "rectangle")
EXCLUSION_KINDS = ("row", "column", "rectangle")  # the regions ROSE's exclusion prompts name


@dataclass(frozen=True)
class Region:
    kind: str
    row_min: int
    row_max: int
    col_min: int
    col_max: int

    def cells(self) -> set[Cell]:
        return {(r, c) for r in range(self.row_min, self.row_max + 1) for c in range(self.col_min, self.col_max + 1)}

    def phrase(self) -> str:
        """The block as ROSE's prompts name it: "row 2", "rows 2 to 4", "column 3", ... ."""
        if self.kind == "row":
            return f"row {self.row_min}"
        if self.kind == "rows":
            return f"rows {self.row_min} to {self.row_max}"
        if self.kind == "column":
            return f"column {self.col_min}"
        if self.kind == "columns":
            return f"columns {self.col_min} to {self.col_max}"
        return f"the rectangle from row {self.row_min} column {self.col_min} to row {self.row_max} column {self.col_max}"

    def inside(self) -> str:
        """The block as the tail of a local task: "in row 2", ..., "from row 1 column 2 to row 3 column 4"."""
        if self.kind == "rectangle":
            return f"from row {self.row_min} column {self.col_min} to row {self.row_max} column {self.col_max}"
        return f"in {self.phrase()}"


def _ranges(n: int, single: bool) -> list[tuple[int, int]]:
    """Index ranges of one line (single) or of 2..n-1 lines (a range that is not the whole axis)."""
    if single:
        return [(i, i) for i in range(1, n + 1)]
    return [(a, b) for a in range(1, n + 1) for b in range(a + 1, n + 1) if (a, b) != (1, n)]


def blocks(kind: str, rows: int, cols: int) -> list[Region]:
    """Every region of one kind in a rows x cols grid, in a fixed order."""
    if kind in ("row", "rows"):
        return [Region(kind, a, b, 1, cols) for a, b in _ranges(rows, kind == "row")]
    if kind in ("column", "columns"):
        return [Region(kind, 1, rows, a, b) for a, b in _ranges(cols, kind == "column")]
    if kind == "rectangle":
        spans_r = [(a, b) for a in range(1, rows + 1) for b in range(a, rows + 1) if (a, b) != (1, rows)]
        spans_c = [(a, b) for a in range(1, cols + 1) for b in range(a, cols + 1) if (a, b) != (1, cols)]
        return [Region(kind, r0, r1, c0, c1) for r0, r1 in spans_r for c0, c1 in spans_c]
    raise ValueError(f"unknown region kind {kind!r}; allowed: {', '.join(NUMERIC_KINDS)}")


def permitted(region: Region, rows: int, cols: int, exclude: bool) -> set[Cell]:
    """The cells a task may click: the region's, or for an exclusion task every other cell."""
    inside = region.cells()
    if not exclude:
        return inside
    return {(r, c) for r in range(1, rows + 1) for c in range(1, cols + 1)} - inside


def case_of(cells: set[Cell], exceptions: set[Cell]) -> str:
    held = len(cells & exceptions)
    return "none" if held == 0 else "all" if held == len(exceptions) else "some"


def sample_region(rng: np.random.Generator, case: str, kinds: tuple[str, ...], rows: int, cols: int,
                  exceptions: set[Cell], exclude: bool, held: int | None = None) -> Region | None:
    """A region whose permitted cells realise `case` (and hold exactly `held` exceptions when given), kind first
    (see the module docstring); None if none can."""
    options = {}
    for kind in kinds:
        found = [b for b in blocks(kind, rows, cols)
                 if (cells := permitted(b, rows, cols, exclude)) and case_of(cells, exceptions) == case
                 and (held is None or len(cells & exceptions) == held)]
        if found:
            options[kind] = found
    if not options:
        return None
    kind = list(options)[int(rng.integers(len(options)))]
    return options[kind][int(rng.integers(len(options[kind])))]
