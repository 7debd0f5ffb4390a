"""Whether an OddGrid size or position oddity looks like one in the image: measured against its neighbours.

A 5-15 % size change or a 5-12 % shift of the pitch is subtle by design
(OddGridBench's magnitudes), and the view can hide it: perspective makes a near
row larger in the image than a far one, the close camera sees each cell from its
own direction (on the board every object shows a slightly different outline),
and a rotation drawn with the size can shrink the outline a size change grew.
So for every odd cell that differs in size or position the layout search
(scenes/families/oddgrid/odd_grid.py) measures, in the composed view,

- `area_ratio_row`: its ray-cast amodal pixel area over the median area of the
  other objects in its row (as ROSE measures its size exceptions,
  scenes/families/rose/rose_contrast.py): on the ground the row shares its depth, on
  the board its height, so this is the contrast a viewer reads between
  neighbours. Not the 8 cells around it: at the grid's top or bottom edge most
  of those stand in the one nearer (larger) or farther (smaller) row, and a
  1.05x oddity in row 1 measured 0.93-0.99 of their median in every view;
- `area_ratio_grid`: its area over the majority's most extreme area in the whole
  grid (the largest for a grown oddity, the smallest for a shrunk one). Recorded,
  not required: on the ground the rows' perspective spread (up to 1.5x in area) is
  wider than the task's size steps, and a viewer compares a cell with its
  neighbours, not with the far end of the grid;
- `shift_spacing_u` / `shift_spacing_v`: the odd centre's projected shift from
  its own cell (`shift_px_u/v`) over the local spacing of the projected cell
  centres, horizontally between the cell and its left and right neighbours, and
  vertically between the cell and the cells above and below it (the mean of the
  one or two gaps). Signed as the image runs: + is rightwards (towards higher
  column numbers) and downwards (towards higher row numbers).

A layout is accepted only when every such oddity clears its margin, on the side
its change lies: SIZE_MARGIN (the area differs from its row's median by at
least 5 %, in the nominal direction; the smallest nominal step, 5 % in size, is
about 10 % in area) and SHIFT_MARGIN (the larger of the two shifts is at least
2.5 % of the local spacing, half the smallest nominal shift of 5 % of the
pitch: at 0.04 the preset's odd_grid-t0-00516, an 8x6 ground grid, measured
0.027-0.038 in every one of its 12 views and could not be composed). Otherwise the search draws another camera (and on the board another
orientation); `difficulty.contrast_redraws` counts these redraws.
"""

from __future__ import annotations

import numpy as np

SIZE_MARGIN = 1.05
SHIFT_MARGIN = 0.025

Cell = tuple[int, int]


def size_contrast(areas: dict[Cell, float], odd: Cell, grown: bool) -> dict[str, float]:
    """{"area_ratio_row", "area_ratio_grid"} of the odd cell, from amodal pixel areas per cell."""
    row = [area for (r, c), area in areas.items() if r == odd[0] and (r, c) != odd]
    majority = [area for cell, area in areas.items() if cell != odd]
    extreme = max(majority) if grown else min(majority)
    return {"area_ratio_row": round(areas[odd] / float(np.median(row)), 4),
            "area_ratio_grid": round(areas[odd] / extreme, 4)}


def shift_contrast(centres: dict[Cell, tuple[float, float]], odd: Cell, shift_px: tuple[float, float]) -> dict[str, float]:
    """{"shift_spacing_u", "shift_spacing_v"}: the shift in pixels over the local spacing of the cells' centres.

    `centres` are the projected centres of every cell as the grid lays it out (the odd
    cell's own, unshifted position included); `shift_px` is (du, dv), the odd centre
    minus its cell's.
    """
    row, col = odd
    u0, v0 = centres[odd]
    across = [abs(centres[(row, c)][0] - u0) for c in (col - 1, col + 1) if (row, c) in centres]
    down = [abs(centres[(r, col)][1] - v0) for r in (row - 1, row + 1) if (r, col) in centres]
    return {"shift_spacing_u": round(shift_px[0] / float(np.mean(across)), 4),
            "shift_spacing_v": round(shift_px[1] / float(np.mean(down)), 4)}


def visible_as_odd(found: dict[str, float], size_ratio: float | None) -> bool:
    """Every measured oddity beyond its margin: size on the side `size_ratio` lies, shift on either axis."""
    if size_ratio is not None:
        ratio = found["area_ratio_row"]
        if not (ratio >= SIZE_MARGIN if size_ratio > 1.0 else ratio <= 1.0 / SIZE_MARGIN):
            return False
    if "shift_spacing_u" in found:
        return max(abs(found["shift_spacing_u"]), abs(found["shift_spacing_v"])) >= SHIFT_MARGIN
    return True
