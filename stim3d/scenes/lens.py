"""Photoreal's physical camera: a sensor, a focal length, an aperture and a focus distance, for depth of field.

The family's pinhole camera (`Scene.camera`) fixes the geometry; a photograph adds optics. Each photoreal
item draws a sensor (full frame, APS-C, 1-inch) and so the focal length that gives the pinhole's field of
view on it, a scale (the scene is a miniature: one scene metre is SCALE's 8-20 cm, so the objects are toys
on a table, which is what makes a real photograph's background soft), an f-number a photographer would use,
and focuses at the harmonic mean of the nearest and farthest object surface. Cycles then renders depth of
field (render/backends/blender_scene.py `add_camera`), which blurs the setting behind the objects.

Every object stays sharp: Cycles' thin lens blurs a point at depth d, focused at s, over a circle of
D * fx * |1/d - 1/s| pixels (D the aperture's diameter in scene units, fx the focal length in pixels).
Focused at the harmonic mean, the nearest and farthest object vertex have the same circle, and the drawn
f-number is stopped down (by thirds of a stop, as a photographer turns the ring) until that circle is at most
MAX_COC_PX: no object a question can ask about is ever out of focus. The circle kept is recorded (`coc_px`).

Own random stream: `SeedSequence(item entropy + [LENS_TAG, attempt])`, so drawing the lens changes no other
draw of the look; photoreal and photoreal_raw share it (the raw rung differs after the sensor only).
"""

from __future__ import annotations

import numpy as np

from .camera import geometry
from .meshes import object_world_vertices
from .model import LensLook, Scene, round6

LENS_TAG = 0x1E45  # marks the lens's own SeedSequence stream (item entropy + [LENS_TAG, attempt])
SENSORS_MM = (36.0, 23.5, 13.2)  # sensor widths: full frame, APS-C, 1-inch
F_NUMBERS = (1.8, 2.0, 2.8, 4.0, 5.6)  # the apertures drawn: a photographer's tabletop range, wide to middling
SCALE = (0.08, 0.2)  # physical metres per scene metre: the scene as a tabletop miniature
MAX_COC_PX = 0.8  # the largest circle of confusion any object may have, in pixels (a margin under one pixel)
THIRD_STOP = 2 ** (1 / 6)  # one third of a stop in f-number


def aperture_m(lens: LensLook) -> float:
    """The aperture's diameter in scene units (metres of the scene, not of the miniature)."""
    return lens.focal_mm * 1e-3 / (lens.f_number * lens.scale)


def coc_px(lens: LensLook, fx: float, depth: float) -> float:
    """Cycles' circle of confusion, in pixels, of a point `depth` scene metres along the view axis."""
    return aperture_m(lens) * fx * abs(1.0 / depth - 1.0 / lens.focus_m)


def object_depths(scene: Scene) -> tuple[float, float]:
    """The nearest and farthest object vertex along the camera's view axis (scene metres)."""
    camera = geometry(scene.camera)
    depths = np.concatenate([-camera.to_camera(object_world_vertices(obj))[:, 2] for obj in scene.objects])
    return float(depths.min()), float(depths.max())


def draw_lens(scene: Scene, entropy: list[int], attempt: int = 0) -> LensLook | None:
    """The physical camera of draw `attempt` (None for a scene without objects: nothing to focus on)."""
    if not scene.objects:
        return None
    rng = np.random.default_rng(np.random.SeedSequence([*entropy, LENS_TAG, attempt]))
    sensor = SENSORS_MM[int(rng.integers(len(SENSORS_MM)))]
    scale = round6(rng.uniform(*SCALE))
    f_number = F_NUMBERS[int(rng.integers(len(F_NUMBERS)))]
    camera = scene.camera
    focal = round6(camera.fx * sensor / max(camera.width, camera.height))
    near, far = object_depths(scene)
    focus = round6(2.0 / (1.0 / near + 1.0 / far))
    lens = LensLook(sensor_mm=sensor, focal_mm=focal, f_number=f_number, focus_m=focus, scale=scale, coc_px=0.0)

    def worst(lens: LensLook) -> float:  # the nearest or the farthest vertex: the circle grows away from the focus
        return max(coc_px(lens, camera.fx, near), coc_px(lens, camera.fx, far))

    while worst(lens) > MAX_COC_PX:
        lens = lens.model_copy(update={"f_number": round(lens.f_number * THIRD_STOP, 3)})
    return lens.model_copy(update={"coc_px": round6(worst(lens))})
