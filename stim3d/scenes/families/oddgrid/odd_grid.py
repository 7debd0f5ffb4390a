"""OddGrid-3D: find the one primitive in a grid that differs (OddGridBench's protocol, in 3D).

A rows x cols grid of one primitive, all the same size, colour, finish and
orientation, either resting on the ground (`layout: ground`, rows receding from
the camera) or floating in front of a vertical board that faces the camera
(`layout: board`; the board is a large non-countable cube whose front face is the
panel; the geometry of both is scenes/families/oddgrid/odd_layout.py). Rows and columns are numbered 1-based from the image's top-left, checked
on every layout by projecting the cells (scenes/families/shared/grid_layout.py). Every
grid object is at least MIN_VISIBILITY visible and whole inside the frame, and
no smaller than `min_object_px` (pixels: the geometric mean of the sides of the
smallest object's projected box): a layout with a smaller one draws another camera
and turn (a thin library object seen end-on is small only from some directions), and
a grid none of LAYOUT_ATTEMPTS layouts shows that big is infeasible, never rendered
unreadable.

Draw order (so that variants of one seed, e.g. with and without labels, show the
same scene): grid size, the odd attributes, whether an odd cell exists (`p_none`
gives none: the answer is Row 0, Column 0), the shape, the base colour, the odd
cell, the nominal magnitudes (scenes/families/oddgrid/odd_attributes.py), then cameras
until a layout passes. Labels and the question's wording draw nothing.

The odd object records in `attributes` which attributes differ
(`odd_attributes`) and by how much, nominally (`delta_e` CIEDE2000, `size_ratio`,
`rotation_deg` with its axis, `shift_share_x/y` of the pitch and `shift_m_x/y`) and
as measured by ray casting in this view (`area_ratio`: projected area over that of
an unchanged object in the same cell; `silhouette_change`: share of silhouette
pixels a rotation changes; `shift_px_u/v`). A size or position oddity must also
look like one against its neighbours beyond a margin, or another camera is drawn
(`area_ratio_row`, `area_ratio_grid`, `shift_spacing_u/v` and
`difficulty.contrast_redraws`: scenes/families/oddgrid/odd_contrast.py). The colour difference a viewer sees
depends on lighting, so it is measured on the rendered image afterwards
(`measured_delta_e` in scenes/families/oddgrid/odd_measure.py).

Library objects (opt-in `objects`: library names, scenes/objects.yaml): every cell holds
one composed object drawn from the list instead of a primitive, and the odd types apply
to it as to a primitive (a `symmetric` library object follows a cone's rotation rules,
any other a cube's); the odd type `object` makes the odd cell another object of the list
(scenes/families/oddgrid/odd_objects.py). They are drawn after everything above, so the
gold is the same as without them.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from ...camera import geometry
from ...colors import COLOR_NAMES, named
from ...model import SHAPES, Camera, Color, ObjectTruth, Question, Scene, SceneObject, round6
from ...object_library import checked_names
from ...placement import InfeasibleError, Layout, mesh_distance
from ...primitives import quat_to_matrix
from ...visibility import cast_object, measure
from ..base import ADDED_PARAM, Composed, Family, FamilyParams, Frame
from ..shared.counting import PLURAL
from ..shared.grid_layout import cell_centre, centred_camera, order_preserved, view_direction
from ..shared.stage import camera_distance, lights_around
from .grid_labels import label_figure
from .odd_attributes import (
    OddSpec,
    describe,
    difficulty_terms,
    draw_attributes,
    draw_magnitudes,
    grid_band,
    normalised_magnitudes,
    odd_color,
    parse_odd_types,
)
from .odd_build import base_orientation, build_grid
from .odd_contrast import shift_contrast, size_contrast, visible_as_odd
from .odd_layout import PITCH, Plane, board_object, kind_of, object_px, place_object
from .odd_measure import look_colour_check, measured_color_difference
from .odd_objects import check_objects, draw_objects, matched_to_row, nouns, object_terms

PROMPT = (
    "You are solving an odd-one-out visual perception task. You are given an image showing a {rows}×{cols} grid "
    "of {plural}. All {plural} appear the same, except one that is visually different{odd_desc}. "
    "Carefully inspect the grid. Identify the grid position (row and column) of the {shape} that is different. "
    "Counting starts from the top-left corner, i.e., Row 1, Column 1. End the response with the final answer in "
    "the following strict LaTeX format: \\boxed{{Row X, Column Y}}. If no odd {shape} exists, output "
    "\\boxed{{Row 0, Column 0}}."
)
MIN_VISIBILITY = 0.95
ELEVATION_DEG = {"ground": (40.0, 55.0), "board": (5.0, 15.0)}
AZIMUTH_DEG = 8.0
FOCAL_35MM = 35.0
FILL = 0.9
CLEARANCE = 0.03
LAYOUT_ATTEMPTS = 12
HOPELESS_SHARE = 0.5  # a grid whose smallest object is under half min_object_px is refused without redrawing
COLORS = tuple(c for c in COLOR_NAMES if c != "gray")  # gray would melt into the ground


class OddGridParams(FamilyParams):
    rows: int | None = Field(None, ge=3, le=12, description="grid rows; none draws it from grid_range")
    cols: int | None = Field(None, ge=3, le=12, description="grid columns; none draws it from grid_range")
    grid_range: tuple[int, int] = Field((5, 9), description="rows and columns drawn from this range when not given")
    shape: Literal["random", "sphere", "cube", "cone", "cylinder", "torus"] = Field(
        "random", description="the primitive; random draws one (never a sphere when rotation is an odd attribute)")
    layout: Literal["ground", "board"] = Field("ground", description="on the ground, or in front of a vertical board")
    odd_types: str = Field("color", description="color, size, rotation, position, 2-type, 3-type, 4-type "
                           "(that many attributes drawn), or attributes joined by '+' (color+size)")
    p_none: float = Field(0.1, ge=0.0, le=1.0, description="probability that no cell is odd (answer Row 0, Column 0)")
    delta_e_range: tuple[float, float] = Field((5.0, 20.0), description="CIEDE2000 difference of an odd colour")
    labels: bool = Field(False, description="show row and column numbers (digits of small cubes) at the grid's edges")
    name_attributes: bool = Field(True, description="the question names the differing attribute(s)")
    min_object_px: float = Field(10.0, ge=1.0, le=200.0, description="smallest allowed object size in the image, "
                                 "pixels: geometric mean of the sides of its projected box")
    objects: Annotated[list[str] | None, ADDED_PARAM] = Field(
        None, description="cells of a library object drawn from these names (scenes/objects.yaml) instead of a "
        "primitive; odd type 'object' makes the odd cell another of them; None = primitives")

    @field_validator("odd_types")
    @classmethod
    def _odd_types(cls, value: str) -> str:
        parse_odd_types(value)
        return value

    @field_validator("objects")
    @classmethod
    def _library_objects(cls, names: list[str] | None) -> list[str] | None:
        return checked_names(names)

    @field_validator("grid_range")
    @classmethod
    def _grid_range(cls, value: tuple[int, int]) -> tuple[int, int]:
        if not 3 <= value[0] <= value[1] <= 12:
            raise ValueError(f"grid_range {list(value)}: both ends in 3..12, the low end first")
        return value

    @model_validator(mode="after")
    def _no_turned_sphere(self) -> OddGridParams:
        parsed = parse_odd_types(self.odd_types)
        if self.shape == "sphere" and (parsed == 4 or (isinstance(parsed, tuple) and "rotation" in parsed)):
            raise ValueError("a sphere shows no rotation: use another shape, or odd_types without rotation")
        check_objects(self.objects, self.shape, parsed)
        return self


# -- drawing ----------------------------------------------------------------------------------------

def grid_size(params: OddGridParams, rng: np.random.Generator) -> tuple[int, int]:
    """Rows and columns: the parameters when given, else drawn uniformly from grid_range (always drawn)."""
    drawn = rng.integers(params.grid_range[0], params.grid_range[1] + 1, size=2)
    return (params.rows if params.rows is not None else int(drawn[0]),
            params.cols if params.cols is not None else int(drawn[1]))


def draw_shape(params: OddGridParams, attributes: tuple[str, ...], rng: np.random.Generator) -> str:
    """The primitive (always drawn); no sphere when the odd cell is turned."""
    options = [s for s in SHAPES if not (s == "sphere" and "rotation" in attributes)]
    pick = options[int(rng.integers(len(options)))]
    return pick if params.shape == "random" else params.shape


def grid_camera(frame: Frame, plane: Plane, rng: np.random.Generator) -> Camera:
    """A camera in front of the grid, a little to one side, framing the grid and the labels' room."""
    elevation = np.radians(rng.uniform(*ELEVATION_DEG[plane.layout]))
    azimuth = np.radians(rng.uniform(-AZIMUTH_DEG, AZIMUTH_DEG))
    points = plane.extent()
    target = 0.5 * (points.min(axis=0) + points.max(axis=0))
    start = float((points.max(axis=0) - points.min(axis=0)).max()) + 2.0
    return centred_camera(frame, target, view_direction(elevation, azimuth), points, start, FOCAL_35MM, FILL)


