"""The scene model's ground floor: types, rounding, the AddedIn rule and the strict base every model shares.

scenes/model.py (the item and its scene) and scenes/look_model.py (what a look draws) both build on it; it
imports neither, so the two can import it without a cycle. Everything here is re-exported by scenes/model.py,
the one place callers import the model from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

Shape = Literal["sphere", "cube", "cone", "cylinder", "torus", "tile", "composed", "mesh"]
# The primitives families draw objects from; "tile" (a thin square slab) is a marker, e.g. a cue under grid cells.
# "composed" and "mesh" are not primitives: their geometry is the object's `source` (docs/objects.md).
SHAPES: tuple[Shape, ...] = ("sphere", "cube", "cone", "cylinder", "torus")
PrimitiveShape = Literal["sphere", "cube", "cone", "cylinder", "torus", "tile"]
Finish = Literal["matte", "glossy"]
LookName = Literal["studio", "clevr", "photoreal", "photoreal_raw"]
# The appearances an item can be rendered in (scenes/looks.py draws them, docs/looks.md shows them). photoreal_raw is
# photoreal's very draw without the camera pipeline after the sensor: the realism ladder's rung between the two.
LOOK_NAMES: tuple[LookName, ...] = ("studio", "clevr", "photoreal", "photoreal_raw")
# The realism ladder, least to most photographic: one scene in each rung (`stim3d sweep look`, docs/looks.md).
LADDER: tuple[LookName, ...] = ("clevr", "studio", "photoreal_raw", "photoreal")

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]  # (w, x, y, z), Blender's order
Box = tuple[int, int, int, int]  # x0, y0, x1, y1 in pixels; x1, y1 exclusive

IDENTITY_QUAT: Quat = (1.0, 0.0, 0.0, 0.0)


def round6(value: float) -> float:
    """Round to 6 decimals (micrometres for lengths): stable JSON, no noise bits."""
    return float(round(float(value), 6))


@dataclass(frozen=True)
class AddedIn:
    """Field metadata (`Annotated[T, AddedIn("0.2.0.dev0")]`): the stim3d version that added the field.

    The one rule for fields added after files existed: while such a field holds its
    default it is left out of the JSON (`leave_out_added_defaults`), so an item.json, a
    config's content hash or a resume key made before the field existed keeps its bytes
    (tests/test_golden.py and tests/test_fixture_resume.py hold them). A field given a
    non-default value is written as usual.
    """

    version: str


ADDED = AddedIn("0.2.0.dev0")  # looks, interchange, normals, a look's measures: all joined in the 0.2.0 series


def leave_out_added_defaults(model: BaseModel, data: dict[str, Any]) -> dict[str, Any]:
    """`data` (the model's serialised fields) without the `AddedIn` fields that hold their default."""
    for name, field in type(model).model_fields.items():
        if name in data and any(isinstance(m, AddedIn) for m in field.metadata) \
                and getattr(model, name) == field.get_default(call_default_factory=True):
            del data[name]
    return data


class Strict(BaseModel):
    """Base for all models: unknown keys are an error, so typos in files surface; NaN and infinity are refused
    (JSON readers take them, but no position, size or power is one: a scene file holding one would build a
    broken scene); `AddedIn` fields at their default are left out of the JSON."""

    model_config = ConfigDict(extra="forbid", frozen=False, allow_inf_nan=False)

    @model_serializer(mode="wrap")
    def _leave_out_added_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return leave_out_added_defaults(self, handler(self))


class Light(Strict):
    """A square area light; it emits along its local -Z axis, as in Blender."""

    kind: Literal["area"] = "area"
    location: Vec3
    rotation_quat: Quat
    size: float = Field(gt=0)
    power_w: float = Field(ge=0)
    color_srgb: tuple[float, float, float] = (1.0, 1.0, 1.0)
