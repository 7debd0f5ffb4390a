"""AVA-3D text recognition (OCR): "What is written on the sign in the red box?"; gold = the exact string.

The sign (ava_sign.py) carries one line of upper-case text, either a common English word
from WORDS or a random string over an alphabet without look-alikes (no O/0, I/1, Q),
each drawn with probability 1/2 (`random_share`) and recorded as `text_kind`. The
renderer sets it with the font that ships in scenes/fonts/ (render/backends/
blender_textures.py, through Pillow). Scenes are redrawn until every character is
whole on the image — each character's box on the face (scenes/surfaces.py
`text_boxes`), sampled on a 7 x 7 grid, falls on the sign in the ray-cast instance map,
so distractors may hide the sign's margins but never a stroke — and the cap height is at
least `min_char` of the image width on the image (7.7 px at 640). Difficulty records the
cap height in pixels (the smallest over the characters), viewing angle, the sign's
occlusion and the Michelson contrast. Scoring: ANLS (AVA-Bench) and exact match, both
case-insensitive (scoring/rules.py).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from ...colors import PALETTE
from ...model import Camera, Question, SceneObject
from ...surfaces import PAPER_SRGB, ink_srgb, michelson, text_boxes, text_width_m
from ...visibility import VisibilityResult
from ..base import Composed, Family, FamilyParams, Frame
from ..shared.stage import counting_camera
from .ava_common import box_area_fraction, finish, pick
from .ava_sign import face_points_px, recount_sign, scatter_sign, viewing_angle_deg

QUESTION = "What is written on the sign in the {marker} box? Answer with the exact text."
WORDS: tuple[str, ...] = (
    "APPLE", "BRIDGE", "CANDLE", "DESK", "EAGLE", "FOREST", "GARDEN", "HOTEL", "ISLAND", "JACKET", "KITCHEN",
    "LEMON", "MARKET", "NORTH", "OCEAN", "PENCIL", "QUIET", "RIVER", "SUMMER", "TABLE", "UNCLE", "VALLEY", "WINDOW",
    "YELLOW", "ZEBRA", "BREAD", "CLOUD", "DANCE", "EXIT", "FLAME", "GLASS", "HORSE", "LIGHT", "MOUSE", "NIGHT",
    "PLANT", "ROBOT", "STONE", "TRAIN", "WATER", "CAMERA", "DOCTOR", "ENGINE", "FAMILY", "GUITAR", "HAMMER",
    "LADDER", "MIRROR", "PARK", "SCHOOL", "TICKET", "WINTER", "STOP", "OPEN", "CLOSED", "PUSH", "PULL", "SALE",
)
RANDOM_ALPHABET = "ABCDEFGHJKLMNPRSTUVWXYZ23456789"  # no O/0, I/1 or Q: a random string has no look-alikes
INKS = ("red", "green", "blue", "purple", "black")
GRID = 7  # samples per side of a character's box for the whole-character test


class AvaOcrParams(FamilyParams):
    random_share: float = Field(0.5, ge=0.0, le=1.0, description="share of random strings (the rest: words)")
    length: tuple[int, int] = Field((3, 7), description="characters of a random string")
    fill: tuple[float, float] = Field((0.6, 1.0), description="cap height: share of the largest that fits the sign")
    min_char: float = Field(0.012, gt=0.0, le=0.2, description="least cap height on the image, a share of its width")
    contrast: tuple[float, float] = Field((0.6, 1.0), description="ink: share of the way from paper to its colour")
    max_view_deg: float = Field(35.0, ge=0.0, le=60.0, description="sign turned up to this far from the camera")
    size_range: tuple[float, float] = Field((1.3, 1.8), description="sign edge in metres")
    marker: Literal["red", "blue", "white"] = Field("red", description="colour of the box around the sign")
    max_distractors: int = Field(3, ge=0, le=12, description="plain objects: 0..this many")
    occluder_share: float = Field(0.5, ge=0.0, le=1.0, description="share of items with an object put in front of "
                                  "the sign (it may hide part of it)")
    min_visibility: float = Field(0.5, gt=0.0, le=1.0, description="every object, the sign too, this visible")

    @model_validator(mode="after")
    def _ranges(self) -> AvaOcrParams:
        if not 1 <= self.length[0] <= self.length[1] <= 12:
            raise ValueError(f"length must be 1 <= low <= high <= 12, got {self.length}")
        for name in ("fill", "contrast", "size_range"):
            low, high = getattr(self, name)
            if not 0 < low <= high:
                raise ValueError(f"{name} must be 0 < low <= high, got {getattr(self, name)}")
        if self.fill[1] > 1.0 or self.contrast[1] > 1.0:
            raise ValueError("fill and contrast must be at most 1")
        return self


def draw_text(rng: np.random.Generator, params: AvaOcrParams) -> tuple[str, str]:
    """(text, kind): a word, or a random string of `length` characters."""
    if rng.uniform() < params.random_share:
        n = int(rng.integers(params.length[0], params.length[1] + 1))
        return "".join(str(pick(rng, RANDOM_ALPHABET)) for _ in range(n)), "random"
    return str(pick(rng, WORDS)), "word"


def largest_height(text: str, size: float) -> float:
    """The largest cap height whose line fits 84 % of the sign's width and is at most a quarter of its height."""
    return min(0.25 * size, 0.84 * size * 0.1 / text_width_m(text, 0.1))


