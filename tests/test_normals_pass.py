"""The optional normals pass (`render.normals`): camera-space unit normals, OpenCV axes, in normals.npy.

The reference is geometry computed here, not Blender: each pixel's surface point
comes from the ray cast (scenes/visibility.py: the first hit's depth along the
pixel-centre ray), a cube's normal is the face that point lies on (the largest
coordinate in the cube's own frame) turned by the cube's rotation, and a sphere's
normal is (p - c) / r. Both are rotated into camera space with the camera pose in
item.json's `camera_to_world_opencv` convention (scenes/interchange.py).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from stim3d.render.backends.output import RenderOutput
from stim3d.render.batch.folder import CHECKSUMS, NORMALS, verify_item
from stim3d.render.batch.item_folder import write_item_folder
from stim3d.render.settings import RenderSettings
from stim3d.scenes.camera import look_at
from stim3d.scenes.families.shared.stage import counting_lights
from stim3d.scenes.interchange import camera_to_world, intrinsics
from stim3d.scenes.model import Scene, Stage
from stim3d.scenes.primitives import axis_angle_quat, quat_to_matrix
from stim3d.scenes.visibility import measure
from tests.helpers import resting

WIDTH, HEIGHT = 96, 72


def _scene() -> Scene:
    cube = resting(1, "cube", "blue", -1.2, 0.0, 1.6, rotation=axis_angle_quat((0, 0, 1), 30))
    sphere = resting(2, "sphere", "red", 1.4, 0.3, 1.6)
    camera = look_at((1.0, -7.0, 2.0), (0.0, 0.0, 0.6), WIDTH, HEIGHT)  # the horizon in view
    return Scene(camera=camera, lights=counting_lights(), stage=Stage(world_strength=0.3), objects=[cube, sphere])


def _angles_deg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    cos = np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")
    from stim3d.render.backends.blender import render_scene

    scene = _scene()
    settings = RenderSettings(engine="cycles", width=WIDTH, height=HEIGHT, samples=1, denoise=False, normals=True)
    return scene, render_scene(scene, settings, 0, tmp_path_factory.mktemp("normals")), measure(scene)


def _rays(scene: Scene) -> np.ndarray:
    """(H, W, 3) world directions of the pixel-centre rays, scaled to unit length along the camera axis."""
    rows, cols = np.mgrid[0:HEIGHT, 0:WIDTH]
    pixels = np.stack([cols + 0.5, rows + 0.5, np.ones_like(rows, dtype=float)], axis=-1)  # centres, item.json's pixels
    return (pixels @ np.linalg.inv(intrinsics(scene.camera)).T) @ camera_to_world(scene.camera, "opencv")[:3, :3].T


def _world_points(scene: Scene, depth: np.ndarray) -> np.ndarray:
    """World points of the ray cast's hits (depth along the camera axis; no hit gives NaN)."""
    return _rays(scene) * np.where(np.isfinite(depth), depth, np.nan)[..., None] + np.asarray(scene.camera.location)


def _to_camera(scene: Scene, world: np.ndarray) -> np.ndarray:
    return world @ camera_to_world(scene.camera, "opencv")[:3, :3]  # R^T n as row vectors


@pytest.mark.bpy
def test_cube_pixels_carry_their_faces_normal_in_camera_space(rendered):
    scene, out, truth = rendered
    cube = scene.objects[0]
    assert out.normals is not None and out.normals.shape == (HEIGHT, WIDTH, 3) and out.normals.dtype == np.float32
    mine = (truth.instance_map == cube.id) & (out.instance_map == cube.id)
    assert mine.sum() > 150
    rotation = quat_to_matrix(cube.rotation_quat)
    local = (_world_points(scene, truth.depth)[mine] - np.asarray(cube.location)) @ rotation / (np.asarray(cube.dimensions) / 2)
    axis = np.argmax(np.abs(local), axis=1)  # the face the hit lies on: its largest coordinate in the cube's frame
    face = np.zeros_like(local)
    face[np.arange(len(axis)), axis] = np.sign(local[np.arange(len(axis)), axis])
    expected = _to_camera(scene, face @ rotation.T)
    assert len({tuple(f) for f in face}) >= 2  # at least two faces in view: not one constant normal
    error = _angles_deg(out.normals[mine], expected)
    assert error.max() < 0.5, f"cube normals off by up to {error.max():.2f} deg"  # measured: 0.01 deg (float32)
    assert np.all(expected[:, 2] < 0) and np.all(out.normals[mine][:, 2] < 0)  # facing the camera: z < 0 (OpenCV)


