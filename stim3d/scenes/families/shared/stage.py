"""The stage several families share: the counting camera and lights, lights scaled to any scene, a resting object
(a primitive, or with `standing_object` a library object or a mesh file's too).

Split out of counting.py and letters.py so that no family imports another family's
module (tests/test_family_imports.py). `REVISION` is this module's own generator
revision: bump it when a change here changes what a family composes, and the
families that list "stage" in `Family.shared` get it in their resume key
(scenes/families/shared/__init__.py).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ...camera import look_at
from ...colors import named
from ...meshes import resting_source_object
from ...model import Camera, Light, SceneObject, round6
from ...object_library import library, library_object
from ...placement import resting_pose, yaw_quat
from ...primitives import axis_angle_quat, unit_dimensions
from ..base import Frame

REVISION = 1


def counting_camera(frame: Frame) -> Camera:
    """Elevated three-quarter view of the ground around the origin."""
    return look_at((0.0, -8.0, 5.2), (0.0, 0.2, 0.0), frame.width, frame.height, focal_35mm=38.0)


def counting_lights() -> list[Light]:
    """A key area light above-left of the camera and a weaker fill from the right."""
    key_rotation = tuple(round6(v) for v in axis_angle_quat((1.0, -0.6, 0.0), 35.0))
    fill_rotation = tuple(round6(v) for v in axis_angle_quat((1.0, 0.8, 0.0), 50.0))
    return [
        Light(location=(-3.0, -4.0, 7.0), rotation_quat=key_rotation, size=4.0, power_w=600.0),
        Light(location=(5.0, -3.0, 4.0), rotation_quat=fill_rotation, size=3.0, power_w=150.0),
    ]


class PrimitiveSpec(Protocol):
    """What `resting_object` needs to know of an object besides where it stands."""

    @property
    def shape(self) -> str: ...
    @property
    def color(self) -> str: ...
    @property
    def size(self) -> float: ...


def resting_object(object_id: int, spec: PrimitiveSpec, x: float, y: float, yaw: float,
                   attributes: dict[str, str] | None = None) -> SceneObject:
    """A primitive resting on the ground at (x, y), turned by `yaw` degrees about the vertical."""
    rotation = yaw_quat(yaw)
    return SceneObject(
        id=object_id,
        shape=spec.shape,
        size=round6(spec.size),
        dimensions=tuple(round6(d * spec.size) for d in unit_dimensions(spec.shape)),
        location=resting_pose(spec.shape, spec.size, x, y, rotation),
        rotation_quat=rotation,
        color=named(spec.color),
        attributes=attributes or {},
    )


def standing_object(object_id: int, spec: PrimitiveSpec, x: float, y: float, yaw: float,
                    attributes: dict[str, str] | None = None) -> SceneObject:
    """`resting_object`, or a composed library object when `spec.shape` names one (scenes/objects.yaml), or the
    mesh file of `spec.source` when it has one (then `spec.shape` is its class name, in `attributes["object"]`)."""
    source = getattr(spec, "source", None)
    if source is not None:
        return resting_source_object(object_id, source, spec.size, x, y, yaw, named(spec.color),
                                     {"object": spec.shape, **(attributes or {})})
    if spec.shape in library():
        return library_object(object_id, spec.shape, spec.size, x, y, yaw, named(spec.color), attributes)
    return resting_object(object_id, spec, x, y, yaw, attributes)


COUNTING_VIEW_DISTANCE = 9.7  # metres from the counting families' camera to what it looks at


def camera_distance(camera: Camera, point: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(camera.location) - np.asarray(point)))


def lights_around(target, scale: float) -> list[Light]:
    """Key light above-left of the camera and a weaker fill from the right, aimed at `target`.

    The same geometry as the counting families' lights (which suit a scene about 4 m
    across, seen from COUNTING_VIEW_DISTANCE), scaled by `scale`: positions and sizes by `scale`, power by `scale**2`,
    so the lighting looks the same whatever the scene's extent. Shared by the DYSM
    families that frame scenes of any size.
    """
    target = np.asarray(target, dtype=float)
    lights = []
    for offset, size, power in (((-3.0, -4.0, 7.0), 4.0, 600.0), ((5.0, -3.0, 4.0), 3.0, 150.0)):
        location = target + scale * np.asarray(offset)
        aim = look_at(location, target, 8, 8)  # a light emits along its local -Z, like a camera looks
        lights.append(
            Light(
                location=tuple(round6(v) for v in location),
                rotation_quat=aim.rotation_quat,
                size=round6(size * scale),
                power_w=round6(power * scale * scale),
            )
        )
    return lights
