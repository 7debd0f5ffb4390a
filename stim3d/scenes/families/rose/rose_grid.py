"""ROSE 3D: a grid of one majority element with sparse exceptions, five coupled tasks, a rendered region cue.

An R x C grid of identical objects (one primitive, colour, size and orientation)
stands on the ground; 1..k cells hold an *exception* that differs in exactly one
attribute, the one `exception` names:

- shape: another primitive;  color: another palette colour;
- size: SIZE_FACTORS times the majority's size;
- rotation: tipped over (TILT_DEG about a horizontal axis; never a sphere, whose
  rotation cannot be seen, and never a spin about a primitive's own symmetry axis);
- finish: glossy among matte objects, on a curved majority shape (FINISH_SHAPES):
  a glossy cube or cylinder shows no highlight a viewer can tell from its matte
  neighbours' under the scene's lights (bench/rose_finish.py measured it);
- object: another library object among library objects (opt-in `objects`, which also
  makes the majority of a color or size grid a library object: scenes/families/rose/rose_objects.py).

Rows and columns are numbered 1-based from the top-left of the image and checked
by projection (grid_layout.order_preserved); in the base image every object is
at least MIN_VISIBILITY visible and none is cut by the frame (in the cue image a
tile may hide the bottom rim of the object standing on it, at most 3 points
more, or 3 pixels of an object so small that 3 points are less); each object
records `row`, `col` and `exception` in its attributes.
When the LAYOUT_ATTEMPTS drawn cameras all fail, the camera backs off upwards
(BACKOFF_ELEVATION_DEG), then every object shrinks alike in its cell
(BACKOFF_SCALE, recorded as `difficulty.object_scale`), then the camera moves
farther away with a longer lens (BACKOFF_FOCAL_35MM, the camera's `fx`) before
the grid is called infeasible; a size exception must also look like one in the image
(pixel area against its row and the whole grid, scenes/families/rose/rose_contrast.py;
the ratios are on its attributes).
`difficulty.layout_attempt` records which camera was taken (LAYOUT_ATTEMPTS and
beyond: backed off) and `difficulty.size_contrast_redraws` how many layouts
before it showed a size exception too weakly. When none of the LAYOUTS shows the
grid, its exception cells and elements are drawn again (the plan row kept), at most
PLAN_ATTEMPTS times in all; `difficulty.plan_redraws` counts these.

One seed gives one scene and two renders (config `variants: {base: {cue: false},
cue: {cue: true}}`, which share `scene_id`): the base image carries T1 (global
count), T2 (count in a numeric region), T3 (click in a numeric region) and T5
(click outside a numeric region, then submit the count); the cue image adds a
yellow tile under every cell of a further region and carries T4 (click inside the
highlighted region). The tiles are physical objects (shape `tile`, 1 % as thick as wide,
`countable: false`, attributes `role: cue`, `row`, `col`), each with its own mask
id, and each stays at least CUE_MIN_VISIBILITY visible around its object; nothing
else moves, so the two renders' object-index passes differ only where a tile
shows. Everything random is drawn before `cue` is looked at, so both
variants compose the same scene and regions. The exception count (T1's gold) and
T2's count come from the scheduled answer plan (scenes/families/rose/rose_plan.py:
both uniform over a task, so no constant answer beats chance), the cases of T3-T5
are drawn uniformly, and regions are sampled as scenes/families/rose/rose_regions.py
describes; each question's
`subject` records its task, case and region (`region_*` bounds, 1-based, and
`region_exclude` = 1 for T5), which the scoring core reads for R-OK.
"""

from __future__ import annotations

from typing import Annotated, Literal, NamedTuple

import numpy as np
from pydantic import Field, field_validator, model_validator

