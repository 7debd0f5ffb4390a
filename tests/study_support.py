"""A test helper, not the product: a minimal study folder made by hand from a rendered batch.

`stim3d study build` writes the real thing; the serve and score tests
need only what contract.py defines (study.json, trials.json, the stimuli), so this writes
that much and no more: the first questions as main trials, then one practice and one catch.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from stim3d.scoring.records import answer_text, read_records
from stim3d.study.contract import STUDY_FORMAT, Trial

STUDY_ID = "study-test-0001"


def make_study(batch: Path, out: Path, main: int = 8, per_participant: int | None = None, seed: int = 0) -> Path:
    """A study folder `out` over `batch`: `main` main trials, then one practice and one catch trial."""
    records = read_records(batch / "records.jsonl")
    assert len(records) >= main + 2, "the batch is too small for this study"
    roles = ["main"] * main + ["practice", "catch"]
    (out / "stimuli").mkdir(parents=True)
    trials = []
    for record, role in zip(records, roles):
        shutil.copyfile(batch / record.image.path, out / "stimuli" / f"{record.item_id}.png")
        scored = role != "main"
        trials.append(Trial(trial_id=record.question_id, item_id=record.item_id, question_id=record.question_id,
                            family=record.family, role=role, answer_type=record.answer.type, prompt=record.question,
                            instructions="Type a whole number.", image=f"stimuli/{record.item_id}.png",
                            width=record.image.width, height=record.image.height,
                            gold=record.answer.gold if scored else None,
                            gold_text=answer_text(record.answer.type, record.answer.gold) if scored else None,
                            difficulty=dict(record.difficulty)))
    manifest = json.loads((batch / "batch.json").read_text())
    study = {"format": STUDY_FORMAT, "study_id": STUDY_ID, "stim3d_version": "test",
             "batch": {"path": str(batch.resolve()),
                       "identity": {"config_hash": manifest["config_hash"], "code": manifest["code"]},
                       "items": len({r.item_id for r in records}), "questions": len(records)},
             "options": {"per_participant": per_participant, "practice": 1, "catch": 1, "seed": seed, "filter": [],
                         "present_ms": None, "mask_ms": None, "completion_url": None, "jatos": False},
             "image_format": "png"}
    (out / "study.json").write_text(json.dumps(study, indent=2))
    (out / "trials.json").write_text(json.dumps({"trials": [t.model_dump(mode="json") for t in trials]}, indent=2))
    (out / "index.html").write_text("<!doctype html><title>study</title><p>the study page</p>\n")
    return out
