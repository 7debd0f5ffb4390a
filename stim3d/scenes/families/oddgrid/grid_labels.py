"""Row and column numbers built from primitives: 5x7 dot-matrix digits (scenes/families/shared/font.py) of small cubes.

A labelled grid (OddGridBench's LabeledAcc images) shows its row numbers left of
column 1 and its column numbers above row 1. Each digit is a block of small
cubes lying in the grid's plane (flat on the ground, or on the face of a board),
so the numbers are part of the scene: they are lit, shaded and occluded like the
grid, and each dot has its own id in the masks. Label dots are not countable and
carry no `row`/`col` attributes (those mean grid cells); they record
`label_axis` ("row" or "col"), `label_number`, `digit` and `digit_index`.
"""

from __future__ import annotations

import numpy as np

from ...model import Color, SceneObject, round6
from ...primitives import unit_dimensions
from ..shared.font import COLUMNS, ROWS, dots

DOT_PITCH = 0.08  # metres between dot centres: a two-digit number is 0.86 m wide, inside a 1 m cell
DOT_SIZE = 0.8 * DOT_PITCH  # cube edge
DIGIT_GAP = 1  # blank dot columns between two digits
LABEL_COLOR = Color(name="label", srgb=(0.06, 0.06, 0.06))


def number_width(number: int) -> float:
    """Width in metres of a number's dot block (outer dot edges)."""
    n = len(str(number))
    return ((n * COLUMNS + (n - 1) * DIGIT_GAP) - 1) * DOT_PITCH + DOT_SIZE


BLOCK_HEIGHT = (ROWS - 1) * DOT_PITCH + DOT_SIZE


def number_dots(number: int) -> list[tuple[str, int, float, float]]:
    """(digit, digit index, x, y) of every dot of `number`, in metres from the block's centre, y up."""
    text = str(number)
    n_columns = len(text) * COLUMNS + (len(text) - 1) * DIGIT_GAP
    found = []
    for index, digit in enumerate(text):
        for row, column in dots(digit):
            matrix_column = index * (COLUMNS + DIGIT_GAP) + column - 1
            found.append((digit, index + 1, (matrix_column - (n_columns - 1) / 2.0) * DOT_PITCH,
                          ((ROWS + 1) / 2.0 - row) * DOT_PITCH))
    return found


def label_objects(first_id: int, anchors: list[tuple[str, int, np.ndarray]], right: np.ndarray, up: np.ndarray,
                  lift: np.ndarray) -> list[SceneObject]:
    """Dot cubes of every (axis, number, block centre) in `anchors`, in the plane spanned by `right` and `up`.

    `lift` moves each dot off the plane it lies on by half its size (towards the
    camera side), so the cubes rest on the ground or against the board.
    """
    dimensions = tuple(round6(d * DOT_SIZE) for d in unit_dimensions("cube"))
    objects: list[SceneObject] = []
    for axis, number, centre in anchors:
        for digit, digit_index, x, y in number_dots(number):
            location = centre + x * right + y * up + lift
            objects.append(SceneObject(
                id=first_id + len(objects),
                shape="cube",
                size=round6(DOT_SIZE),
                dimensions=dimensions,
                location=tuple(round6(v) for v in location),
                color=LABEL_COLOR,
                countable=False,
                attributes={"label_axis": axis, "label_number": number, "digit": digit, "digit_index": digit_index},
            ))
    return objects


def label_figure(obj: SceneObject) -> str | None:
    """The number a label dot is part of ("row 3", "col 12"), None for a grid cell or the board: the contrast
    floor judges a number's dots together (Family.figure_of)."""
    if "label_axis" not in obj.attributes:
        return None
    return f"{obj.attributes['label_axis']} {obj.attributes['label_number']}"
