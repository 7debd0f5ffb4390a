"""COCO instances export: `DEST/annotations.json` (RLE masks from each item's mask.png) and `DEST/images/`.

The file carries COCO's `licenses` list (one entry: CC BY 4.0, the licence the
dataset card declares for rendered data, export/card.py) and every image its
`license` id, as COCO's own files do; pycocotools reads it (docs/exports.md)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stim3d.export.common import (
    ExportReport,
    export_folder,
    exportable_items,
    look_name,
    object_materials,
)
from stim3d.render.batch.folder import IMAGE
from stim3d.render.batch.item_folder import load_mask
from stim3d.scenes.meshes import kind_name
from stim3d.scenes.model import SHAPES, Item, SceneObject
from stim3d.scenes.object_library import object_names

# Fixed ids: the five primitives, then the composed library's objects (docs/objects.md); a mesh file's stem gets the
# next free id, in sorted order, in the export that meets it (`categories`).
FIXED_CATEGORIES = [*({"name": shape, "supercategory": "primitive"} for shape in SHAPES),
                    *({"name": name, "supercategory": "composed"} for name in object_names())]
CATEGORY_ID = {c["name"]: i + 1 for i, c in enumerate(FIXED_CATEGORIES)}
LICENSE_ID = 1
LICENSES = [{"id": LICENSE_ID, "name": "Creative Commons Attribution 4.0 International (CC BY 4.0)",
             "url": "https://creativecommons.org/licenses/by/4.0/"}]


def rle_encode(binary: np.ndarray) -> dict[str, Any]:
    """COCO compressed RLE of a boolean (H, W) mask, counts as text (JSON-ready)."""
    from pycocotools import mask as mask_utils

    rle = mask_utils.encode(np.asfortranarray(binary.astype(np.uint8)))
    return {"size": [int(v) for v in rle["size"]], "counts": rle["counts"].decode("ascii")}


def modal_box(binary: np.ndarray) -> list[float]:
    """[x, y, width, height] of the pixels of a boolean mask (COCO's bbox: pixel edges, not centres)."""
    rows = np.flatnonzero(binary.any(axis=1))
    cols = np.flatnonzero(binary.any(axis=0))
    return [float(cols[0]), float(rows[0]), float(cols[-1] + 1 - cols[0]), float(rows[-1] + 1 - rows[0])]


def categories(mesh_kinds: set[str]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """COCO's category list and the id of every name: the fixed ones, then the mesh files' stems met, sorted."""
    listed = [*FIXED_CATEGORIES, *({"name": k, "supercategory": "mesh"} for k in sorted(mesh_kinds - set(CATEGORY_ID)))]
    return [{"id": i + 1, **c} for i, c in enumerate(listed)], {c["name"]: i + 1 for i, c in enumerate(listed)}


def is_category(obj: SceneObject) -> bool:
    """An object COCO annotates: anything but a marker tile (a sign carrying a texture or text is a tile too)."""
    return obj.source is not None or obj.shape in SHAPES


def coco_annotations(item: Item, mask: np.ndarray, image_id: int, first_id: int,
                     category_id: dict[str, int]) -> tuple[list[dict[str, Any]], int]:
    """The item's objects with visible pixels in `mask`, as COCO annotations; and how many had none."""
    truths = {t.id: t for t in item.ground_truth.objects}
    materials = object_materials(item)
    annotations: list[dict[str, Any]] = []
    hidden = 0
    for obj in item.scene.objects:
        if not is_category(obj):
            continue
        binary = mask == obj.id
        area = int(binary.sum())
        if area == 0:
            hidden += 1
            continue
        truth = truths[obj.id]
        amodal = truth.bbox_amodal
        annotations.append({
            "id": first_id + len(annotations),
            "image_id": image_id,
            "category_id": category_id[kind_name(obj)],
            "segmentation": rle_encode(binary),
            "area": area,
            "bbox": modal_box(binary),
            "iscrowd": 0,
            "object_id": obj.id,
            "color": obj.color.name,
            "material": materials.get(obj.id),  # the look's material; null in studio
            "visibility": truth.visibility,
            "occlusion": truth.occlusion,
            "truncation": truth.truncation,
            "bbox_amodal": None if amodal is None else [amodal[0], amodal[1], amodal[2] - amodal[0], amodal[3] - amodal[1]],
        })
    return annotations, hidden


def export_coco(batches: Sequence[Path], dest: Path, split: str | None = None) -> ExportReport:
    """Write DEST/annotations.json (COCO instances, RLE masks from mask.png) and DEST/images/ (of `split` only, when
    given)."""
    report = ExportReport(Path(dest), batches=len(batches))
    items = exportable_items(batches, report, split)
    with export_folder(dest) as tmp:
        (tmp / "images").mkdir()
        images: list[dict[str, Any]] = []
        annotations: list[dict[str, Any]] = []
        listed, category_id = categories({kind_name(o) for _, item in items for o in item.scene.objects
                                          if o.source is not None and o.source.kind == "mesh"})
        for entry, item in items:
            mask = load_mask(entry.folder)  # the image's size and the camera's (exportable_items)
            image_id = len(images) + 1
            file_name = f"{entry.uid}.png"
            shutil.copyfile(entry.folder / IMAGE, tmp / "images" / file_name)
            images.append({
                "id": image_id,
                "file_name": file_name,
                "width": int(mask.shape[1]),
                "height": int(mask.shape[0]),
                "license": LICENSE_ID,
                "item_id": entry.item_id,
                "batch": entry.batch,
                "split": entry.records[0].split if entry.records else item.split,
                "family": item.family,
                "look": look_name(item),
            })
            item_annotations, hidden = coco_annotations(item, mask, image_id, len(annotations) + 1, category_id)
            annotations.extend(item_annotations)
            report.objects_without_pixels += hidden
            report.items += 1
        coco = {
            "info": {"description": "stim3d export: instance masks from each item's mask.png (object-index pass)",
                     "version": "1.0"},
            "licenses": LICENSES,
            "images": images,
            "annotations": annotations,
            "categories": listed,
        }
        (tmp / "annotations.json").write_text(json.dumps(coco) + "\n")
        report.annotations = len(annotations)
    return report