from ...colors import named
from ...model import SHAPES, Camera, Scene, SceneObject, round6
from ...object_library import checked_names
from ...placement import Bounds, InfeasibleError, Layout, resting_pose, yaw_quat
from ...primitives import axis_angle_quat, matrix_to_quat, quat_to_matrix, unit_dimensions
from ...visibility import VisibilityCanvas
from ..base import ADDED_PARAM, Composed, Family, FamilyParams, Frame
from ..shared.grid_layout import cell_centre, framing_camera, order_preserved, view_direction
from ..shared.stage import COUNTING_VIEW_DISTANCE, camera_distance, lights_around
from .rose_contrast import size_contrast, visible_as_exception
from .rose_objects import check_objects, is_library, library_cell, library_pool
from .rose_plan import answer_plan, plan_tasks
from .rose_questions import question
from .rose_regions import Cell, Region, permitted

ExceptionAttribute = Literal["shape", "color", "size", "rotation", "finish", "object"]
PITCH = 1.0  # metres between column centres
ROW_PITCH = 1.3  # rows recede from the camera, so they need more room
ELEVATION_DEG = (40.0, 55.0)
FOCAL_35MM = 35.0
FILL = 0.88
MAJORITY_SIZE = (0.48, 0.56)  # share of the pitch
SIZE_FACTORS = (0.6, 1.3)  # a size exception is this many times the majority's size
TILT_DEG = {"cube": 45.0, "cylinder": 90.0, "cone": 90.0, "torus": 90.0}
# A glossy finish shows as a highlight only where the surface turns towards the lights: on flat tops and faces
# the mirror direction misses the camera. bench/rose_finish.py at rose3d's settings, each glossy exception's
# peak contrast over its row's matte objects (bench/results/rose_finish.json, 6 scenes per shape): sphere
# >= 1.42x (median 2.65), cone >= 1.83x (2.96); torus >= 1.43x but 3 of 17 below the tests' 1.5x margin;
# cube and cylinder median 1.02x and 0.85x, 14 of 17 each below 1.2x: no highlight to see.
FINISH_SHAPES = ("sphere", "cone")
OBJECT_COLORS = ("red", "green", "blue", "orange", "purple", "black")  # no gray (the ground), no yellow (the cue)
CUE_COLOR = "yellow"
TILE_EDGE = 0.92  # share of the column pitch: neighbouring tiles never touch
MIN_VISIBILITY = 0.97
CUE_MIN_VISIBILITY = 0.25  # share of a tile's silhouette left visible around the object standing on it
CUE_RIM_LOSS, CUE_RIM_PX = 0.03, 3  # a tile may hide an object's bottom rim: 3 points, or 3 pixels of a small one
LAYOUT_ATTEMPTS = 12
PLAN_ATTEMPTS = 3  # no layout shows the planned grid: its exception cells are drawn again (a scheduled plan row kept)
BACKOFF_ELEVATION_DEG = (60.0, 70.0, 80.0)  # after the drawn cameras: steeper views, less occlusion
BACKOFF_SCALE = (1.0, 0.85, 0.7)  # then every object shrinks in its cell by this factor (ratios between them kept)
BACKOFF_FOCAL_35MM = (70.0, 100.0)  # last, the camera backs off along its line of sight with a longer lens
BACKOFF_FAR_ELEVATION_DEG = (50.0, 60.0, 70.0)
LAYOUTS = LAYOUT_ATTEMPTS + len(BACKOFF_SCALE) * len(BACKOFF_ELEVATION_DEG) + len(BACKOFF_FOCAL_35MM) * len(
    BACKOFF_FAR_ELEVATION_DEG)

