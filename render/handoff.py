"""Records for the shared scoring core: one JSON line per question, the contract of DESIGN.md section 4.

A record is self-contained: the scoring core needs nothing but the record (and,
to show the model, the image it points to). `difficulty` is flat so that any
key can be a breakdown axis. `schema_version` changes whenever a field does.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field

from scenes.model import AnswerType, Gold, Item

RECORD_SCHEMA_VERSION = "1.0"

PROTOCOL: dict[str, str] = {
    "integer": "Answer with a single integer.",
    "letters": "Answer with the letters only, in reading order.",
    "yes_no": "Answer yes or no.",
    "cell": "Answer as Row X, Column Y (1-based, row 1 at the top, column 1 at the left).",
    "cell_set": "Answer with every cell as Row X, Column Y, separated by semicolons.",
}
DEFAULT_RULE: dict[str, str] = {
    "integer": "exact",
    "letters": "exact",
    "yes_no": "exact",
    "cell": "exact",
    "cell_set": "set_f1",
}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ImageRef(Strict):
    path: str = Field(description="relative to the batch folder")
    sha256: str
    width: int
    height: int


class Answer(Strict):
    type: AnswerType
    gold: Gold


class Scoring(Strict):
    rule: str
    params: dict[str, Any] = Field(default_factory=dict)


class RecordProvenance(Strict):
    stim3d_version: str
    blender_version: str | None
    engine: str
    samples: int
    seed: int


class Record(Strict):
    schema_version: str = RECORD_SCHEMA_VERSION
    item_id: str
    question_id: str
    family: str
    split: str
    image: ImageRef
    prompt: str
    question: str
    answer: Answer
    scoring: Scoring
    subject: dict[str, Union[str, int, float]] = Field(default_factory=dict)
    difficulty: dict[str, Union[str, int, float, bool, None]]
    provenance: RecordProvenance


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def records_for(item: Item, image_path: str, image_sha256: str) -> list[Record]:
    """The records of one item (one per question)."""
    if item.provenance is None:
        raise ValueError(f"item {item.item_id} has no provenance: it was never rendered")
    provenance = RecordProvenance(
        stim3d_version=item.provenance.stim3d_version,
        blender_version=item.provenance.blender_version,
        engine=item.provenance.engine,
        samples=item.provenance.samples,
        seed=item.seed,
    )
    image = ImageRef(path=image_path, sha256=image_sha256, width=item.scene.camera.width, height=item.scene.camera.height)
    return [
        Record(
            item_id=item.item_id,
            question_id=q.question_id,
            family=item.family,
            split=item.split,
            image=image,
            prompt=f"{q.text} {PROTOCOL[q.answer_type]}",
            question=q.text,
            answer=Answer(type=q.answer_type, gold=q.gold),
            scoring=Scoring(rule=DEFAULT_RULE[q.answer_type]),
            subject=q.subject,
            difficulty=item.difficulty,
            provenance=provenance,
        )
        for q in item.questions
    ]


def write_jsonl_atomic(path: Path, rows: list[BaseModel]) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with tmp.open("w") as f:
        for row in rows:
            f.write(row.model_dump_json() + "\n")
    os.replace(tmp, path)


def read_records(path: Path) -> list[Record]:
    return [Record.model_validate(json.loads(line)) for line in path.read_text().splitlines() if line.strip()]
