"""AVA-3D texture: "What is the texture on the sign in the red box?" over six DTD texture names.

The sign (scenes/families/ava/ava_sign.py) carries one procedural pattern whose
class is exact by construction: the renderer builds it from arithmetic on the
face's coordinates (and, for `cracked`, Blender's Voronoi distance to the cell
edge; render/backends/blender_textures.py), in the class's definition of
scenes/surfaces.py. The class is the `answer` parameter (a batch schedules it); the
period is drawn as a number of periods across the sign, the pattern's angle, the ink
colour and its contrast independently of it. Scenes are redrawn until one period is
at least `min_period` of the image's width long (6.4 px at 640) (measured at the sign's centre
along the pattern's shorter projected axis). Difficulty records the period in metres
and pixels, periods across the sign, Michelson contrast, viewing angle and the sign's
visibility.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from ...colors import PALETTE
from ...model import Question, SceneObject
from ...surfaces import PAPER_SRGB, TEXTURE_CLASSES, ink_srgb, michelson
from ...visibility import VisibilityResult
from ..base import Composed, Family, FamilyParams, Frame
from ..shared.answers import check_answer
from ..shared.stage import counting_camera
from .ava_common import (
    box_area_fraction,
    finish,
    options_text,
    pick,
)
from .ava_sign import face_scale_px, recount_sign, scatter_sign, viewing_angle_deg

QUESTION = "What is the texture of the sign in the {marker} box? Choose one: {options}."
INKS = ("red", "green", "blue", "purple", "black")  # palette colours dark enough against the paper


class AvaTextureParams(FamilyParams):
    answer: str | None = Field(None, description="the texture class; None = drawn (a batch schedules it)")
    periods: tuple[float, float] = Field((4.0, 8.0), description="periods across the sign (drawn uniformly)")
    min_period: float = Field(0.01, gt=0.0, le=0.2, description="least period on the image, a share of its width "
                              "(6.4 px at the preset's 640)")
    contrast: tuple[float, float] = Field((0.6, 1.0), description="ink: share of the way from paper to its colour")
    max_view_deg: float = Field(35.0, ge=0.0, le=60.0, description="sign turned up to this far from the camera")
    size_range: tuple[float, float] = Field((1.1, 1.6), description="sign edge in metres")
    marker: Literal["red", "blue", "white"] = Field("red", description="colour of the box around the sign")
    max_distractors: int = Field(3, ge=0, le=12, description="plain objects: 0..this many")
    occluder_share: float = Field(0.5, ge=0.0, le=1.0, description="share of items with an object put in front of "
                                  "the sign (it may hide part of it)")
    min_visibility: float = Field(0.6, gt=0.0, le=1.0, description="every object, the sign too, this visible")

    def answer_space(self) -> list[str]:
        return list(TEXTURE_CLASSES)

    @model_validator(mode="after")
    def _ranges(self) -> AvaTextureParams:
        for name in ("periods", "contrast", "size_range"):
            low, high = getattr(self, name)
            if not 0 < low <= high:
                raise ValueError(f"{name} must be 0 < low <= high, got {getattr(self, name)}")
        if self.contrast[1] > 1.0:
            raise ValueError(f"contrast must be at most 1, got {self.contrast}")
        return check_answer(self)


def compose(params: AvaTextureParams, rng: np.random.Generator, frame: Frame) -> Composed:
    texture = params.answer or str(pick(rng, TEXTURE_CLASSES))
    size = float(rng.uniform(*params.size_range))
    period = size / float(rng.uniform(*params.periods))
    angle = float(rng.uniform(0.0, 180.0))
    ink, contrast = str(pick(rng, INKS)), float(rng.uniform(*params.contrast))
    view = float(rng.uniform(-params.max_view_deg, params.max_view_deg))
    camera = counting_camera(frame)
    attributes = {"texture": texture, "texture_period_m": round(period, 6), "texture_angle_deg": round(angle, 3),
                  "texture_contrast": round(contrast, 6)}

    def readable(sign: SceneObject, truth: VisibilityResult) -> str | None:
        return "period_px" if face_scale_px(sign, camera, angle) * period < params.min_period * frame.width else None

    scene = scatter_sign(params, rng, frame, camera, size=size, ink=ink, view_deg=view, attributes=attributes,
                         readable=readable)
    obj, target = scene.sign, scene.target
    question = Question(
        question_id="q0",
        text=QUESTION.format(marker=params.marker, options=options_text(TEXTURE_CLASSES)),
        answer_type="choice",
        gold=texture,
        subject={"shape": "sign", "object_id": 1, "options": "|".join(TEXTURE_CLASSES), "ability": "texture"},
    )
    difficulty = {
        "ability": "texture", "texture": texture, "shape": "tile", "n_distractors": scene.n_distractors,
        "occluder": scene.occluded,
        "period_m": round(period, 6), "period_px": round(face_scale_px(obj, camera, angle) * period, 3),
        "periods_across": round(size / period, 3), "contrast": michelson(PAPER_SRGB, ink_srgb(PALETTE[ink], contrast)),
        "viewing_angle_deg": viewing_angle_deg(obj, camera), "target_visibility": target.visibility,
        "occlusion": target.occlusion,
        "box_area_fraction": round(box_area_fraction(scene.target_box, frame), 6),
    }
    return finish(scene.layout, scene.truth, question, difficulty, markers={1: params.marker}, frame=frame)


FAMILY = Family(
    name="ava_texture",
    per_object_materials=True,
    description="AVA-3D texture: name the procedural texture (six DTD classes, exact by construction) on the boxed "
    "sign; period at least min_period of the image width, contrast and viewing angle recorded.",
    params_model=AvaTextureParams,
    compose=compose,
    recount=recount_sign("texture"),
    answer_types=("choice",),
    revision=2,  # 2: an occluder in front of the sign in half the items
)
