"""Letters: the frame shows ground up to its top edge, never sky (issue 15.4), checked on rendered depth."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stim3d.scenes.camera import geometry
from stim3d.scenes.families.base import Frame
from stim3d.scenes.families.dysm.letters import elevation_range
from stim3d.scenes.items import make_item

ROOT = Path(__file__).resolve().parents[1]
PARAMS = [{"n_letters": 1, "primitive": "cube", "dot_size": 0.14, "spacing": 0.4},
          {"n_letters": 2, "primitive": "sphere", "dot_size": 0.11, "spacing": 0.5},
          {"n_letters": 5, "primitive": "cylinder", "dot_size": 0.3, "spacing": 1.5}]


@pytest.mark.parametrize("frame", [Frame(800, 600), Frame(640, 480), Frame(1280, 720)])
def test_every_corner_ray_meets_the_ground_inside_its_extent(frame):
    low, _ = elevation_range(frame)
    assert low > np.degrees(np.arctan(frame.height / 2 / (70 / 36 * max(frame.width, frame.height))))
    for index in range(12):
        scene = make_item("letters", PARAMS[index % 3], [5, 0, index], "x", frame).scene
        cam = geometry(scene.camera)
        xs, ys = np.meshgrid(np.linspace(0, frame.width, 9), np.array([0.0]))
        origins, directions = cam.rays(xs.ravel(), ys.ravel())
        assert (directions[:, 2] < 0).all()  # the top edge looks below the horizon
        hits = origins - directions * (origins[:, 2] / directions[:, 2])[:, None]
        assert np.abs(hits[:, :2]).max() < scene.stage.ground_size / 2  # ... and at the ground, not past its edge


@pytest.mark.bpy
def test_rendered_top_rows_are_ground(tmp_path):
    """Workbench depth: every pixel of the top rows hits something (the ground), none is background (sky)."""
    code = f"""
import sys
from pathlib import Path
import numpy as np
sys.path.insert(0, {str(ROOT)!r})
from tests.test_letters_ground import PARAMS
from stim3d.render.backends import blender
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.render.settings import RenderSettings
for i, params in enumerate(PARAMS):
    item = make_item("letters", params, [5, 0, i], "x", Frame(320, 240))
    out = blender.render_scene(item.scene, RenderSettings(engine="workbench", width=320, height=240, samples=1,
                               depth=True), 1, Path({str(tmp_path)!r}) / str(i))
    np.save(Path({str(tmp_path)!r}) / f"depth{{i}}.npy", out.depth)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for i in range(len(PARAMS)):
        depth = np.load(tmp_path / f"depth{i}.npy")
        assert np.isfinite(depth).mean() > 0.99, i  # the depth pass works at all
        assert np.isfinite(depth[:3]).all(), (i, int((~np.isfinite(depth[:3])).sum()))
