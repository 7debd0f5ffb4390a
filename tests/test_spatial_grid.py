"""Spatial grids: gold equals a recount from the recorded cells, rows/columns follow the image, answers balanced."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from stim3d.scenes.families.base import Frame
from stim3d.scenes.families.dysm.spatial_grid import order_preserved
from stim3d.scenes.items import make_item

FRAME = Frame(320, 240)
PLURAL_TO_SHAPE = {"spheres": "sphere", "cubes": "cube", "cones": "cone", "cylinders": "cylinder", "tori": "torus"}
QUESTION = re.compile(
    r"Starting from the (\w+) at \(row (\d+), column (\d+)\), how many (\w+) are there "
    r"(to the right of it in the same row|to the left of it in the same row|above it in the same column|below it in the same column)\?"
)


def grid_item(index: int, rows: int, cols: int, frame: Frame = FRAME):
    return make_item("spatial_grid", {"rows": rows, "cols": cols}, [41, 0, index], f"grid-{index}", frame)


def recount(it) -> int:
    """The answer from the question text and the recorded cells alone (independent of the family code)."""
    reference, row, col, plural, where = QUESTION.search(it.questions[0].text).groups()
    row, col, target = int(row), int(col), PLURAL_TO_SHAPE[plural]
    cells = {(o.attributes["row"], o.attributes["col"]): o.shape for o in it.scene.objects}
    assert cells[(row, col)] == reference  # the reference cell holds the named shape
    side = {
        "to the right of it in the same row": lambda r, c: r == row and c > col,
        "to the left of it in the same row": lambda r, c: r == row and c < col,
        "above it in the same column": lambda r, c: c == col and r < row,
        "below it in the same column": lambda r, c: c == col and r > row,
    }[where]
    assert any(side(r, c) for r, c in cells)  # the question never points off the grid
    return sum(1 for (r, c), shape in cells.items() if side(r, c) and shape == target)


@pytest.fixture(scope="module")
def batch_3x4():
    return [grid_item(i, 3, 4) for i in range(48)]


def test_gold_equals_an_independent_recount(batch_3x4):
    for it in batch_3x4:
        assert it.questions[0].gold == recount(it)
        assert sorted((o.attributes["row"], o.attributes["col"]) for o in it.scene.objects) == [
            (r, c) for r in range(1, 4) for c in range(1, 5)
        ]


def test_every_answer_occurs_and_a_constant_answer_stays_near_chance(batch_3x4):
    golds = Counter(it.questions[0].gold for it in batch_3x4)
    assert set(golds) == {0, 1, 2, 3}  # 0..max(rows, cols) - 1
    assert max(golds.values()) / len(batch_3x4) <= 0.42  # chance is 0.25; p(> 0.42) < 1 % for 48 items


def test_zero_answers_are_about_position_not_presence(batch_3x4):
    for it in batch_3x4:
        if it.questions[0].gold == 0:
            target = it.questions[0].subject["target"]
            assert any(o.shape == target for o in it.scene.objects)


def test_measured_centres_are_ordered_by_row_and_column_in_the_image(batch_3x4):
    for it in batch_3x4[:12] + [grid_item(200 + i, r, c) for i, (r, c) in enumerate([(5, 2), (2, 5), (6, 6)])]:
        truths = {t.id: t for t in it.ground_truth.objects}
        centre = {(o.attributes["row"], o.attributes["col"]): truths[o.id].centroid_px for o in it.scene.objects}
        rows, cols = max(r for r, _ in centre), max(c for _, c in centre)
        for r in range(1, rows + 1):
            xs = [centre[(r, c)][0] for c in range(1, cols + 1)]
            assert xs == sorted(xs), f"row {r} is not left to right: {xs}"
        for r in range(1, rows):
            assert max(centre[(r, c)][1] for c in range(1, cols + 1)) < min(centre[(r + 1, c)][1] for c in range(1, cols + 1))


def test_no_object_hides_another():
    for it in [grid_item(300 + i, r, c) for i, (r, c) in enumerate([(5, 5), (4, 5), (7, 9)])]:
        assert all(t.visibility >= 0.95 and t.truncation == 0.0 for t in it.ground_truth.objects)
        assert it.difficulty["least_visibility"] == min(t.visibility for t in it.ground_truth.objects)


def test_a_layout_whose_image_order_breaks_is_rejected(batch_3x4):
    it = batch_3x4[0]
    assert order_preserved(it.scene.objects, it.scene.camera)
    swapped = [o.model_copy(deep=True) for o in it.scene.objects]
    a = next(o for o in swapped if (o.attributes["row"], o.attributes["col"]) == (2, 1))
    b = next(o for o in swapped if (o.attributes["row"], o.attributes["col"]) == (2, 2))
    a.attributes["col"], b.attributes["col"] = 2, 1
    assert not order_preserved(swapped, it.scene.camera)
    lifted = [o.model_copy(deep=True) for o in it.scene.objects]
    for o in lifted:  # row 3 (the nearest) pushed behind row 2: rows interleave in image y
        if o.attributes["row"] == 3:
            o.location = (o.location[0], o.location[1] + 1.2, o.location[2])
    assert not order_preserved(lifted, it.scene.camera)


def test_questions_use_every_direction():
    directions = Counter(grid_item(400 + i, 4, 4).questions[0].subject["direction"] for i in range(24))
    assert set(directions) == {"right", "left", "above", "below"}
    assert np.all(np.array(list(directions.values())) >= 2)
