"""VLMEvalKit export: one benchmark TSV (`DEST/<name>.tsv`) and a dataset class to register it (`DEST/stim3d_dataset.py`).

VLMEvalKit reads a benchmark as one tab-separated file with the columns `index`,
`image` (the image file, base64), `question`, `answer`, optional option columns
`A`, `B`, ... and `category` (its development guide). Here:

- `question` is the record's `prompt` (question plus answer protocol, and for a
  choice question its numbered options), which is what stim3d's parsers expect back;
- `answer` is the gold written as the protocol asks (`answer_text`);
- `A`, `B`, ... hold a choice question's options (empty for other rows);
- `category` is the family; `answer_type`, `question_id` and `look` (studio, clevr,
  photoreal: what VLMEvalKit can split its results by) ride along, and
  `stim3d_record` holds the whole record as JSON, so the dataset class scores a
  prediction file with stim3d's own scoring core and nothing else.

Put the TSV in `$LMUData` and the class into VLMEvalKit (docs/eval.md). A batch with
choice questions fills option columns: VLMEvalKit's generic custom-TSV loader would
then treat the file as multiple choice and build its own prompt, which is why the
class below (a VQA dataset that sends `question` as it is) is part of the export.
"""

from __future__ import annotations

import base64
import csv
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stim3d.export.common import ExportError, ExportReport, export_folder, exportable_items, look_name
from stim3d.install_hint import install_hint
from stim3d.render.batch.folder import IMAGE
from stim3d.scenes.names import check_name
from stim3d.scoring.records import Record, answer_text

LETTERS = string.ascii_uppercase
CLASS_FILE = "stim3d_dataset.py"


def tsv_row(index: int, record: Record, image_b64: str) -> dict[str, Any]:
    """One question as a VLMEvalKit row."""
    options = record.answer.options or []
    if len(options) > len(LETTERS):
        raise ExportError(f"{record.question_id}: {len(options)} options; VLMEvalKit has option columns A to Z only")
    return {"index": index, "image": image_b64, "question": record.prompt,
            "answer": answer_text(record.answer.type, record.answer.model_dump(mode="json")["gold"]),
            **{LETTERS[i]: option for i, option in enumerate(options)},
            "category": record.family, "answer_type": record.answer.type, "question_id": record.question_id,
            "look": look_name(None, record), "stim3d_record": record.model_dump_json()}


def export_vlmevalkit(batches: Sequence[Path], dest: Path, name: str = "stim3d", split: str | None = None) -> ExportReport:
    """Write DEST/<name>.tsv (one row per question, rows in batch then record order; `split`'s only, when given) and
    DEST/stim3d_dataset.py."""
    try:
        check_name(name, "dataset name")
    except ValueError as exc:
        raise ExportError(str(exc)) from None
    report = ExportReport(Path(dest), batches=len(batches))
    items = [entry for entry, _ in exportable_items(batches, report, split)]  # torn items skipped as in every export
    rows: list[dict[str, Any]] = []
    for entry in items:
        image = base64.b64encode((entry.folder / IMAGE).read_bytes()).decode("ascii")
        for record in entry.records:
            rows.append(tsv_row(len(rows), record, image))
        report.items += 1
        report.questions += len(entry.records)
    n_options = max((len(r.answer.options or []) for e in items for r in e.records), default=0)
    columns = ["index", "image", "question", "answer", *LETTERS[:n_options], "category", "answer_type", "question_id",
               "look", "stim3d_record"]
    with export_folder(dest) as tmp:
        with (tmp / f"{name}.tsv").open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, columns, delimiter="\t", quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        text = DATASET_CLASS.replace("{name}", name).replace("{install}", install_hint())
        (tmp / CLASS_FILE).write_text(text, encoding="utf-8")
    return report


DATASET_CLASS = '''\
"""{name}: a stim3d benchmark for VLMEvalKit (made by `stim3d export vlmevalkit`).

Put {name}.tsv in $LMUData, put this file next to VLMEvalKit's image datasets
(vlmeval/dataset/), import Stim3DDataset in vlmeval/dataset/__init__.py and add it
to its dataset class list; then `python run.py --data {name} --model ...`.
Scoring uses stim3d's own scoring core, so the numbers equal `stim3d score` on the
same answers: stim3d must be importable where VLMEvalKit runs ({install}, as the
copy of stim3d that wrote this file would be installed; stim3d is not on a package index).
"""

import json

import pandas as pd

from vlmeval.dataset.image_vqa import ImageVQADataset
from vlmeval.smp import load


class Stim3DDataset(ImageVQADataset):
    TYPE = "VQA"
    DATASET_URL = {"{name}": ""}  # local: the TSV is read from $LMUData
    DATASET_MD5 = {"{name}": None}

    def build_prompt(self, line):
        if isinstance(line, int):
            line = self.data.iloc[line]
        image_paths = self.dump_image(line)
        return [dict(type="image", value=p) for p in image_paths] + [dict(type="text", value=line["question"])]

    def evaluate(self, eval_file, **judge_kwargs):
        from stim3d.scoring.records import parse_record
        from stim3d.scoring.report import score

        data = load(eval_file)
        records = [parse_record(json.loads(text)) for text in data["stim3d_record"]]
        predictions = {r.question_id: (None if pd.isna(p) else str(p)) for r, p in zip(records, data["prediction"])}
        report = score(records, predictions, by=["answer_type"])
        table = pd.DataFrame([row.to_dict() for row in report.rows])
        table["group"] = [row.label for row in report.rows]
        return table[["group", "n", "accuracy", "score", "valid_rate"]]
'''
