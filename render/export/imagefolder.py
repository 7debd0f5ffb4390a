"""Hugging Face imagefolder export: `DEST/<split>/metadata.jsonl` with one row per question, plus the images."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stim3d.render.export.common import ExportedItem, ExportReport, collect_items, export_folder
from stim3d.render.files import inside
from stim3d.scoring.records import Record, answer_text


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
        "answer_json": json.dumps(record.answer.model_dump(mode="json")["gold"]),  # a rubric is a model
        "scoring_rule": record.scoring.rule,
        "difficulty_json": json.dumps(record.difficulty, sort_keys=True),
        "width": record.image.width,
        "height": record.image.height,
    }


def export_imagefolder(batches: Sequence[Path], dest: Path) -> ExportReport:
    """Write DEST/<split>/metadata.jsonl and the images: one row per question."""
    report = ExportReport(Path(dest), batches=len(batches))
    items, report.duplicates_skipped = collect_items(batches, report.skipped)
    with export_folder(dest) as tmp:
        rows: dict[str, list[dict[str, Any]]] = {}
        for entry in items:
            for split in dict.fromkeys(r.split for r in entry.records):
                file_name = f"{entry.uid}.png"
                inside(tmp, tmp / split).mkdir(exist_ok=True)  # split names are checked; this is the second line
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
    return report