class RoseGridParams(FamilyParams):
    rows: int = Field(5, ge=2, le=9, description="grid rows")
    cols: int = Field(5, ge=2, le=9, description="grid columns")
    exception: ExceptionAttribute = Field("color", description="the one attribute in which exceptions differ")
    min_exceptions: int = Field(1, ge=1, le=8, description="fewest exception cells")
    max_exceptions: int = Field(4, ge=1, le=8, description="most exception cells (k)")
    answer: int | None = Field(None, ge=0, description="row of the answer plan (T1 count, T2 count) the scene "
                               "realises (scenes/families/rose/rose_plan.py); None = drawn (a batch schedules it)")
    cue: bool = Field(False, description="the cue image (yellow tiles under the T4 region, question T4); "
                      "false: the base image (T1, T2, T3, T5)")
    objects: Annotated[list[str] | None, ADDED_PARAM] = Field(
        None, description="the majority (and object exceptions) drawn from these library objects (scenes/objects.yaml) "
        "instead of primitives; exception 'object' without it draws from the whole library")

    @field_validator("objects")
    @classmethod
    def _library_objects(cls, names: list[str] | None) -> list[str] | None:
        return checked_names(names)

    @model_validator(mode="after")
    def _counts_fit(self) -> RoseGridParams:
        if self.min_exceptions > self.max_exceptions:
            raise ValueError(f"min_exceptions {self.min_exceptions} > max_exceptions {self.max_exceptions}")
        if self.max_exceptions >= self.rows * self.cols:
            raise ValueError(f"max_exceptions {self.max_exceptions} leaves no majority in a {self.rows}x{self.cols} grid")
        check_objects(self.objects, self.exception)
        rows = len(self.answer_space())
        if self.answer is not None and self.answer >= rows:
            raise ValueError(f"answer {self.answer} is not a row of the answer plan (0..{rows - 1} for "
                             f"{self.min_exceptions}..{self.max_exceptions} exceptions)")
        return self

    def answer_space(self) -> list[int]:
        """The plan rows a scene can realise: scheduled evenly, they make T1's and T2's counts uniform."""
        return list(range(len(answer_plan(self.min_exceptions, self.max_exceptions))))


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def _rotation(yaw: float, tilt: float) -> tuple[float, float, float, float]:
    """Tip about the object's own x axis, then turn about the vertical: one orientation for every yaw."""
    matrix = quat_to_matrix(yaw_quat(yaw)) @ quat_to_matrix(axis_angle_quat((1.0, 0.0, 0.0), tilt))
    return tuple(round6(v) for v in matrix_to_quat(matrix))  # type: ignore[return-value]


def plan_elements(params: RoseGridParams, exceptions: set[Cell], rng: np.random.Generator) -> dict[Cell, dict]:
    """Shape, colour, size, rotation and finish per cell: the majority everywhere but in `exceptions`."""
    pool = library_pool(params.objects, params.exception)
    shapes = pool or [s for s in SHAPES if (params.exception != "rotation" or s in TILT_DEG)
                      and (params.exception != "finish" or s in FINISH_SHAPES)]
    majority = {"shape": _pick(rng, shapes), "color": _pick(rng, OBJECT_COLORS),
                "size": float(rng.uniform(*MAJORITY_SIZE)) * PITCH, "finish": "matte"}
    yaw = float(rng.uniform(0.0, 360.0))
    cells = {}
    for row in range(1, params.rows + 1):
        for col in range(1, params.cols + 1):
            element = dict(majority, tilt=0.0, yaw=yaw)
            if (row, col) in exceptions:
                kind = params.exception
                if kind == "object":
                    element["shape"] = _pick(rng, [s for s in shapes if s != majority["shape"]])
                elif kind == "shape":
                    element["shape"] = _pick(rng, [s for s in SHAPES if s != majority["shape"]])
                elif kind == "color":
                    element["color"] = _pick(rng, [c for c in OBJECT_COLORS if c != majority["color"]])
                elif kind == "size":
                    element["size"] = majority["size"] * _pick(rng, SIZE_FACTORS)
                elif kind == "rotation":
                    element["tilt"] = TILT_DEG[majority["shape"]]
                else:
                    element["finish"] = "glossy"
            element["rotation"] = _rotation(yaw, element.pop("tilt"))
            cells[(row, col)] = element
    return cells


