"""CLEVR scene-JSON export, laid out as CLEVR v1.0 is and read unchanged by CLEVR's question engine.

    DEST/CLEVR_<split>_scenes.json            {"info": {..., "split"}, "scenes": [...]}, one file per split
    DEST/images/<split>/CLEVR_<split>_NNNNNN.png
    DEST/metadata.json, DEST/synonyms.json    the engine's --metadata_file and --synonyms_json (clevr_metadata.py)

so `generate_questions.py --input_scene_file DEST/CLEVR_test_scenes.json
--metadata_file DEST/metadata.json --synonyms_json DEST/synonyms.json` runs as it is
(docs/exports.md). The engine takes the image number from the file name (the digits
after its last "_"), and the split from `info`, hence one file per split and images
numbered from 0 within each split, in batch then record order. Each scene keeps
stim3d's names for its item: `item_id` (the batch's), `batch` (its 8-digit
namespace) and `stim3d_id` (`<batch>-<item_id>`, the id every other export uses).

Per image (CLEVR's `render_images.py` format): `image_index`, `image_filename`, `split`,
`objects` (`shape`, `color`, `size`, `material`, `3d_coords`, `rotation`, `pixel_coords`),
`directions` and `relationships`. Conventions, kept from CLEVR so its tools work unchanged:
- `directions`: unit vectors on the ground plane from the camera's axes: `behind` is the
  camera's viewing direction (Blender: local -Z) with its vertical part removed, `left`
  the camera's -X likewise, `front` and `right` their opposites, `above`/`below` = +-Z.
- `relationships[name][i]` lists the indices j of the objects that are `name` of object i:
  the dot of (coords_j - coords_i) with `directions[name]` exceeds 0.2 (CLEVR's eps).
- `pixel_coords` = [x, y, depth]: the object's centre projected, x and y rounded to whole
  pixels (top-left origin), depth in metres along the camera axis.
- `rotation`: degrees about the vertical axis of the object's own x axis, in [0, 360).
- `size`: CLEVR has two, `large` and `small`; an object whose characteristic extent is at
  least LARGE_FROM_M metres is `large`. `size_m` keeps the exact value.
- `material`: the look's material of the object when a look sets one (clevr: `rubber` or
  `metal`, CLEVR's own names; photoreal: the library's, `plastic`, `ceramic`, ...,
  scenes/looks.py); in studio a matte finish is CLEVR's `rubber`, a glossy one its `metal`.
Fields stim3d adds (`id`, `size_m`, `item_id`, `batch`, `stim3d_id`, `family`, `look`) are ignored by CLEVR's tools.
A scene with more than MAX_OBJECTS objects is left out: the engine cannot answer its counts.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stim3d.export.clevr_metadata import FINISH_MATERIALS, metadata, synonyms
from stim3d.export.common import (
    ExportReport,
    export_folder,
    exportable_items,
    look_name,
    object_materials,
)
from stim3d.files import inside
from stim3d.render.batch.folder import IMAGE
from stim3d.scenes.camera import geometry
from stim3d.scenes.meshes import kind_name
from stim3d.scenes.model import Item
from stim3d.scenes.primitives import quat_to_matrix

IMAGES_DIR = "images"
METADATA_FILE = "metadata.json"
SYNONYMS_FILE = "synonyms.json"
DATA_LICENSE = "Creative Commons Attribution 4.0 International (CC BY 4.0)"  # as the dataset card says
EPS = 0.2  # CLEVR's compute_all_relationships threshold, metres
LARGE_FROM_M = 1.0  # between CLEVR's small (0.7 m across) and large (1.4 m) objects
# The engine's answers to a count are 0..10 for CLEVR-v1.0, the only dataset it accepts (generate_questions.py's
# reset_counts: `list(range(0, 11))`); a larger count is a KeyError, so a scene with more objects is left out.
MAX_OBJECTS = 10


def ground_directions(item: Item) -> dict[str, tuple[float, float, float]]:
    """CLEVR's six direction vectors for the item's camera (module docstring)."""
    rotation = quat_to_matrix(item.scene.camera.rotation_quat)  # columns: camera x, y, z in world

    def on_ground(vector: np.ndarray) -> np.ndarray:
        flat = np.array([vector[0], vector[1], 0.0])
        return flat / np.linalg.norm(flat)

    behind, left = on_ground(-rotation[:, 2]), on_ground(-rotation[:, 0])
    vectors = {"behind": behind, "front": -behind, "left": left, "right": -left,
               "above": np.array([0.0, 0.0, 1.0]), "below": np.array([0.0, 0.0, -1.0])}
    return {name: tuple(round(float(v), 6) + 0.0 for v in vec) for name, vec in vectors.items()}  # type: ignore[misc]


def relationships(coords: list[tuple[float, float, float]],
                  directions: dict[str, tuple[float, float, float]]) -> dict[str, list[list[int]]]:
    """CLEVR's relationships: for each of left/right/front/behind, per object i the sorted j that lie that way."""
    result: dict[str, list[list[int]]] = {}
    for name in ("left", "right", "front", "behind"):
        direction = np.asarray(directions[name])
        result[name] = [
            [j for j, other in enumerate(coords)
             if j != i and float(np.dot(np.subtract(other, here), direction)) > EPS]
            for i, here in enumerate(coords)
        ]
    return result


