"""Shared machinery of the counting families: a layout that meets the visibility band, and the recount rule.

Counting scenes must hold every countable object at visibility >= b and make the
least visible one land in [b, b + band], so that a sweep over b really sweeps
occlusion. Random scattering alone almost never lands in a 0.05-wide band, so
one object (the *target*) gets an *occluder* placed straight in front of it and
slid sideways until the target's visibility is in the band (bisection on the
ray-cast value); every other object is then scattered with visibility >= b.
A scene with a single object, or of flat tori only, has nothing that could hide
an object down to the band: its objects keep the floor, and the band is recorded
as not met (`band_met: false`).

An object is a primitive, a library object or a mesh file's (`Spec`, built by
stage.py `standing_object`): placement, the occluder and the silhouettes all take its
triangles from scenes/meshes.py, so the floor and the band hold for any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from ...camera import geometry
from ...model import Camera, ObjectSource, Question, Scene, SceneObject
from ...placement import Bounds, InfeasibleError, Layout, occluder_path, solve_occluder_offset
from ...visibility import cast_object
from ..base import Composed, Frame, Recount
from .stage import counting_camera, counting_lights, standing_object

REVISION = 1
PLURAL = {"sphere": "spheres", "cube": "cubes", "cone": "cones", "cylinder": "cylinders", "torus": "tori"}
RESTARTS = 40
BAND_RESTARTS = 30  # layouts that try for the band before settling for the floor alone
TRIES_PER_OCCLUDER = 10  # band layouts with one occluder before the next-largest silhouette is tried
PROBE_YAWS = (0.0, 30.0, 60.0)  # a cube's silhouette depends on its yaw: rank by the mean


@dataclass(frozen=True)
class Spec:
    """An object to place: everything but its position.

    `shape` is a primitive or a library object's name; with `source` (a mesh file's, scenes/mesh_files.py) the
    object is that mesh and `shape` the class name it is counted by.
    """

    shape: str
    color: str
    size: float
    source: ObjectSource | None = None


def _occlude_target(
    layout: Layout, target: SceneObject, object_id: int, spec: Spec, rng: np.random.Generator,
    floor: float, band: float,
) -> SceneObject | None:
    """Slide an occluder in front of `target` until target visibility is in [floor, floor + band]."""
    yaw = float(rng.uniform(0.0, 360.0))
    probe = standing_object(object_id, spec, 0.0, 0.0, yaw)
    start, sideways = occluder_path(layout, target, probe, gap=float(rng.uniform(0.05, 0.5)))
    sideways = sideways * rng.choice([-1.0, 1.0])
    max_offset = 1.6 * (probe.size + target.size)

    def place_at(offset: float) -> SceneObject:
        x, y = start + offset * sideways
        return standing_object(object_id, spec, float(x), float(y), yaw)

    def visibility_at(offset: float) -> float:
        trial = layout.canvas.copy()
        trial.put(place_at(offset))
        return trial.visibility()[target.id]

    solved = solve_occluder_offset(visibility_at, floor + band / 2, max_offset, band / 2)
    if solved is None:
        layout.rejections["least_visibility_band"] += 1
        return None
    occluder = place_at(solved[0])
    layout.bounds[target.id] = Bounds(floor, floor + band)
    if layout.try_put(occluder, Bounds(floor)):
        return occluder
    layout.bounds[target.id] = Bounds(floor)
    return None


def silhouette_px(spec: Spec, camera: Camera) -> float:
    """Pixels the object covers on its own at the middle of the stage (ray cast, mean over PROBE_YAWS).

    This is what it can put in front of another object. A bounding box overrates a
    cone (its box is twice its triangle) and a flat torus (a thin ellipse).
    """
    cam = geometry(camera)
    return float(np.mean([len(cast_object(standing_object(1, spec, 0.0, 0.0, yaw), cam).gx) for yaw in PROBE_YAWS]))


def place_counting_objects(
    specs: list[Spec], camera: Camera, rng: np.random.Generator, min_visibility: float, band: float,
    rays_per_pixel: int = 1,
) -> tuple[Layout, bool]:
    """Place `specs` (ids 1..n in order) meeting the visibility floor and band. Returns (layout, band_met).

    The occluder is the object with the largest projected silhouette (ray cast, see
    `silhouette_px`; a flat torus hides at most ~8 % of another torus from this
    camera); after TRIES_PER_OCCLUDER failed layouts the next-largest is tried. When
    no object can hide another down to the band (a scene of tori only), the band is
    given up after BAND_RESTARTS layouts and the scene is built with the floor alone;
    `band_met` says so.
    """
    occlude = len(specs) >= 2 and min_visibility + band < 1.0
    ranked = sorted(range(len(specs)), key=lambda i: -silhouette_px(specs[i], camera)) if occlude else []
    layout = Layout(camera, rays_per_pixel=rays_per_pixel)
    for attempt in range(RESTARTS):
        rejections = layout.rejections
        layout = Layout(camera, rays_per_pixel=rays_per_pixel, rejections=rejections)
        order = [int(i) for i in rng.permutation(len(specs))]
        floor = Bounds(min_visibility)
        if occlude and attempt < BAND_RESTARTS:
            occluder_index = ranked[(attempt // TRIES_PER_OCCLUDER) % len(ranked)]
            order.remove(occluder_index)
            target_index = order.pop(0)
            target = layout.place_randomly(
                partial(standing_object, target_index + 1, specs[target_index]), rng, floor
            )
            if target is None or _occlude_target(
                layout, target, occluder_index + 1, specs[occluder_index], rng, min_visibility, band
            ) is None:
                continue
        placed_all = True
        for i in order:
            if layout.place_randomly(partial(standing_object, i + 1, specs[i]), rng, floor) is None:
                placed_all = False
                break
        if placed_all:
            least = min(layout.visibility().values())
            return layout, least <= min_visibility + band
    raise InfeasibleError(
        layout.worst_constraint(),
        f"{len(specs)} objects with min_visibility={min_visibility} and band={band} after {RESTARTS} layouts",
    )


def scale_for_crowd(n_objects: int, size_range: tuple[float, float], rng: np.random.Generator) -> float:
    """Object size: smaller when many objects must share the picture."""
    crowd = min(1.0, float(np.sqrt(10.0 / max(n_objects, 1))))
    return float(rng.uniform(*size_range)) * crowd


def compose_counting(
    specs: list[Spec], params, rng: np.random.Generator, frame: Frame, question: Question, difficulty: dict
) -> Composed:
    """Place `specs` under the family's visibility floor and band, measure, and add the measured difficulty."""
    camera = counting_camera(frame)
    layout, band_met = place_counting_objects(specs, camera, rng, params.min_visibility, params.band, frame.rays_per_pixel)
    scene = Scene(camera=camera, lights=counting_lights(), objects=[layout.objects[i] for i in sorted(layout.objects)])
    truth = layout.canvas.result()
    measured = {
        "min_visibility": params.min_visibility,
        "n_objects": len(specs),
        "least_visibility": min(t.visibility for t in truth.truths),
        "band_met": band_met,
    }
    return Composed(scene=scene, questions=[question], truth=truth, difficulty={**difficulty, **measured})


# -- the recount rule ---------------------------------------------------------------------------------

SUBJECT_ATTRIBUTES = {"shape": lambda o: o.shape, "color": lambda o: o.color.name}


def recount_subject(question: Question, scene: Scene) -> Recount | None:
    """The counting families' gold, recomputed from a scene: every countable object matching the subject.

    The question asks how many are *in the scene*, so the count is a fact about the
    scene, not about the picture: an object counts whatever its visibility, a fully
    hidden one too. Whether the picture still shows enough of it is a separate check,
    the family's visibility floor (`min_visibility`), which the add-on reports as a
    violated constraint and an occlusion sweep holds on purpose (docs/plugins.md,
    "Recounting a gold answer"). None for a question this rule cannot answer: not an
    integer answer, or a subject other than a shape and/or a colour.
    """
    unknown = set(question.subject) - set(SUBJECT_ATTRIBUTES)
    if not question.subject or unknown or question.answer_type != "integer":
        return None
    counted = tuple(
        o.id for o in scene.objects
        if o.countable and all(SUBJECT_ATTRIBUTES[key](o) == value for key, value in question.subject.items())
    )
    return Recount(gold=len(counted), object_ids=counted)
