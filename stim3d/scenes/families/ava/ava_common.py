"""Shared machinery of the AVA-3D families (one atomic visual ability per family).

AVA-Bench (Mai et al.) probes one ability at a time with labels taken from real
datasets; here every label is measured from the scene itself. What the families
share lives here:

- the stage: the counting families' elevated camera and lights (scenes/families/shared/stage.py);
- `scatter`: objects dropped on the ground by `placement.Layout` with a visibility
  floor, redrawn whole (bounded restarts) until a family's `accept` test on the
  measured ground truth holds (box area, depth gap, non-overlapping markers, ...);
- markers: the red / blue (or white) boxes AVA-Bench draws around the objects a
  question is about. A marker is the object's ray-cast visible box grown by a few
  pixels; its colour, rectangle and line width are stored on the object's
  `attributes` (`marker`, `marker_x0`.. `marker_y1`, `marker_px`), so the ground
  truth says exactly what was drawn (scenes/markers.py). The drawing itself happens
  after rendering (render/markers.py), which keeps the unmarked render as `image_raw.png`;
- choice questions carry their options in `subject["options"]` ("red|blue"), which
  the hand-off records turn into the answer's option list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from ...colors import COLOR_NAMES, named
from ...markers import Box, marker_box, with_marker
from ...model import SHAPES, Question, Scene, SceneObject
from ...object_library import library, library_object
from ...placement import Bounds, InfeasibleError, Layout
from ...visibility import VisibilityResult
from ..base import Composed, Frame
from ..shared.stage import counting_camera, counting_lights, resting_object

RESTARTS = 60


@dataclass(frozen=True)
class ObjectSpec:
    """An object to scatter: everything but its position and yaw."""

    shape: str
    color: str
    size: float
    role: str = "distractor"  # what the question makes of it: target, red, blue, distractor


def make_object(object_id: int, spec: ObjectSpec, x: float, y: float, yaw: float) -> SceneObject:
    """A primitive, or a composed library object when `spec.shape` names one (scenes/objects.yaml), resting on the
    ground at (x, y), turned by `yaw` degrees, labelled with its role."""
    if spec.shape in library():
        return library_object(object_id, spec.shape, spec.size, x, y, yaw, named(spec.color), {"role": spec.role})
    return resting_object(object_id, spec, x, y, yaw, {"role": spec.role})


def pick(rng: np.random.Generator, options: Sequence) -> Any:
    return options[int(rng.integers(len(options)))]


def distractor_specs(
    rng: np.random.Generator, n: int, avoid: Sequence[tuple[str, str]], size_range: tuple[float, float]
) -> list[ObjectSpec]:
    """`n` objects whose (shape, colour) differs from every pair in `avoid`.

    Half share a shape with an avoided pair and half a colour (when possible), so that
    neither shape nor colour alone tells the target apart.
    """
    specs = []
    for i in range(n):
        base_shape, base_color = pick(rng, avoid)
        if i % 2 == 0:
            options = [(base_shape, c) for c in COLOR_NAMES if (base_shape, c) not in avoid]
        else:
            options = [(s, base_color) for s in SHAPES if (s, base_color) not in avoid]
        if not options:
            options = [(s, c) for s in SHAPES for c in COLOR_NAMES if (s, c) not in avoid]
        shape, color = pick(rng, options)
        specs.append(ObjectSpec(shape, color, float(rng.uniform(*size_range))))
    return specs


def scatter(
    specs: Sequence[ObjectSpec],
    frame: Frame,
    rng: np.random.Generator,
    min_visibility: float,
    accept: Callable[[Layout, VisibilityResult], str | None],
    restarts: int = RESTARTS,
    makers: Mapping[int, Callable[[float, float, float], SceneObject]] | None = None,
) -> tuple[Layout, VisibilityResult]:
    """Place `specs` (ids 1..n in order) at visibility >= min_visibility until `accept` returns None.

    `accept(layout, truth)` returns None for a good scene or the name of the constraint
    it failed; after `restarts` layouts InfeasibleError names the most frequent failure.
    `makers[id]`, when given, builds that object from (x, y, yaw) instead of `make_object`
    (a sign that faces the camera, scenes/families/ava/ava_sign.py).
    """
    camera = counting_camera(frame)
    failures: Counter = Counter()
    for _ in range(restarts):
        layout = Layout(camera, rays_per_pixel=frame.rays_per_pixel, rejections=failures)
        placed = all(
            layout.place_randomly((makers or {}).get(i + 1) or partial(make_object, i + 1, spec), rng,
                                  Bounds(min_visibility)) is not None
            for i, spec in enumerate(specs)
        )
        if not placed:
            continue
        truth = layout.canvas.result()
        failed = accept(layout, truth)
        if failed is None:
            return layout, truth
        failures[failed] += 1
    worst = failures.most_common(1)[0][0] if failures else "placement"
    raise InfeasibleError(worst, f"{len(specs)} objects after {restarts} layouts")


def boxes_overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def marker_overlap(truth: VisibilityResult, frame: Frame, marked: int = 1, others: Collection[int] | None = None,
                   ignore: Collection[int] = ()) -> str | None:
    """"marker_overlap" when the marker drawn around object `marked` (its visible box grown by the marker,
    scenes/markers.py) overlaps the grown box of any of `others` (default: every other object but `ignore`), else
    None. Why: a marker that takes in another object's box no longer says which object it marks, and a marker
    drawn over another object changes what that object looks like."""
    boxes = {t.id: marker_box(t.bbox_visible, frame) for t in truth.truths if t.bbox_visible is not None}
    against = [i for i in boxes if i != marked and i not in ignore] if others is None else others
    # an object with no visible pixel has no box for a marker to meet
    return "marker_overlap" if any(i in boxes and boxes_overlap(boxes[marked], boxes[i]) for i in against) else None


def box_area_fraction(box: Box, frame: Frame) -> float:
    return (box[2] - box[0]) * (box[3] - box[1]) / float(frame.width * frame.height)


def finish(
    layout: Layout, truth: VisibilityResult, question: Question, difficulty: dict,
    markers: dict[int, str] | None = None, frame: Frame | None = None,
) -> Composed:
    """The Composed item: the layout's objects (markers attached), lights and the measured truth."""
    objects = []
    for object_id in sorted(layout.objects):
        obj = layout.objects[object_id]
        if markers and object_id in markers and frame is not None:
            box = next(t.bbox_visible for t in truth.truths if t.id == object_id)
            obj = with_marker(obj, markers[object_id], box, frame)  # type: ignore[arg-type]
        objects.append(obj)
    scene = Scene(camera=layout.camera, lights=counting_lights(), objects=objects)
    measured = {"n_objects": len(objects), "least_visibility": min(t.visibility for t in truth.truths)}
    return Composed(scene=scene, questions=[question], truth=truth, difficulty={**difficulty, **measured})


def options_text(options: Sequence[str]) -> str:
    """The options as the question lists them: "1. red, 2. blue" (AVA-Bench's choice form)."""
    return ", ".join(f"{i}. {option}" for i, option in enumerate(options, start=1))


def truth_of(truth: VisibilityResult, object_id: int):
    return next(t for t in truth.truths if t.id == object_id)


def describe(spec: ObjectSpec) -> str:
    return f"{spec.color} {spec.shape}"
