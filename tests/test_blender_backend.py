"""Blender backend (render/backends/blender.py): datablocks, passes, colour, determinism, Workbench.

Tiny renders (64x48 to 160x120, 1-16 samples); the whole file runs in well under a
minute on 2 cores. The ray-cast instance map (scenes.visibility.measure) is the
reference for Blender's object-index and depth passes.
"""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")

from stim3d.render.backends import blender  # noqa: E402
from stim3d.render.backends.blender import render_scene  # noqa: E402
from stim3d.render.settings import RenderSettings  # noqa: E402
from stim3d.scenes.camera import look_at  # noqa: E402
from stim3d.scenes.colors import PALETTE, delta_e_srgb, linear_to_srgb, nearest_palette_color, srgb_to_linear  # noqa: E402
from stim3d.scenes.families.shared.stage import counting_lights  # noqa: E402
from stim3d.scenes.model import Scene, Stage  # noqa: E402
from stim3d.scenes.primitives import unit_mesh  # noqa: E402
from stim3d.scenes.visibility import measure  # noqa: E402

from .helpers import mixed_scene, random_scene, resting  # noqa: E402

pytestmark = pytest.mark.bpy


# -- scene builders ---------------------------------------------------------------------------


def settings_for(scene: Scene, **kwargs) -> RenderSettings:
    values = dict(engine="cycles", width=scene.camera.width, height=scene.camera.height, samples=4, denoise=False)
    values.update(kwargs)
    return RenderSettings(**values)


def check_output(out, scene: Scene) -> None:
    h, w = scene.camera.height, scene.camera.width
    assert out.image.shape == (h, w, 3) and out.image.dtype == np.uint8
    assert out.blender_version == bpy.app.version_string
    assert out.render_seconds > 0


def assert_mask_agreement(rendered: np.ndarray, raycast: np.ndarray, minimum=0.995) -> float:
    assert rendered.shape == raycast.shape and rendered.dtype == np.uint16
    agreement = float(np.mean(rendered == raycast))
    differing = int(np.sum(rendered != raycast))
    assert agreement >= minimum, f"object-index pass agrees with the ray cast on {agreement:.4%} ({differing} px differ)"
    ids_rendered = set(np.unique(rendered)) - {0}
    ids_raycast = set(np.unique(raycast)) - {0}
    assert ids_rendered == ids_raycast
    return agreement


# -- tests that need no render ----------------------------------------------------------------


def test_rejects_wrong_engine_and_size(tmp_path):
    scene = mixed_scene()
    with pytest.raises(ValueError, match="engine"):
        render_scene(scene, settings_for(scene, engine="raster"), 0, tmp_path)
    with pytest.raises(ValueError, match="differs from the camera"):
        render_scene(scene, RenderSettings(width=80, height=60), 0, tmp_path)


