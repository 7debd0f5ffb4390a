"""Blender properties of the add-on, the family parameters generated from each family's pydantic model.

`scene.stim3d` holds the panel's inputs, the current item (as item.json text, so
it is saved with the .blend file), the last re-validated edit, and the rows the
Inspect panel lists. One PropertyGroup per family is made at registration from
`params.field_specs(family.params_model)`: a family added to
`scenes.families.FAMILIES` gets its controls without any change here.
"""

from __future__ import annotations

import json
from typing import Any

import bpy
import numpy as np
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    IntVectorProperty,
    PointerProperty,
    StringProperty,
)

from stim3d.scenes.families import FAMILIES

from .params import INT_LIMIT, FieldSpec, field_specs

DEFAULT_FAMILY = "shape_count"


def params_attribute(family: str) -> str:
    return "params_" + "".join(c if c.isalnum() else "_" for c in family)


def _label(name: str) -> str:
    return name.replace("_", " ").capitalize()


def _limits(spec: FieldSpec, cast: type) -> dict[str, Any]:
    limits: dict[str, Any] = {}
    if spec.minimum is not None:
        limits["min"] = cast(max(spec.minimum, -INT_LIMIT) if cast is int else spec.minimum)
    if spec.maximum is not None:
        limits["max"] = cast(min(spec.maximum, INT_LIMIT) if cast is int else spec.maximum)
    return limits


def blender_property(spec: FieldSpec) -> Any:
    """The bpy.props definition for one generated field."""
    common = {"name": _label(spec.name), "description": spec.description}
    if spec.kind == "bool":
        return BoolProperty(default=spec.default, **common)
    if spec.kind == "int":
        return IntProperty(default=max(-INT_LIMIT, min(INT_LIMIT, spec.default)), **_limits(spec, int), **common)
    if spec.kind == "float":
        return FloatProperty(default=spec.default, precision=3, step=1, **_limits(spec, float), **common)
    if spec.kind == "enum":
        return EnumProperty(items=[(v, v, "") for v in spec.items], default=spec.default, **common)
    if spec.kind == "float_vector":
        return FloatVectorProperty(size=spec.size, default=spec.default, precision=3, step=1, **_limits(spec, float), **common)
    if spec.kind == "int_vector":
        return IntVectorProperty(size=spec.size, default=spec.default, **_limits(spec, int), **common)
    if spec.kind == "json":
        common["description"] = (spec.description + " " if spec.description else "") + "(JSON; empty = the default)"
    return StringProperty(default=str(spec.default), **common)


def _typed_float(value: float) -> float:
    """The shortest decimal that Blender's float32 property holds: 0.8, not 0.800000011920929."""
    return float(str(np.float32(value)))


def group_values(group: Any, specs: list[FieldSpec]) -> dict[str, Any]:
    """The generated group's current values, keyed by field name (vectors as tuples, floats as typed)."""
    values: dict[str, Any] = {}
    for spec in specs:
        value = getattr(group, spec.name)
        if spec.kind == "float":
            value = _typed_float(value)
        elif spec.kind == "float_vector":
            value = tuple(_typed_float(v) for v in value)
        elif spec.kind == "int_vector":
            value = tuple(value)
        values[spec.name] = value
    return values


def set_group_values(group: Any, specs: list[FieldSpec], params: dict[str, Any]) -> None:
    """Show `params` (an item's) in the generated controls; a value a control cannot hold is left as it is."""
    for spec in specs:
        if spec.name not in params:
            continue
        value = params[spec.name]
        if spec.kind == "json":
            value = json.dumps(value)
        elif spec.kind in ("int_vector", "float_vector"):
            value = tuple(value)
        try:
            setattr(group, spec.name, value)
        except (TypeError, ValueError):
            continue


# -- rows the Inspect panel lists ------------------------------------------------------------------

class STIM3D_PG_object_row(bpy.types.PropertyGroup):
    object_id: IntProperty(name="Id")
    shape: StringProperty(name="Shape")
    color: StringProperty(name="Colour")
    visibility: FloatProperty(name="Visibility", precision=3)
    occlusion: FloatProperty(name="Occlusion", precision=3)
    truncation: FloatProperty(name="Truncation", precision=3)
    flags: StringProperty(name="Violated constraints")


class STIM3D_PG_question_row(bpy.types.PropertyGroup):
    text: StringProperty(name="Question")
    gold: StringProperty(name="Gold answer")
    check: StringProperty(name="Re-validation")


class STIM3D_PG_report_row(bpy.types.PropertyGroup):
    level: StringProperty(name="Level")
    text: StringProperty(name="Text")


