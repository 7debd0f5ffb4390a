"""Workbench previews: clip range scaled with the camera distance (no z-fighting), no EGL noise; the backend
module loads where ctypes cannot open the C library (Windows)."""

from __future__ import annotations

import ctypes
import importlib
import subprocess
import sys

import numpy as np
import pytest

from stim3d.scenes.camera import geometry
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item

SMALL = Frame(320, 240)


def form_item(index: int = 3):
    return make_item("form_constancy", {"answer": "yes", "n_shapes": 3, "theta_deg": 5}, [1, 0, index], "fc", SMALL)


def test_clip_range_scales_with_the_camera_distance_and_clips_nothing():
    from stim3d.render.backends.blender_scene import clip_range

    for family in ("form_constancy", "shape_count", "letters", "spatial_grid"):
        scene = make_item(family, {}, [2, 0, 0], "x", SMALL).scene
        start, end = clip_range(scene)
        location = np.asarray(scene.camera.location)
        distances = [np.linalg.norm(np.asarray(o.location) - location) for o in scene.objects]
        radii = [0.5 * np.linalg.norm(o.dimensions) for o in scene.objects]
        assert start < min(d - r for d, r in zip(distances, radii)) and start < location[2]  # nothing is cut
        assert end > max(d + r for d, r in zip(distances, radii))
        assert start > 1.0  # scaled with the distance: not a fixed centimetre (every camera here is metres away)
    far = form_item().scene
    assert clip_range(far)[0] > 10.0  # the camera sits hundreds of metres away


@pytest.mark.bpy
def test_workbench_yes_item_shows_identical_groups_and_prints_no_egl_noise(tmp_path):
    """Counterpart shapes of a "yes" item look the same; z-fighting speckled them differently (issue 15.3)."""
    code = f"""
import numpy as np, sys
from pathlib import Path
sys.path.insert(0, {str(__import__('pathlib').Path(__file__).resolve().parents[1])!r})
from tests.test_render_hygiene import form_item
from stim3d.render.backends import blender
from stim3d.render.settings import RenderSettings
item = form_item()
out = blender.render_scene(item.scene, RenderSettings(engine="workbench", width=320, height=240, samples=1), 1,
                           Path({str(tmp_path)!r}))
np.save({str(tmp_path / "image.npy")!r}, out.image)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "EGL_BAD_MATCH" not in result.stderr + result.stdout
    image = np.load(tmp_path / "image.npy").astype(float)
    scene = form_item().scene
    camera = geometry(scene.camera)
    right = {o.attributes["slot"]: o for o in scene.objects if o.attributes["group"] == "right"}
    for left in (o for o in scene.objects if o.attributes["group"] == "left"):
        u, v, _ = camera.project(np.array([left.location, right[left.attributes["slot"]].location]))
        du, dv = int(round(u[1] - u[0])), int(round(v[1] - v[0]))
        cu, cv, h = int(u[0]), int(v[0]), 8
        a = image[cv - h:cv + h, cu - h:cu + h]
        b = image[cv - h + dv:cv + h + dv, cu - h + du:cu + h + du]
        assert np.abs(a - b).mean() < 2.0, left.shape  # a 0.01 m near clip gave 3.7-4.0 here


def test_backend_module_loads_where_ctypes_cannot_open_the_c_library(monkeypatch):
    """Windows: ctypes.CDLL(None) raises TypeError; the add-on imports this module and must still load."""
    from stim3d.render.backends import blender_streams

    def refuse(*args, **kwargs):
        raise TypeError("expected str, bytes or os.PathLike object, not NoneType")

    monkeypatch.setattr(ctypes, "CDLL", refuse)
    reloaded = importlib.reload(blender_streams)
    assert reloaded._LIBC is None
    reloaded._flush_c()  # a no-op, not an error
    monkeypatch.undo()
    importlib.reload(blender_streams)
