"""Rubric records in `stim3d score`: one record's judged result, and the Must-Right / gated / Easy-Wrong table.

The main score table counts a rubric record like any other: `score` is its gated
score, `accuracy` the share scoring 1, `valid` the share the judge could decide (an
undecided score counts 0 there, as an unparsed answer does). This module adds what
the main table cannot say, per family and per rubric type:

- must-right pass: share of records whose every Must-Right item holds (among
  records whose gate is decided);
- gated score: mean gated score (among records whose score is decided);
- easy-wrong: mean weighted fraction of Easy-Wrong items satisfied, gate or no gate
  (among records where it is decided);
- undecided: records whose score the judge left undecided, and undecided items.

A type row (`type=relation`) applies the same gate to that type's items alone: its
must-right pass is the share of records whose Must-Right items of that type all hold,
its easy-wrong the fraction of that type's Easy-Wrong items satisfied.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from .judges import reference_judge
from .records import Record
from .rubric import Judge, Rubric, RubricScore, Verdict, gate, judge_rubric

RUBRIC_TYPES = ("count", "presence", "absence", "colour", "relation", "attribute")
MAX_DESCRIPTION_CHARS = 100_000  # as report.MAX_RESPONSE_CHARS: a runaway answer is not judged (it fails the gate)


def rubric_fields(record: Record, response: str | None, answered: bool, judge: Judge | None) -> dict[str, Any]:
    """The fields of report.QuestionResult for a rubric record, judged (reference judge unless another is given)."""
    rubric = record.answer.gold
    assert isinstance(rubric, Rubric)
    too_long = response is not None and len(response) > MAX_DESCRIPTION_CHARS
    judged = judge_rubric(rubric, None if too_long or not answered else response, judge or reference_judge)
    reason = "" if judged.score is not None else f"{judged.undecided} rubric item(s) undecided"
    if too_long and response is not None:
        reason = f"response of {len(response)} characters is over the {MAX_DESCRIPTION_CHARS} judged; scored 0"
        response = f"{response[:1000]}... [{len(response)} characters, not judged]"
    return {
        "question_id": record.question_id, "item_id": record.item_id, "family": record.family,
        "answer_type": "rubric", "rule": record.scoring.rule, "gold": rubric.caption, "response": response,
        "answered": answered, "valid": judged.score is not None, "parsed": None,
        "reason": reason if answered else "no prediction", "correct": judged.score == 1.0,
        "score": judged.score or 0.0, "rules": {"gated": judged.score or 0.0}, "rubric": detail(judged),
    }


def detail(judged: RubricScore) -> dict[str, Any]:
    """A judged rubric as JSON: both parts, bounds, and every verdict with its evidence."""
    return {
        "must_right_passed": judged.must_right_passed, "easy_wrong_fraction": judged.easy_wrong_fraction,
        "score": judged.score, "bounds": list(judged.bounds), "undecided": judged.undecided,
        "verdicts": [asdict(v) for v in judged.verdicts],
    }


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _row(label: str, scores: list[RubricScore]) -> dict[str, Any]:
    passed = [s.must_right_passed for s in scores if s.must_right_passed is not None]
    return {
        "row": label,
        "n": len(scores),
        "must_right_pass_rate": _mean([float(p) for p in passed]),
        "gated_score": _mean([s.score for s in scores if s.score is not None]),
        "easy_wrong_fraction": _mean([s.easy_wrong_fraction for s in scores if s.easy_wrong_fraction is not None]),
        "undecided_records": sum(s.score is None for s in scores),
        "undecided_items": sum(s.undecided for s in scores),
    }


def rubric_summary(questions: Sequence[Any]) -> list[dict[str, Any]]:
    """Rows all, family=..., type=... over the rubric results of a report ([] when there are none)."""
    judged = [(q.family, [Verdict(**v) for v in q.rubric["verdicts"]]) for q in questions
              if getattr(q, "rubric", None) is not None]
    if not judged:
        return []
    rows = [_row("all", [gate(v) for _, v in judged])]
    for family in sorted({f for f, _ in judged}):
        rows.append(_row(f"family={family}", [gate(v) for f, v in judged if f == family]))
    for kind in RUBRIC_TYPES:
        subsets = [[x for x in v if x.type == kind] for _, v in judged]
        subsets = [s for s in subsets if s]
        if subsets:
            rows.append(_row(f"type={kind}", [gate(s) for s in subsets]))
    return rows


def _shown(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def format_rubric(questions: Sequence[Any], judge_name: str = "reference") -> list[str]:
    """The rubric table as printed lines ([] when no record is a rubric record)."""
    rows = rubric_summary(questions)
    if not rows:
        return []
    total = rows[0]
    lines = [f"rubric records (describe): {total['n']}  judge: {judge_name}  undecided: {total['undecided_records']} "
             f"record(s), {total['undecided_items']} rubric item(s)"]
    width = max(len(r["row"]) for r in rows) + 2
    lines.append(f"{'':<{width}}{'n':>5} {'must-right pass':>16} {'gated score':>12} {'easy-wrong':>11} {'undecided':>10}")
    for r in rows:
        lines.append(f"{r['row']:<{width}}{r['n']:>5} {_shown(r['must_right_pass_rate']):>16} "
                     f"{_shown(r['gated_score']):>12} {_shown(r['easy_wrong_fraction']):>11} {r['undecided_records']:>10}")
    return lines
