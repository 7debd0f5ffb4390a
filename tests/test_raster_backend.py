"""Raster backend (render/backends/raster.py): pyrender's segmentation pass against the ray cast.

Needs pyrender and a headless EGL context (libegl1, libegl-mesa0); no Blender.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
pyrender = pytest.importorskip("pyrender", reason="pyrender (with PyOpenGL's EGL platform) cannot be imported")

from stim3d.render.backends import raster  # noqa: E402
from stim3d.render.backends.raster import render_scene  # noqa: E402
from stim3d.render.settings import RenderSettings  # noqa: E402
from stim3d.scenes.camera import look_at  # noqa: E402
from stim3d.scenes.model import Scene  # noqa: E402
from stim3d.scenes.visibility import measure  # noqa: E402

from .helpers import mixed_scene, random_scene  # noqa: E402

pytestmark = pytest.mark.raster


def settings_for(scene: Scene, **kwargs) -> RenderSettings:
    values = dict(engine="raster", width=scene.camera.width, height=scene.camera.height)
    values.update(kwargs)
    return RenderSettings(**values)


def assert_mask_agreement(rendered: np.ndarray, raycast: np.ndarray, minimum=0.995) -> None:
    assert rendered.shape == raycast.shape and rendered.dtype == np.uint16
    agreement = float(np.mean(rendered == raycast))
    assert agreement >= minimum, f"segmentation agrees with the ray cast on {agreement:.4%}"
    assert set(np.unique(rendered)) == set(np.unique(raycast))


def test_rejects_wrong_engine_and_size():
    scene = mixed_scene()
    with pytest.raises(ValueError, match="raster"):
        render_scene(scene, settings_for(scene, engine="cycles"), 0)
    with pytest.raises(ValueError, match="differs from the camera"):
        render_scene(scene, RenderSettings(engine="raster", width=80, height=60), 0)


def test_segmentation_matches_ray_cast():
    scene = mixed_scene(96, 72)
    out = render_scene(scene, settings_for(scene, depth=True), 0)
    assert out.image.shape == (72, 96, 3) and out.image.dtype == np.uint8
    assert out.blender_version is None and out.render_seconds > 0
    truth = measure(scene)
    assert_mask_agreement(out.instance_map, truth.instance_map)
    same = (truth.instance_map > 0) & (out.instance_map == truth.instance_map)
    relative = np.abs(out.depth[same] - truth.depth[same]) / truth.depth[same]
    assert relative.max() < 1e-3, f"depth differs by up to {relative.max():.2e} (relative)"
    # Colours are the palette's: the red sphere's pixels are red.
    red = out.image[truth.instance_map == 1].astype(float)
    assert red[:, 0].mean() > red[:, 1].mean() + 60


def test_segmentation_matches_ray_cast_on_random_scenes():
    rng = np.random.default_rng(7)
    for _ in range(4):
        scene = random_scene(rng, width=200, height=150, count=10, high_ids=True)
        out = render_scene(scene, settings_for(scene), 0)
        assert_mask_agreement(out.instance_map, measure(scene).instance_map)


@pytest.mark.parametrize("width, height, dx, dy", [(64, 48, 6.5, -4.0), (48, 64, -5.0, 7.25)])
def test_off_centre_principal_point_and_portrait(width, height, dx, dy):
    scene = mixed_scene(width, height)
    scene.camera = scene.camera.model_copy(update={"cx": width / 2 + dx, "cy": height / 2 + dy})
    out = render_scene(scene, settings_for(scene), 0)
    assert_mask_agreement(out.instance_map, measure(scene).instance_map)


def test_rows_top_down_and_sky_is_infinitely_far():
    scene = mixed_scene()
    scene.camera = look_at((0.0, -9.0, 1.2), (0.0, 0.0, 1.2), 96, 72)
    out = render_scene(scene, settings_for(scene, depth=True), 0)
    assert np.all(np.isinf(out.depth[0])) and np.all(np.isfinite(out.depth[-1]))
    assert np.nonzero(out.instance_map == 1)[1].mean() < 96 / 2  # red sphere at x < 0: left half


def test_deterministic_and_nothing_leaks_from_the_previous_scene():
    """Renderers are cached per image size: a scene rendered after another must come out exactly as alone.

    (The raster backend draws no samples, so the seed cannot matter; what can go wrong is state kept by
    the cached renderer: meshes, lights or materials of the previous scene.)
    """
    scene = mixed_scene()
    first = render_scene(scene, settings_for(scene), 0)
    other = mixed_scene()
    other.objects = [o.model_copy(update={"location": (o.location[0] + 0.7, *o.location[1:])}) for o in other.objects[:3]]
    between = render_scene(other, settings_for(other), 0)
    assert between.image.tobytes() != first.image.tobytes()  # a different scene really was drawn in between
    again = render_scene(scene, settings_for(scene), 0)
    assert again.image.tobytes() == first.image.tobytes()
    assert np.array_equal(again.instance_map, first.instance_map)


def test_missing_egl_is_one_clear_line(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("Unable to load EGL library\n(details)")

    monkeypatch.setattr(raster, "_RENDERERS", {})
    monkeypatch.setattr(pyrender, "OffscreenRenderer", broken)
    with pytest.raises(RuntimeError, match="libegl1 and libegl-mesa0") as info:
        raster._renderer(pyrender, 32, 24)
    assert "\n" not in str(info.value)
