"""BOP export: the BOP-scenewise layout bop_toolkit reads, one BOP scene per item (docs/exports.md).

    DEST/camera.json                  cx, cy, fx, fy, width, height, depth_scale (the first item's camera)
    DEST/models/obj_NNNNNN.ply        one model per distinct (shape, size), mm, with normals (bop_models.py)
    DEST/models/models_info.json      diameter and 3D box per model
    DEST/test_targets_bop19.json      per image of the `test` split, each object with visib_fract >= 0.1
    DEST/scene_items.json             `<split>/<scene>` -> the stim3d item (batch, item_id, look, materials)
    DEST/<split>/<scene:06d>/         scene ids from 1 within each split, image id 0:
        rgb/000000.png                the item's image.png
        depth/000000.png              16-bit, depth along the camera axis in units of depth_scale mm (with depth.npy)
        mask/000000_<k:06d>.png       the k-th object of scene_gt alone (amodal, in the frame): 255 where it is
        mask_visib/000000_<k:06d>.png 255 where the k-th object is visible (the item's mask.png)
        scene_camera.json             cam_K, cam_R_w2c, cam_t_w2c (mm), depth_scale
        scene_gt.json                 obj_id, cam_R_m2c, cam_t_m2c (mm): model to OpenCV camera
        scene_gt_info.json            bbox_obj, bbox_visib, px_count_all, px_count_valid, px_count_visib, visib_fract

Amodal masks are exact, no renderer: each object is ray-cast alone through the pixel
centres (scenes/visibility.py `cast_object`, the rays stim3d's amodal_px counts).
scene_gt_info follows bop_toolkit's calc_gt_info.py script: `px_count_all` counts the
whole silhouette, the part outside the frame too; `px_count_valid` its in-frame pixels
with a depth (all of them when the batch has no depth); `px_count_visib` mask_visib's
pixels; `visib_fract = px_count_visib / px_count_all`; boxes are [x, y, w, h] with
w = x_max - x_min (misc.calc_2d_bbox: pixel indices, so a one-pixel box has w = 0),
bbox_obj not clipped to the frame, both [-1, -1, -1, -1] when nothing is visible.
`cam_K` is stim3d's K unchanged (scenes/interchange.py), because bop_toolkit's renderers read K so:
their OpenGL projection (renderer_vispy.py `_calc_calib_proj`) puts a point at window coordinate
u = fx x / z + cx and rasterises pixel i where its centre i + 0.5 is covered, so K's origin is the
top-left corner of the top-left pixel, as stim3d's (a K with pixel centres on integers, cx - 0.5,
put every mask half a pixel off under calc_gt_masks). `visib_fract` is at most 1: the visible mask is
the rendered mask.png, the amodal count a ray cast, and the two can differ by an edge pixel. Depth beyond
what 16 bits hold (65.535 m at depth_scale 1) and background are 0: BOP's "no depth".
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from stim3d.export.bop_models import MM, model_key, model_ply
from stim3d.export.common import (
    ExportedItem,
    ExportReport,
    export_folder,
    exportable_items,
    look_name,
    object_materials,
)
from stim3d.files import inside
from stim3d.render.batch.folder import DEPTH, IMAGE
from stim3d.render.batch.item_folder import load_mask, save_png16
from stim3d.scenes.camera import geometry
from stim3d.scenes.interchange import camera_to_world, intrinsics
from stim3d.scenes.model import Item
from stim3d.scenes.primitives import quat_to_matrix
from stim3d.scenes.visibility import cast_object

DEPTH_SCALE = 1.0  # depth PNG unit in mm: 1 mm steps up to 65.535 m
VISIB_GT_MIN = 0.1  # the BOP'19 localisation targets' visibility threshold (bop_toolkit's eval scripts)
TARGETS_SPLIT = "test"
IM = "000000"  # every BOP scene here holds one image, id 0


def bop_box(xs: np.ndarray, ys: np.ndarray) -> list[int]:
    """bop_toolkit's misc.calc_2d_bbox: [x_min, y_min, x_max - x_min, y_max - y_min]; [-1]*4 for no pixels."""
    if len(xs) == 0:
        return [-1, -1, -1, -1]
    return [int(xs.min()), int(ys.min()), int(xs.max() - xs.min()), int(ys.max() - ys.min())]


def amodal_masks(item: Item) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per object of the scene: its in-frame silhouette (bool H x W) and the columns and rows of every ray
    that hits it alone, in the frame or not."""
    cam = item.scene.camera
    rays = geometry(cam)
    out = []
    for obj in item.scene.objects:
        cast = cast_object(obj, rays, 1)
        inside_frame = (cast.gx >= 0) & (cast.gx < cam.width) & (cast.gy >= 0) & (cast.gy < cam.height)
        mask = np.zeros((cam.height, cam.width), dtype=bool)
        mask[cast.gy[inside_frame], cast.gx[inside_frame]] = True
        out.append((mask, cast.gx, cast.gy))
    return out


def depth_png(depth_m: np.ndarray) -> np.ndarray:
    """Depth in metres -> BOP's uint16 depth in DEPTH_SCALE mm units, 0 where none (background, too far)."""
    units = np.where(np.isfinite(depth_m), depth_m * MM / DEPTH_SCALE, 0.0)
    units = np.round(units)
    return np.where((units > 0) & (units <= np.iinfo(np.uint16).max), units, 0).astype(np.uint16)


def scene_camera(item: Item) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """The scene_camera.json entry of one item, and its world-to-camera rotation and translation (metres)."""
    world_to_camera = np.linalg.inv(camera_to_world(item.scene.camera, "opencv"))
    rotation, translation = world_to_camera[:3, :3], world_to_camera[:3, 3]
    camera = {"cam_K": intrinsics(item.scene.camera).flatten().tolist(), "cam_R_w2c": rotation.flatten().tolist(),
              "cam_t_w2c": (translation * MM).tolist(), "depth_scale": DEPTH_SCALE}
    return camera, rotation, translation


