"""AVA-3D object recognition: "What is in the red box?" over the library of composed objects.

The target is one composed object of the library (scenes/objects.yaml: a mug, a car, a
snowman, ...), marked by a red box; 0..`max_distractors` other library objects stand
around it, none of the target's kind. The gold is the target's display name ("traffic
cone"). It is asked twice, as AVA-Bench does: `q0` lists every library object as options
(`choice`), `q1` asks for the name openly (`subject["form"] = "open"`, no options in the
prompt). Both are scored as a choice among the library's names, each named by its
synonyms too (`subject["synonyms"]`, "name=word|word;...", read by
`scoring/records.py` `Record.choice_synonyms`), so "a coffee cup" is the option mug. The
target is the `answer` parameter (balanced over the library by a batch); its visible box is
at least `min_area` of the image and its marker overlaps no other object's box. The target
shows each of its defining features (objects.yaml `defining`: the mug's handle, the car's
wheels, the chair's backrest) with at least one visible pixel, or the layout is redrawn: a
mug whose handle is hidden is a can to anyone who looks, an item people get wrong because it
is ambiguous, not hard. The visible pixels of each of the target's parts are its ground
truth's `part_px`.

Difficulty axes, recorded: the target's visibility, its size in pixels (the visible box's
longer side), and the viewpoint: the camera's azimuth about the object from its canonical
front (0 = seen from the front, 90 = from its left side, counter-clockwise from above) and its
elevation above the object's centre.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import Field, model_validator

from ....errors import MissingObject
from ...colors import COLOR_NAMES
from ...model import Question, Scene, SceneObject, round6
from ...object_library import entry, object_names, synonyms_of
from ..base import Composed, Family, FamilyParams, Frame, Recount
from ..shared.answers import check_answer
from .ava_common import ObjectSpec, box_area_fraction, finish, marker_overlap, options_text, pick, scatter, truth_of

QUESTION = "What is in the {marker} box? Choose one: {options}."
OPEN_QUESTION = "What is in the {marker} box? Name the object."
REVISION = 3


def display_name(name: str) -> str:
    """A library name as a person writes it: traffic_cone -> traffic cone."""
    return name.replace("_", " ")


class AvaObjectParams(FamilyParams):
    answer: str | None = Field(None, description="the gold object (its display name, e.g. 'traffic cone'); "
                               "None = drawn (a batch schedules it)")
    max_distractors: int = Field(3, ge=0, le=6, description="other library objects around it: 0..this many")
    min_area: float = Field(0.006, gt=0.0, lt=1.0, description="smallest visible box area, fraction of the image")
    min_visibility: float = Field(0.75, gt=0.0, le=1.0, description="every object at least this visible")
    size_range: tuple[float, float] = Field((1.0, 1.8), description="object size (longest extent) in metres")

    def answer_space(self) -> list[str]:
        return [display_name(name) for name in object_names()]

    @model_validator(mode="after")
    def _answer_realisable(self) -> AvaObjectParams:
        return check_answer(self)


def synonyms_text() -> str:
    """Every option's synonyms, "mug=mug|cup|...;car=...", for scoring open answers."""
    return ";".join(f"{display_name(n)}={'|'.join(synonyms_of(n))}" for n in object_names())


def hidden_features(name: str, part_px: dict[str, float]) -> list[str]:
    """The defining features of library object `name` (objects.yaml) of which no part has a visible pixel."""
    return [feature for feature, parts in entry(name).defining.items() if sum(part_px[p] for p in parts) <= 0]


