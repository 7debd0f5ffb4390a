"""The sign the AVA-3D texture and text families put in the scene: an upright tile turned towards the camera.

A `tile` is a square slab (scenes/primitives.py); turned 90 degrees about x it stands
on its lower edge with its face (the tile's local x-y plane, scenes/surfaces.py) to
the camera, and a yaw turns it away by the viewing angle. The face's axes in the
world and the camera give what the families record in pixels: the projected length of
a metre on the face (`face_scale_px`) and the pixels of any point on it (`face_points_px`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ....errors import MissingObject
from ...camera import geometry
from ...colors import named
from ...markers import Box
from ...model import Camera, Question, Scene, SceneObject, round6
from ...placement import Layout, footprint_radius, resting_pose
from ...primitives import axis_angle_quat, matrix_to_quat, quat_to_matrix, unit_dimensions
from ...visibility import ObjectTruth, VisibilityResult
from ..base import Frame, Recount
from .ava_common import ObjectSpec, distractor_specs, make_object, marker_overlap, pick, scatter, truth_of

FRONT = 0.0051  # the face's offset from the tile's centre plane, in sizes (the tile is 0.01 thick)


def sign_rotation(x: float, y: float, camera: Camera, view_deg: float) -> tuple[float, float, float, float]:
    """Stand the tile up (face normal along -y) and turn it so the normal is `view_deg` off the camera's azimuth."""
    toward = math.degrees(math.atan2(camera.location[1] - y, camera.location[0] - x))
    upright = quat_to_matrix(axis_angle_quat((1.0, 0.0, 0.0), 90.0))
    yaw = quat_to_matrix(axis_angle_quat((0.0, 0.0, 1.0), toward + 90.0 + view_deg))
    return tuple(round6(v) for v in matrix_to_quat(yaw @ upright))  # type: ignore[return-value]


def sign_maker(object_id: int, size: float, color: str, camera: Camera, view_deg: float,
               attributes: dict, made: list[SceneObject] | None = None) -> Callable[[float, float, float], SceneObject]:
    """A factory for `scatter`: the sign at (x, y), ignoring the drawn yaw (the viewing angle sets it).

    Each sign made is appended to `made`, whose last entry is the placed sign once
    `scatter` moves on to the next object (an occluder is put in front of it).
    """
    def make(x: float, y: float, _yaw: float) -> SceneObject:
        rotation = sign_rotation(x, y, camera, view_deg)
        sign = SceneObject(
            id=object_id, shape="tile", size=round6(size),
            dimensions=tuple(round6(d * size) for d in unit_dimensions("tile")),
            location=resting_pose("tile", size, x, y, rotation), rotation_quat=rotation,
            color=named(color), countable=False, attributes={"role": "target", **attributes},
        )
        if made is not None:
            made[-1:] = [sign]  # only the last one is needed
        return sign
    return make


