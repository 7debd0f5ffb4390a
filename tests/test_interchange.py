"""Camera matrices, 3D boxes and the CLEVR export: what other tools read, checked against hand-computed values
and against the rendered item's own measurements."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import numpy as np
import pytest

import stim3d
from stim3d.export.clevr import clevr_scene
from stim3d.scenes.camera import look_at
from stim3d.scenes.interchange import box_3d, camera_matrices, project, with_interchange
from tests.helpers import obj, scene

# Camera 10 m in front of the origin on -Y, level, 64x48, 40 mm on a 36 mm sensor: fx = 40 / 36 * 64.
CAMERA = look_at((0.0, -10.0, 0.0), (0.0, 0.0, 0.0), 64, 48)
FX = 40 / 36 * 64


def test_intrinsics_and_both_poses_match_hand_computed_values():
    matrices = camera_matrices(CAMERA)
    assert np.allclose(matrices.K, [[FX, 0, 32], [0, FX, 24], [0, 0, 1]], atol=1e-5)
    blender = np.array(matrices.camera_to_world_blender)
    opencv = np.array(matrices.camera_to_world_opencv)
    # Blender: camera x = world +X, y (up) = world +Z, z = backwards = world -Y.
    assert np.allclose(blender[:3, :3], [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=1e-6)
    # OpenCV: x = +X, y (down) = -Z, z (forward) = +Y.
    assert np.allclose(opencv[:3, :3], [[1, 0, 0], [0, 0, 1], [0, -1, 0]], atol=1e-6)
    assert np.allclose(blender[:3, 3], [0, -10, 0]) and np.allclose(opencv[3], [0, 0, 0, 1])


def test_points_project_through_k_and_the_pose_where_hand_computation_puts_them():
    # 1 m right of the origin: u = 32 + FX / 10; 1 m up: v = 24 - FX / 10; both 10 m deep.
    uvd = project(CAMERA, np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
    assert np.allclose(uvd, [[32 + FX / 10, 24, 10], [32, 24 - FX / 10, 10]], atol=1e-4)


def test_a_rotated_box_has_its_dimensions_between_its_corners():
    rotated = obj(1, "cube", 1.0, 2.0, 3.0).model_copy(update={"rotation_quat": (np.cos(np.pi / 8), 0, 0, np.sin(np.pi / 8))})
    box = box_3d(rotated)
    corners = np.array(box.corners)
    assert np.allclose(corners.mean(axis=0), rotated.location, atol=1e-6)
    # corners 0 and 4 differ only in the sign of the box's own x: an edge of length dimensions[0], turned 45 degrees.
    edge = corners[4] - corners[0]
    assert np.isclose(np.linalg.norm(edge), rotated.dimensions[0], atol=1e-5)
    assert np.isclose(edge[0], edge[1], atol=1e-5)


def test_composed_items_carry_no_matrices_and_finished_items_do():
    item = stim3d.compose("shape_count", {"n_shape_types": 2}, seed=3, width=64, height=48)
    assert "camera_matrices" not in item.to_json() and "boxes_3d" not in item.to_json()  # composed bytes pinned
    finished = with_interchange(item)
    data = json.loads(finished.to_json())
    assert len(data["ground_truth"]["boxes_3d"]) == len(item.scene.objects)
    assert type(item).model_validate_json(finished.to_json()) == finished  # item.json round-trips


def test_clevr_relationships_follow_the_camera_left_right_front_behind():
    # Seen from -Y: object 1 on the left (x = -2), 2 on the right (x = +2), 3 between them in x and behind (y = +3).
    # CLEVR's rule (offset along the direction > 0.2 m): 3 is right of 1 and left of 2.
    objects = [obj(1, "cube", 0.5, -2.0, 0.0), obj(2, "sphere", 0.5, 2.0, 0.0), obj(3, "cone", 1.2, 0.0, 3.0)]
    item = stim3d.compose("shape_count", {}, seed=1, width=64, height=48)
    item = item.model_copy(update={"scene": scene(objects, camera=look_at((0.0, -10.0, 4.0), (0, 0, 0), 64, 48))})
    clevr = clevr_scene(item, 0, "x.png", "test")
    rel = clevr["relationships"]
    assert rel["left"] == [[], [0, 2], [0]] and rel["right"] == [[1, 2], [], [1]]
    assert rel["behind"] == [[2], [2], []] and rel["front"] == [[], [], [0, 1]]
    assert [o["size"] for o in clevr["objects"]] == ["small", "small", "large"]
    xs = [o["pixel_coords"][0] for o in clevr["objects"]]
    assert xs[0] < 32 < xs[1]  # left of the image centre and right of it


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """A two-item Workbench batch (64x48), rendered once for the export round trips."""
    if importlib.util.find_spec("bpy") is None:
        pytest.skip("bpy is not installed")
    folder = tmp_path_factory.mktemp("interchange")
    config = folder / "c.yaml"
    config.write_text("seed: 5\nrender: {engine: workbench, width: 64, height: 48}\n"
                      "tasks:\n  - family: shape_count\n    count: 2\n")
    done = subprocess.run([sys.executable, "-m", "stim3d", "render", str(config), "--out", str(folder / "b"), "--quiet"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return folder / "b"


def export(batch, fmt, dest):
    done = subprocess.run([sys.executable, "-m", "stim3d", "export", fmt, str(batch), "--to", str(dest)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def projected_box(points_uv: np.ndarray) -> tuple[float, float, float, float]:
    return points_uv[0].min(), points_uv[1].min(), points_uv[0].max(), points_uv[1].max()


@pytest.mark.bpy
def test_rendered_items_export_to_clevr_and_their_boxes_contain_the_measured_pixels(rendered, tmp_path):
    export(rendered, "clevr", tmp_path / "clevr")
    scenes = json.loads((tmp_path / "clevr" / "CLEVR_test_scenes.json").read_text())["scenes"]  # one file per split
    assert len(scenes) == 2
    for clevr in scenes:
        item = json.loads((rendered / "items" / clevr["item_id"] / "item.json").read_text())
        truth = item["ground_truth"]
        K, pose = np.array(truth["camera_matrices"]["K"]), np.array(truth["camera_matrices"]["camera_to_world_opencv"])
        world_to_camera = np.linalg.inv(pose)
        measured = {t["id"]: t for t in truth["objects"]}
        assert [o["id"] for o in clevr["objects"]] == [o["id"] for o in item["scene"]["objects"]]
        for entry, box in zip(clevr["objects"], truth["boxes_3d"]):
            local = world_to_camera @ np.r_[entry["3d_coords"], 1.0]
            u, v, w = K @ local[:3]
            assert entry["pixel_coords"][:2] == [round(u / w), round(v / w)]
            # The ray caster's amodal box (Blender's object-index pass agrees with it) lies inside the
            # projection of the 3D box's corners, widened by one pixel for the pixel grid.
            corners = (world_to_camera @ np.c_[box["corners"], np.ones(8)].T)[:3]
            pixels = K @ corners
            x0, y0, x1, y1 = projected_box(pixels[:2] / pixels[2])
            amodal = measured[box["id"]]["bbox_amodal"]
            if amodal is not None:
                assert amodal[0] >= np.floor(x0) - 1 and amodal[2] <= np.ceil(x1) + 1
                assert amodal[1] >= np.floor(y0) - 1 and amodal[3] <= np.ceil(y1) + 1


def ply_vertices(path) -> np.ndarray:
    lines = path.read_text().splitlines()
    count = int(next(line for line in lines if line.startswith("element vertex")).split()[-1])
    start = lines.index("end_header") + 1
    return np.array([[float(x) for x in line.split()[:3]] for line in lines[start:start + count]])  # x y z (nx ny nz)


@pytest.mark.bpy
def test_rendered_items_export_to_bop_and_read_back(rendered, tmp_path):
    """BOP's models posed by scene_gt and projected by cam_K cover each object's measured amodal box, and the
    visible masks hold exactly the measured visible pixels."""
    from PIL import Image

    export(rendered, "bop", tmp_path / "bop")
    scene_items = json.loads((tmp_path / "bop" / "scene_items.json").read_text())
    assert len(scene_items) == 2
    for where, source in scene_items.items():
        scene = tmp_path / "bop" / where
        item = json.loads((rendered / "items" / source["item_id"] / "item.json").read_text())
        camera = json.loads((scene / "scene_camera.json").read_text())["0"]
        gts = json.loads((scene / "scene_gt.json").read_text())["0"]
        infos = json.loads((scene / "scene_gt_info.json").read_text())["0"]
        K = np.array(camera["cam_K"]).reshape(3, 3)
        truths = {t["id"]: t for t in item["ground_truth"]["objects"]}
        for k, (scene_object, gt, info) in enumerate(zip(item["scene"]["objects"], gts, infos)):
            truth = truths[scene_object["id"]]
            visible = np.asarray(Image.open(scene / "mask_visib" / f"000000_{k:06d}.png")) > 0
            assert int(visible.sum()) == info["px_count_visib"] == round(truth["visible_px"])
            model = ply_vertices(tmp_path / "bop" / "models" / f"obj_{gt['obj_id']:06d}.ply")
            in_camera = model @ np.array(gt["cam_R_m2c"]).reshape(3, 3).T + np.array(gt["cam_t_m2c"])
            pixels = in_camera @ K.T
            # cam_K is stim3d's K, as bop_toolkit's renderers read it: pixel i spans [i, i + 1).
            x0, y0, x1, y1 = projected_box(pixels[:, :2].T / pixels[:, 2])
            bx, by, bw, bh = info["bbox_obj"]  # bop_toolkit's boxes: w = x_max - x_min (pixel indices)
            if bw >= 0:
                assert bx >= np.floor(x0) - 1 and bx + bw <= np.ceil(x1) + 1
                assert by >= np.floor(y0) - 1 and by + bh <= np.ceil(y1) + 1
                # and tightly: the projected model is no more than a pixel wider than the measured box
                assert x1 - x0 <= bw + 2.5 and y1 - y0 <= bh + 2.5 or truth["truncation"] > 0