def layout_problem(objects: list[SceneObject], labels: list[SceneObject], camera: Camera, odd: SceneObject | None) -> str | None:
    """The constraint a layout breaks, before visibility (None when it keeps them all)."""
    if not order_preserved(objects, camera):
        return "image_order"
    frame = Layout(camera)
    if not all(frame.in_frame(o) for o in objects):
        return "in_frame"
    if not all(frame.in_frame(o) for o in labels):
        return "labels_in_frame"
    if odd is not None:
        near = [o for o in objects if o.id != odd.id and np.linalg.norm(np.subtract(o.location, odd.location)) < 2.0 * PITCH]
        if any(mesh_distance(odd, o, CLEARANCE) < CLEARANCE for o in near):
            return "no_interpenetration"
    return None


def measured_differences(odd: SceneObject, objects: list[SceneObject], grid_truths: list[ObjectTruth], plane: Plane,
                         camera: Camera, rays: int) -> dict:
    """What the odd cell's difference looks like in this view, by ray casting (see the module docstring), with
    a size or position oddity's contrast against its neighbours (scenes/families/oddgrid/odd_contrast.py)."""
    twin = next(o for o in objects if not o.attributes.get("odd"))
    odd_cell = int(odd.attributes["row"]), int(odd.attributes["col"])
    a, b = cell_centre(*odd_cell, plane.rows, plane.cols, PITCH, plane.row_pitch)
    plain = place_object(odd.id, kind_of(twin), twin.size, plane.at(a, b), quat_to_matrix(twin.rotation_quat), twin.color, plane, {})
    cam = geometry(camera)
    found = {"area_ratio": round6(len(cast_object(odd, cam, rays).gx) / max(len(cast_object(plain, cam, rays).gx), 1))}
    cells = [(int(o.attributes["row"]), int(o.attributes["col"])) for o in objects]
    areas = {cell: t.amodal_px for cell, t in zip(cells, grid_truths, strict=True)}
    if "size_ratio" in odd.attributes:
        found.update(size_contrast(areas, odd_cell, float(odd.attributes["size_ratio"]) > 1.0))
    elif "odd_object" in odd.attributes:  # another object matched to its row (odd_objects.matched_to_row)
        row = [area for (r, c), area in areas.items() if r == odd_cell[0] and (r, c) != odd_cell]
        found["area_ratio_row"] = round(areas[odd_cell] / float(np.median(row)), 4)
    if "shift_m_x" in odd.attributes:
        u, v, _ = cam.project(np.array([odd.location, plain.location]))
        found.update(shift_px_u=round6(u[0] - u[1]), shift_px_v=round6(v[0] - v[1]))
        cu, cv, _ = cam.project(np.array([plain.location if o.id == odd.id else o.location for o in objects]))
        centres = {cell: (float(cu[i]), float(cv[i])) for i, cell in enumerate(cells)}
        found.update(shift_contrast(centres, odd_cell, (u[0] - u[1], v[0] - v[1])))
    return found


