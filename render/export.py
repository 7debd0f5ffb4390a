"""Dataset exports of rendered batches: Hugging Face imagefolder and COCO instances.

Both read batch folders through their records.jsonl (the hand-off contract) and item
folders, and can merge several batches (shards, or different configs) into one
export. Ids never clash: every item is named `<batch>-<item_id>`, where `<batch>` is
the first 8 hex digits of the batch's config hash (batch.json; shards of one config
share it, so their items merge as one batch), or of the records file's hash when there
is no batch.json. An item met twice (the same batch given twice, overlapping shards)
is exported once if its image is identical, and is an error if it is not.

- imagefolder: `DEST/<split>/metadata.jsonl` with one row per question plus the
  images, so `datasets.load_dataset("imagefolder", data_dir=DEST)` gives one split per
  record split (usually "test"), with the question, prompt and answer as columns.
- coco: `DEST/annotations.json` (COCO instances) plus `DEST/images/`: one image per
  item, one annotation per object with visible pixels in mask.png, category = shape,
  segmentation = RLE of that object's pixels in mask.png, bbox = the modal (visible)
  box of those pixels, area = their count; the ray-cast ground truth (visibility,
  occlusion, truncation, amodal box) rides along as extra keys.

Each export is written into a temporary sibling and renamed into place when complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from scenes.model import SHAPES, Item

from .handoff import Record, answer_text, file_sha256, read_records
from .item_folder import load_item, load_mask

RECORDS = "records.jsonl"
MANIFEST = "batch.json"
CATEGORIES = [{"id": i + 1, "name": shape, "supercategory": "primitive"} for i, shape in enumerate(SHAPES)]
CATEGORY_ID = {shape: i + 1 for i, shape in enumerate(SHAPES)}


class ExportError(ValueError):
    """A batch folder that cannot be exported (missing files, stale records, clashing items)."""


@dataclass
class ExportedItem:
    """One item to export: where it lives, its unique name, and its records."""

    batch: str
    folder: Path
    item_id: str
    uid: str
    image_sha256: str
    records: list[Record] = field(default_factory=list)


@dataclass
class ExportReport:
    dest: Path
    batches: int = 0
    items: int = 0
    questions: int = 0
    annotations: int = 0
    duplicates_skipped: int = 0
    objects_without_pixels: int = 0

    def summary(self) -> str:
        parts = [f"{self.items} images from {self.batches} batch folder(s)"]
        if self.questions:
            parts.append(f"{self.questions} questions")
        if self.annotations:
            parts.append(f"{self.annotations} object annotations")
        if self.duplicates_skipped:
            parts.append(f"{self.duplicates_skipped} duplicate items skipped")
        if self.objects_without_pixels:
            parts.append(f"{self.objects_without_pixels} fully hidden objects not annotated")
        return ", ".join(parts)


def batch_namespace(batch: Path) -> str:
    manifest = batch / MANIFEST
    if manifest.is_file():
        config_hash = json.loads(manifest.read_text()).get("config_hash")
        if isinstance(config_hash, str) and config_hash:
            return config_hash[:8]
    return hashlib.sha256((batch / RECORDS).read_bytes()).hexdigest()[:8]


def collect_items(batches: Sequence[Path]) -> tuple[list[ExportedItem], int]:
    """Every item of the batches with its records, in batch then record order; and the duplicates skipped."""
    items: dict[str, ExportedItem] = {}
    duplicates = 0
    for batch in map(Path, batches):
        records_path = batch / RECORDS
        if not records_path.is_file():
            raise ExportError(f"{batch}: not a batch folder (no {RECORDS})")
        try:
            records = read_records(records_path)
        except ValueError as exc:
            raise ExportError(str(exc)) from None
        namespace = batch_namespace(batch)
        seen_here: dict[str, ExportedItem] = {}
        for record in records:
            entry = seen_here.get(record.item_id)
            if entry is None:
                folder = batch / Path(record.image.path).parent
                image = batch / record.image.path
                if not image.is_file() or not (folder / "mask.png").is_file():
                    raise ExportError(f"{batch}: item {record.item_id} is missing image.png or mask.png")
                if file_sha256(image) != record.image.sha256:
                    raise ExportError(f"{records_path}: stale: {record.image.path} no longer has the recorded sha256")
                entry = ExportedItem(namespace, folder, record.item_id, f"{namespace}-{record.item_id}", record.image.sha256)
                seen_here[record.item_id] = entry
            entry.records.append(record)
        for entry in seen_here.values():
            previous = items.get(entry.uid)
            if previous is None:
                items[entry.uid] = entry
            elif previous.image_sha256 == entry.image_sha256:
                duplicates += 1
            else:
                raise ExportError(
                    f"item {entry.item_id} of batch {namespace} is in {previous.folder} and {entry.folder} "
                    "with different images; export them separately"
                )
    return list(items.values()), duplicates


def _prepare(dest: Path) -> Path:
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ExportError(f"{dest} already exists and is not empty; choose another --to or remove it")
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    return tmp


def _finish(tmp: Path, dest: Path) -> None:
    if dest.exists():
        dest.rmdir()  # empty (checked in _prepare)
    os.replace(tmp, dest)


def imagefolder_row(entry: ExportedItem, record: Record, file_name: str) -> dict[str, Any]:
    """One question as a row of metadata.jsonl. Types are the same in every row (answers as text)."""
    return {
        "file_name": file_name,
        "id": f"{entry.batch}-{record.question_id}",
        "batch": entry.batch,
        "item_id": record.item_id,
        "question_id": record.question_id,
        "scene_id": record.scene_id,
        "family": record.family,
        "question": record.question,
        "prompt": record.prompt,
        "answer_type": record.answer.type,
        "answer": answer_text(record.answer.type, record.answer.gold),
        "answer_json": json.dumps(record.answer.gold),
        "scoring_rule": record.scoring.rule,
        "difficulty_json": json.dumps(record.difficulty, sort_keys=True),
        "width": record.image.width,
        "height": record.image.height,
    }


def export_imagefolder(batches: Sequence[Path], dest: Path) -> ExportReport:
    """Write DEST/<split>/metadata.jsonl and the images: one row per question."""
    items, duplicates = collect_items(batches)
    report = ExportReport(Path(dest), batches=len(batches), duplicates_skipped=duplicates)
    tmp = _prepare(dest)
    rows: dict[str, list[dict[str, Any]]] = {}
    for entry in items:
        for split in dict.fromkeys(r.split for r in entry.records):
            file_name = f"{entry.uid}.png"
            (tmp / split).mkdir(exist_ok=True)
            shutil.copyfile(entry.folder / "image.png", tmp / split / file_name)
            rows.setdefault(split, []).extend(
                imagefolder_row(entry, r, file_name) for r in entry.records if r.split == split
            )
        report.items += 1
        report.questions += len(entry.records)
    for split, split_rows in rows.items():
        with (tmp / split / "metadata.jsonl").open("w") as f:
            for row in split_rows:
                f.write(json.dumps(row) + "\n")
    _finish(tmp, Path(dest))
    return report


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


def coco_annotations(item: Item, mask: np.ndarray, image_id: int, first_id: int) -> tuple[list[dict[str, Any]], int]:
    """The item's objects with visible pixels in `mask`, as COCO annotations; and how many had none."""
    truths = {t.id: t for t in item.ground_truth.objects}
    annotations, hidden = [], 0
    for obj in item.scene.objects:
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
            "category_id": CATEGORY_ID[obj.shape],
            "segmentation": rle_encode(binary),
            "area": area,
            "bbox": modal_box(binary),
            "iscrowd": 0,
            "object_id": obj.id,
            "color": obj.color.name,
            "visibility": truth.visibility,
            "occlusion": truth.occlusion,
            "truncation": truth.truncation,
            "bbox_amodal": None if amodal is None else [amodal[0], amodal[1], amodal[2] - amodal[0], amodal[3] - amodal[1]],
        })
    return annotations, hidden