def character_samples(text: str, height: float) -> np.ndarray:
    """GRID x GRID face points inside each character's box; shape (n, GRID * GRID, 2)."""
    t = (np.arange(GRID) + 0.5) / GRID
    boxes = text_boxes(text, height)
    xs = boxes[:, None, 0] + t[None, :] * (boxes[:, 2] - boxes[:, 0])[:, None]
    ys = boxes[:, None, 1] + t[None, :] * (boxes[:, 3] - boxes[:, 1])[:, None]
    grid_x = np.repeat(xs[:, :, None], GRID, axis=2).reshape(len(text), -1)
    grid_y = np.repeat(ys[:, None, :], GRID, axis=1).reshape(len(text), -1)
    return np.stack([grid_x, grid_y], axis=-1)


def characters_whole(obj: SceneObject, camera: Camera, ids: np.ndarray, text: str, height: float) -> bool:
    """Every sample of every character's box falls on the sign (id `obj.id`) in the instance map."""
    samples = character_samples(text, height)
    px = face_points_px(obj, camera, samples[..., 0], samples[..., 1])
    cols, rows = np.floor(px[..., 0]).astype(int), np.floor(px[..., 1]).astype(int)
    inside = (cols >= 0) & (rows >= 0) & (cols < ids.shape[1]) & (rows < ids.shape[0])
    return bool(inside.all() and (ids[rows, cols] == obj.id).all())


def char_height_px(obj: SceneObject, camera: Camera, text: str, height: float) -> float:
    """The smallest projected cap height over the characters, pixels."""
    boxes = text_boxes(text, height)
    centres = (boxes[:, 0] + boxes[:, 2]) / 2
    low = face_points_px(obj, camera, centres, np.full(len(text), -height / 2))
    high = face_points_px(obj, camera, centres, np.full(len(text), height / 2))
    return float(np.linalg.norm(high - low, axis=-1).min())


def compose(params: AvaOcrParams, rng: np.random.Generator, frame: Frame) -> Composed:
    text, kind = draw_text(rng, params)
    size = float(rng.uniform(*params.size_range))
    height = round(largest_height(text, size) * float(rng.uniform(*params.fill)), 6)
    ink, contrast = str(pick(rng, INKS)), float(rng.uniform(*params.contrast))
    view = float(rng.uniform(-params.max_view_deg, params.max_view_deg))
    camera = counting_camera(frame)
    attributes = {"text": text, "text_height_m": height, "text_contrast": round(contrast, 6)}

    def readable(sign: SceneObject, truth: VisibilityResult) -> str | None:
        if char_height_px(sign, camera, text, height) < params.min_char * frame.width:
            return "char_height_px"
        return None if characters_whole(sign, camera, truth.instance_map, text, height) else "characters_hidden"

    scene = scatter_sign(params, rng, frame, camera, size=size, ink=ink, view_deg=view, attributes=attributes,
                         readable=readable)
    obj, target = scene.sign, scene.target
    question = Question(question_id="q0", text=QUESTION.format(marker=params.marker), answer_type="text", gold=text,
                        subject={"shape": "sign", "object_id": 1, "ability": "ocr"})
    difficulty = {
        "ability": "ocr", "text_kind": kind, "n_chars": len(text), "n_distractors": scene.n_distractors,
        "occluder": scene.occluded,
        "char_height_px": round(char_height_px(obj, camera, text, height), 3), "text_height_m": height,
        "viewing_angle_deg": viewing_angle_deg(obj, camera), "occlusion": target.occlusion,
        "contrast": michelson(PAPER_SRGB, ink_srgb(PALETTE[ink], contrast)),
        "box_area_fraction": round(box_area_fraction(scene.target_box, frame), 6),
    }
    return finish(scene.layout, scene.truth, question, difficulty, markers={1: params.marker}, frame=frame)

FAMILY = Family(
    name="ava_ocr",
    per_object_materials=True,
    description="AVA-3D text recognition: read the word or random string on the boxed sign (shipped DejaVu "
    "font); every character whole on the image; ANLS and exact match.",
    params_model=AvaOcrParams,
    compose=compose,
    recount=recount_sign("text"),
    answer_types=("text",),
    revision=2,  # 2: an occluder in front of the sign in half the items
)
