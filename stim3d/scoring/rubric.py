"""Rubrics: the gold of a `describe` question, and the gated score of a free-form description.

A rubric (after PerceptionRubrics) splits what a description is judged on in two:

- `must_right`: facts a correct description cannot get wrong (how many objects of
  each shape, the colours present, the letter string, the grid size, ...). Failing
  any one of them gates the score to 0;
- `easy_wrong`: fine details models typically miss or invent (a heavily occluded
  object, a left/right or front/behind relation, objects cut by the frame, a
  plausible shape that is NOT there). Once the gate is passed, the score is the
  weighted fraction of these that the description satisfies.

Every rubric item carries its `fact` as flat structured data, so a program can check
it (scenes/rubrics.py writes them from the exact ground truth; docs/rubrics.md lists
the fact keys of each type). A judge (scoring/judges.py) decides each item:
True, False, or None when it cannot decide. None is reported as undecided, never
taken as a pass or a fail: a score that depends on an undecided item is None, and
its bounds say how far it could go.

This module imports nothing else of stim3d (the scoring core can be vendored alone).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

RubricType = Literal["count", "presence", "absence", "colour", "relation", "attribute"]
FactValue = Union[str, int, float, bool]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RubricItem(_Strict):
    """One checkable statement about the image: what it says, its type, the fact behind it, its weight."""

    id: str = Field(pattern=r"^[a-z0-9_.-]{1,64}$", description="unique within the rubric, e.g. count.cube")
    statement: str = Field(min_length=1, description="the fact in one short sentence")
    type: RubricType
    fact: dict[str, FactValue] = Field(description="the structured fact a judge checks (keys per type: docs/rubrics.md)")
    weight: float = Field(1.0, gt=0.0, le=100.0)


class Rubric(_Strict):
    """The gold of a `rubric` answer: Must-Right items (gate), Easy-Wrong items (scored), golden caption."""

    must_right: list[RubricItem] = Field(min_length=1)
    easy_wrong: list[RubricItem] = Field(default_factory=list)
    caption: str = Field(min_length=1, description="a template description written from the same facts")

    @model_validator(mode="after")
    def _unique_ids(self) -> Rubric:
        ids = [item.id for item in self.items()]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"rubric item ids must be unique; repeated: {', '.join(repeated)}")
        return self

    def items(self) -> list[RubricItem]:
        return [*self.must_right, *self.easy_wrong]


@dataclass(frozen=True)
class Verdict:
    """A judge's decision on one rubric item: satisfied True/False, or None = undecided; with its evidence."""

    item_id: str
    part: Literal["must_right", "easy_wrong"]
    type: str
    weight: float
    satisfied: bool | None
    evidence: str


Judge = Callable[[str, RubricItem], tuple[Union[bool, None], str]]
"""judge(response, rubric_item) -> (satisfied: True/False/None, evidence text)."""


@dataclass
class RubricScore:
    """The gated score of one description and both of its parts.

    must_right_passed: True (every Must-Right item satisfied), False (one failed), None (none failed,
    some undecided). easy_wrong_fraction: satisfied weight / total Easy-Wrong weight (1.0 when the
    rubric has none), None when some Easy-Wrong item is undecided. score: 0.0 when the gate fails,
    else the Easy-Wrong fraction; None when undecided. `bounds` is the (lowest, highest) score the
    undecided items allow, so an undecided score is still bracketed.
    """

    must_right_passed: bool | None
    easy_wrong_fraction: float | None
    score: float | None
    bounds: tuple[float, float]
    verdicts: list[Verdict] = field(default_factory=list)

    @property
    def undecided(self) -> int:
        return sum(v.satisfied is None for v in self.verdicts)


def _fraction(verdicts: Sequence[Verdict], satisfied_if_unknown: bool) -> float:
    total = sum(v.weight for v in verdicts)
    if total == 0:
        return 1.0
    won = sum(v.weight for v in verdicts if v.satisfied or (v.satisfied is None and satisfied_if_unknown))
    return won / total


def gate(verdicts: Sequence[Verdict]) -> RubricScore:
    """Combine verdicts into the gated score: 0 if any Must-Right fails, else the weighted Easy-Wrong fraction."""
    must = [v for v in verdicts if v.part == "must_right"]
    easy = [v for v in verdicts if v.part == "easy_wrong"]
    if any(v.satisfied is False for v in must):
        passed: bool | None = False
    else:
        passed = None if any(v.satisfied is None for v in must) else True
    low_easy, high_easy = _fraction(easy, False), _fraction(easy, True)
    easy_fraction = low_easy if low_easy == high_easy else None
    if passed is False:
        return RubricScore(False, easy_fraction, 0.0, (0.0, 0.0), list(verdicts))
    low = 0.0 if passed is None else low_easy
    score = easy_fraction if passed else None
    return RubricScore(passed, easy_fraction, score, (low, high_easy), list(verdicts))


def judge_rubric(rubric: Rubric, response: str | None, judge: Judge) -> RubricScore:
    """Judge every item of `rubric` against `response` and gate; a missing or empty response fails the gate."""
    text = response or ""
    verdicts = []
    for part, items in (("must_right", rubric.must_right), ("easy_wrong", rubric.easy_wrong)):
        for item in items:
            satisfied: bool | None
            if not text.strip():
                satisfied, evidence = False, "empty response"
            else:
                satisfied, evidence = judge(text, item)
            verdicts.append(Verdict(item.id, part, item.type, item.weight, satisfied, evidence))  # type: ignore[arg-type]
    return gate(verdicts)