def grid_camera(frame: Frame, rows: int, cols: int, rng: np.random.Generator,
                elevation_deg: float | None = None, focal_35mm: float = FOCAL_35MM) -> Camera:
    """A drawn camera, or (`elevation_deg` given) a head-on one at that elevation and focal length that draws nothing."""
    if elevation_deg is None:
        elevation = np.radians(rng.uniform(*ELEVATION_DEG))
        azimuth = np.radians(rng.uniform(-6.0, 6.0))
    else:
        elevation, azimuth = np.radians(elevation_deg), 0.0
    half_x, half_y = cols / 2.0 * PITCH, rows / 2.0 * ROW_PITCH
    top = max(MAJORITY_SIZE[1] * max(SIZE_FACTORS), 0.75) * PITCH
    corners = np.array([(x, y, z) for x in (-half_x, half_x) for y in (-half_y, half_y) for z in (0.0, top)])
    return framing_camera(frame, np.zeros(3), view_direction(elevation, azimuth), corners,
                          2.0 * max(half_x, half_y) + 2.0, focal_35mm, FILL)


def _object(object_id: int, row: int, col: int, element: dict, exception: bool, rows: int, cols: int,
            scale: float = 1.0) -> SceneObject:
    x, y = cell_centre(row, col, rows, cols, PITCH, ROW_PITCH)
    size = element["size"] * scale
    if is_library(element["shape"]):
        return library_cell(object_id, x, y, element, size, {"row": row, "col": col, "exception": exception})
    return SceneObject(
        id=object_id, shape=element["shape"], size=round6(size),
        dimensions=tuple(round6(d * size) for d in unit_dimensions(element["shape"])),
        location=resting_pose(element["shape"], size, x, y, element["rotation"]),
        rotation_quat=element["rotation"], color=named(element["color"]), finish=element["finish"],
        attributes={"row": row, "col": col, "exception": exception},
    )


def cue_tiles(region: Region, first_id: int, rows: int, cols: int) -> list[SceneObject]:
    """One yellow tile under every cell of the region, row-major, ids from `first_id`."""
    size = TILE_EDGE * PITCH
    tiles = []
    for offset, (row, col) in enumerate(sorted(region.cells())):
        x, y = cell_centre(row, col, rows, cols, PITCH, ROW_PITCH)
        tiles.append(SceneObject(
            id=first_id + offset, shape="tile", size=round6(size),
            dimensions=tuple(round6(d * size) for d in unit_dimensions("tile")),
            location=resting_pose("tile", size, x, y), color=named(CUE_COLOR), countable=False,
            attributes={"role": "cue", "row": row, "col": col},
        ))
    return tiles


def _layout(params: RoseGridParams, cells: dict, exceptions: set[Cell], camera: Camera, rays: int,
            scale: float = 1.0) -> Layout | None:
    layout = Layout(camera, rays_per_pixel=rays)
    for object_id, (row, col) in enumerate(sorted(cells), start=1):
        obj = _object(object_id, row, col, cells[(row, col)], (row, col) in exceptions, params.rows, params.cols,
                      scale)
        if not layout.try_put(obj, Bounds(MIN_VISIBILITY)):
            return None
    return layout


def _cell(obj: SceneObject) -> Cell:
    return int(obj.attributes["row"]), int(obj.attributes["col"])


def _cameras(frame: Frame, params: RoseGridParams, rng: np.random.Generator):
    """(camera, object scale): LAYOUT_ATTEMPTS drawn cameras, then backing off (BACKOFF_*), LAYOUTS in all.

    A steeper view lets a near row hide less of the row behind it and shrinks the
    perspective spread of pixel areas between rows; smaller objects in the same
    cells hide less of their neighbours and of their cue tiles. So a grid the drawn
    views cannot show (a large exception hiding its neighbour behind or its own
    tile, or a size exception lost in the rows' spread) is shown from above, then
    with every object shrunk alike, instead of given up. Last, the camera moves
    2-3x farther away with a 70 or 100 mm lens framing the same grid: the near and
    far rows' distances then differ by a smaller factor, so their pixel areas do
    too, at elevations low enough that a cue tile's top face does not cover a
    cone's rim (rose_grid-t0-00693 at 640x480 needs this: every 35 mm view steep
    enough for its size contrast, >= 75 deg, lost the rim to the tiles).
    These come after every earlier layout, so no grid an earlier layout shows changes.
    """
    for _ in range(LAYOUT_ATTEMPTS):
        yield grid_camera(frame, params.rows, params.cols, rng), 1.0
    for scale in BACKOFF_SCALE:
        for elevation in BACKOFF_ELEVATION_DEG:
            yield grid_camera(frame, params.rows, params.cols, rng, elevation), scale
    for focal in BACKOFF_FOCAL_35MM:
        for elevation in BACKOFF_FAR_ELEVATION_DEG:
            yield grid_camera(frame, params.rows, params.cols, rng, elevation, focal), 1.0