def test_datablocks_follow_the_scene():
    from stim3d.render.backends import blender_scene

    scene = mixed_scene()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene_bpy = bpy.context.scene
    blender_scene.build(scene_bpy, scene)
    for obj in scene.objects:
        blender_obj = bpy.data.objects[f"{obj.id:03d}_{obj.shape}_{obj.color.name}"]
        assert blender_obj.pass_index == obj.id
        assert blender_obj.rotation_mode == "QUATERNION"
        assert np.allclose(tuple(blender_obj.rotation_quaternion), obj.rotation_quat, atol=1e-6)
        assert np.allclose(tuple(blender_obj.location), obj.location, atol=1e-6)
        assert np.allclose(tuple(blender_obj.scale), (1, 1, 1))
        mesh, prim = blender_obj.data, unit_mesh(obj.shape)
        coords = np.zeros(len(mesh.vertices) * 3, np.float32)
        mesh.vertices.foreach_get("co", coords)
        assert np.allclose(coords.reshape(-1, 3), prim.vertices * obj.size, atol=1e-6)
        loops = np.zeros(len(mesh.loops), np.int32)
        mesh.loops.foreach_get("vertex_index", loops)
        assert np.array_equal(loops.reshape(-1, 3), prim.faces)
        smooth = np.zeros(len(mesh.polygons), bool)
        mesh.polygons.foreach_get("use_smooth", smooth)
        assert np.array_equal(smooth, prim.smooth)
        material = mesh.materials[0]
        bsdf = material.node_tree.nodes["Principled BSDF"]
        assert np.allclose(tuple(bsdf.inputs["Base Color"].default_value)[:3], srgb_to_linear(obj.color.srgb), atol=1e-6)
        assert np.allclose(tuple(material.diffuse_color)[:3], srgb_to_linear(obj.color.srgb), atol=1e-6)
    ground = bpy.data.objects["ground"]
    assert ground.pass_index == 0
    assert np.allclose(np.ptp([v.co[0] for v in ground.data.vertices]), scene.stage.ground_size)
    camera = scene_bpy.camera.data
    assert camera.sensor_fit == "AUTO" and camera.clip_end >= 1000
    assert (scene_bpy.render.resolution_x, scene_bpy.render.resolution_y) == (64, 48)
    area = [o for o in bpy.data.objects if o.type == "LIGHT"]
    assert len(area) == 2 and all(o.data.type == "AREA" and o.data.shape == "SQUARE" for o in area)
    assert sorted(o.data.energy for o in area) == [150.0, 600.0]


# -- Cycles -----------------------------------------------------------------------------------


def test_object_index_pass_matches_ray_cast(tmp_path):
    scene = mixed_scene(96, 72)
    out = render_scene(scene, settings_for(scene), 3, tmp_path)
    check_output(out, scene)
    assert_mask_agreement(out.instance_map, measure(scene).instance_map)


def test_object_index_pass_matches_ray_cast_on_random_scenes(tmp_path):
    rng = np.random.default_rng(2024)
    for _ in range(3):
        scene = random_scene(rng)
        out = render_scene(scene, settings_for(scene, samples=1), 1, tmp_path)
        assert_mask_agreement(out.instance_map, measure(scene).instance_map)


@pytest.mark.parametrize("width, height, dx, dy", [(64, 48, 6.5, -4.0), (48, 64, -5.0, 7.25)])
def test_off_centre_principal_point_and_portrait(tmp_path, width, height, dx, dy):
    scene = mixed_scene(width, height)
    scene.camera = scene.camera.model_copy(update={"cx": width / 2 + dx, "cy": height / 2 + dy})
    out = render_scene(scene, settings_for(scene, samples=1), 0, tmp_path)
    assert_mask_agreement(out.instance_map, measure(scene).instance_map)


def test_depth_pass_matches_ray_cast_and_rows_run_top_down(tmp_path):
    # Horizontal view: sky in the upper half, ground below, objects in the middle.
    scene = mixed_scene()
    scene.camera = look_at((0.0, -9.0, 1.2), (0.0, 0.0, 1.2), 96, 72)
    out = render_scene(scene, settings_for(scene, depth=True), 3, tmp_path)
    assert out.depth is not None and out.depth.shape == (72, 96) and out.depth.dtype == np.float32
    truth = measure(scene)
    assert_mask_agreement(out.instance_map, truth.instance_map)
    same = (truth.instance_map > 0) & (out.instance_map == truth.instance_map)
    assert same.sum() > 200
    relative = np.abs(out.depth[same] - truth.depth[same]) / truth.depth[same]
    assert relative.max() < 1e-3, f"depth differs by up to {relative.max():.2e} (relative)"
    # Row 0 is the image top: sky (no hit, inf depth, world colour); the bottom row is ground.
    assert np.all(np.isinf(out.depth[0])) and np.all(np.isfinite(out.depth[-1]))
    sky = linear_to_srgb(srgb_to_linear(scene.stage.world_srgb) * scene.stage.world_strength) * 255
    assert np.abs(out.image[0].astype(float) - sky).max() <= 3
    # Left is left: the red sphere (x < 0) lies in the left half of the image.
    columns = np.nonzero(out.instance_map == 1)[1]
    assert columns.mean() < 96 / 2