def compose(params: AvaObjectParams, rng: np.random.Generator, frame: Frame) -> Composed:
    names = object_names()
    target_name = (params.answer or display_name(str(pick(rng, names)))).replace(" ", "_")
    target = ObjectSpec(target_name, str(pick(rng, COLOR_NAMES)), float(rng.uniform(*params.size_range)), "target")
    others = [n for n in names if n != target_name]
    n_distractors = int(rng.integers(0, params.max_distractors + 1))
    chosen = rng.choice(len(others), size=n_distractors, replace=False)
    specs = [target, *(ObjectSpec(others[int(k)], str(pick(rng, COLOR_NAMES)), float(rng.uniform(*params.size_range)))
                       for k in chosen)]

    def accept(layout, truth) -> str | None:
        box = truth_of(truth, 1).bbox_visible
        if box_area_fraction(box, frame) < params.min_area:
            return "box_area"
        if hidden_features(target_name, layout.canvas.part_px(layout.objects[1])):
            return "defining_part_hidden"
        return marker_overlap(truth, frame)

    layout, truth = scatter(specs, frame, rng, params.min_visibility, accept)
    parts = layout.canvas.part_px(layout.objects[1])
    truth.truths = [t.model_copy(update={"part_px": parts}) if t.id == 1 else t for t in truth.truths]
    options = [display_name(n) for n in names]
    subject = {"object": target_name, "object_id": 1, "options": "|".join(options), "synonyms": synonyms_text(),
               "ability": "object"}
    questions = [
        Question(question_id="q0", text=QUESTION.format(marker="red", options=options_text(options)),
                 answer_type="choice", gold=display_name(target_name), subject=subject),
        Question(question_id="q1", text=OPEN_QUESTION.format(marker="red"), answer_type="choice",
                 gold=display_name(target_name), subject={**subject, "form": "open"}),
    ]
    target = truth_of(truth, 1)
    box = target.bbox_visible
    azimuth, elevation = viewpoint(layout.objects[1], layout.camera.location)
    difficulty = {"ability": "object", "object": target_name, "n_distractors": n_distractors,
                  "target_visibility": target.visibility, "size_px": int(max(box[2] - box[0], box[3] - box[1])),
                  "view_azimuth_deg": azimuth, "view_elevation_deg": elevation}
    composed = finish(layout, truth, questions[0], difficulty, markers={1: "red"}, frame=frame)
    composed.questions = questions
    return composed


def viewpoint(obj: SceneObject, camera_location: Sequence[float]) -> tuple[float, float]:
    """(azimuth, elevation) in degrees of the camera about `obj`: azimuth from the object's canonical front (+Y of its
    own frame, turned by its yaw about +Z), counter-clockwise seen from above; elevation above its centre."""
    w, _, _, z = obj.rotation_quat
    yaw = 2.0 * math.atan2(z, w)  # library objects stand upright: a turn about +Z only
    to_camera = np.asarray(camera_location, dtype=float) - np.asarray(obj.location, dtype=float)
    front = np.array([-math.sin(yaw), math.cos(yaw)])
    left = np.array([-front[1], front[0]])
    azimuth = math.degrees(math.atan2(float(to_camera[:2] @ left), float(to_camera[:2] @ front))) % 360.0
    elevation = math.degrees(math.atan2(float(to_camera[2]), float(np.hypot(*to_camera[:2]))))
    return round6(azimuth), round6(elevation)


def recount(question: Question, scene: Scene) -> Recount | None:
    """The gold of an edited scene (the add-on's re-validation): the library object the question asks about, by its
    display name; None when it is gone or is no library object (a primitive or a mesh file put in its place)."""
    try:
        obj = scene.object(int(question.subject["object_id"]))
    except (KeyError, ValueError, MissingObject):
        return None
    if obj.source is None or obj.source.kind != "composed":
        return None
    return Recount(display_name(obj.source.name), (obj.id,))


FAMILY = Family(
    name="ava_object",
    description="AVA-3D object recognition: name the composed library object in the red box, from 12 options and "
    "openly (scored through each object's synonyms); balanced answers; visibility, size in pixels and viewpoint "
    "recorded.",
    params_model=AvaObjectParams,
    compose=compose,
    recount=recount,
    answer_types=("choice",),
    revision=REVISION,
)