def _size_contrast(layout: Layout, objects: list[SceneObject], cells: dict, exceptions: set[Cell]):
    """Each size exception's area ratios (scenes/families/rose/rose_contrast.py), or None when one is not visible as one."""
    majority = cells[min(set(cells) - exceptions)]["size"]
    areas = {_cell(o): float(len(layout.canvas.casts[o.id].gx)) for o in objects}
    grown = {cell: cells[cell]["size"] > majority for cell in exceptions}
    ratios = size_contrast(areas, exceptions, grown)
    return ratios if all(visible_as_exception(ratios[c], grown[c]) for c in exceptions) else None


def _cue_canvas(layout: Layout, tiles: list[SceneObject]) -> VisibilityCanvas | None:
    """The layout's canvas with the tiles added, or None when a tile is too hidden or an object loses too much."""
    canvas = layout.canvas.copy()
    if not all(layout.in_frame(tile) for tile in tiles):
        return None
    for tile in tiles:
        canvas.put(tile)
    visibility = canvas.visibility()
    if any(visibility[t.id] < CUE_MIN_VISIBILITY for t in tiles):
        return None
    rays = layout.rays_per_pixel ** 2
    if any(visibility[i] < MIN_VISIBILITY - max(CUE_RIM_LOSS, CUE_RIM_PX * rays / len(layout.canvas.casts[i].gx))
           for i in layout.objects):
        return None
    return canvas


class FirstLayout(NamedTuple):
    """The camera and placement `_first_layout` found for a planned grid, and what it took to find them."""

    layout: Layout  # the placed grid (`_layout`)
    objects: list[SceneObject]
    camera: Camera
    scale: float
    attempt: int  # which of the LAYOUTS cameras
    tiles: list[SceneObject]  # T4's cue tiles
    cue_canvas: VisibilityCanvas  # the layout's visibility canvas with the cue tiles placed
    contrast: dict[Cell, dict[str, float]]  # size exceptions: each cell's measured image-area contrast
    rejected: dict[str, int]  # cameras rejected, by reason


def _first_layout(params: RoseGridParams, frame: Frame, rng: np.random.Generator, cells: dict, exceptions: set[Cell],
                  regions: dict) -> FirstLayout:
    """The first of the LAYOUTS cameras that shows the planned grid (and its cue tiles), or InfeasibleError."""
    rejected: dict[str, int] = {}
    contrast: dict[Cell, dict[str, float]] = {}
    for attempt, (camera, scale) in enumerate(_cameras(frame, params, rng)):
        layout = _layout(params, cells, exceptions, camera, frame.rays_per_pixel, scale)
        if layout is None:
            rejected["min_visibility"] = rejected.get("min_visibility", 0) + 1
            continue
        objects = [layout.objects[i] for i in sorted(layout.objects)]
        if not order_preserved(objects, camera):
            rejected["image_order"] = rejected.get("image_order", 0) + 1
            continue
        if params.exception == "size":
            found = _size_contrast(layout, objects, cells, exceptions)
            if found is None:
                rejected["size_contrast"] = rejected.get("size_contrast", 0) + 1
                continue
            contrast = found
        tiles = cue_tiles(regions["T4"][1], len(objects) + 1, params.rows, params.cols)
        cue_canvas = _cue_canvas(layout, tiles)
        if cue_canvas is not None:
            return FirstLayout(layout, objects, camera, scale, attempt, tiles, cue_canvas, contrast, rejected)
        rejected["cue_visibility"] = rejected.get("cue_visibility", 0) + 1
    worst = max(rejected, key=lambda k: rejected[k]) if rejected else "placement"
    raise InfeasibleError(worst, f"no {params.rows}x{params.cols} rose grid among {LAYOUTS} layouts met it "
                          f"(rejected: {rejected})")


