"""Blender sees what the ray caster sees: one tiny Cycles render per DYSM family, object-index pass vs ray-cast map.

These scenes stretch the camera in ways the counting scenes do not: dots floating
in an upright plane, a camera ~370 m away with a ~1 m-wide field for form
constancy, a tilted grid. The object-index pass must agree with the ray-cast
instance map there too, and show every object the ground truth counts.
"""

from __future__ import annotations

import numpy as np
import pytest

from stim3d.render.settings import RenderSettings
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.visibility import measure

pytestmark = pytest.mark.bpy

CASES = [
    ("letters", {"primitive": "cube", "dot_size": 0.14, "spacing": 0.4, "n_letters": 1}, Frame(128, 96)),
    ("letters", {"primitive": "sphere", "dot_size": 0.11, "spacing": 0.4, "n_letters": 2}, Frame(160, 120)),
    ("form_constancy", {"n_shapes": 3, "theta_deg": 15, "answer": "no", "rotation": "group"}, Frame(128, 96)),
    ("spatial_grid", {"rows": 3, "cols": 4}, Frame(128, 96)),
]


@pytest.mark.parametrize("family, params, frame", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_object_index_pass_matches_the_ray_cast_map(tmp_path, family, params, frame):
    pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")
    from stim3d.render.backends.blender import render_scene

    item = make_item(family, params, [51, 0, 0], "render", frame)
    settings = RenderSettings(engine="cycles", width=frame.width, height=frame.height, samples=4, denoise=False)
    out = render_scene(item.scene, settings, item.seed, tmp_path)
    raycast = measure(item.scene).instance_map
    rendered = out.instance_map
    agreement = float(np.mean(rendered == raycast))
    assert agreement >= 0.995, f"{int(np.sum(rendered != raycast))} px differ"
    every_object = {o.id for o in item.scene.objects}
    assert set(np.unique(rendered)) - {0} == every_object  # each dot / shape / cell shows in Blender's own pass
    for truth in item.ground_truth.objects:  # and covers the pixels the ground truth says it does
        assert abs(int(np.sum(rendered == truth.id)) - truth.visible_px) <= max(2, 0.02 * truth.visible_px)
