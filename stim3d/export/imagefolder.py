"""Hugging Face imagefolder export: `DEST/<split>/metadata.parquet` with one row per question, the images and
masks, and a dataset card `DEST/README.md` whose `dataset_info` declares typed features (export/hf_features.py).

Ids are unique across merged batches: `id`, `item_id` and `question_id` carry the
batch prefix (`<batch>-...`); `source_item_id` and `source_question_id` are the ids
in the batch's own records.jsonl, which predictions scored by `stim3d score` name.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stim3d.export.card import write_card
from stim3d.export.common import (
    ExportedItem,
    ExportError,
    ExportReport,
    export_folder,
    exportable_items,
    look_name,
    object_materials,
)
from stim3d.export.hf_features import (
    PyarrowMissing,
    difficulty_types,
    features,
    require_pyarrow,
    typed_rows,
    write_metadata,
)
from stim3d.files import inside
from stim3d.render.batch.folder import IMAGE, MASK
from stim3d.scenes.model import Item
from stim3d.scoring.records import Record, answer_text

MASKS_DIR = "masks"


def object_rows(item: Item | None) -> list[dict[str, Any]]:
    """The item's objects with their measured ground truth (the `objects` column)."""
    if item is None:
        return []
    truths = {t.id: t for t in item.ground_truth.objects}
    materials = object_materials(item)
    rows = []
    for obj in item.scene.objects:
        truth = truths.get(obj.id)
        rows.append({
            "object_id": obj.id, "shape": obj.shape, "color": obj.color.name,
            "visibility": None if truth is None else truth.visibility,
            "occlusion": None if truth is None else truth.occlusion,
            "truncation": None if truth is None else truth.truncation,
            "visible_px": None if truth is None else truth.visible_px,
            "material": materials.get(obj.id),  # the look's material; null in studio
        })
    return rows


def imagefolder_row(entry: ExportedItem, record: Record, file_name: str, objects: list[dict[str, Any]] | None = None,
                    mask_file_name: str | None = None) -> dict[str, Any]:
    """One question as a row of metadata.jsonl (typed by hf_features before it is written)."""
    gold = record.answer.model_dump(mode="json")["gold"]  # a rubric is a model
    number = gold if record.answer.type in ("integer", "strict_count") and isinstance(gold, int) else None
    return {
        "file_name": file_name,
        "mask_file_name": mask_file_name,
        "id": f"{entry.batch}-{record.question_id}",
        "batch": entry.batch,
        "item_id": entry.uid,
        "question_id": f"{entry.batch}-{record.question_id}",
        "source_item_id": record.item_id,
        "source_question_id": record.question_id,
        "scene_id": f"{entry.batch}-{record.scene_id}",
        "family": record.family,
        "look": look_name(None, record),
        "split": record.split,
        "question": record.question,
        "prompt": record.prompt,
        "answer_type": record.answer.type,
        "answer": answer_text(record.answer.type, record.answer.gold),
        "answer_number": number,
        "answer_json": json.dumps(gold),
        "scoring_rule": record.scoring.rule,
        "difficulty": dict(record.difficulty),
        "difficulty_json": json.dumps(record.difficulty, sort_keys=True),
        "objects": objects or [],
        "width": record.image.width,
        "height": record.image.height,
    }


def export_imagefolder(batches: Sequence[Path], dest: Path, split: str | None = None) -> ExportReport:
    """Write DEST/<split>/metadata.parquet (only `split`'s, when given), the images and masks, and the dataset card:
    one row per question.

    ExportError (one line) when pyarrow is missing, before anything is written."""
    try:
        require_pyarrow()
    except PyarrowMissing as exc:
        raise ExportError(str(exc)) from None
    report = ExportReport(Path(dest), batches=len(batches))
    loaded = exportable_items(batches, report, split)
    items = [entry for entry, _ in loaded]
    with export_folder(dest) as tmp:
        rows: dict[str, list[dict[str, Any]]] = {}
        for entry, item in loaded:
            objects = object_rows(item)
            for split in dict.fromkeys(r.split for r in entry.records):
                file_name, mask_name = f"{entry.uid}.png", f"{MASKS_DIR}/{entry.uid}.png"
                inside(tmp, tmp / split / MASKS_DIR).mkdir(parents=True, exist_ok=True)  # split names are checked
                shutil.copyfile(entry.folder / IMAGE, tmp / split / file_name)
                shutil.copyfile(entry.folder / MASK, tmp / split / mask_name)
                rows.setdefault(split, []).extend(
                    imagefolder_row(entry, r, file_name, objects, mask_name) for r in entry.records if r.split == split
                )
            report.items += 1
            report.questions += len(entry.records)
        types = difficulty_types(row for split_rows in rows.values() for row in split_rows)
        for split, split_rows in rows.items():
            write_metadata(tmp / split, typed_rows(split_rows, types), features(types))
        write_card(tmp, batches, items, {split: len(r) for split, r in rows.items()}, features(types))
    return report
