"""Score predictions against records: per question, then rows overall, per family and by any difficulty key.

Counting rules (what a user relies on when reading the table):
- every record is scored once; a record with no prediction is *missing*: it counts
  as wrong and not valid (so accuracy is over all records, never over the answered
  ones only), and its id is listed;
- a prediction whose question_id is in no record is *unknown*: listed and counted,
  not scored;
- `accuracy` is exact match (PASS); `score` is the mean of each record's own
  partial-credit rule (`scoring.rule`: count SOFT, cell tolerance, set F1, ...);
  `valid` is the share of records whose answer parsed, `strict_rate` (JSON) the share
  given in the protocol's own format (a \\boxed{} answer or a formal token,
  `Parsed.strict`): "row 3, column 5" for a cell is valid but not strict;
- `constant` is the accuracy of the best single constant answer on that row's
  records (the most frequent gold; ties go to the first in sorted order): what a
  model that ignores the image could reach; `per cell` the same within each grid
  cell (when the caller says which cell a record is from, `cell_of`): what a model
  reaches that knows the cell's parameters and answers that cell's most frequent gold.

A response longer than MAX_RESPONSE_CHARS is not parsed: it is scored invalid
(and kept in the report as its first characters), so a runaway answer of many
megabytes costs nothing instead of minutes of parsing.

A breakdown key is a difficulty key (`min_visibility`), or `answer_type`, `split`,
`subject.<name>`; `KEY:WIDTH` bins a numeric key into [lo, lo + WIDTH). `look` and
`material` (the look material of the objects a question is about, render/batch/records.py)
read "studio" for records that carry neither: an item rendered in the default look
records none, so its bytes stay as they were before looks existed.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .answers import canonical_gold, parse
from .parse_text import Parsed
from .parsers_actions import Submission
from .records import Record
from .rubric import Judge
from .rubric_report import format_rubric, rubric_fields, rubric_summary
from .rules import applicable_rules, apply, check_rule

NONE_LABEL = "(none)"
STUDIO_DEFAULTS = {"look": "studio", "material": "studio"}  # what a record without look keys was rendered in


class ScoringInputError(ValueError):
    """Bad predictions or breakdown keys: the message names the line or key and what is allowed."""


@dataclass
class QuestionResult:
    question_id: str
    item_id: str
    family: str
    answer_type: str
    rule: str
    gold: Any
    response: str | None
    answered: bool
    valid: bool
    parsed: Any
    reason: str
    correct: bool
    score: float
    rules: dict[str, float]
    rubric: dict[str, Any] | None = None  # rubric records: both parts and every verdict (scoring/rubric_report.py)
    strict: bool = False  # the answer was in the protocol's own format (Parsed.strict)


@dataclass
class Row:
    """One line of the table: a group of records and their aggregate scores."""

    key: str
    value: Any
    n: int = 0
    missing: int = 0
    correct: int = 0
    valid: int = 0
    strict: int = 0
    score_sum: float = 0.0
    rule_sums: dict[str, float] = field(default_factory=dict)
    rule_counts: dict[str, int] = field(default_factory=dict)
    golds: Counter = field(default_factory=Counter)
    cell_golds: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))

    def add(self, result: QuestionResult, cell: str = "") -> None:
        self.n += 1
        self.missing += not result.answered
        self.correct += result.correct
        self.valid += result.valid
        self.strict += result.strict
        self.score_sum += result.score
        self.golds[json.dumps(result.gold)] += 1
        self.cell_golds[cell][json.dumps(result.gold)] += 1
        for name, value in result.rules.items():
            self.rule_sums[name] = self.rule_sums.get(name, 0.0) + value
            self.rule_counts[name] = self.rule_counts.get(name, 0) + 1

    @property
    def label(self) -> str:
        return "all" if self.key == "all" else f"{self.key.partition(':')[0]}={self.value}"

    def constant(self) -> tuple[str, float]:
        """(best constant gold as JSON, its accuracy on this row)."""
        best = min(self.golds.items(), key=lambda kv: (-kv[1], kv[0]))
        return best[0], best[1] / self.n

    def constant_per_cell(self) -> float:
        """Accuracy of answering each cell's most frequent gold (equals `constant` without cells)."""
        return sum(max(c.values()) for c in self.cell_golds.values()) / self.n

    def to_dict(self) -> dict[str, Any]:
        answer, baseline = self.constant()
        return {
            "key": self.key,
            "value": self.value,
            "n": self.n,
            "missing": self.missing,
            "accuracy": self.correct / self.n,
            "score": self.score_sum / self.n,
            "valid_rate": self.valid / self.n,
            "strict_rate": self.strict / self.n,
            "constant_answer": json.loads(answer),
            "constant_baseline": baseline,
            "constant_baseline_per_cell": self.constant_per_cell(),
            "rules": {name: self.rule_sums[name] / self.rule_counts[name] for name in sorted(self.rule_sums)},
        }


