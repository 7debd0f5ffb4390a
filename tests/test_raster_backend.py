"""Raster backend (render/raster.py): pyrender's segmentation pass against the ray cast.

Needs pyrender and a headless EGL context (libegl1, libegl-mesa0); no Blender.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
pyrender = pytest.importorskip("pyrender", reason="pyrender (with PyOpenGL's EGL platform) cannot be imported")

from render import raster  # noqa: E402
from render.raster import render_scene  # noqa: E402
from scenes.camera import look_at  # noqa: E402
from scenes.colors import PALETTE, named  # noqa: E402
from scenes.model import Light, RenderSettings, Scene, SceneObject, Stage  # noqa: E402
from scenes.primitives import axis_angle_quat, unit_dimensions, world_vertices  # noqa: E402
from scenes.visibility import measure  # noqa: E402

pytestmark = pytest.mark.raster

SHAPES = ("sphere", "cube", "cone", "cylinder", "torus")


def resting(object_id, shape, color, x, y, size=1.0, rotation=(1.0, 0.0, 0.0, 0.0)) -> SceneObject:
    lowest = world_vertices(shape, size, (0.0, 0.0, 0.0), rotation)[:, 2].min()
    return SceneObject(
        id=object_id,
        shape=shape,
        size=size,
        dimensions=tuple(d * size for d in unit_dimensions(shape)),
        location=(x, y, -float(lowest)),
        rotation_quat=rotation,
        color=named(color),
    )


def lights() -> list[Light]:
    return [
        Light(location=(-3.0, -4.0, 7.0), rotation_quat=axis_angle_quat((1.0, -0.6, 0.0), 35.0), size=4.0, power_w=600.0),
        Light(location=(5.0, -3.0, 4.0), rotation_quat=axis_angle_quat((1.0, 0.8, 0.0), 50.0), size=3.0, power_w=150.0),
    ]


def mixed_scene(width=64, height=48) -> Scene:
    objects = [
        resting(1, "sphere", "red", -1.6, 1.4, 1.2),
        resting(2, "cube", "blue", -1.3, 0.0, 0.9, rotation=axis_angle_quat((0, 0, 1), 30)),
        resting(3, "cone", "green", 2.0, 0.2, 1.0),
        resting(4, "torus", "yellow", 0.4, -1.6, 1.3, rotation=axis_angle_quat((1, 0, 0), 25)),
        resting(5, "cylinder", "purple", 1.0, 1.8, 0.8, rotation=axis_angle_quat((1, 0, 0), 90)),
    ]
    camera = look_at((0.0, -8.0, 5.0), (0.0, 0.0, 0.3), width, height)
    return Scene(camera=camera, lights=lights(), stage=Stage(world_strength=0.3), objects=objects)


def random_scene(rng: np.random.Generator, width=200, height=150, count=10) -> Scene:
    objects = []
    for object_id in range(1, count + 1):
        shape = str(rng.choice(SHAPES))
        rotation = axis_angle_quat((0, 0, 1), float(rng.uniform(0, 360)))
        if rng.random() < 0.3:
            rotation = axis_angle_quat(rng.normal(size=3), float(rng.uniform(0, 180)))
        objects.append(
            resting(object_id + 300 * (object_id % 2), shape, str(rng.choice(list(PALETTE))),  # ids above 255 too
                    float(rng.uniform(-3, 3)), float(rng.uniform(-2, 2.5)), float(rng.uniform(0.5, 1.4)), rotation)
        )
    camera = look_at((float(rng.uniform(-2, 2)), -8.0, float(rng.uniform(3, 6))), (0.0, 0.0, 0.3), width, height)
    return Scene(camera=camera, lights=lights(), objects=objects)


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
        scene = random_scene(rng)
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


def test_deterministic():
    scene = mixed_scene()
    first, second = (render_scene(scene, settings_for(scene), seed) for seed in (0, 1))
    assert first.image.tobytes() == second.image.tobytes()
    assert np.array_equal(first.instance_map, second.instance_map)


def test_missing_egl_is_one_clear_line(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("Unable to load EGL library\n(details)")

    monkeypatch.setattr(raster, "_RENDERERS", {})
    monkeypatch.setattr(pyrender, "OffscreenRenderer", broken)
    with pytest.raises(RuntimeError, match="libegl1 and libegl-mesa0") as info:
        raster._renderer(pyrender, 32, 24)
    assert "\n" not in str(info.value)
