"""Whether a ROSE size exception looks like one in the image: its pixel area against the majority's.

Perspective makes a near row's objects project larger than a far row's, so a
1.3x exception in a far row can cover no more pixels than a majority object in a
near row: the gold then calls it an exception while the picture shows none. For
every size exception the layout search (scenes/families/rose/rose_grid.py) measures,
from the ray-cast amodal pixel areas of the composed view,

- `area_ratio_row`: its area over the median area of the majority objects in its
  own row (the rows above and below when its row holds no majority object); the
  row shares the exception's depth, so this is the contrast a viewer reads
  between neighbours;
- `area_ratio_grid`: its area over the majority's most extreme area in the whole
  grid (the largest for a grown exception, the smallest for a shrunk one): above
  1 a grown exception is larger than every majority object in the image, below 1
  a shrunk one smaller than every one.

A layout is accepted only when every size exception clears both margins:
ROW_MARGIN (the area differs from its row by at least 25 %, well beyond the
5-10 % Weber fraction of area discrimination, so a glance separates it) and
GRID_MARGIN (10 % beyond the majority's whole range, so no majority object
anywhere in the image is as large, or as small). Both ratios are recorded on the
exception's attributes in item.json.
"""

from __future__ import annotations

import numpy as np

ROW_MARGIN = 1.25
GRID_MARGIN = 1.10

Cell = tuple[int, int]


def size_contrast(areas: dict[Cell, float], exceptions: set[Cell], grown: dict[Cell, bool]) -> dict[Cell, dict[str, float]]:
    """{cell: {"area_ratio_row", "area_ratio_grid"}} for every exception cell, from amodal areas per cell."""
    majority = {cell: area for cell, area in areas.items() if cell not in exceptions}
    extreme = {True: max(majority.values()), False: min(majority.values())}
    found = {}
    for cell in sorted(exceptions):
        row = cell[0]
        same = [a for (r, _), a in majority.items() if r == row]
        if not same:
            same = [a for (r, _), a in majority.items() if abs(r - row) == 1]
        found[cell] = {"area_ratio_row": round(areas[cell] / float(np.median(same)), 4),
                       "area_ratio_grid": round(areas[cell] / extreme[grown[cell]], 4)}
    return found


def visible_as_exception(ratios: dict[str, float], grown: bool) -> bool:
    """Both ratios beyond their margins, on the side the exception's size lies (above 1 grown, below 1 shrunk)."""
    if grown:
        return ratios["area_ratio_row"] >= ROW_MARGIN and ratios["area_ratio_grid"] >= GRID_MARGIN
    return ratios["area_ratio_row"] <= 1.0 / ROW_MARGIN and ratios["area_ratio_grid"] <= 1.0 / GRID_MARGIN
