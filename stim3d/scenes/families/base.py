"""What a task family is: a parameter model, a description, and `compose(params, rng, frame)`.

Ranges live in the pydantic Params model (`Field(ge=..., le=...)`), so config
validation, `stim3d families` and error messages all come from one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from stim3d.scenes.params_checks import check_ranges, reject_bools

from ..model import AddedIn, Question, Scene, SceneObject, leave_out_added_defaults
from ..visibility import VisibilityResult

# The parameters several families share, their ranges stated once (each family gives its own default):
MinVisibility = Annotated[float, Field(gt=0.0, le=1.0)]  # every object at least this visible (DYSM's beta_occ)
SizeRange = tuple[float, float]  # object size in metres; check_ranges holds it finite, positive and ordered
VISIBLE = "every object at least this visible"
ADDED_PARAM = AddedIn("0.2.0.dev0")  # library objects in ava_count, odd_grid, rose_grid (docs/objects.md)


class FamilyParams(BaseModel):
    """Base of every family's parameters: unknown keys are an error.

    Shared checks for every family (scenes/params_checks.py): `true` is not taken as
    a number, and every `*_range` pair is finite, positive and ordered, so a config
    that cannot render fails `stim3d validate` instead of every item at render time.
    A parameter added after items existed is marked `Annotated[T, ADDED_PARAM]` (the
    `AddedIn` rule of scenes/model.py): while it holds its default it is left out of
    item.json's `params`, so items composed before it existed keep their bytes.
    """

    model_config = ConfigDict(extra="forbid")

    @model_serializer(mode="wrap")
    def _leave_out_added_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return leave_out_added_defaults(self, handler(self))

    @model_validator(mode="before")
    @classmethod
    def _no_bools_as_numbers(cls, data: Any) -> Any:
        return reject_bools(cls, data)

    @model_validator(mode="after")
    def _ranges_usable(self) -> FamilyParams:
        check_ranges(self)
        return self


@dataclass(frozen=True)
class Frame:
    """The image the scene is composed for (the camera is built for this size), and where mesh files may be read.

    `mesh_roots`: absolute folders a family may read mesh files from (`scenes/mesh_files.py mesh_source`):
    a batch's config folder and its `mesh_roots`; empty where no config names any (then a mesh file is refused).
    """

    width: int
    height: int
    rays_per_pixel: int = 1
    mesh_roots: tuple[str, ...] = ()


@dataclass
class Composed:
    """What a family returns: the scene, its questions, and the measured ground truth."""

    scene: Scene
    questions: list[Question]
    truth: VisibilityResult
    difficulty: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Recount:
    """A gold answer recomputed from a scene (`Family.recount`): the answer and the ids of the objects it counted."""

    gold: Any
    object_ids: tuple[int, ...]


@dataclass(frozen=True)
class Family:
    """A task family as registered under the entry-point group `stim3d.families` (docs/plugins.md).

    `revision` is the generator revision: bump it whenever the family's output
    changes for the same (params, seed), in the same commit as the golden pin in
    tests/test_golden.py. It is recorded in every item's provenance and in the
    resume key, so a batch folder made by another revision is refused, never mixed.

    `rendered_difficulty(item)`, when given, returns difficulty keys that can only be
    measured on the rendered item (its ground truth then holds `measured_srgb`); the
    records merge them into their `difficulty` (render/batch/records.py), so
    `stim3d score --by` can use them. The rendered item.json holds them too
    (render/markers.py `annotate`).

    `look_colour_check(item)`, when given, is the family's own colour check under a
    look, on the rendered item (its ground truth holds `measured_srgb`): it returns the
    measures to record in item.json (`scene.look.measured`) and the ids of the objects
    whose colour difference no longer holds. Those count as colour failures like a
    named colour that reads as another (scenes/look_colours.py): the look is redrawn,
    and objects still failing are listed in `scene.look.colour_failures`
    (scenes/look_redraws.py). In studio the same failures ask for a re-exposure of
    the family's rig (`StudioRedraw` there).

    `figure_of(obj)`, when given, names the figure an object is a part of (a label's
    number, a letter), or None for an object that stands alone: the parts of one figure
    are judged together by the contrast floor (scenes/look_contrast.py), since a dot's
    neighbouring dots are its figure, not its surroundings.

    `per_object_materials`: the family's objects are independent draws (a scatter of
    counted or asked-about objects), so under a drawn look each draws its own material;
    otherwise objects sharing a finish share one material, so a material can never single
    out an odd cell, an exception or a letter's dot (scenes/looks.py).

    `densest(params)`, when given, is the most crowded item the parameters can draw, as (how crowded, its
    parameters): odd_grid's largest grid of its `grid_range`. `stim3d validate` composes, per task, the most
    crowded of these at the render's full size, so a range whose densest items cannot meet a pixel minimum is
    refused before the batch, not found in one item of thirty.

    `recount(question, scene)`, when given, is the family's one rule for its gold
    answer after the scene changed: the add-on's Re-validate (blender_addon/validation.py)
    and the occlusion sweep (scenes/sweep/items.py) both call it, so an edited scene and
    a swept scene cannot disagree about an answer. It returns None for a question it
    cannot recount; a family without it has its golds reported as not re-checked.

    The modules of scenes/families/shared/ that the family's module imports (directly
    or through its own helper modules) add their revisions to its resume key
    (scenes/families/shared/__init__.py `shared_modules`).
    """

    name: str
    description: str
    params_model: type[FamilyParams]
    compose: Callable[[Any, np.random.Generator, Frame], Composed]
    answer_types: tuple[str, ...]
    revision: int = 1
    rendered_difficulty: Callable[[Any], dict[str, Any]] | None = None
    look_colour_check: Callable[[Any], tuple[dict[str, float], list[int]]] | None = None
    recount: Callable[[Question, Scene], Recount | None] | None = None
    figure_of: Callable[[SceneObject], str | None] | None = None
    per_object_materials: bool = False
    densest: Callable[[Any], tuple[float, dict[str, Any]]] | None = None