@dataclass
class ScoreReport:
    rows: list[Row]
    questions: list[QuestionResult]
    n_predictions: int
    missing_ids: list[str]
    unknown_ids: list[str]
    by: list[str]
    judge: str = "reference"  # the judge of rubric records (scoring/judges.py)

    def to_dict(self) -> dict[str, Any]:
        return {
            "records": len(self.questions),
            "predictions": self.n_predictions,
            "missing": len(self.missing_ids),
            "missing_ids": self.missing_ids,
            "unknown": len(self.unknown_ids),
            "unknown_ids": self.unknown_ids,
            "by": self.by,
            "rows": [row.to_dict() for row in self.rows],
            "questions": [asdict(q) for q in self.questions],
            **({"rubric": {"judge": self.judge, "rows": summary}} if (summary := rubric_summary(self.questions)) else {}),
        }


def read_predictions(path: Path) -> tuple[dict[str, str | None], int]:
    """{question_id: response} from JSONL, and the number of prediction lines.

    A response may be a string, a number (read as its text) or null (scored invalid).
    A bad line or a question id given twice is an error naming the line.
    """
    predictions: dict[str, str | None] = {}
    first_line: dict[str, int] = {}
    count = 0
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ScoringInputError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("question_id"), str):
            raise ScoringInputError(f'{where}: expected {{"question_id": "...", "response": "..."}}')
        if "response" not in row:
            raise ScoringInputError(f"{where}: no 'response' (use null for no answer)")
        response = row["response"]
        if isinstance(response, (int, float)) and not isinstance(response, bool):
            response = str(response)
        if response is not None and not isinstance(response, str):
            raise ScoringInputError(f"{where}: 'response' must be a string or null, got {type(response).__name__}")
        qid = row["question_id"]
        if qid in predictions:
            raise ScoringInputError(f"{where}: question_id {qid!r} already answered on line {first_line[qid]}")
        predictions[qid] = response
        first_line[qid] = number
        count += 1
    return predictions, count


MAX_RESPONSE_CHARS = 100_000  # far above a long chain of thought (~30,000 characters)
SHOWN_CHARS = 1_000  # what the report keeps of a response over the limit


def score_record(record: Record, response: str | None, answered: bool = True, judge: Judge | None = None) -> QuestionResult:
    """Parse one response and score it by exact match and every rule that applies to the record."""
    kind = record.answer.type
    params = record.scoring.params
    check_rule(record.scoring.rule, kind, params)
    if kind == "rubric":  # judged item by item, not parsed (scoring/rubric_report.py)
        return QuestionResult(**rubric_fields(record, response, answered, judge))
    gold = canonical_gold(kind, record.answer.gold)
    if response is not None and len(response) > MAX_RESPONSE_CHARS:
        parsed = Parsed(None, reason=f"response of {len(response)} characters is over the {MAX_RESPONSE_CHARS} "
                                     "parsed; scored invalid")
        response = f"{response[:SHOWN_CHARS]}... [{len(response)} characters, not parsed]"
    else:
        parsed = parse(kind, response, record.answer.options, record.choice_synonyms())
    rules = {name: apply(name, parsed.value, gold, params) for name in applicable_rules(kind, params)}
    return QuestionResult(
        question_id=record.question_id,
        item_id=record.item_id,
        family=record.family,
        answer_type=kind,
        rule=record.scoring.rule,
        gold=record.answer.gold,
        response=response,
        answered=answered,
        valid=parsed.valid,
        strict=parsed.strict,
        parsed=_jsonable(parsed.value),
        reason=parsed.reason if answered else "no prediction",
        correct=rules["exact"] == 1.0,
        score=rules[record.scoring.rule],
        rules=rules,
    )


def _jsonable(value: Any) -> Any:
    """A parsed answer as plain JSON, so every QuestionResult.parsed can be written or compared as text (the
    study's agreement table keys answers by it): cells and boxes as lists, ROSE's Submission as
    {"cells": [[r, c], ...], "count": n} (what `asdict` made of it in scores.json already)."""
    if isinstance(value, Submission):
        return {"cells": [list(cell) for cell in value.cells], "count": value.count}
    return [list(v) if isinstance(v, tuple) else v for v in value] if isinstance(value, tuple) else value


def _key_value(record: Record, key: str) -> Any:
    name, _, width = key.partition(":")
    if name in record.difficulty:
        value = record.difficulty[name]
    elif name == "answer_type":
        value = record.answer.type
    elif name == "split":
        value = record.split
    elif name.startswith("subject."):
        value = record.subject.get(name.removeprefix("subject."))
    elif name in STUDIO_DEFAULTS:  # records of studio items carry no look keys: studio is the default look
        value = STUDIO_DEFAULTS[name]
    else:
        value = None
    if width and isinstance(value, (int, float)) and not isinstance(value, bool):
        step = float(width)
        low = round(math.floor(value / step + 1e-9) * step, 9)
        return f"[{low:g}, {round(low + step, 9):g})"
    return value


