"""DYSM 3D spatial grids: count shapes to one side of a reference cell in a grid of primitives.

An R x C grid of the five primitives rests on the ground, each cell with a shape
and a named colour. Rows and columns are numbered 1-based from the top-left of
the *image*: row 1 is the row farthest from the camera (the top of the image),
column 1 the leftmost. That mapping is checked on every layout by projecting the
objects' centres: within each row the centres run left to right by column,
within each column top to bottom by row, and the rows do not interleave in image
y; a layout that breaks it (possible with the random camera azimuth and the
jitter inside cells) is rejected and redrawn. No object hides another: every
object's measured visibility is at least MIN_VISIBILITY, none is cut by the frame.

The answer is drawn first, uniformly over 0..max(R, C) - 1 (every value some
direction of this grid can realise), or fixed by `answer` (a batch schedules it
over the task so answers are balanced across grid sizes: scenes/balance.py),
then a direction whose line is long enough,
a reference cell with at least max(answer, 1) cells that way, the target shape
and a different reference shape; exactly `answer` cells of that line get the
target, the rest of the line other shapes, every other cell any shape. When the
answer is 0 the target still appears elsewhere in the grid if there is room, so
a zero is about position, not presence. Each object records its `row` and `col`
in `attributes`.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from ...colors import COLOR_NAMES, named
from ...model import SHAPES, Camera, Question, Scene, SceneObject, round6
from ...placement import Bounds, InfeasibleError, Layout, resting_pose, yaw_quat
from ...primitives import unit_dimensions
from ..base import Composed, Family, FamilyParams, Frame
from ..shared.counting import PLURAL
from ..shared.grid_layout import cell_centre as grid_cell_centre
from ..shared.grid_layout import framing_camera, order_preserved, view_direction
from ..shared.stage import COUNTING_VIEW_DISTANCE, camera_distance, lights_around

Direction = Literal["right", "left", "above", "below"]
PREAMBLE = (
    "The shapes stand in a grid of {rows} rows and {cols} columns; rows are numbered from the top of the image, "
    "columns from the left."
)
ROW_QUESTION = (
    "Starting from the {reference} at (row {row}, column {col}), how many {targets} are there to the {direction} "
    "of it in the same row?"
)
COLUMN_QUESTION = (
    "Starting from the {reference} at (row {row}, column {col}), how many {targets} are there {direction} it "
    "in the same column?"
)
STEP: dict[str, tuple[int, int]] = {"right": (0, 1), "left": (0, -1), "above": (-1, 0), "below": (1, 0)}

MIN_VISIBILITY = 0.95
PITCH = 1.0  # metres between column centres
ROW_PITCH = 1.3  # metres between row centres: rows recede from the camera, so they need more room
ELEVATION_DEG = (35.0, 50.0)  # low enough that a cone shows its profile, high enough that rows do not hide each other
SIZE_RANGE = (0.5, 0.62)  # object size as a share of the pitch
FOCAL_35MM = 35.0
FILL = 0.86  # share of the frame the grid may span in each direction
COLORS = tuple(c for c in COLOR_NAMES if c != "gray")  # gray would melt into the ground
LAYOUT_ATTEMPTS = 12
CELL_ATTEMPTS = 8


class SpatialGridParams(FamilyParams):
    rows: int = Field(3, ge=2, le=9, description="grid rows (R)")
    cols: int = Field(3, ge=2, le=9, description="grid columns (C)")
    jitter: float = Field(0.08, ge=0.0, le=0.2, description="largest shift of an object from its cell centre, as a share of the pitch")
    answer: int | None = Field(None, ge=0, le=8, description="the gold count; none draws it uniformly (a batch schedules it)")

    def answer_space(self) -> list[int]:
        """Every count some direction of this grid can realise: 0..max(R, C) - 1."""
        return list(range(max(self.rows, self.cols)))

    @model_validator(mode="after")
    def _answer_realisable(self) -> SpatialGridParams:
        if self.answer is not None and self.answer not in self.answer_space():
            raise ValueError(f"answer {self.answer} cannot be realised in a {self.rows}x{self.cols} grid; "
                             f"allowed: 0..{max(self.rows, self.cols) - 1}")
        return self


def cells_toward(row: int, col: int, direction: str, rows: int, cols: int) -> list[tuple[int, int]]:
    """The cells strictly to one side of (row, col) in its row or column, nearest first."""
    dr, dc = STEP[direction]
    cells = []
    r, c = row + dr, col + dc
    while 1 <= r <= rows and 1 <= c <= cols:
        cells.append((r, c))
        r, c = r + dr, c + dc
    return cells


def _pick(rng: np.random.Generator, options: list):
    return options[int(rng.integers(len(options)))]


def plan_grid(rows: int, cols: int, rng: np.random.Generator, answer: int | None = None) -> tuple[dict[tuple[int, int], str], dict]:
    """Draw the answer (unless given), then a question and a grid of shapes that realise it. Returns (shapes by cell, question)."""
    if answer is None:
        answer = int(rng.integers(0, max(rows, cols)))
    need = max(answer, 1)
    cells = [(r, c) for r in range(1, rows + 1) for c in range(1, cols + 1)]
    directions = [d for d in STEP if any(len(cells_toward(r, c, d, rows, cols)) >= need for r, c in cells)]
    direction = _pick(rng, directions)
    row, col = _pick(rng, [(r, c) for r, c in cells if len(cells_toward(r, c, direction, rows, cols)) >= need])
    target = _pick(rng, list(SHAPES))
    others = [s for s in SHAPES if s != target]
    line = cells_toward(row, col, direction, rows, cols)
    chosen = {line[int(i)] for i in rng.choice(len(line), answer, replace=False)}
    grid = {cell: _pick(rng, list(SHAPES)) for cell in cells}
    grid.update({cell: (target if cell in chosen else _pick(rng, others)) for cell in line})
    grid[(row, col)] = _pick(rng, others)
    elsewhere = [cell for cell in cells if cell not in line and cell != (row, col)]
    if answer == 0 and elsewhere and target not in (grid[cell] for cell in elsewhere):
        grid[_pick(rng, elsewhere)] = target
    question = {"row": row, "col": col, "direction": direction, "target": target, "reference": grid[(row, col)],
                "answer": answer, "line_cells": len(line)}
    return grid, question


def cell_centre(row: int, col: int, rows: int, cols: int) -> tuple[float, float]:
    """Ground position of a cell: columns along +x (left to right), row 1 farthest from the camera (+y)."""
    return grid_cell_centre(row, col, rows, cols, PITCH, ROW_PITCH)


def grid_camera(frame: Frame, rows: int, cols: int, rng: np.random.Generator) -> Camera:
    """Camera in front of the grid (-y side), looking down at ELEVATION_DEG, a few degrees off axis, framing it."""
    elevation = np.radians(rng.uniform(*ELEVATION_DEG))
    azimuth = np.radians(rng.uniform(-8.0, 8.0))
    half_x, half_y = cols / 2.0 * PITCH, rows / 2.0 * ROW_PITCH
    corners = np.array([(x, y, z) for x in (-half_x, half_x) for y in (-half_y, half_y) for z in (0.0, SIZE_RANGE[1] * PITCH)])
    return framing_camera(frame, np.zeros(3), view_direction(elevation, azimuth), corners,
                          2.0 * max(half_x, half_y) + 2.0, FOCAL_35MM, FILL)


def _make(object_id: int, row: int, col: int, shape: str, color: str, size: float, x: float, y: float, yaw: float) -> SceneObject:
    rotation = yaw_quat(yaw)
    return SceneObject(
        id=object_id,
        shape=shape,
        size=round6(size),
        dimensions=tuple(round6(d * size) for d in unit_dimensions(shape)),
        location=resting_pose(shape, size, x, y, rotation),
        rotation_quat=rotation,
        color=named(color),
        attributes={"row": row, "col": col},
    )


def _layout(params: SpatialGridParams, grid: dict, colors: dict, camera: Camera, rng: np.random.Generator, rays: int) -> Layout | None:
    layout = Layout(camera, rays_per_pixel=rays)
    for object_id, (row, col) in enumerate(sorted(grid), start=1):
        x0, y0 = cell_centre(row, col, params.rows, params.cols)
        for _ in range(CELL_ATTEMPTS):
            dx, dy = rng.uniform(-params.jitter, params.jitter, size=2) * PITCH
            size = float(rng.uniform(*SIZE_RANGE)) * PITCH
            obj = _make(object_id, row, col, grid[(row, col)], colors[(row, col)], size, x0 + dx, y0 + dy,
                        float(rng.uniform(0.0, 360.0)))
            if layout.try_put(obj, Bounds(MIN_VISIBILITY)):
                break
        else:
            return None
    return layout


def compose(params: SpatialGridParams, rng: np.random.Generator, frame: Frame) -> Composed:
    grid, plan = plan_grid(params.rows, params.cols, rng, params.answer)
    colors = {cell: COLORS[int(rng.integers(len(COLORS)))] for cell in grid}
    rejected = "placement"
    for _ in range(LAYOUT_ATTEMPTS):
        camera = grid_camera(frame, params.rows, params.cols, rng)
        layout = _layout(params, grid, colors, camera, rng, frame.rays_per_pixel)
        if layout is None:
            rejected = "min_visibility"
            continue
        objects = [layout.objects[i] for i in sorted(layout.objects)]
        if order_preserved(objects, camera):
            break
        rejected = "image_order"
    else:
        raise InfeasibleError(rejected, f"no {params.rows}x{params.cols} grid layout among {LAYOUT_ATTEMPTS} met it")
    lights = lights_around(np.zeros(3), scale=max(1.0, camera_distance(camera, np.zeros(3)) / COUNTING_VIEW_DISTANCE))
    scene = Scene(camera=camera, lights=lights, objects=objects)
    truth = layout.canvas.result()
    template = ROW_QUESTION if plan["direction"] in ("right", "left") else COLUMN_QUESTION
    text = PREAMBLE.format(rows=params.rows, cols=params.cols) + " " + template.format(
        reference=plan["reference"], row=plan["row"], col=plan["col"], targets=PLURAL[plan["target"]],
        direction=plan["direction"],
    )
    question = Question(
        question_id="q0",
        text=text,
        answer_type="integer",
        gold=plan["answer"],
        subject={"reference": plan["reference"], "row": plan["row"], "col": plan["col"],
                 "direction": plan["direction"], "target": plan["target"]},
    )
    difficulty = {
        "rows": params.rows,
        "cols": params.cols,
        "direction": plan["direction"],
        "line_cells": plan["line_cells"],
        "targets_in_grid": sum(1 for shape in grid.values() if shape == plan["target"]),
        "least_visibility": min(t.visibility for t in truth.truths),
    }
    return Composed(scene=scene, questions=[question], truth=truth, difficulty=difficulty)


FAMILY = Family(
    name="spatial_grid",
    description="An R x C grid of the five primitives in named colours: starting from the shape at (row r, column c), "
    "how many shapes of a kind lie to its right/left in the same row or above/below it in the same column? "
    "(DYSM 3D spatial grids); rows and columns 1-based from the image's top-left, checked by projection; "
    "every object at least 95 % visible; answers uniform over 0..max(R, C) - 1 (a batch balances them over its grid).",
    params_model=SpatialGridParams,
    compose=compose,
    answer_types=("integer",),
)
