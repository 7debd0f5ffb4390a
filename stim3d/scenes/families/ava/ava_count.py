"""AVA-3D counting: "How many red cubes are there in the image?" (1..40 instances among distractors).

AVA-Bench balances its counting data per count bin and per object type; here the
count is the `answer` parameter, which a batch schedules evenly over the task
(scenes/balance.py) or a grid sets; a grid over `target_shape` balances the
target type. Composed alone, the count is drawn uniformly over [min_count, max_count]. Placement, the visibility floor and the
optional occlusion band are the counting families' (`counting.compose_counting`):
every object, counted or not, is at least `min_visibility` visible.
Metrics: exact accuracy and normalised MAE |n_hat - n| / n (`abs_rel`).

Counting by object class (opt-in): `objects` (library names, scenes/objects.yaml) and/or
`target_object` make the counted target and the distractors composed library objects.
The question names the class ("How many mugs are there in the image?"); every instance
of it counts, whatever its colour (each object's colour is drawn from the palette), and
the distractors are other classes of `objects` (the whole library when only
`target_object` is given). A grid over `target_object` balances the class as one over
`target_shape` balances the primitive. `mesh_objects` ({class name: mesh file}) adds
classes read from mesh files (scenes/mesh_files.py; in a batch, under the config's
folder or its `mesh_roots`): a kettle file counts as "kettles".
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

import numpy as np
from pydantic import Field, ValidationInfo, field_validator, model_validator

from ...colors import COLOR_NAMES
from ...mesh_files import mesh_source
from ...model import SHAPES, Question
from ...object_library import checked_names, object_names, plural_of
from ..base import ADDED_PARAM, VISIBLE, Composed, Family, FamilyParams, Frame, MinVisibility, SizeRange
from ..shared.answers import check_answer
from ..shared.counting import PLURAL, Spec, compose_counting, scale_for_crowd
from .ava_common import distractor_specs, pick

QUESTION = "How many {color} {plural} are there in the image?"
OBJECT_QUESTION = "How many {plural} are there in the image?"
MESH_CLASS = re.compile(r"[a-z][a-z_]{0,39}")
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
    objects: Annotated[list[str] | None, ADDED_PARAM] = Field(
        None, description="count library objects (scenes/objects.yaml): the counted class and the distractors are "
        "drawn from these names; None = primitives")
    mesh_objects: Annotated[dict[str, str] | None, ADDED_PARAM] = Field(
        None, description="classes read from mesh files, {name: path} (path relative to the config's folder or "
        "under its mesh_roots); they join the classes drawn from")
    target_object: Annotated[str | None, ADDED_PARAM] = Field(
        None, description="the counted library object or mesh_objects class (a grid over it balances the class); "
        "None = drawn from `objects`; given alone, the distractors are drawn from the whole library")

    @field_validator("objects")
    @classmethod
    def _library_objects(cls, names: list[str] | None) -> list[str] | None:
        return checked_names(names)

    @field_validator("target_object")
    @classmethod
    def _library_object(cls, name: str | None, info: ValidationInfo) -> str | None:
        if name is not None and name not in (info.data.get("mesh_objects") or {}):
            checked_names([name])
        return name

    @field_validator("mesh_objects")
    @classmethod
    def _class_names(cls, files: dict[str, str] | None) -> dict[str, str] | None:
        for name in files or {}:
            if not MESH_CLASS.fullmatch(name) or name in object_names():
                raise ValueError(f"mesh_objects name {name!r}: lower-case letters and '_', not a library object's "
                                 f"name ({', '.join(object_names())})")
        return files

    def library_pool(self) -> list[str] | None:
        """The classes an item draws from (target and distractors); None when it counts primitives."""
        if self.objects is None and self.target_object is None and not self.mesh_objects:
            return None
        library = list(self.objects) if self.objects is not None else [] if self.mesh_objects else list(object_names())
        return library + list(self.mesh_objects or {})

    def answer_space(self) -> list[int]:
        return list(range(self.min_count, self.max_count + 1))

    @model_validator(mode="after")
    def _answer_realisable(self) -> AvaCountParams:
        if self.min_count > self.max_count:
            raise ValueError(f"min_count {self.min_count} > max_count {self.max_count}")
        pool = self.library_pool()
        if pool is not None:
            if self.target_shape is not None or self.target_color is not None:
                raise ValueError("target_shape and target_color count primitives: leave them out when counting "
                                 "library objects (objects, target_object)")
            if self.target_object is not None and self.target_object not in pool:
                raise ValueError(f"target_object {self.target_object!r} is not among objects {pool}")
            if len(pool) < 2 and self.max_distractors > 0:
                raise ValueError(f"classes {pool}: distractors need a second one (in objects or mesh_objects) "
                                 "or max_distractors: 0")
        return check_answer(self)


def count_bin(count: int) -> str:
    """AVA-style count bin label: 1-5, 6-10, ..., 36-40."""
    low = (count - 1) // BIN_WIDTH * BIN_WIDTH + 1
    return f"{low}-{low + BIN_WIDTH - 1}"


def compose(params: AvaCountParams, rng: np.random.Generator, frame: Frame) -> Composed:
    count = params.answer if params.answer is not None else int(rng.integers(params.min_count, params.max_count + 1))
    pool = params.library_pool()
    if pool is not None:
        return compose_objects(params, pool, count, rng, frame)
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


def compose_objects(params: AvaCountParams, pool: list[str], count: int, rng: np.random.Generator,
                    frame: Frame) -> Composed:
    """Counting by object class: `count` instances of one library object among other library objects."""
    name = params.target_object or str(pick(rng, pool))
    others = [n for n in pool if n != name]
    n_distractors = int(rng.integers(0, params.max_distractors + 1))
    size = scale_for_crowd(count + n_distractors, params.size_range, rng)
    files = {n: mesh_source(path, frame.mesh_roots) for n, path in (params.mesh_objects or {}).items()}
    kinds = [name] * count + [str(pick(rng, others)) for _ in range(n_distractors)]
    specs = [Spec(kind, str(pick(rng, COLOR_NAMES)), size, files.get(kind)) for kind in kinds]
    question = Question(question_id="q0", text=OBJECT_QUESTION.format(plural=plural_of(name)), answer_type="integer",
                        gold=count, subject={"object": name, "ability": "count"})
    difficulty = {"ability": "count", "count": count, "count_bin": count_bin(count), "target": name,
                  "n_distractors": n_distractors}
    return compose_counting(specs, params, rng, frame, question, difficulty)


FAMILY = Family(
    name="ava_count",
    per_object_materials=True,
    description="AVA-3D counting: 1-40 instances of one (shape, colour) among distractors sharing its shape or "
    "colour, or of one library object among others (objects, target_object); count and target balanced by the "
    "grid; every object at a visibility floor.",
    params_model=AvaCountParams,
    compose=compose,
    answer_types=("integer",),
)
