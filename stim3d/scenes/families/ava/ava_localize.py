"""AVA-3D localisation: "Provide the bounding box of the red cube." (one instance among distractors).

AVA-Bench keeps images with exactly one instance of the category and a box area
between 0.2 % and 50 % of the image. Here the target is the only object of its
(shape, colour); distractors share its shape or its colour. The gold is the
target's *visible* box from the ray cast (`bbox_visible`, pixels, x1 and y1
exclusive): the pixels that really show it, so a partly hidden target's box is
the part one can see. Scenes are redrawn until the box area is in range and the
target at least `min_visibility` visible. Metrics: IoU and accuracy at IoU >= 0.5.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field, model_validator

from ...colors import COLOR_NAMES
from ...model import SHAPES, Question
from ..base import VISIBLE, Composed, Family, FamilyParams, Frame, MinVisibility, SizeRange
from .ava_common import ObjectSpec, box_area_fraction, distractor_specs, finish, pick, scatter, truth_of

QUESTION = "Provide the bounding box coordinates of the {color} {shape}."


class AvaLocalizeParams(FamilyParams):
    max_distractors: int = Field(4, ge=0, le=12, description="distractors: 0..this many")
    min_area: float = Field(0.002, gt=0.0, lt=1.0, description="smallest box area, fraction of the image")
    max_area: float = Field(0.5, gt=0.0, le=1.0, description="largest box area, fraction of the image")
    min_visibility: MinVisibility = Field(0.7, description=VISIBLE)
    size_range: SizeRange = Field((0.4, 2.2), description="target size in metres (log-uniform)")

    @model_validator(mode="after")
    def _area_range(self) -> AvaLocalizeParams:
        if self.min_area >= self.max_area:
            raise ValueError(f"min_area {self.min_area} must be below max_area {self.max_area}")
        return self


def compose(params: AvaLocalizeParams, rng: np.random.Generator, frame: Frame) -> Composed:
    shape, color = str(pick(rng, SHAPES)), str(pick(rng, COLOR_NAMES))
    low, high = np.log(params.size_range[0]), np.log(params.size_range[1])
    target = ObjectSpec(shape, color, float(np.exp(rng.uniform(low, high))), role="target")
    n_distractors = int(rng.integers(0, params.max_distractors + 1))
    specs = [target, *distractor_specs(rng, n_distractors, [(shape, color)], (0.5, 1.1))]

    def accept(layout, truth) -> str | None:
        area = box_area_fraction(truth_of(truth, 1).bbox_visible, frame)
        return None if params.min_area <= area <= params.max_area else "box_area"

    layout, truth = scatter(specs, frame, rng, params.min_visibility, accept)
    box = truth_of(truth, 1).bbox_visible
    question = Question(
        question_id="q0",
        text=QUESTION.format(color=color, shape=shape),
        answer_type="box",
        gold=tuple(box),
        subject={"shape": shape, "color": color, "object_id": 1, "ability": "localize"},
    )
    difficulty = {"ability": "localize", "target": f"{color} {shape}", "n_distractors": n_distractors,
                  "box_area_fraction": round(box_area_fraction(box, frame), 6),
                  "target_visibility": truth_of(truth, 1).visibility}
    return finish(layout, truth, question, difficulty)


FAMILY = Family(
    name="ava_localize",
    per_object_materials=True,
    description="AVA-3D localisation: the visible box (xyxy pixels, ray cast) of the one (shape, colour) instance "
    "among distractors; box area 0.2-50 % of the image.",
    params_model=AvaLocalizeParams,
    compose=compose,
    answer_types=("box",),
)
