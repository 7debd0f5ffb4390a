"""Photoreal's physical camera (scenes/lens.py): depth of field that never blurs an object a question asks about.

The draw promises every object vertex a circle of confusion under one pixel (Cycles' thin lens: D * fx *
|1/d - 1/s|); this is re-derived here from the objects' own vertices, and checked against Cycles itself: with
the lens, the objects render as sharp as through the pinhole while the far setting softens.
"""

from __future__ import annotations

import numpy as np
import pytest

from stim3d.scenes.camera import geometry
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.lens import F_NUMBERS, SENSORS_MM, draw_lens
from stim3d.scenes.meshes import object_world_vertices


def _vertex_depths(scene) -> np.ndarray:
    camera = geometry(scene.camera)
    forward = camera.forward
    return np.concatenate([(object_world_vertices(o) - camera.origin) @ forward for o in scene.objects])


@pytest.mark.parametrize("family", ["shape_count", "odd_grid", "letters", "rose_grid", "ava_object"])
def test_every_object_vertex_is_in_focus_within_a_pixel(family):
    for seed in range(4):
        item = make_item(family, {}, [seed, 3, 1], "x", Frame(640, 480), look="photoreal")
        lens = item.scene.look.lens
        depths = _vertex_depths(item.scene)
        aperture = lens.focal_mm * 1e-3 / (lens.f_number * lens.scale)  # scene metres
        circles = aperture * item.scene.camera.fx * np.abs(1 / depths - 1 / lens.focus_m)
        assert circles.max() <= 1.0 and circles.max() == pytest.approx(lens.coc_px, abs=1e-4)
        assert depths.min() <= lens.focus_m <= depths.max()
        assert lens.sensor_mm in SENSORS_MM and lens.f_number >= min(F_NUMBERS)
        # the focal length gives the family's own field of view on the drawn sensor: geometry is untouched
        assert lens.focal_mm / lens.sensor_mm == pytest.approx(item.scene.camera.fx / 640, rel=1e-5)


def test_a_deep_scene_is_stopped_down_and_the_draw_is_its_own_stream():
    item = make_item("shape_count", {}, [5, 0, 0], "x", Frame(320, 240), look="photoreal")
    deep = item.scene.model_copy(update={"objects": [
        o.model_copy(update={"location": (o.location[0], o.location[1] + (-6.0 if i % 2 else 8.0), o.location[2])})
        for i, o in enumerate(item.scene.objects)]})
    shallow, stretched = draw_lens(item.scene, [5, 0, 0]), draw_lens(deep, [5, 0, 0])
    assert stretched.f_number > shallow.f_number and stretched.coc_px <= 0.8  # same draw, stopped down
    assert item.scene.look.lens == shallow and draw_lens(item.scene, [5, 0, 0], attempt=1) != shallow
    raw = make_item("shape_count", {}, [5, 0, 0], "x", Frame(320, 240), look="photoreal_raw").scene.look
    assert raw.lens == shallow and raw.environment == item.scene.look.environment


def _sharpness(image: np.ndarray, region: np.ndarray) -> float:
    grey = image.astype(float).mean(axis=-1)
    laplacian = np.abs(4 * grey[1:-1, 1:-1] - grey[:-2, 1:-1] - grey[2:, 1:-1] - grey[1:-1, :-2] - grey[1:-1, 2:])
    return float(laplacian[region[1:-1, 1:-1]].mean())


@pytest.mark.bpy
def test_cycles_keeps_the_objects_sharp_and_softens_the_far_setting(tmp_path):
    """A wide aperture on a small miniature (much background blur): inside the objects' silhouettes the lens
    render keeps the pinhole render's detail; the far third of the frame loses much of it."""
    pytest.importorskip("bpy")
    from stim3d.render.backends import blender
    from stim3d.render.settings import RenderSettings

    item = make_item("shape_count", {}, [3, 0, 0], "x", Frame(160, 120), look="photoreal_raw")
    look = item.scene.look
    wide = look.lens.model_copy(update={"sensor_mm": 36.0, "focal_mm": look.lens.focal_mm * 36.0 / look.lens.sensor_mm,
                                        "f_number": 1.8, "scale": 0.12})
    near = _vertex_depths(item.scene).min()
    aperture = wide.focal_mm * 1e-3 / (wide.f_number * wide.scale)
    assert aperture * item.scene.camera.fx * (1 / near - 1 / wide.focus_m) < 1.5  # objects within the filter
    settings = RenderSettings(width=160, height=120, samples=16, look="photoreal_raw")
    images = {}
    for name, lens in (("pinhole", None), ("lens", wide)):
        # on photoreal's textured floor (no setting): a plain wall behind would have little detail to lose
        scene = item.scene.model_copy(update={"look": look.model_copy(update={"lens": lens, "setting": None})})
        out = blender.render_scene(scene, settings, item.seed, tmp_path / name)
        images[name], mask = out.image, out.instance_map
    objects = np.zeros(mask.shape, bool)
    objects[mask > 0] = True
    far_rows = np.zeros(mask.shape, bool)
    far_rows[:40] = True
    far_rows &= ~objects
    kept_objects = _sharpness(images["lens"], objects) / _sharpness(images["pinhole"], objects)
    kept_far = _sharpness(images["lens"], far_rows) / _sharpness(images["pinhole"], far_rows)
    assert kept_objects > 0.8 and kept_far < 0.7 * kept_objects
