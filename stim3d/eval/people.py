"""Scoring people's responses: only the questions each person was shown, and every response counted.

A model is asked every question, so a question it has no answer for counts as wrong
(scoring/report.py). A person in a study sees a subset (their plan), and the pooled
`human` folder holds several people's answers to one question. Their responses.jsonl
is in the format of store.py, one line per response with distinct request hashes (the
hash names the participant, session and plan position, stim3d/study/score.py); the
model field reads `human:<participant>` or `human`. Scored here:

- each line is parsed and scored by the same `score_record` as a model's answer;
- the questions are those answered (no missing, a question seen by nobody is left out);
- a question answered by k people counts k times: accuracy is the share of right
  responses (a micro average over responses), and every table and figure of
  report.html (eval/report.py) reads it that way, Wilson intervals included. That
  interval treats responses as independent, which they are not quite (one person
  answers several questions): read it as a lower bound on the uncertainty.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stim3d.eval.store import RESPONSES
from stim3d.scoring.records import Record
from stim3d.scoring.report import Row, ScoreReport, score_record

PEOPLE = "human"  # the pooled model; one person is `human:<participant>`


def is_person(model: str) -> bool:
    """A model name written by `stim3d study score`: `human` or `human:<participant>`."""
    return model == PEOPLE or model.startswith(PEOPLE + ":")


def response_rows(folder: Path) -> list[dict[str, Any]]:
    """Every well-formed line of `folder`/responses.jsonl, in file order."""
    rows = []
    for line in (Path(folder) / RESPONSES).read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and all(isinstance(row.get(k), str) for k in ("question_id", "model", "request_hash")):
            rows.append(row)
    return rows


def people_folder(folder: Path) -> bool:
    """True when `folder` holds people's responses (every line's model is `human` or `human:...`)."""
    path = Path(folder) / RESPONSES
    if not path.is_file():
        return False
    rows = response_rows(folder)
    return bool(rows) and all(is_person(r["model"]) for r in rows)


def score_responses(records: Sequence[Record], rows: Sequence[dict[str, Any]]) -> tuple[list[Record], ScoreReport]:
    """(the record of each scored response, the report): one QuestionResult per response line, rows `all` and
    per family as `scoring.report.score` makes them. A line whose question is not among `records` is listed
    as unknown; a line repeated with the same request hash counts once (the last wins, as in store.py)."""
    by_id = {r.question_id: r for r in records}
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        latest[(row["question_id"], row["request_hash"])] = row
    scored: list[Record] = []
    results = []
    unknown = set()
    for (question_id, _), row in latest.items():
        record = by_id.get(question_id)
        if record is None:
            unknown.add(question_id)
            continue
        response = row.get("response")
        scored.append(record)
        results.append(score_record(record, response if isinstance(response, str) else None))
    if not results:
        raise ValueError(f"no response is to a question of these records ({len(unknown)} to other questions)")
    table: dict[tuple[str, Any], Row] = {("all", None): Row("all", None)}
    for result in results:
        for group in (("all", None), ("family", result.family)):
            table.setdefault(group, Row(*group)).add(result)
    rows_out = sorted(table.values(), key=lambda row: (row.key != "all", str(row.value)))
    report = ScoreReport(rows=rows_out, questions=results, n_predictions=len(latest), missing_ids=[],
                         unknown_ids=sorted(unknown), by=[])
    return scored, report


def score_folder(records: Sequence[Record], folder: Path) -> tuple[list[Record], ScoreReport]:
    """`score_responses` of a people folder's responses.jsonl."""
    return score_responses(records, response_rows(folder))
