"""DYSM 3D joint shape-colour discrimination: "How many red spheres are in the scene?"

Each present shape type comes in 1..max_colors_per_shape palette colours; each
(shape, colour) pair has 1..max_instances instances. The answer is drawn first,
uniformly over 0..max_instances. A zero answer asks either about a present shape
in an absent colour (so shape alone does not answer it) or, when a shape type is
absent, about a present colour on an absent shape, half the time each. `answer`
fixes the count instead (a batch schedules it: scenes/balance.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field, model_validator

from ...colors import COLOR_NAMES
from ...model import SHAPES, Question
from ..base import Composed, Family, FamilyParams, Frame, MinVisibility, SizeRange
from ..shared.answers import check_answer, draw_answer
from ..shared.counting import PLURAL, Spec, compose_counting, recount_subject, scale_for_crowd

QUESTION = "How many {color} {plural} are in the scene?"


class ShapeColorCountParams(FamilyParams):
    n_shape_types: int = Field(3, ge=1, le=5, description="distinct shape types present (S)")
    max_instances: int = Field(3, ge=1, le=5, description="most instances of one (shape, colour) pair (I_sc)")
    max_colors_per_shape: int = Field(2, ge=1, le=7, description="colours each present shape comes in, at most")
    min_visibility: MinVisibility = Field(0.8, description="every object at least this visible (beta_occ)")
    band: float = Field(0.05, ge=0.01, le=0.5, description="least visible object lands in [min_visibility, min_visibility + band]")
    size_range: SizeRange = Field((0.75, 1.05), description="object size in metres, before crowd scaling")
    answer: int | None = Field(None, ge=0, le=5, description="the gold count; none draws it uniformly (a batch schedules it)")

    def answer_space(self) -> list[int]:
        """Every count 0..max_instances: a zero can always ask about a colour a present shape lacks."""
        return list(range(0, self.max_instances + 1))

    @model_validator(mode="after")
    def _answer_realisable(self) -> ShapeColorCountParams:
        return check_answer(self)


def _pick(rng: np.random.Generator, options: list) -> Any:
    return options[int(rng.integers(len(options)))]


def compose(params: ShapeColorCountParams, rng: np.random.Generator, frame: Frame) -> Composed:
    present = [SHAPES[i] for i in sorted(rng.choice(len(SHAPES), params.n_shape_types, replace=False))]
    colors = {
        shape: [COLOR_NAMES[i] for i in sorted(rng.choice(len(COLOR_NAMES), int(rng.integers(1, params.max_colors_per_shape + 1)), replace=False))]
        for shape in present
    }
    pairs = [(shape, color) for shape in present for color in colors[shape]]
    counts = {pair: int(rng.integers(1, params.max_instances + 1)) for pair in pairs}
    gold = draw_answer(rng, 0, params.max_instances) if params.answer is None else params.answer
    if gold == 0:
        absent_shapes = [s for s in SHAPES if s not in present]
        if absent_shapes and rng.random() < 0.5:
            queried = (_pick(rng, absent_shapes), _pick(rng, sorted({c for cs in colors.values() for c in cs})))
        else:
            shape = _pick(rng, present)
            queried = (shape, _pick(rng, [c for c in COLOR_NAMES if c not in colors[shape]]))
    else:
        queried = _pick(rng, pairs)
        counts[queried] = gold
    n_objects = sum(counts.values())
    specs = [
        Spec(shape, color, scale_for_crowd(n_objects, params.size_range, rng))
        for (shape, color) in pairs
        for _ in range(counts[(shape, color)])
    ]
    shape, color = queried
    question = Question(
        question_id="q0",
        text=QUESTION.format(color=color, plural=PLURAL[shape]),
        answer_type="integer",
        gold=gold,
        subject={"shape": shape, "color": color},
    )
    difficulty = {
        "n_shape_types": params.n_shape_types,
        "max_instances": params.max_instances,
        "max_colors_per_shape": params.max_colors_per_shape,
    }
    return compose_counting(specs, params, rng, frame, question, difficulty)


FAMILY = Family(
    name="shape_color_count",
    per_object_materials=True,
    description="Count one (colour, shape) pair among 1-5 shape types in the 8 palette colours "
    "(DYSM 3D joint shape-colour discrimination); visibility floor and band as in shape_count.",
    params_model=ShapeColorCountParams,
    compose=compose,
    answer_types=("integer",),
    revision=2,
    recount=recount_subject,
)