def draw_plan(params: OddGridParams, rng: np.random.Generator) -> tuple[int, int, str, str, OddSpec]:
    """Everything drawn before the layout: (rows, cols, shape, colour name, odd cell with its magnitudes).

    The gold answer is fixed here, so a batch's answers can be listed without composing
    its scenes (docs/oddgrid.md computes the preset's constant baselines this way).
    """
    rows, cols = grid_size(params, rng)
    attributes = draw_attributes(params.odd_types, rng)
    present = bool(rng.random() >= params.p_none)
    shape = draw_shape(params, attributes, rng)
    color_name = COLORS[int(rng.integers(len(COLORS)))]
    spec = OddSpec(row=int(rng.integers(1, rows + 1)), col=int(rng.integers(1, cols + 1)), attributes=attributes,
                   present=present)
    draw_magnitudes(spec, params.delta_e_range, rng)
    return rows, cols, draw_objects(params.objects, spec, shape, rng), color_name, spec


def too_small(best_px: float, min_px: float, rows: int, cols: int, frame: Frame) -> InfeasibleError:
    """The refusal of a grid too dense for the image: the largest smallest object any layout tried showed."""
    return InfeasibleError("min_object_px", f"the smallest object is {best_px:.1f} px across (geometric mean of its "
                           f"box's sides) < min_object_px {min_px:g} in a {rows}x{cols} grid at {frame.width}x"
                           f"{frame.height}, in the best layout tried; use a larger image or a smaller grid")