def yaw_degrees(rotation_quat: tuple[float, float, float, float]) -> float:
    """The heading of the object's own x axis about world Z, degrees in [0, 360)."""
    matrix = quat_to_matrix(rotation_quat)
    return round(math.degrees(math.atan2(matrix[1, 0], matrix[0, 0])) % 360.0, 6)


def clevr_scene(item: Item, index: int, file_name: str, split: str) -> dict[str, Any]:
    """One item as a CLEVR scene dict."""
    objects = item.scene.objects
    materials = object_materials(item)
    u, v, depth = geometry(item.scene.camera).project(np.array([o.location for o in objects], dtype=float).reshape(-1, 3))
    entries = [{
        "id": obj.id,
        "shape": kind_name(obj),  # a composed object's library name, a mesh file's stem
        "color": obj.color.name,
        "size": "large" if obj.size >= LARGE_FROM_M else "small",
        "size_m": obj.size,
        "material": materials.get(obj.id) or FINISH_MATERIALS.get(obj.finish, obj.finish),
        "3d_coords": list(obj.location),
        "rotation": yaw_degrees(obj.rotation_quat),
        "pixel_coords": [int(round(float(u[i]))), int(round(float(v[i]))), round(float(depth[i]), 6)],
    } for i, obj in enumerate(objects)]
    directions = ground_directions(item)
    return {
        "image_index": index,
        "image_filename": file_name,
        "split": split,
        "item_id": item.item_id,
        "family": item.family,
        "look": look_name(item),
        "objects": entries,
        "directions": directions,
        "relationships": relationships([o.location for o in objects], directions),
    }


def scenes_file(split: str) -> str:
    """CLEVR's name for a split's scenes file."""
    return f"CLEVR_{split}_scenes.json"


def image_name(split: str, index: int) -> str:
    """CLEVR's image name: the engine reads `index` back from the digits after the last underscore."""
    return f"CLEVR_{split}_{index:06d}.png"


def export_clevr(batches: Sequence[Path], dest: Path, split: str | None = None) -> ExportReport:
    """Write the CLEVR layout of the module docstring: per split (only `split`, when given) a scenes file and its
    images, and the metadata.
    A scene with more than MAX_OBJECTS objects is left out and named in `report.omitted`."""
    report = ExportReport(Path(dest), batches=len(batches))
    items = exportable_items(batches, report, split)
    with export_folder(dest) as tmp:
        per_split: dict[str, list[dict[str, Any]]] = {}
        for entry, item in items:
            if len(item.scene.objects) > MAX_OBJECTS:
                report.omitted[f"{entry.folder.parent.parent}/{entry.item_id}"] = (
                    f"{len(item.scene.objects)} objects; CLEVR's question engine counts up to {MAX_OBJECTS}")
                continue
            split = entry.records[0].split if entry.records else item.split
            scenes = per_split.setdefault(split, [])
            folder = inside(tmp, tmp / IMAGES_DIR / split)  # split names are checked; this is the second line
            folder.mkdir(parents=True, exist_ok=True)
            file_name = image_name(split, len(scenes))
            shutil.copyfile(entry.folder / IMAGE, folder / file_name)
            scene = clevr_scene(item, len(scenes), file_name, split)
            scene.update(batch=entry.batch, stim3d_id=entry.uid)
            scenes.append(scene)
            report.items += 1
            report.annotations += len(scene["objects"])
        for split, scenes in per_split.items():
            info = {"split": split, "version": "1.0", "license": DATA_LICENSE, "generator": "stim3d export clevr"}
            (tmp / scenes_file(split)).write_text(json.dumps({"info": info, "scenes": scenes}) + "\n")
        meta = metadata(o for scenes in per_split.values() for scene in scenes for o in scene["objects"])
        (tmp / METADATA_FILE).write_text(json.dumps(meta, indent=1) + "\n")
        (tmp / SYNONYMS_FILE).write_text(json.dumps(synonyms(meta["types"]), indent=1) + "\n")
    return report
