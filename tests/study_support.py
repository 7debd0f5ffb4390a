"""Shared by the study tests: one tiny rendered batch with every answer type a study shows, built into studies,
and a minimal hand-made study folder for the serve and score tests (only what contract.py defines)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from stim3d.scoring.records import answer_text, read_records
from stim3d.study.contract import STUDY_FORMAT, Trial

ROOT = Path(__file__).resolve().parents[1]
STANDIN_WIDGETS = ROOT / "tests" / "fixtures" / "study" / "widgets_standin.js"

# Workbench at 64x48: integer (shape_count), yes_no and a rubric (form_constancy's default and describe questions), letters (large dots, so that one letter is
# legible at this size), cell (odd_grid), ROSE's strict_count / strict_cell_set / strict_cell_set_count (rose_grid),
# box (ava_localize), number (ava_depth_absolute) and choice (ava_spatial).
STUDY_BATCH_CONFIG = """\
seed: 5
render: {engine: workbench, width: 64, height: 48}
tasks:
  - family: shape_count
    count: 3
    params: {max_instances: 2}
  - family: form_constancy
    count: 1
    questions: [default, describe]
  - family: letters
    count: 1
    params: {n_letters: 1, dot_size: 0.3, spacing: 0.7}
  - family: odd_grid
    count: 2
    params: {rows: 3, cols: 3, min_object_px: 3}
  - family: rose_grid
    count: 1
    params: {rows: 4, cols: 4}
  - family: ava_localize
    count: 1
  - family: ava_depth_absolute
    count: 2
  - family: ava_spatial
    count: 2
"""

_BATCH: dict[str, Path] = {}


def study_batch(tmp_path_factory) -> Path:
    """The rendered batch folder, once per test session (a module fixture in each study test file calls this)."""
    if "out" not in _BATCH:
        import stim3d

        folder = tmp_path_factory.mktemp("study-batch")
        config = folder / "batch.yaml"
        config.write_text(STUDY_BATCH_CONFIG)
        report = stim3d.render_batch(config, folder / "batch", workers=1)
        assert not report.failed, report.failed
        _BATCH["out"] = folder / "batch"
    return _BATCH["out"]


def with_standin_widgets(study: Path) -> None:
    """Put the stand-in widget plugin in a built study (the page's flow is tested apart from the real widgets)."""
    shutil.copyfile(STANDIN_WIDGETS, study / "js" / "widgets.js")


# A minimal study folder made by hand: `stim3d study build` writes the real thing; the serve and score
# tests need only study.json, trials.json and the stimuli: the first questions as main trials, then one
# practice and one catch.
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
