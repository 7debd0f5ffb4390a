"""Baselines that answer without a model: the floor and the ceiling beside every real model's table.

- `baseline:constant`: per question type (family and answer type) the most frequent
  gold of the records being evaluated (ties to the first in sorted JSON order, as
  `scoring/report.py` picks its constant): what a model that ignores the image reaches.
- `baseline:random`: per record, one of the distinct golds of its question type (a
  choice record: one of its options), drawn uniformly from a generator seeded by the
  seed and the question id, so the same seed gives the same answers in any order.
- `baseline:oracle`: the gold, written as the protocol asks (`scoring.records.answer_text`)
  and then parsed and scored like any answer: it must score 100 % on every record, a
  check of the whole chain from record to formatter to parser to rule.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

from stim3d.eval.errors import EvalError
from stim3d.scoring.records import Record, answer_text

PREFIX = "baseline:"
NAMES = ("constant", "random", "oracle")


def question_type(record: Record) -> str:
    return f"{record.family} ({record.answer.type})"


def _gold_json(record: Record) -> str:
    return json.dumps(record.answer.model_dump(mode="json")["gold"], sort_keys=True)


def _text(record: Record, gold_json: str) -> str:
    return answer_text(record.answer.type, json.loads(gold_json))


def baseline_answers(name: str, records: Sequence[Record], seed: int = 0) -> Callable[[Record], str]:
    """A function from a record to the baseline's response text; EvalError on `model` for an unknown baseline."""
    kind = name.removeprefix(PREFIX)
    if kind == "oracle":
        return lambda record: _text(record, _gold_json(record))
    golds: dict[str, Counter] = defaultdict(Counter)
    for record in records:
        golds[question_type(record)][_gold_json(record)] += 1
    if kind == "constant":
        best = {qt: min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0] for qt, counts in golds.items()}
        return lambda record: _text(record, best[question_type(record)])
    if kind == "random":
        choices = {qt: sorted(counts) for qt, counts in golds.items()}

        def draw(record: Record) -> str:
            rng = random.Random(f"{seed}:{record.question_id}")
            if record.answer.options:
                return rng.choice(record.answer.options)
            return _text(record, rng.choice(choices[question_type(record)]))
        return draw
    raise EvalError(f"unknown baseline; use one of {', '.join(PREFIX + n for n in NAMES)}", field="model",
                    value=repr(name))
