"""BOP export: the layout of the BOP 6D-pose benchmark (bop_toolkit reads it), one BOP scene per item.

`DEST/models/obj_NNNNNN.ply` + `models_info.json`: one model per distinct (shape, size) in the export, in
millimetres, its origin at the object's `location` (the mesh stim3d renders, `scenes/primitives.py`).
`DEST/<split>/<scene:06d>/`: `rgb/000000.png`, `mask_visib/000000_<k:06d>.png` (255 where the k-th
object of scene_gt is visible, from the item's mask.png), and
- `scene_camera.json`: `cam_K` (row-major 3x3), `cam_R_w2c`, `cam_t_w2c` (mm), `depth_scale`;
- `scene_gt.json`: per object `obj_id`, `cam_R_m2c` and `cam_t_m2c` (mm), model to OpenCV camera;
- `scene_gt_info.json`: `bbox_obj` (amodal) and `bbox_visib` as [x, y, w, h], `px_count_all` (amodal),
  `px_count_visib`, `px_count_valid`, `visib_fract` (stim3d's measured visibility).
`DEST/scene_items.json` maps `<split>/<scene>` to the item. BOP's cameras are OpenCV's and its pixel
centres sit on integers, so `cam_K`'s principal point is stim3d's cx, cy minus 0.5 (scenes/interchange.py).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from stim3d.render.batch.folder import IMAGE
from stim3d.render.batch.item_folder import load_mask
from stim3d.render.export.common import (
    ExportReport,
    collect_items,
    export_folder,
    load_exported,
    look_name,
    object_materials,
)
from stim3d.scenes.interchange import camera_to_world, intrinsics
from stim3d.scenes.model import Box, Item, SceneObject
from stim3d.scenes.primitives import quat_to_matrix, unit_mesh

MM = 1000.0


def bop_intrinsics(item: Item) -> np.ndarray:
    """K with BOP's (OpenCV's) pixel-centre convention: stim3d's principal point minus half a pixel."""
    k = intrinsics(item.scene.camera)
    k[0, 2] -= 0.5
    k[1, 2] -= 0.5
    return k


def model_key(obj: SceneObject) -> tuple[str, float]:
    return obj.shape, round(obj.size, 6)


def model_ply(shape: str, size: float) -> tuple[str, dict[str, float]]:
    """An ASCII PLY of the mesh in millimetres and its models_info entry (diameter, extents)."""
    mesh = unit_mesh(shape)
    vertices = mesh.vertices * size * MM
    lines = ["ply", "format ascii 1.0", f"element vertex {len(vertices)}", "property float x", "property float y",
             "property float z", f"element face {len(mesh.faces)}", "property list uchar int vertex_indices",
             "end_header"]
    lines += [" ".join(f"{v:.4f}" for v in vertex) for vertex in vertices]
    lines += ["3 " + " ".join(str(int(i)) for i in face) for face in mesh.faces]
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    spread = vertices[:, None, :] - vertices[None, :, :] if len(vertices) <= 2000 else None
    diameter = float(np.sqrt((spread ** 2).sum(axis=2)).max()) if spread is not None else float(np.linalg.norm(high - low))
    info = {"diameter": round(diameter, 4), **{f"min_{a}": round(float(v), 4) for a, v in zip("xyz", low)},
            **{f"size_{a}": round(float(v), 4) for a, v in zip("xyz", high - low)}}
    return "\n".join(lines) + "\n", info


def _xywh(box: Box | None) -> list[int]:
    return [-1, -1, -1, -1] if box is None else [box[0], box[1], box[2] - box[0], box[3] - box[1]]


def scene_files(item: Item, obj_ids: dict[tuple[str, float], int]) -> tuple[dict[str, Any], list, list]:
    """(scene_camera entry, scene_gt entries, scene_gt_info entries) of one item (image id 0)."""
    world_to_camera = np.linalg.inv(camera_to_world(item.scene.camera, "opencv"))
    rotation, translation = world_to_camera[:3, :3], world_to_camera[:3, 3]
    camera = {"cam_K": bop_intrinsics(item).flatten().tolist(), "cam_R_w2c": rotation.flatten().tolist(),
              "cam_t_w2c": (translation * MM).tolist(), "depth_scale": 1.0}
    truths = {t.id: t for t in item.ground_truth.objects}
    gt, info = [], []
    for obj in item.scene.objects:
        model_to_camera = rotation @ quat_to_matrix(obj.rotation_quat)
        gt.append({"obj_id": obj_ids[model_key(obj)], "cam_R_m2c": model_to_camera.flatten().tolist(),
                   "cam_t_m2c": ((rotation @ np.asarray(obj.location) + translation) * MM).tolist()})
        truth = truths[obj.id]
        info.append({"bbox_obj": _xywh(truth.bbox_amodal), "bbox_visib": _xywh(truth.bbox_visible),
                     "px_count_all": int(truth.amodal_px), "px_count_valid": int(truth.amodal_px),
                     "px_count_visib": int(truth.visible_px), "visib_fract": truth.visibility})
    return camera, gt, info


def export_bop(batches: Sequence[Path], dest: Path) -> ExportReport:
    """Write the BOP layout described in the module docstring."""
    report = ExportReport(Path(dest), batches=len(batches))
    items, report.duplicates_skipped = collect_items(batches, report.skipped)
    with export_folder(dest) as tmp:
        loaded: list[tuple[Any, Item]] = [(entry, item) for entry in items
                                          if (item := load_exported(entry, report)) is not None]
        keys = sorted({model_key(o) for _, item in loaded for o in item.scene.objects})
        obj_ids = {key: i + 1 for i, key in enumerate(keys)}
        (tmp / "models").mkdir()
        models_info = {}
        for (shape, size), obj_id in obj_ids.items():
            ply, info = model_ply(shape, size)
            (tmp / "models" / f"obj_{obj_id:06d}.ply").write_text(ply)
            models_info[str(obj_id)] = {**info, "shape": shape, "size_m": size}
        (tmp / "models" / "models_info.json").write_text(json.dumps(models_info, indent=1) + "\n")
        scene_items: dict[str, Any] = {}
        per_split: dict[str, int] = {}
        for entry, item in loaded:
            split = entry.records[0].split if entry.records else item.split
            per_split[split] = per_split.get(split, 0) + 1
            scene = tmp / split / f"{per_split[split]:06d}"
            (scene / "rgb").mkdir(parents=True)
            (scene / "mask_visib").mkdir()
            shutil.copyfile(entry.folder / IMAGE, scene / "rgb" / "000000.png")
            mask = load_mask(entry.folder)
            for k, obj in enumerate(item.scene.objects):
                Image.fromarray(((mask == obj.id) * 255).astype(np.uint8)).save(scene / "mask_visib" / f"000000_{k:06d}.png")
            camera, gt, gt_info = scene_files(item, obj_ids)
            (scene / "scene_camera.json").write_text(json.dumps({"0": camera}) + "\n")
            (scene / "scene_gt.json").write_text(json.dumps({"0": gt}) + "\n")
            (scene / "scene_gt_info.json").write_text(json.dumps({"0": gt_info}) + "\n")
            scene_items[f"{split}/{per_split[split]:06d}"] = {
                "batch": entry.batch, "item_id": entry.item_id, "look": look_name(item),
                "materials": {str(k): v for k, v in object_materials(item).items()}}  # BOP has no material field
            report.items += 1
            report.annotations += len(gt)
        (tmp / "scene_items.json").write_text(json.dumps(scene_items, indent=1) + "\n")
    return report