def compose(params: OddGridParams, rng: np.random.Generator, frame: Frame) -> Composed:
    rows, cols, shape, color_name, spec = draw_plan(params, rng)
    attributes, present = spec.attributes, spec.present
    base_color = odd_color_obj = named(color_name)
    if present and spec.delta_e_target is not None:
        srgb, delta_e = odd_color(base_color.srgb, spec.delta_e_target, rng)
        odd_color_obj = Color(name=f"{color_name}_odd", srgb=srgb)
        spec.recorded["delta_e"] = round6(delta_e)
    plane = Plane(params.layout, rows, cols)
    n = rows * cols
    rejected, redraws, measured, best_px = "placement", 0, {}, 0.0
    for _ in range(LAYOUT_ATTEMPTS):
        camera = grid_camera(frame, plane, rng)
        labels = plane.labels(n + 2, np.asarray(camera.location))
        base = base_orientation(plane, shape, camera, rng)
        objects = build_grid(plane, shape, base, (base_color, odd_color_obj), spec, camera, frame.rays_per_pixel, rng)
        odd = next((o for o in objects if o.attributes.get("odd")), None)
        if odd is not None and spec.odd_object is not None and spec.size_ratio is None:  # no size cue by its kind
            odd = objects[odd.id - 1] = matched_to_row(odd, objects, plane, camera, frame.rays_per_pixel)
        problem = layout_problem(objects, labels, camera, odd)
        if problem is not None:
            rejected = problem
            continue
        extras = [board_object(n + 1, plane, camera)] if plane.layout == "board" else []
        scene_objects = objects + extras + (labels if params.labels else [])
        lights = lights_around(0.5 * (plane.extent().min(axis=0) + plane.extent().max(axis=0)),
                               scale=max(1.0, camera_distance(camera, plane.origin) / 9.7))
        scene = Scene(camera=camera, lights=lights, objects=scene_objects)
        scene.stage.ground_size = 200.0
        truth = measure(scene, frame.rays_per_pixel)
        grid_truths = truth.truths[:n]
        smallest = min(object_px(t) for t in grid_truths)
        if smallest < params.min_object_px:  # another camera and turn may show a thin object broadside
            rejected, best_px = "min_object_px", max(best_px, smallest)
            if smallest < HOPELESS_SHARE * params.min_object_px:  # no turn doubles a box's geometric mean
                raise too_small(best_px, params.min_object_px, rows, cols, frame)
            continue
        if min(t.visibility for t in grid_truths) < MIN_VISIBILITY:
            rejected = "min_visibility"
            continue
        measured = {} if odd is None else measured_differences(odd, objects, grid_truths, plane, camera,
                                                               frame.rays_per_pixel)
        # another object's area says nothing of a size oddity: with odd type `object` only a shift is held to its margin
        if odd is None or visible_as_odd(measured, None if spec.odd_object else spec.size_ratio):
            break
        rejected, redraws = "oddity_contrast", redraws + 1
    else:
        if rejected == "min_object_px":
            raise too_small(best_px, params.min_object_px, rows, cols, frame)
        raise InfeasibleError(rejected, f"no {rows}x{cols} {params.layout} layout among {LAYOUT_ATTEMPTS} met it")
    recorded: dict = {}
    if odd is not None:
        recorded = {k: v for k, v in odd.attributes.items() if k not in ("row", "col", "odd", "odd_attributes", "object")}
        recorded.update(measured)
        scene.objects[odd.id - 1] = odd.model_copy(update={"attributes": {**odd.attributes, **recorded}})
    odd_desc = f" in {describe(attributes)}" if params.name_attributes else ""
    noun, plural = nouns(shape, attributes) if params.objects else (shape, PLURAL[shape])
    terms = object_terms(shape, spec) if params.objects else {}
    question = Question(
        question_id="q0",
        text=PROMPT.format(rows=rows, cols=cols, plural=plural, shape=noun, odd_desc=odd_desc),
        answer_type="cell",
        gold=(spec.row, spec.col) if present else (0, 0),
        subject={"shape": shape, "odd_type": params.odd_types, "odd_attributes": "+".join(attributes), **terms},
    )
    magnitudes = normalised_magnitudes(recorded, params.delta_e_range) if present else {}
    label_truths = truth.truths[n + len(extras):]
    difficulty = {
        "rows": rows, "cols": cols, "cells": n, "grid_band": grid_band(n), "shape": shape, "layout": params.layout,
        "odd_type": params.odd_types, "odd_attributes": "+".join(attributes), "n_odd_attributes": len(attributes),
        "odd_present": present, "labels": params.labels, "named_attributes": params.name_attributes,
        **{k: v for k, v in recorded.items() if not k.startswith("axis_")},
        **difficulty_terms(rows, cols, magnitudes),
        "object_px": round6(smallest),
        "least_visibility": min(t.visibility for t in grid_truths),
        "contrast_redraws": redraws, **terms,
    }
    if label_truths:
        difficulty["least_label_visibility"] = min(t.visibility for t in label_truths)
    return Composed(scene=scene, questions=[question], truth=truth, difficulty=difficulty)


