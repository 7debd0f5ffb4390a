"""`stim3d study score` on a study of every family: it never crashes and writes its pages and the exclusions list.

The batch holds every family of `stim3d.families()` (tests/study_support.py `every_family_config`, Workbench
at 64x48; form_constancy asks its describe question too, and the study includes it, so the rubric is
scored), ROSE's five coupled tasks among them. Five scripted participants answer the plan as the page would
write the answers: two all right (in different words where a type allows it), one with partial credit on
every type that has it, one too fast and one who stopped halfway (both excluded). Three included people
then share every main question, ROSE T5's click-and-submit answers among them, which is what the agreement
table of people-vs-models.html keys by the parsed answer.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

import stim3d
from stim3d.cli import main
from stim3d.scoring.answers import answer_text
from stim3d.scoring.records import Record, read_records
from stim3d.study.build import BuildOptions, build_study
from stim3d.study.folder import StudyFolder

pytestmark = pytest.mark.bpy
MAIN_TYPES = {"integer", "yes_no", "rubric", "letters", "cell", "strict_count", "strict_cell_set",
              "strict_cell_set_count", "box", "number", "choice", "text"}  # every answer type but cell_set (no family)


def partial(record: Record) -> str:
    """A response worth partial credit (or plainly wrong where the type has none), as the page's widget writes it."""
    kind, gold = record.answer.type, record.answer.gold
    if kind in ("integer", "strict_count"):
        return answer_text(kind, int(gold) + 1)  # count_soft: 1/2
    if kind == "strict_cell_set":
        return answer_text(kind, gold[:-1] if gold else [[1, 1]])  # set F1 below 1
    if kind == "strict_cell_set_count":
        clicks = gold[:-1] if gold else [[1, 1]]
        return "".join(f"CLICK(R{r},C{c}); " for r, c in clicks) + f"SUBMIT({len(gold)})"  # one click off, count right
    if kind == "box":
        x0, y0, x1, y1 = gold
        return answer_text(kind, [x0 + 2, y0 + 2, x1 + 2, y1 + 2])  # IoU below 1
    if kind == "number":
        return f"{float(gold) * 1.1:.3f}"  # within delta < 1.25, not exact
    if kind == "text":
        return str(gold)[:-1] + ("X" if not str(gold).endswith("X") else "Y")  # ANLS: one character wrong
    if kind == "choice":
        return next(o for o in record.answer.options or [] if o != gold)
    if kind == "yes_no":
        return "no" if gold == "yes" else "yes"
    return answer_text(kind, gold)


def reordered(record: Record) -> str:
    """The right answer in other words where the type allows (the clicks in another order)."""
    kind, gold = record.answer.type, record.answer.gold
    if kind in ("strict_cell_set", "strict_cell_set_count"):
        return answer_text(kind, list(reversed(gold)))
    return answer_text(kind, gold)


def session(study: StudyFolder, records: dict[str, Record], participant: str, answer: Any, *, rt_ms: int = 2000,
            upto: int | None = None) -> dict[str, Any]:
    """`participant`'s plan answered by `answer(record)` on main trials, every catch and practice trial right."""
    plan = study.plan(participant)
    trials = []
    for index, trial_id in enumerate(plan[:upto]):
        role = study.by_id[trial_id].role
        record = records[trial_id]
        response = answer(record) if role == "main" else answer_text(record.answer.type, record.answer.gold)
        trials.append({"index": index, "trial_id": trial_id, "role": role, "response": response, "rt_ms": rt_ms})
    return {"study": study.study_id, "participant": participant, "session": "s1", "plan": plan, "trials": trials,
            "complete": upto is None}


def test_a_study_of_every_family_scores_three_people_and_writes_the_page_and_the_exclusions(every_family_batch,
                                                                                             tmp_path, capsys):
    batch, folder = tmp_path / "batch", tmp_path / "study"
    shutil.copytree(every_family_batch, batch)
    build_study(batch, folder, BuildOptions(pilot=True, practice=1, catch=1, include_describe=True))
    study = StudyFolder.open(folder)
    records = {r.question_id: r for r in read_records(batch / "records.jsonl")}
    mains = [t for t in study.trials if t.role == "main"]
    assert {t.family for t in study.trials} == set(stim3d.families())
    assert {t.answer_type for t in mains} == MAIN_TYPES
    t5 = [t.trial_id for t in mains if t.answer_type == "strict_cell_set_count"]
    assert t5, "ROSE's T5 must be a main trial"
    people = {"ann": lambda r: answer_text(r.answer.type, r.answer.gold), "ben": partial, "cat": reordered}
    for person, answer in people.items():
        path = folder / "data" / person / "s1.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(session(study, records, person, answer)))
    for person, kwargs in {"dan": {"rt_ms": 300}, "eve": {"upto": len(study.plan("eve")) // 2}}.items():
        path = folder / "data" / person / "s1.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(session(study, records, person, people["ann"], **kwargs)))

    assert main(["study", "score", str(folder)]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "3 included, 2 excluded" in out

    page = (batch / "eval" / "people-vs-models.html").read_text()
    assert "Agreement between participants" in page and f"{len(mains)} questions were seen by two or more" in page
    exclusions = json.loads((batch / "eval" / "people-exclusions.json").read_text())
    by = {p["participant"]: p for p in exclusions["participants"]}
    assert {p for p, e in by.items() if e["included"]} == {"ann", "ben", "cat"}
    assert by["dan"]["reasons"][0].startswith("too fast") and by["eve"]["reasons"][0].startswith("incomplete")
    scores = {p: json.loads((batch / "eval" / f"human-{p}" / "scores.json").read_text()) for p in ("ann", "ben", "cat")}
    questions = {p: {q["question_id"]: q for q in s["questions"]} for p, s in scores.items()}
    for qid in t5:  # the coupled click-and-submit answers parse to plain JSON and score as the rule says
        assert questions["ann"][qid]["score"] == 1.0 and questions["cat"][qid]["score"] == 1.0
        assert questions["ben"][qid]["parsed"]["count"] == len(records[qid].answer.gold)
    partial_credit = [q for q in questions["ben"].values() if 0 < q["score"] < 1]
    assert {q["answer_type"] for q in partial_credit} == {"integer", "strict_count", "strict_cell_set",
                                                         "strict_cell_set_count", "box", "text"}
    assert all(q["correct"] for q in questions["ann"].values() if q["answer_type"] != "rubric")