@pytest.mark.bpy
def test_sphere_pixels_carry_the_radial_direction_and_the_sky_is_nan(rendered):
    scene, out, truth = rendered
    sphere = scene.objects[1]
    mine = (truth.instance_map == sphere.id) & (out.instance_map == sphere.id)
    assert mine.sum() > 150
    points = _world_points(scene, truth.depth)[mine]
    expected = _to_camera(scene, (points - np.asarray(sphere.location)) / (sphere.dimensions[0] / 2))
    error = _angles_deg(out.normals[mine], expected)
    # A smooth-shaded mesh: interpolated vertex normals differ from the true sphere's (measured: median 0.03 deg,
    # at most 1.2 deg, at silhouette pixels where the mesh and the ray cast part most).
    assert np.median(error) < 0.3 and error.max() < 3.0, f"sphere normals off by median {np.median(error):.2f} deg"
    assert np.allclose(np.linalg.norm(out.normals[mine], axis=1), 1.0, atol=1e-3)
    # No object hit: a ray going up meets nothing (NaN); one going down well inside the ground square (z = 0,
    # ground_size wide, centred on the origin) meets the ground, whose normal is world +Z.
    rays = _rays(scene)
    upward = rays[..., 2] > 0
    on_plane = np.asarray(scene.camera.location) - rays * (scene.camera.location[2] / np.where(upward, -1.0, rays[..., 2]))[..., None]
    inside = np.abs(on_plane[..., :2]).max(axis=-1) < 0.45 * scene.stage.ground_size
    sky = ~np.isfinite(truth.depth) & upward
    ground = ~np.isfinite(truth.depth) & ~upward & inside & (out.instance_map == 0)
    assert sky.sum() > 100 and ground.sum() > 100
    assert np.all(np.isnan(out.normals[sky]))
    assert _angles_deg(out.normals[ground], _to_camera(scene, np.array([0.0, 0.0, 1.0]))).max() < 1.0


def test_normals_are_written_as_float16_and_checksummed_and_absent_unless_asked(tmp_path):
    from stim3d.scenes.families.base import Frame
    from stim3d.scenes.items import make_item

    item = make_item("shape_count", {"n_shape_types": 2, "max_instances": 2}, [1, 0, 0], "x", Frame(64, 48))
    image = np.zeros((48, 64, 3), np.uint8)
    normals = np.zeros((48, 64, 3), np.float32)
    normals[..., 2] = -1.0
    normals[0] = np.nan
    with_normals = RenderOutput(image, None, None, None, 0.0, normals=normals)
    folder = write_item_folder(tmp_path / "a", item, with_normals, np.zeros((48, 64), np.uint16), {})
    saved = np.load(folder / NORMALS)
    assert saved.dtype == np.float16 and saved.shape == (48, 64, 3)
    assert np.all(np.isnan(saved[0])) and np.all(saved[1:, :, 2] == -1)
    assert NORMALS in json.loads((folder / CHECKSUMS).read_text()) and verify_item(folder) is None
    plain = write_item_folder(tmp_path / "b", item, RenderOutput(image, None, None, None, 0.0),
                              np.zeros((48, 64), np.uint16), {})
    assert not (plain / NORMALS).exists()
    assert (plain / "item.json").read_bytes() == (folder / "item.json").read_bytes()


def test_normals_are_off_by_default_keep_old_hashes_and_need_cycles():
    assert "normals" not in RenderSettings().model_dump()  # configs and resume keys made before it are unchanged
    assert RenderSettings(normals=True).model_dump()["normals"] is True
    with pytest.raises(ValueError, match="the normals pass needs engine cycles"):
        RenderSettings(engine="workbench", normals=True)


def test_a_normals_pass_without_cycles_is_refused_in_one_line(tmp_path, capsys):
    from stim3d.cli import main

    config = tmp_path / "c.yaml"
    config.write_text("seed: 1\nrender: {engine: workbench, normals: true}\ntasks:\n  - {family: shape_count, count: 1}\n")
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "render.normals" in err[0] and "needs engine cycles" in err[0]


@pytest.mark.bpy
def test_render_normals_writes_normals_npy_into_each_item_folder(tmp_path):
    from stim3d.cli import main

    config = tmp_path / "c.yaml"
    config.write_text("seed: 2\nrender: {engine: cycles, samples: 1, denoise: false, width: 48, height: 36}\n"
                      "tasks:\n  - {family: shape_count, count: 1}\n")
    assert main(["render", str(config), "--out", str(tmp_path / "out"), "--normals", "--quiet"]) == 0
    (folder,) = (tmp_path / "out" / "items").iterdir()
    normals = np.load(folder / NORMALS)
    assert normals.shape == (36, 48, 3) and normals.dtype == np.float16
    hit = np.isfinite(normals).all(axis=-1)
    assert hit.sum() > 100 and np.allclose(np.linalg.norm(normals[hit].astype(np.float32), axis=-1), 1.0, atol=2e-3)
    assert NORMALS in json.loads((folder / CHECKSUMS).read_text()) and verify_item(folder) is None
