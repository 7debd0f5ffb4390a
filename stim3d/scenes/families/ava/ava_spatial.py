"""AVA-3D spatial relations between a red-boxed and a blue-boxed object.

"Is the cube (red box) to the left of or to the right of the sphere (blue box)?"
Three relations, each with two answers: left/right and above/below in the image,
in front/behind in depth. A relation is asked only where it is unambiguous by a
margin recorded in the ground truth: the objects' visible boxes are at least
`margin_px` apart along the image axis (the whole red box left of the whole blue
box), or the red object's nearest and centre depths are both at least `margin_m`
nearer (or farther) than the blue one's. The relation is drawn uniformly over the
allowed ones and the answer uniformly over its two values (or fixed by `answer`,
which a batch schedules evenly over the task), so a constant answer scores chance.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from ...colors import COLOR_NAMES
from ...model import SHAPES, Question
from ..base import VISIBLE, Composed, Family, FamilyParams, Frame, MinVisibility, SizeRange
from ..shared.answers import check_answer
from .ava_common import (
    ObjectSpec,
    distractor_specs,
    finish,
    marker_overlap,
    options_text,
    pick,
    scatter,
    truth_of,
)

RELATIONS: dict[str, tuple[str, str]] = {
    "horizontal": ("left", "right"),
    "vertical": ("above", "below"),
    "depth": ("in front", "behind"),
}
PHRASE = {"horizontal": "to the left of or to the right of", "vertical": "above or below",
          "depth": "in front of or behind"}
QUESTION = "Is the {red} (in the red box) {phrase} the {blue} (in the blue box)? Choose one: {options}."
Relation = Literal["horizontal", "vertical", "depth"]


class AvaSpatialParams(FamilyParams):
    relations: list[Relation] = Field(["horizontal", "vertical", "depth"], min_length=1,
                                      description="relations that may be asked")
    answer: Literal["left", "right", "above", "below", "in front", "behind"] | None = Field(
        None, description="fix the answer (its relation must be allowed); None = drawn (a batch schedules it)")
    margin_frac: float = Field(0.04, ge=0.0, le=0.5, description="image-axis gap between the boxes, fraction of "
                               "the image width (horizontal) or height (vertical)")
    margin_m: float = Field(0.5, ge=0.0, le=5.0, description="depth gap for in front / behind (metres)")
    max_distractors: int = Field(2, ge=0, le=12, description="unmarked objects: 0..this many")
    min_visibility: MinVisibility = Field(0.8, description=VISIBLE)
    size_range: SizeRange = Field((0.5, 1.3), description="object size in metres")

    def answer_space(self) -> list[str]:
        return [answer for relation in self.relations for answer in RELATIONS[relation]]

    @model_validator(mode="after")
    def _answer_realisable(self) -> AvaSpatialParams:
        return check_answer(self)


def relation_margin(relation: str, first, second) -> float:
    """How far `first` is on the first side of `second` (>0: left/above/in front) along the relation's axis.

    Image axes: the gap in pixels between the visible boxes (0 when they overlap along
    that axis). Depth: the smaller of the nearest-point and centre depth differences in
    metres (0 when the two disagree in sign).
    """
    if relation == "depth":
        near = second.depth_min - first.depth_min
        centre = second.depth_centroid - first.depth_centroid
        if near > 0 and centre > 0:
            return float(min(near, centre))
        return float(max(near, centre)) if near < 0 and centre < 0 else 0.0
    axis = 0 if relation == "horizontal" else 1
    a0, a1 = first.bbox_visible[axis], first.bbox_visible[axis + 2]
    b0, b1 = second.bbox_visible[axis], second.bbox_visible[axis + 2]
    if a1 <= b0:
        return float(b0 - a1)
    return -float(a0 - b1) if b1 <= a0 else 0.0


def compose(params: AvaSpatialParams, rng: np.random.Generator, frame: Frame) -> Composed:
    if params.answer is not None:
        relation = next(r for r, answers in RELATIONS.items() if params.answer in answers)
        answer: str = params.answer
    else:
        relation = str(pick(rng, params.relations))
        answer = str(pick(rng, RELATIONS[relation]))
    needed = params.margin_m if relation == "depth" else params.margin_frac * (
        frame.width if relation == "horizontal" else frame.height)
    first = ObjectSpec(str(pick(rng, SHAPES)), str(pick(rng, COLOR_NAMES)), float(rng.uniform(*params.size_range)))
    second = ObjectSpec(str(pick(rng, SHAPES)), str(pick(rng, [c for c in COLOR_NAMES if c != first.color])),
                        float(rng.uniform(*params.size_range)))
    n_distractors = int(rng.integers(0, params.max_distractors + 1))
    pairs = [(first.shape, first.color), (second.shape, second.color)]
    specs = [first, second, *distractor_specs(rng, n_distractors, pairs, params.size_range)]

    def accept(layout, truth) -> str | None:
        margin = relation_margin(relation, truth_of(truth, 1), truth_of(truth, 2))
        if margin == 0.0 or abs(margin) < needed:
            return "relation_margin"
        return marker_overlap(truth, frame, others=(2,))

    layout, truth = scatter(specs, frame, rng, params.min_visibility, accept)
    one_first = relation_margin(relation, truth_of(truth, 1), truth_of(truth, 2)) > 0
    # Red goes to the object for which `answer` is true of "red relative to blue".
    red_id = 1 if one_first == (answer == RELATIONS[relation][0]) else 2
    blue_id = 3 - red_id
    red, blue = specs[red_id - 1], specs[blue_id - 1]
    margin = relation_margin(relation, truth_of(truth, red_id), truth_of(truth, blue_id))
    options = RELATIONS[relation]
    question = Question(
        question_id="q0",
        text=QUESTION.format(red=red.shape, blue=blue.shape, phrase=PHRASE[relation], options=options_text(options)),
        answer_type="choice",
        gold=answer,
        subject={"relation": relation, "red_object_id": red_id, "blue_object_id": blue_id, "red_shape": red.shape,
                 "blue_shape": blue.shape, "options": "|".join(options), "ability": "spatial"},
    )
    difficulty = {"ability": "spatial", "relation": relation, "margin": round(abs(margin), 6),
                  "margin_unit": "m" if relation == "depth" else "px", "margin_required": round(needed, 6),
                  "n_distractors": n_distractors}
    return finish(layout, truth, question, difficulty, markers={red_id: "red", blue_id: "blue"}, frame=frame)


FAMILY = Family(
    name="ava_spatial",
    per_object_materials=True,
    description="AVA-3D spatial relations: red-boxed vs blue-boxed object, left/right, above/below or in front/behind, "
    "asked only where a recorded margin makes it unambiguous; answers balanced.",
    params_model=AvaSpatialParams,
    compose=compose,
    answer_types=("choice",),
)
