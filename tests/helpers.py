"""Small builders shared by tests: hand-made scenes with known geometry."""

from __future__ import annotations

from scenes.camera import look_at
from scenes.colors import named
from scenes.model import Camera, Light, Scene, SceneObject
from scenes.primitives import unit_dimensions


def obj(object_id: int, shape: str, size: float, x: float, y: float, z: float | None = None, color: str = "red") -> SceneObject:
    """An upright object; resting on the ground unless `z` (its centre height) is given."""
    dims = tuple(d * size for d in unit_dimensions(shape))
    return SceneObject(
        id=object_id,
        shape=shape,
        size=size,
        dimensions=dims,
        location=(x, y, dims[2] / 2 if z is None else z),
        color=named(color),
    )


def scene(objects: list[SceneObject], camera: Camera | None = None, width: int = 160, height: int = 120) -> Scene:
    cam = camera or look_at((0.0, -8.0, 5.0), (0.0, 0.0, 0.3), width, height)
    light = Light(location=(3.0, -3.0, 6.0), rotation_quat=(0.92, 0.27, 0.2, 0.18), size=3.0, power_w=800.0)
    return Scene(camera=cam, lights=[light], objects=objects)