def write_scene(scene: Path, entry: ExportedItem, item: Item, obj_ids: dict[tuple[str, float], int]) -> list[dict]:
    """One BOP scene folder for one item; returns its scene_gt_info entries (for the test targets)."""
    (scene / "rgb").mkdir(parents=True)
    shutil.copyfile(entry.folder / IMAGE, scene / "rgb" / f"{IM}.png")
    valid = None
    if (entry.folder / DEPTH).is_file():
        (scene / "depth").mkdir()
        depth = depth_png(np.load(entry.folder / DEPTH))
        save_png16(scene / "depth" / f"{IM}.png", depth)
        valid = depth > 0
    (scene / "mask").mkdir()
    (scene / "mask_visib").mkdir()
    visible_ids = load_mask(entry.folder)
    camera, rotation, translation = scene_camera(item)
    gt, info = [], []
    for k, (obj, (amodal, gx, gy)) in enumerate(zip(item.scene.objects, amodal_masks(item))):
        visible = visible_ids == obj.id
        Image.fromarray(amodal.astype(np.uint8) * 255).save(scene / "mask" / f"{IM}_{k:06d}.png")
        Image.fromarray(visible.astype(np.uint8) * 255).save(scene / "mask_visib" / f"{IM}_{k:06d}.png")
        gt.append({"obj_id": obj_ids[model_key(obj)],
                   "cam_R_m2c": (rotation @ quat_to_matrix(obj.rotation_quat)).flatten().tolist(),
                   "cam_t_m2c": ((rotation @ np.asarray(obj.location) + translation) * MM).tolist()})
        vy, vx = np.nonzero(visible)
        count_all, count_visib = len(gx), len(vx)
        info.append({"bbox_obj": bop_box(gx, gy) if count_visib else [-1, -1, -1, -1],
                     "bbox_visib": bop_box(vx, vy),
                     "px_count_all": count_all,
                     "px_count_valid": int((amodal & valid).sum() if valid is not None else amodal.sum()),
                     "px_count_visib": count_visib,
                     "visib_fract": min(1.0, count_visib / count_all) if count_all else 0.0})
    for name, content in (("scene_camera", camera), ("scene_gt", gt), ("scene_gt_info", info)):
        (scene / f"{name}.json").write_text(json.dumps({"0": content}) + "\n")
    return info


def camera_json(item: Item) -> dict[str, Any]:
    """The root camera.json (bop_toolkit's load_cam_params): the first item's intrinsics, as cam_K has them."""
    k = intrinsics(item.scene.camera)
    cam = item.scene.camera
    return {"cx": k[0, 2], "cy": k[1, 2], "depth_scale": DEPTH_SCALE, "fx": k[0, 0], "fy": k[1, 1],
            "height": cam.height, "width": cam.width}


def write_models(tmp: Path, loaded: list[tuple[ExportedItem, Item]]) -> dict[tuple[str, float], int]:
    """models/ and models_info.json; returns obj_id per (shape, size), numbered from 1 in sorted order."""
    examples = {model_key(o): o for _, item in loaded for o in item.scene.objects}
    obj_ids = {key: i + 1 for i, key in enumerate(sorted(examples))}
    (tmp / "models").mkdir()
    models_info = {}
    for (shape, size), obj_id in obj_ids.items():
        ply, info = model_ply(examples[(shape, size)])
        (tmp / "models" / f"obj_{obj_id:06d}.ply").write_text(ply)
        models_info[str(obj_id)] = {**info, "shape": shape, "size_m": size}
    (tmp / "models" / "models_info.json").write_text(json.dumps(models_info, indent=1) + "\n")
    return obj_ids


def export_bop(batches: Sequence[Path], dest: Path, split: str | None = None) -> ExportReport:
    """Write the BOP layout described in the module docstring (of `split` only, when given)."""
    report = ExportReport(Path(dest), batches=len(batches))
    loaded = exportable_items(batches, report, split)
    with export_folder(dest) as tmp:
        obj_ids = write_models(tmp, loaded)
        if loaded:
            (tmp / "camera.json").write_text(json.dumps(camera_json(loaded[0][1]), indent=1) + "\n")
        scene_items: dict[str, Any] = {}
        targets: list[dict[str, int]] = []
        per_split: dict[str, int] = {}
        for entry, item in loaded:
            split = entry.records[0].split if entry.records else item.split
            scene_id = per_split[split] = per_split.get(split, 0) + 1
            info = write_scene(inside(tmp, tmp / split / f"{scene_id:06d}"), entry, item, obj_ids)
            if split == TARGETS_SPLIT:
                counts: dict[int, int] = {}
                for obj, gt_info in zip(item.scene.objects, info):
                    if gt_info["visib_fract"] >= VISIB_GT_MIN:
                        counts[obj_ids[model_key(obj)]] = counts.get(obj_ids[model_key(obj)], 0) + 1
                targets += [{"im_id": 0, "inst_count": n, "obj_id": obj_id, "scene_id": scene_id}
                            for obj_id, n in sorted(counts.items())]
            scene_items[f"{split}/{scene_id:06d}"] = {
                "batch": entry.batch, "item_id": entry.item_id, "look": look_name(item),
                "materials": {str(k): v for k, v in object_materials(item).items()}}  # BOP has no material field
            report.items += 1
            report.annotations += len(item.scene.objects)
        (tmp / "test_targets_bop19.json").write_text(json.dumps(targets, indent=1) + "\n")
        (tmp / "scene_items.json").write_text(json.dumps(scene_items, indent=1) + "\n")
    return report