def compose(params: RoseGridParams, rng: np.random.Generator, frame: Frame) -> Composed:
    for redraw in range(PLAN_ATTEMPTS):
        exceptions, regions = plan_tasks(params, rng)
        cells = plan_elements(params, exceptions, rng)
        try:
            found = _first_layout(params, frame, rng, cells, exceptions, regions)
            break
        except InfeasibleError:
            if redraw == PLAN_ATTEMPTS - 1:
                raise
    layout, camera, scale, tiles, cue_canvas, contrast = (found.layout, found.camera, found.scale, found.tiles,
                                                          found.cue_canvas, found.contrast)
    objects = [o.model_copy(update={"attributes": {**o.attributes, **contrast[_cell(o)]}}) if _cell(o) in contrast else o
               for o in found.objects]
    lights = lights_around(np.zeros(3), scale=max(1.0, camera_distance(camera, np.zeros(3)) / COUNTING_VIEW_DISTANCE))
    truth = (cue_canvas if params.cue else layout.canvas).result()
    scene = Scene(camera=camera, lights=lights, objects=objects + (tiles if params.cue else []))

    def gold(task: str) -> list[Cell]:
        case, region = regions[task]
        return sorted(exceptions & permitted(region, params.rows, params.cols, exclude=task == "T5"))

    if params.cue:
        questions = [question("T4", regions["T4"][0], regions["T4"][1], gold("T4"), params)]
    else:
        questions = [question("T1", "all", None, len(exceptions), params),
                     question("T2", regions["T2"][0], regions["T2"][1], len(gold("T2")), params),
                     question("T3", regions["T3"][0], regions["T3"][1], gold("T3"), params),
                     question("T5", regions["T5"][0], regions["T5"][1], gold("T5"), params)]
    visibility = truth.visibility()
    majority = cells[min(set(cells) - exceptions)]
    difficulty = {
        "rows": params.rows, "cols": params.cols, "exception": params.exception, "n_exceptions": len(exceptions),
        **{f"majority_{key}": majority[key] for key in ("shape", "color")},
        "cue": params.cue, "cue_cells": len(tiles),
        "least_visibility": min(visibility[o.id] for o in objects),
        "cue_least_visibility": min(cue_canvas.visibility()[t.id] for t in tiles),
        "layout_attempt": found.attempt, "object_scale": scale,
        "size_contrast_redraws": found.rejected.get("size_contrast", 0),
        "plan_redraws": redraw,
    }
    return Composed(scene=scene, questions=questions, truth=truth, difficulty=difficulty)


FAMILY = Family(
    name="rose_grid",
    description="ROSE 3D: an R x C grid of one majority element with 1..k exceptions differing in one attribute "
    "(shape, color, size, rotation, finish, or a library object: objects); five coupled tasks per scene in ROSE's strict grammar (global count, "
    "local count, local click, click in a rendered highlighted region, exclusion click + SUBMIT); T1 and T2 counts "
    "scheduled uniform over the task, T3-T5 regions holding none/some/all exceptions; variants base/cue share the scene.",
    params_model=RoseGridParams,
    compose=compose,
    answer_types=("strict_count", "strict_cell_set", "strict_cell_set_count"),
    revision=5,  # 2: cameras back off upwards instead of giving up; size exceptions clear an image-area margin;
    # 3: finish exceptions only on FINISH_SHAPES; 4: T1 and T2 counts from the scheduled answer plan (rose_plan.py);
    # 5: a grid no layout shows is planned again (difficulty.plan_redraws)
)
