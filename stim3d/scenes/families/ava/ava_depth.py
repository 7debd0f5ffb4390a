"""AVA-3D depth: absolute ("how far is the closest point of the X in the red box, in metres?") and
relative ("which is closer, the X in the red box or the Y in the blue box?").

Gold depths come from the ray cast: `depth_min` is the nearest *visible* point of the
object along the camera's viewing axis (what a depth map gives), `depth_centroid`
the depth of its bounding-box centre; both are recorded. The relative task keeps
only pairs whose nearest depths differ by at least `min_gap` metres (AVA-Bench:
0.5 m) and whose marker boxes do not overlap, and draws which colour box holds the
closer object with equal odds (or takes it from `answer`, which a batch schedules evenly).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from ...colors import COLOR_NAMES
from ...model import SHAPES, Question
from ..base import VISIBLE, Composed, Family, FamilyParams, Frame, MinVisibility, SizeRange
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

ABSOLUTE = ("Estimate how far the closest point of the {color} {shape} (highlighted by a red box) is from the "
            "camera, in metres.")
RELATIVE = ("Which object is closer to the camera, the {red} (highlighted by a red box) or the {blue} "
            "(highlighted by a blue box)? Choose one: {options}.")
CLOSER_OPTIONS = ("red", "blue")


class AvaDepthAbsoluteParams(FamilyParams):
    max_distractors: int = Field(3, ge=0, le=12, description="unmarked objects: 0..this many")
    min_visibility: MinVisibility = Field(0.7, description=VISIBLE)
    size_range: SizeRange = Field((0.5, 1.4), description="object size in metres")


class AvaDepthRelativeParams(FamilyParams):
    min_gap: float = Field(0.5, gt=0.0, le=5.0, description="nearest-point depths differ by at least this (metres)")
    answer: Literal["red", "blue"] | None = Field(None, description="which box holds the closer object; None = drawn "
                                                  "(a batch schedules it over the task)")
    max_distractors: int = Field(3, ge=0, le=12, description="unmarked objects: 0..this many")
    min_visibility: MinVisibility = Field(0.8, description=VISIBLE)
    size_range: SizeRange = Field((0.5, 1.4), description="object size in metres")

    def answer_space(self) -> list[str]:
        return list(CLOSER_OPTIONS)


def _spec(rng: np.random.Generator, size_range: tuple[float, float], role: str) -> ObjectSpec:
    return ObjectSpec(str(pick(rng, SHAPES)), str(pick(rng, COLOR_NAMES)), float(rng.uniform(*size_range)), role)


def compose_absolute(params: AvaDepthAbsoluteParams, rng: np.random.Generator, frame: Frame) -> Composed:
    target = _spec(rng, params.size_range, "target")
    n_distractors = int(rng.integers(0, params.max_distractors + 1))
    specs = [target, *distractor_specs(rng, n_distractors, [(target.shape, target.color)], params.size_range)]

    def accept(layout, truth) -> str | None:
        return marker_overlap(truth, frame)

    layout, truth = scatter(specs, frame, rng, params.min_visibility, accept)
    measured = truth_of(truth, 1)
    question = Question(
        question_id="q0",
        text=ABSOLUTE.format(color=target.color, shape=target.shape),
        answer_type="number",
        gold=round(float(measured.depth_min), 3),
        subject={"shape": target.shape, "color": target.color, "object_id": 1, "ability": "depth_absolute",
                 "unit": "m"},
    )
    difficulty = {"ability": "depth_absolute", "depth_min": measured.depth_min,
                  "depth_centroid": measured.depth_centroid, "n_distractors": n_distractors}
    return finish(layout, truth, question, difficulty, markers={1: "red"}, frame=frame)


def compose_relative(params: AvaDepthRelativeParams, rng: np.random.Generator, frame: Frame) -> Composed:
    first, second = _spec(rng, params.size_range, "marked"), _spec(rng, params.size_range, "marked")
    if (first.shape, first.color) == (second.shape, second.color):
        second = ObjectSpec(second.shape, str(pick(rng, [c for c in COLOR_NAMES if c != first.color])), second.size,
                            "marked")
    closer = params.answer or str(pick(rng, CLOSER_OPTIONS))
    n_distractors = int(rng.integers(0, params.max_distractors + 1))
    pairs = [(first.shape, first.color), (second.shape, second.color)]
    specs = [first, second, *distractor_specs(rng, n_distractors, pairs, params.size_range)]

    def accept(layout, truth) -> str | None:
        a, b = truth_of(truth, 1), truth_of(truth, 2)
        if abs(a.depth_min - b.depth_min) < params.min_gap:
            return "depth_gap"
        return marker_overlap(truth, frame, others=(2,))

    layout, truth = scatter(specs, frame, rng, params.min_visibility, accept)
    near_id = 1 if truth_of(truth, 1).depth_min < truth_of(truth, 2).depth_min else 2
    far_id = 3 - near_id
    markers = {near_id: closer, far_id: "blue" if closer == "red" else "red"}
    red_id = near_id if closer == "red" else far_id
    blue_id = 3 - red_id
    red, blue = specs[red_id - 1], specs[blue_id - 1]
    question = Question(
        question_id="q0",
        text=RELATIVE.format(red=red.shape, blue=blue.shape, options=options_text(CLOSER_OPTIONS)),
        answer_type="choice",
        gold=closer,
        subject={"red_object_id": red_id, "blue_object_id": blue_id, "red_shape": red.shape,
                 "blue_shape": blue.shape, "closer_shape": specs[near_id - 1].shape,
                 "options": "|".join(CLOSER_OPTIONS), "ability": "depth_relative"},
    )
    gap = abs(truth_of(truth, 1).depth_min - truth_of(truth, 2).depth_min)
    difficulty = {"ability": "depth_relative", "depth_gap": round(gap, 6), "min_gap": params.min_gap,
                  "depth_min_red": truth_of(truth, red_id).depth_min,
                  "depth_min_blue": truth_of(truth, blue_id).depth_min, "n_distractors": n_distractors}
    return finish(layout, truth, question, difficulty, markers=markers, frame=frame)


FAMILY_ABSOLUTE = Family(
    name="ava_depth_absolute",
    per_object_materials=True,
    description="AVA-3D absolute depth: metres to the nearest visible point of the red-boxed object (ray cast "
    "depth_min; centroid depth recorded too).",
    params_model=AvaDepthAbsoluteParams,
    compose=compose_absolute,
    answer_types=("number",),
)
FAMILY_RELATIVE = Family(
    name="ava_depth_relative",
    per_object_materials=True,
    description="AVA-3D relative depth: which of a red- and a blue-boxed object is closer (nearest depths >= 0.5 m "
    "apart, boxes apart); red/blue balanced.",
    params_model=AvaDepthRelativeParams,
    compose=compose_relative,
    answer_types=("choice",),
)
