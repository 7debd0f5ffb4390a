"""DYSM 3D shape discrimination: "How many spheres are in the scene?"

The answer is drawn first, uniformly over 0..max_instances (0 only when some
shape type is absent, i.e. n_shape_types < 5), or fixed by `answer` (a batch
schedules it over the task so answers are balanced across cells:
scenes/balance.py), then a scene is built that realises it: the queried shape
gets exactly that many instances, every other
present type 1..max_instances. Colours are drawn from the palette and do not
matter to the answer.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field, model_validator

from ...colors import COLOR_NAMES
from ...model import SHAPES, Question
from ..base import Composed, Family, FamilyParams, Frame, MinVisibility, SizeRange
from ..shared.answers import check_answer, draw_answer
from ..shared.counting import PLURAL, Spec, compose_counting, recount_subject, scale_for_crowd

QUESTION = "How many {plural} are in the scene?"


class ShapeCountParams(FamilyParams):
    n_shape_types: int = Field(3, ge=1, le=5, description="distinct shape types present (S)")
    max_instances: int = Field(3, ge=1, le=5, description="most instances of one shape type (S_I)")
    min_visibility: MinVisibility = Field(0.8, description="every object at least this visible (beta_occ)")
    band: float = Field(0.05, ge=0.01, le=0.5, description="least visible object lands in [min_visibility, min_visibility + band]")
    size_range: SizeRange = Field((0.75, 1.05), description="object size in metres, before crowd scaling")
    answer: int | None = Field(None, ge=0, le=5, description="the gold count; none draws it uniformly (a batch schedules it)")

    def answer_space(self) -> list[int]:
        """The counts this cell can realise: 0 only when some shape type is absent."""
        return list(range(0 if self.n_shape_types < len(SHAPES) else 1, self.max_instances + 1))

    @model_validator(mode="after")
    def _answer_realisable(self) -> ShapeCountParams:
        return check_answer(self)


def compose(params: ShapeCountParams, rng: np.random.Generator, frame: Frame) -> Composed:
    present = [SHAPES[i] for i in sorted(rng.choice(len(SHAPES), params.n_shape_types, replace=False))]
    absent = [s for s in SHAPES if s not in present]
    gold = draw_answer(rng, 0 if absent else 1, params.max_instances) if params.answer is None else params.answer
    if gold == 0:
        queried = absent[int(rng.integers(len(absent)))]
        counts = {s: int(rng.integers(1, params.max_instances + 1)) for s in present}
    else:
        queried = present[int(rng.integers(len(present)))]
        counts = {s: (gold if s == queried else int(rng.integers(1, params.max_instances + 1))) for s in present}
    n_objects = sum(counts.values())
    specs = [
        Spec(shape, COLOR_NAMES[int(rng.integers(len(COLOR_NAMES)))], scale_for_crowd(n_objects, params.size_range, rng))
        for shape in present
        for _ in range(counts[shape])
    ]
    question = Question(
        question_id="q0",
        text=QUESTION.format(plural=PLURAL[queried]),
        answer_type="integer",
        gold=gold,
        subject={"shape": queried},
    )
    difficulty = {"n_shape_types": params.n_shape_types, "max_instances": params.max_instances}
    return compose_counting(specs, params, rng, frame, question, difficulty)


FAMILY = Family(
    name="shape_count",
    per_object_materials=True,
    description="Count one shape type among 1-5 types (DYSM 3D shape discrimination); "
    "every object at least min_visibility visible, the least visible one within the band above it.",
    params_model=ShapeCountParams,
    compose=compose,
    answer_types=("integer",),
    revision=2,
    recount=recount_subject,
)