def check_by_keys(records: Sequence[Record], by: Iterable[str]) -> list[str]:
    """The breakdown keys, checked: each must name a value of at least one record."""
    keys = list(by)
    for key in keys:
        name, _, width = key.partition(":")
        if width:
            try:
                if float(width) <= 0:
                    raise ValueError
            except ValueError:
                raise ScoringInputError(f"`by` {key}: bin width {width!r} must be a positive number") from None
        if not any(_key_value(r, name) is not None for r in records):
            known = sorted({k for r in records for k in r.difficulty} | {"answer_type", "split"})
            raise ScoringInputError(f"`by` {key}: no record has {name!r}; keys: {', '.join(known)}")
    return keys


def _sort_key(value: Any) -> tuple:
    if value is None or value == NONE_LABEL:
        return (3, "")
    if isinstance(value, bool):
        return (0, float(value))
    if isinstance(value, (int, float)):
        return (1, float(value))
    if isinstance(value, str) and value.startswith("["):  # a bin label "[lo, hi)"
        return (1, float(value[1:].split(",")[0]))
    return (2, str(value))


def score(records: Sequence[Record], predictions: dict[str, str | None], n_predictions: int | None = None,
          by: Sequence[str] = (), cell_of: Callable[[Record], str] | None = None,
          judge: Judge | None = None, judge_name: str = "reference") -> ScoreReport:
    """Score every record; rows: all, each family, then each value of each breakdown key (sorted).

    `cell_of` names the grid cell a record comes from (for the per-cell constant baseline).
    """
    ids = [r.question_id for r in records]
    duplicates = sorted(q for q, n in Counter(ids).items() if n > 1)
    if duplicates:
        raise ScoringInputError(f"records name question_id {duplicates[0]!r} more than once")
    keys = check_by_keys(records, by)
    known = set(ids)
    results = [score_record(r, predictions.get(r.question_id), r.question_id in predictions, judge) for r in records]
    rows: dict[tuple[str, Any], Row] = {("all", None): Row("all", None)}
    for record, result in zip(records, results):
        groups = [("all", None), ("family", record.family)]
        for key in keys:
            value = _key_value(record, key)
            groups.append((key, NONE_LABEL if value is None else value))
        cell = cell_of(record) if cell_of else ""
        for group in groups:
            rows.setdefault(group, Row(*group)).add(result, cell)
    order = ["all", "family", *keys]
    ordered = sorted(rows.values(), key=lambda row: (order.index(row.key), _sort_key(row.value)))
    return ScoreReport(
        rows=ordered,
        questions=results,
        n_predictions=len(predictions) if n_predictions is None else n_predictions,
        missing_ids=[r.question_id for r in results if not r.answered],
        unknown_ids=sorted(q for q in predictions if q not in known),
        by=keys,
        judge=judge_name,
    )


def _shorten(ids: list[str], limit: int = 5) -> str:
    return ", ".join(ids[:limit]) + (f", ... ({len(ids) - limit} more)" if len(ids) > limit else "")


def format_report(report: ScoreReport) -> list[str]:
    """The report as printed lines: counts, the table, then missing and unknown ids."""
    lines = [
        f"records: {len(report.questions)}  predictions: {report.n_predictions}  "
        f"missing: {len(report.missing_ids)}  unknown ids: {len(report.unknown_ids)}"
    ]
    width = max(len(row.label) for row in report.rows) + 2
    header = (f"{'n':>5} {'missing':>8} {'accuracy':>9} {'score':>6} {'valid':>6} {'constant':>9} {'per cell':>9}"
              "  constant answer")
    lines.append(f"{'':<{width}}{header}")
    for row in report.rows:
        data = row.to_dict()
        shown = json.dumps(data["constant_answer"], separators=(",", ":"))
        lines.append(
            f"{row.label:<{width}}{data['n']:>5} {data['missing']:>8} {data['accuracy']:>9.3f} {data['score']:>6.3f} "
            f"{data['valid_rate']:>6.3f} {data['constant_baseline']:>9.3f} {data['constant_baseline_per_cell']:>9.3f}  {shown}"
        )
    if report.missing_ids:
        lines.append(f"missing predictions (scored wrong): {_shorten(report.missing_ids)}")
    if report.unknown_ids:
        lines.append(f"predictions for unknown question ids (not scored): {_shorten(report.unknown_ids)}")
    return lines + format_rubric(report.questions, report.judge)
