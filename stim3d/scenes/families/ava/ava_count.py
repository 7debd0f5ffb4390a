"""AVA-3D counting: "How many red cubes are there in the image?" (1..40 instances among distractors).

AVA-Bench balances its counting data per count bin and per object type; here the
count is the `answer` parameter, which a batch schedules evenly over the task
(scenes/balance.py) or a grid sets; a grid over `target_shape` balances the
target type. Composed alone, the count is drawn uniformly over [min_count, max_count]. Placement, the visibility floor and the
optional occlusion band are the counting families' (`counting.compose_counting`):
every object, counted or not, is at least `min_visibility` visible.
Metrics: exact accuracy and normalised MAE |n_hat - n| / n (`abs_rel`).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from ...colors import COLOR_NAMES
from ...model import SHAPES, Question
from ..base import VISIBLE, Composed, Family, FamilyParams, Frame, MinVisibility, SizeRange
from ..shared.answers import check_answer
from ..shared.counting import PLURAL, Spec, compose_counting, scale_for_crowd
from .ava_common import distractor_specs, pick

QUESTION = "How many {color} {plural} are there in the image?"
BIN_WIDTH = 5


class AvaCountParams(FamilyParams):
    answer: int | None = Field(None, ge=1, le=40, description="the gold count (instances of the target); None = "
                               "uniform over [min_count, max_count] (a batch schedules it over the task)")
    min_count: int = Field(1, ge=1, le=40, description="smallest drawn count")
    max_count: int = Field(40, ge=1, le=40, description="largest drawn count")
    target_shape: Literal["sphere", "cube", "cone", "cylinder", "torus"] | None = Field(None, description="None = drawn")
    target_color: str | None = Field(None, description="a palette colour; None = drawn")

    @field_validator("target_color")
    @classmethod
    def _palette_colour(cls, color: str | None) -> str | None:
        if color is not None and color not in COLOR_NAMES:
            raise ValueError(f"target_color {color!r}; allowed: {', '.join(COLOR_NAMES)}")
        return color
    max_distractors: int = Field(6, ge=0, le=20, description="distractors (another shape or colour): 0..this many")
    min_visibility: MinVisibility = Field(0.6, description=VISIBLE)
    band: float = Field(0.4, ge=0.01, le=1.0, description="least visible object in [min_visibility, +band]; "
                        "min_visibility + band >= 1 asks for the floor only")
    size_range: SizeRange = Field((0.7, 1.0), description="object size in metres, before crowd scaling")

    def answer_space(self) -> list[int]:
        return list(range(self.min_count, self.max_count + 1))

    @model_validator(mode="after")
    def _answer_realisable(self) -> AvaCountParams:
        if self.min_count > self.max_count:
            raise ValueError(f"min_count {self.min_count} > max_count {self.max_count}")
        return check_answer(self)


def count_bin(count: int) -> str:
    """AVA-style count bin label: 1-5, 6-10, ..., 36-40."""
    low = (count - 1) // BIN_WIDTH * BIN_WIDTH + 1
    return f"{low}-{low + BIN_WIDTH - 1}"


def compose(params: AvaCountParams, rng: np.random.Generator, frame: Frame) -> Composed:
    count = params.answer if params.answer is not None else int(rng.integers(params.min_count, params.max_count + 1))
    shape = params.target_shape or str(pick(rng, SHAPES))
    color = params.target_color or str(pick(rng, COLOR_NAMES))
    n_distractors = int(rng.integers(0, params.max_distractors + 1))
    n_objects = count + n_distractors
    size = scale_for_crowd(n_objects, params.size_range, rng)
    others = distractor_specs(rng, n_distractors, [(shape, color)], (size, size))
    specs = [Spec(shape, color, size) for _ in range(count)] + [Spec(o.shape, o.color, o.size) for o in others]
    question = Question(
        question_id="q0",
        text=QUESTION.format(color=color, plural=PLURAL[shape]),
        answer_type="integer",
        gold=count,
        subject={"shape": shape, "color": color, "ability": "count"},
    )
    difficulty = {"ability": "count", "count": count, "count_bin": count_bin(count), "target": f"{color} {shape}",
                  "n_distractors": n_distractors}
    return compose_counting(specs, params, rng, frame, question, difficulty)


FAMILY = Family(
    name="ava_count",
    description="AVA-3D counting: 1-40 instances of one (shape, colour) among distractors sharing its shape or "
    "colour; count and target balanced by the grid; every object at a visibility floor.",
    params_model=AvaCountParams,
    compose=compose,
    answer_types=("integer",),
)