def densest_grid(params: OddGridParams) -> tuple[float, dict]:
    """The largest grid `params` can draw (rows and columns given, else grid_range's top) and its cell count: what
    `stim3d validate` composes at full size (Family.densest), since the smallest objects are in the densest grid."""
    rows = params.rows if params.rows is not None else params.grid_range[1]
    cols = params.cols if params.cols is not None else params.grid_range[1]
    return float(rows * cols), {**params.model_dump(mode="json"), "rows": rows, "cols": cols}


FAMILY = Family(
    name="odd_grid",
    description="OddGrid-3D: a rows x cols grid (5-9 each by default, 3-12 allowed) of one primitive on the ground "
    "or in front of a board; exactly one cell differs in colour (CIEDE2000 5-20), size (85-95 % / 105-115 %), "
    "rotation (5-25 degrees, symmetry-breaking axis), position (5-12 % of the pitch), or 2-4 of these, or none "
    "(p_none; Row 0, Column 0); answer \\boxed{Row X, Column Y} from the image's top-left; optional row and "
    "column number labels (OddGridBench in 3D).",
    params_model=OddGridParams,
    compose=compose,
    answer_types=("cell",),
    revision=8,  # 6: a look's measured odd-colour dE is recorded and checked; 7: size and position oddities measured
    #              against their neighbours and redrawn below a margin (two branches both took 6; 7 sets them apart);
    #              8: an odd library object's area matched to its row, and a layout under min_object_px redrawn
    rendered_difficulty=measured_color_difference,
    look_colour_check=look_colour_check,
    figure_of=label_figure,
    densest=densest_grid,
)
