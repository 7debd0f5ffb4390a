"""AVA-3D colour: "What colour is the object in the white box?" over the named palette.

The gold is the object's nominal palette colour. A colour counts as ambiguous when
the nearest *other* palette colour is within `ambiguity_de` (CIEDE2000) of it; such
colours are never drawn (the composer cannot see the render, so it decides on the
nominal colours). The nominal distances to every palette colour are recorded at
compose time (`nominal_de_<name>`); after rendering, `measured_color_truth` (the
family's `rendered_difficulty` hook) gives the measured colour's distances
(`measured_de_<name>`, `measured_nearest`, `measured_margin_de`, `measured_ambiguous`)
from `ground_truth.objects[*].measured_srgb`, the median rendered sRGB of the
object's visible pixels in the unmarked image; the renderer adds them to the
item's difficulty (render/markers.py) and the records (render/batch/records.py).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from ...colors import COLOR_NAMES, PALETTE, delta_e_srgb
from ...model import SHAPES, Item, Question, round6
from ..base import VISIBLE, Composed, Family, FamilyParams, Frame, MinVisibility, SizeRange
from ..shared.answers import check_answer
from .ava_common import (
    ObjectSpec,
    box_area_fraction,
    distractor_specs,
    finish,
    marker_overlap,
    options_text,
    pick,
    scatter,
    truth_of,
)

QUESTION = "What colour is the {shape} in the {marker} box? Choose one: {options}."


class AvaColorParams(FamilyParams):
    answer: str | None = Field(None, description="the gold colour; None = drawn (a batch schedules it)")
    ambiguity_de: float = Field(10.0, ge=0.0, le=50.0, description="colours whose nearest other palette colour is "
                                "within this CIEDE2000 distance are never asked about")
    marker: Literal["white", "red", "blue"] = Field("white", description="colour of the box drawn around the object")
    min_area: float = Field(0.004, gt=0.0, lt=1.0, description="smallest visible box area, fraction of the image")
    max_distractors: int = Field(3, ge=0, le=12, description="unmarked objects: 0..this many")
    min_visibility: MinVisibility = Field(0.8, description=VISIBLE)
    size_range: SizeRange = Field((0.6, 1.4), description="object size in metres")

    def answer_space(self) -> list[str]:
        return unambiguous_colors(self.ambiguity_de)

    @model_validator(mode="after")
    def _answer_realisable(self) -> AvaColorParams:
        if not self.answer_space():
            raise ValueError(f"ambiguity_de {self.ambiguity_de}: every palette colour has a neighbour that close")
        return check_answer(self)


def palette_distances(srgb) -> dict[str, float]:
    """CIEDE2000 distance from an sRGB colour to every palette colour, in palette order."""
    names = list(PALETTE)
    distances = delta_e_srgb(np.asarray(srgb, dtype=float)[None, :], np.array([PALETTE[n] for n in names]))
    return {name: round6(float(d)) for name, d in zip(names, distances)}


def unambiguous_colors(ambiguity_de: float) -> list[str]:
    """Palette colours whose nearest other palette colour is at least `ambiguity_de` away."""
    keep = []
    for name in COLOR_NAMES:
        others = [d for other, d in palette_distances(PALETTE[name]).items() if other != name]
        if min(others) >= ambiguity_de:
            keep.append(name)
    return keep


def measured_color_truth(item: Item) -> dict[str, object]:
    """For a colour question: the measured colour's CIEDE2000 distances to the palette, nearest, margin, ambiguity.

    `measured_ambiguous` is a margin (second nearest minus nearest) below the item's
    `ambiguity_de`. {} for an item without a colour question, `measured_nearest: None`
    when the object showed no pixel to measure.
    """
    question = item.questions[0] if item.questions else None
    if question is None or question.subject.get("ability") != "color":
        return {}
    measured = item.ground_truth.of(int(question.subject["object_id"])).measured_srgb
    if measured is None:
        return {"measured_nearest": None}
    distances = palette_distances(measured)
    ranked = sorted(distances, key=distances.__getitem__)
    margin = round(distances[ranked[1]] - distances[ranked[0]], 6)
    threshold = float(item.difficulty.get("ambiguity_de", 0.0) or 0.0)
    return {**{f"measured_de_{name}": d for name, d in distances.items()}, "measured_nearest": ranked[0],
            "measured_margin_de": margin, "measured_ambiguous": margin < threshold}


def compose(params: AvaColorParams, rng: np.random.Generator, frame: Frame) -> Composed:
    color = params.answer or str(pick(rng, params.answer_space()))
    target = ObjectSpec(str(pick(rng, SHAPES)), color, float(rng.uniform(*params.size_range)),
                        role="target")
    n_distractors = int(rng.integers(0, params.max_distractors + 1))
    specs = [target, *distractor_specs(rng, n_distractors, [(target.shape, target.color)], params.size_range)]

    def accept(layout, truth) -> str | None:
        box = truth_of(truth, 1).bbox_visible
        if box_area_fraction(box, frame) < params.min_area:
            return "box_area"
        return marker_overlap(truth, frame)

    layout, truth = scatter(specs, frame, rng, params.min_visibility, accept)
    question = Question(
        question_id="q0",
        text=QUESTION.format(shape=target.shape, marker=params.marker, options=options_text(COLOR_NAMES)),
        answer_type="choice",
        gold=target.color,
        subject={"shape": target.shape, "color": target.color, "object_id": 1, "options": "|".join(COLOR_NAMES),
                 "ability": "color"},
    )
    nominal = palette_distances(PALETTE[target.color])
    difficulty = {"ability": "color", "n_distractors": n_distractors, "ambiguity_de": params.ambiguity_de,
                  "de_formula": "CIEDE2000", **{f"nominal_de_{name}": d for name, d in nominal.items()}}
    return finish(layout, truth, question, difficulty, markers={1: params.marker}, frame=frame)


FAMILY = Family(
    name="ava_color",
    per_object_materials=True,
    description="AVA-3D colour: name the palette colour of the boxed object; nominally ambiguous colours "
    "(CIEDE2000) are never drawn; measured rendered colour and its distances recorded after rendering.",
    params_model=AvaColorParams,
    compose=compose,
    answer_types=("choice",),
    rendered_difficulty=measured_color_truth,
)