def test_palette_colours_render_nearest_their_own_name(tmp_path):
    names = list(PALETTE)
    shapes = ("cube", "sphere", "cylinder")
    objects = [
        resting(i + 1, shapes[i % 3], name, -3.3 + (i % 4) * 2.2, 1.2 - (i // 4) * 2.4, 1.1,
                finish="glossy" if i % 2 else "matte")
        for i, name in enumerate(names)
    ]
    camera = look_at((0.0, -9.0, 6.0), (0.0, 0.0, 0.3), 128, 96)
    scene = Scene(camera=camera, lights=counting_lights(), stage=Stage(world_strength=0.3), objects=objects)
    out = render_scene(scene, settings_for(scene, samples=16, denoise=True), 5, tmp_path)
    truth = measure(scene).instance_map
    assert_mask_agreement(out.instance_map, truth)
    report = []
    for obj in objects:
        pixels = out.image[truth == obj.id]
        assert len(pixels) > 100
        measured = np.median(pixels, axis=0) / 255.0
        delta = float(delta_e_srgb(measured, obj.color.srgb))
        report.append(f"{obj.color.name}: {np.round(measured * 255).astype(int)} dE2000={delta:.1f}")
        assert nearest_palette_color(measured) == obj.color.name, "; ".join(report)


def test_same_seed_same_pixels(tmp_path):
    scene = mixed_scene()
    first = render_scene(scene, settings_for(scene, samples=8), 11, tmp_path / "a")
    second = render_scene(scene, settings_for(scene, samples=8), 11, tmp_path / "b")
    other = render_scene(scene, settings_for(scene, samples=8), 12, tmp_path / "c")
    assert first.image.tobytes() == second.image.tobytes()
    assert np.array_equal(first.instance_map, second.instance_map)
    assert first.image.tobytes() != other.image.tobytes()  # the seed reaches Cycles


def test_stdout_stays_clean(tmp_path, capfd):
    scene = mixed_scene()
    render_scene(scene, settings_for(scene, samples=1), 0, tmp_path)
    captured = capfd.readouterr()
    assert "Fra:" not in captured.out and "Saved" not in captured.out
    assert (tmp_path / blender.LOG_NAME).exists()


def test_gpu_request_without_gpu_is_a_clear_error(tmp_path):
    scene = mixed_scene()
    try:
        out = render_scene(scene, settings_for(scene, samples=1, device="gpu"), 0, tmp_path)
    except RuntimeError as error:
        assert str(error) == "GPU requested but no CUDA/OptiX device found"
    else:  # a machine with a GPU renders
        check_output(out, scene)
    # The next CPU render is unaffected (preferences are reset with the scene).
    check_output(render_scene(scene, settings_for(scene, samples=1), 0, tmp_path), scene)


# -- Workbench --------------------------------------------------------------------------------


def test_workbench_preview(tmp_path):
    scene = mixed_scene()
    settings = settings_for(scene, engine="workbench", depth=True)
    out = render_scene(scene, settings, 0, tmp_path)
    check_output(out, scene)
    assert out.instance_map is None  # Blender 5.0's Workbench has no Object Index pass
    truth = measure(scene)
    objects = truth.instance_map > 0
    # Objects are visible and coloured: the red sphere's pixels are reddish.
    red = out.image[truth.instance_map == 1].astype(float)
    assert red[:, 0].mean() > red[:, 1].mean() + 40
    relative = np.abs(out.depth[objects] - truth.depth[objects]) / truth.depth[objects]
    assert np.median(relative) < 1e-3
    # Speed is measured in bench/, not asserted here (a loaded machine would make this flaky).