def export_coco(batches: Sequence[Path], dest: Path) -> ExportReport:
    """Write DEST/annotations.json (COCO instances, RLE masks from mask.png) and DEST/images/."""
    items, duplicates = collect_items(batches)
    report = ExportReport(Path(dest), batches=len(batches), duplicates_skipped=duplicates)
    tmp = _prepare(dest)
    (tmp / "images").mkdir()
    images, annotations = [], []
    for image_id, entry in enumerate(items, start=1):
        item = load_item(entry.folder)
        mask = load_mask(entry.folder)
        file_name = f"{entry.uid}.png"
        shutil.copyfile(entry.folder / "image.png", tmp / "images" / file_name)
        images.append({
            "id": image_id,
            "file_name": file_name,
            "width": int(mask.shape[1]),
            "height": int(mask.shape[0]),
            "item_id": entry.item_id,
            "batch": entry.batch,
            "family": item.family,
        })
        item_annotations, hidden = coco_annotations(item, mask, image_id, len(annotations) + 1)
        annotations.extend(item_annotations)
        report.objects_without_pixels += hidden
        report.items += 1
    coco = {
        "info": {"description": "stim3d export: instance masks from each item's mask.png (object-index pass)",
                 "version": "1.0"},
        "images": images,
        "annotations": annotations,
        "categories": CATEGORIES,
    }
    (tmp / "annotations.json").write_text(json.dumps(coco) + "\n")
    report.annotations = len(annotations)
    _finish(tmp, Path(dest))
    return report