def face_to_world(obj: SceneObject, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """World points of face coordinates (x, y) in metres (the tile's front face)."""
    rotation = quat_to_matrix(obj.rotation_quat)
    local = np.stack([x, y, np.full_like(x, FRONT * obj.size)], axis=-1)
    return local @ rotation.T + np.asarray(obj.location)


def face_points_px(obj: SceneObject, camera: Camera, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pixel coordinates (u, v), continuous, of face points (x, y) in metres; shape (..., 2)."""
    points = face_to_world(obj, np.asarray(x, float).ravel(), np.asarray(y, float).ravel())
    u, v, _ = geometry(camera).project(points)
    return np.stack([u, v], axis=-1).reshape(*np.shape(x), 2)


def face_scale_px(obj: SceneObject, camera: Camera, angle_deg: float = 0.0) -> float:
    """Pixels per metre on the face at its centre, along the face direction `angle_deg` from x (its shortest
    across the two directions `angle_deg` and `angle_deg` + 90 is what a pattern's period shrinks to)."""
    a = math.radians(angle_deg)
    lengths = []
    for dx, dy in ((math.cos(a), math.sin(a)), (-math.sin(a), math.cos(a))):
        step = 0.05 * obj.size
        ends = face_points_px(obj, camera, np.array([-dx * step, dx * step]), np.array([-dy * step, dy * step]))
        lengths.append(float(np.linalg.norm(ends[1] - ends[0])) / (2 * step))
    return min(lengths)


def viewing_angle_deg(obj: SceneObject, camera: Camera) -> float:
    """Angle between the face's normal and the line from its centre to the camera, degrees (0 = head on)."""
    normal = quat_to_matrix(obj.rotation_quat) @ np.array([0.0, 0.0, 1.0])
    to_camera = np.asarray(camera.location) - np.asarray(obj.location)
    cosine = float(normal @ to_camera / np.linalg.norm(to_camera))
    return round(math.degrees(math.acos(max(-1.0, min(1.0, cosine)))), 3)


def occluder_maker(object_id: int, spec: ObjectSpec, camera: Camera, signs: list[SceneObject],
                   gap: tuple[float, float] = (0.05, 0.6)) -> Callable[[float, float, float], SceneObject]:
    """A factory for `scatter`: an object between the last sign made (`signs[-1]`) and the camera.

    It stands `gap` metres (plus both footprints) in front of the sign towards the camera
    and sideways by up to half the sign's width either way, so it hides part of the sign
    or none; the fractional parts of the ground point `scatter` drew choose the gap and the
    sideways offset, so the draw stays the family's own seeded stream.
    """
    def make(x: float, y: float, yaw: float) -> SceneObject:
        sign = signs[-1]
        centre = np.asarray(sign.location[:2], dtype=float)
        toward = np.asarray(camera.location[:2], dtype=float) - centre
        toward /= np.linalg.norm(toward)
        sideways = np.array([-toward[1], toward[0]])
        probe = make_object(object_id, spec, 0.0, 0.0, yaw)
        distance = footprint_radius(sign) + footprint_radius(probe) + gap[0] + (x * 7.31 % 1.0) * (gap[1] - gap[0])
        offset = ((y * 5.17 % 1.0) - 0.5) * sign.size
        point = centre + toward * distance + sideways * offset
        return make_object(object_id, spec, float(point[0]), float(point[1]), yaw)
    return make


def sign_and_occluder(rng: np.random.Generator, share: float, ink: str, size_range: tuple[float, float],
                      n_distractors: int) -> tuple[list[ObjectSpec], bool]:
    """The specs to scatter: the sign, with probability `share` an occluder (id 2), then the distractors."""
    sign = ObjectSpec("tile", ink, 1.0, role="target")  # size and face are the sign maker's
    occluded = bool(rng.uniform() < share)
    occluder = [ObjectSpec(str(pick(rng, ("cube", "cylinder", "sphere"))), str(pick(rng, ("gray", "orange", "yellow"))),
                           float(rng.uniform(*size_range)), role="occluder")] if occluded else []
    return [sign, *occluder, *distractor_specs(rng, n_distractors, [("cube", ink)], (0.5, 1.1))], occluded


def recount_sign(attribute: str) -> Callable[[Question, Scene], Recount | None]:
    """The family's gold rule for an edited scene (the add-on's re-validation): what the asked-about sign's face
    carries (`texture` or `text`, as drawn), or None when that sign is gone or carries nothing."""
    def recount(question: Question, scene: Scene) -> Recount | None:
        try:
            sign = scene.object(int(question.subject["object_id"]))
        except (KeyError, ValueError, MissingObject):
            return None
        value = sign.attributes.get(attribute)
        return None if value is None else Recount(value, (sign.id,))
    return recount


class SignParams(Protocol):
    """What the sign families' params share (each family declares its own fields, in its own order)."""

    max_distractors: int
    occluder_share: float
    min_visibility: float


@dataclass(frozen=True)
class SignScene:
    """The scattered sign scene: the layout and its measured truth, the distractor count and whether an occluder
    (id 2) stands in front of the sign (id 1)."""

    layout: Layout
    truth: VisibilityResult
    n_distractors: int
    occluded: bool

    @property
    def sign(self) -> SceneObject:
        return self.layout.objects[1]

    @property
    def target(self) -> ObjectTruth:
        return truth_of(self.truth, 1)

    @property
    def target_box(self) -> Box:
        """The sign's visible box (scatter keeps it above its visibility floor, so it has one)."""
        box = self.target.bbox_visible
        assert box is not None, "scatter placed the sign above its visibility floor"
        return box


def scatter_sign(params: SignParams, rng: np.random.Generator, frame: Frame, camera: Camera, *, size: float, ink: str,
                 view_deg: float, attributes: dict, readable: Callable[[SceneObject, VisibilityResult], str | None],
                 ) -> SignScene:
    """The sign (id 1, facing the camera `view_deg` off), an occluder in front of it in `occluder_share` of the
    items (id 2) and 0..max_distractors plain objects, scattered until `readable(sign, truth)` (the family's own
    test: a period or every character on the image) holds and the sign's marker overlaps no other object's (the
    occluder's may: it stands in front of the sign on purpose)."""
    n_distractors = int(rng.integers(0, params.max_distractors + 1))
    specs, occluded = sign_and_occluder(rng, params.occluder_share, ink, (0.6, 1.0), n_distractors)
    made: list[SceneObject] = []
    makers = {1: sign_maker(1, size, ink, camera, view_deg, attributes, made)}
    if occluded:
        makers[2] = occluder_maker(2, specs[1], camera, made)

    def accept(layout: Layout, truth: VisibilityResult) -> str | None:
        return readable(layout.objects[1], truth) or marker_overlap(truth, frame, ignore=(2,) if occluded else ())

    layout, truth = scatter(specs, frame, rng, params.min_visibility, accept, makers=makers)
    return SignScene(layout, truth, n_distractors, occluded)
