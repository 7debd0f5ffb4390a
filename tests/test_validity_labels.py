"""OddGrid labels sit beside the rows and columns they name, in every labelled item of the oddgrid3d preset.

A reader counts rows by the number next to them, so a row label whose projected
centre is nearer image row 6 than row 7 makes the reader answer a different row
than the gold (issue 30: odd_grid-t2-00013-labelled and others, where "7" sat by
row 6: the labels lie on the board's face, 0.6 m behind the floating grid, and
parallax moved them). Re-derived here from the composed scene only: each label's
centre is the middle of its dot cubes' extent, projected with scenes/camera.py;
it must be nearest its own row's (column's) line of projected object centres and
within TOLERANCE of the spacing between rows of that line.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

import numpy as np
import pytest

from stim3d.render.batch.config import load_config
from stim3d.render.batch.plan import expand
from stim3d.scenes.camera import geometry
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item, seed_entropy
from stim3d.scenes.presets import preset_path

PRESET = preset_path("oddgrid3d")
TOLERANCE = 0.2  # share of the nearest spacing a label's centre may sit off its line (nearest needs < 0.5)


@lru_cache(maxsize=1)
def labelled_plans():
    config = load_config(PRESET)
    return config, [p for p in expand(config) if p.params.get("labels")]


def compose(plan, config):
    frame = Frame(config.render.width, config.render.height, config.render.rays_per_pixel)
    return make_item(plan.family, plan.params, seed_entropy(config.seed, plan.task_index, plan.item_index),
                     plan.item_id, frame, plan.split, plan.scene_id)


def misplaced_labels(item) -> list[str]:
    """'row 7 by 6' for a label nearer another row's (column's) line; 'row 7 off' for one off its line by > TOLERANCE.

    A row's line is the straight line through its objects' projected centres
    (rows slant when the camera stands aside), read at the label's image x; the
    label's centre is the middle of its dots' projected extent (not their mean: a
    "7" has more dots at the top).
    """
    view = geometry(item.scene.camera)
    cells = {(o.attributes["row"], o.attributes["col"]): o for o in item.scene.objects if "row" in o.attributes}
    dots = defaultdict(list)
    for o in item.scene.objects:
        if "label_axis" in o.attributes:
            dots[(o.attributes["label_axis"], o.attributes["label_number"])].append(o.location)
    rows = max(r for r, _ in cells)
    cols = max(c for _, c in cells)
    assert len(dots) == rows + cols
    lines = {}
    for axis, count, other in (("row", rows, cols), ("col", cols, rows)):
        for k in range(1, count + 1):
            keys = [(k, j) if axis == "row" else (j, k) for j in range(1, other + 1)]
            u, v, _ = view.project(np.array([cells[key].location for key in keys]))
            lines[(axis, k)] = np.polyfit(u, v, 1) if axis == "row" else np.polyfit(v, u, 1)
    wrong = []
    for (axis, number), locations in dots.items():
        u, v, _ = view.project(np.array(locations))
        centre_u, centre_v = (u.min() + u.max()) / 2.0, (v.min() + v.max()) / 2.0
        along, across = (centre_u, centre_v) if axis == "row" else (centre_v, centre_u)
        count = rows if axis == "row" else cols
        at = np.array([np.polyval(lines[(axis, k)], along) for k in range(1, count + 1)])
        nearest = 1 + int(np.argmin(np.abs(at - across)))
        spacing = np.abs(np.diff(at)).min()
        if nearest != number:
            wrong.append(f"{axis} {number} by {nearest}")
        elif abs(at[number - 1] - across) > TOLERANCE * spacing:
            wrong.append(f"{axis} {number} off by {abs(at[number - 1] - across) / spacing:.2f} of a spacing")
    return wrong


def test_the_check_finds_a_label_moved_by_one_row():
    """A label block moved down by one row pitch on the board is reported: the check can fail."""
    config, plans = labelled_plans()
    item = compose(plans[0], config)
    assert misplaced_labels(item) == []
    pitch = np.subtract(next(o for o in item.scene.objects if o.attributes.get("row") == 1).location,
                        next(o for o in item.scene.objects if o.attributes.get("row") == 2).location)
    moved = [o.model_copy(update={"location": tuple(np.subtract(o.location, pitch))})
             if o.attributes.get("label_axis") == "row" and o.attributes.get("label_number") == 3 else o
             for o in item.scene.objects]
    item.scene.objects = moved
    assert misplaced_labels(item) == ["row 3 by 4"]


def corners_seeing_background(item) -> list[tuple[float, float]]:
    """Image corners whose line of sight meets neither the board's face nor the ground (the ground is 200 m wide)."""
    board = next(o for o in item.scene.objects if o.attributes.get("role") == "board")
    face_y, half = board.location[1] - board.size / 2.0, board.size / 2.0
    cam = item.scene.camera
    corners = [(0.0, 0.0), (cam.width, 0.0), (0.0, cam.height), (cam.width, cam.height)]
    origins, directions = geometry(cam).rays(np.array([c[0] for c in corners]), np.array([c[1] for c in corners]))
    open_corners = []
    for corner, origin, d in zip(corners, origins, directions, strict=True):
        to_ground = -origin[2] / d[2] if d[2] < 0 else np.inf
        to_face = (face_y - origin[1]) / d[1] if d[1] > 0 else np.inf
        if to_face < to_ground:
            x, z = (origin + to_face * d)[[0, 2]]
            if abs(x - board.location[0]) <= half and 0.0 <= z <= board.size:
                continue
        elif to_ground < np.inf and np.all(np.abs((origin + to_ground * d)[:2]) <= item.scene.stage.ground_size / 2):
            continue
        open_corners.append(corner)
    return open_corners


@pytest.mark.parametrize("index", range(175))
def test_every_label_is_beside_its_row_or_column_and_no_corner_sees_past_the_board(index):
    config, plans = labelled_plans()
    assert len(plans) == 175
    item = compose(plans[index], config)
    assert misplaced_labels(item) == [], plans[index].item_id
    assert corners_seeing_background(item) == [], plans[index].item_id