def _on_color_toggle(self: Any, context: Any) -> None:
    from . import display

    display.show_visibility_colors(context, self.color_by_visibility)


def _on_object_index(self: Any, context: Any) -> None:
    from . import display

    if 0 <= self.object_index < len(self.objects):
        display.select_object(context, self.objects[self.object_index].object_id)


_SETTINGS_ANNOTATIONS: dict[str, Any] = {
    "seed": IntProperty(name="Seed", description="Item seed (the batch seed of a one-item config)", default=0, min=0),
    "width": IntProperty(name="Width", description="Image width in pixels", default=640, min=8, max=8192),
    "height": IntProperty(name="Height", description="Image height in pixels", default=480, min=8, max=8192),
    "clear_everything": BoolProperty(
        name="Clear scene",
        description="Generate and Open remove every object of the scene first (off: only what stim3d built)",
        default=True,
    ),
    "item_json": StringProperty(name="Item", options={"HIDDEN"}),
    "edited_json": StringProperty(name="Edited item", options={"HIDDEN"}),
    "source_path": StringProperty(name="Opened from", subtype="FILE_PATH"),
    "objects": CollectionProperty(type=STIM3D_PG_object_row),
    "object_index": IntProperty(name="Object", update=_on_object_index),
    "questions": CollectionProperty(type=STIM3D_PG_question_row),
    "report": CollectionProperty(type=STIM3D_PG_report_row),
    "color_by_visibility": BoolProperty(
        name="Colour by visibility",
        description="Viewport: green = fully visible, yellow = at min_visibility, red = hidden (materials untouched)",
        default=False,
        update=_on_color_toggle,
    ),
    "engine": EnumProperty(
        name="Engine",
        items=[("cycles", "Cycles", "Photorealistic, as the batch renders"), ("workbench", "Workbench", "Fast flat preview")],
        default="cycles",
    ),
    "look": EnumProperty(
        name="Look",
        description="Appearance to apply to the open item (Apply Look); drawn from the item's own seed (docs/looks.md)",
        items=[("studio", "Studio", "the families' area lights, grey ground, plain materials"),
               ("clevr", "CLEVR", "CLEVR's rubber and metal, key/fill/back lights, grey ground"),
               ("photoreal", "Photoreal", "HDRI light, a procedural ground, library materials and a camera's "
                "tone curve, glare, noise, vignetting, aberration and JPEG (Cycles)"),
               ("photoreal_raw", "Photoreal (raw)", "photoreal's scene without the camera after the sensor")],
        default="studio",
    ),
    "samples": IntProperty(name="Samples", default=64, min=1, max=65536),
    "denoise": BoolProperty(name="Denoise", default=True),
    "device": EnumProperty(name="Device", items=[("cpu", "CPU", ""), ("gpu", "GPU", "CUDA or OptiX")], default="cpu"),
    "depth": BoolProperty(name="Depth", description="Also write depth.npy", default=False),
    "save_dir": StringProperty(
        name="Save to", subtype="DIR_PATH",
        description="Batch folder: the edited item goes to <folder>/items/<item_id>-editN and records.jsonl is rebuilt",
    ),
}

_classes: list[type] = []


def family_specs() -> dict[str, list[FieldSpec]]:
    return {name: field_specs(family.params_model) for name, family in FAMILIES.items()}


def register() -> None:
    rows = [STIM3D_PG_object_row, STIM3D_PG_question_row, STIM3D_PG_report_row]
    annotations = dict(_SETTINGS_ANNOTATIONS)
    annotations["family"] = EnumProperty(
        name="Family",
        description="Task family to generate",
        items=[(name, name, family.description) for name, family in FAMILIES.items()],
        # The first DYSM family when it is there; plug-ins only add entries and never change the default.
        default=DEFAULT_FAMILY if DEFAULT_FAMILY in FAMILIES else next(iter(FAMILIES)),
    )
    groups = []
    for family, specs in family_specs().items():
        group = type(
            f"STIM3D_PG_{params_attribute(family)}",
            (bpy.types.PropertyGroup,),
            {"__annotations__": {spec.name: blender_property(spec) for spec in specs}},
        )
        groups.append(group)
        annotations[params_attribute(family)] = PointerProperty(type=group)
    settings = type("STIM3D_PG_settings", (bpy.types.PropertyGroup,), {"__annotations__": annotations})
    for cls in (*rows, *groups, settings):
        bpy.utils.register_class(cls)
        _classes.append(cls)
    bpy.types.Scene.stim3d = PointerProperty(type=settings)


def unregister() -> None:
    del bpy.types.Scene.stim3d
    while _classes:
        bpy.utils.unregister_class(_classes.pop())
