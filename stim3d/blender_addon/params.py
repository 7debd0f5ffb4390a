"""A family's pydantic Params model -> a flat list of UI fields, and UI values -> validated params.

The panel is generated from the models, not written per family: families are
added by other people, and a new field (or a new family) must appear in
Blender without touching the add-on. This module knows nothing of Blender; the
add-on turns each `FieldSpec` into a Blender property (properties.py).

Kinds: bool, int, float, str, enum (a Literal of strings), int_vector and
float_vector (fixed-length numeric tuples of 2-4 items), and json for
anything else (lists, dicts, optional values): a text field holding JSON, empty
meaning "the model's default".
"""

from __future__ import annotations

import json
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticUndefined

from stim3d.errors import Stim3dError

INT_LIMIT = 2**31 - 1  # Blender's IntProperty is a C int


class ParamsError(Stim3dError, ValueError):
    """Parameters the family's model rejects: one line naming the field, the value and the rule."""


@dataclass(frozen=True)
class FieldSpec:
    name: str
    kind: Literal["bool", "int", "float", "str", "enum", "int_vector", "float_vector", "json"]
    default: Any
    description: str = ""
    minimum: float | None = None  # inclusive for ge, the bound itself for gt (the model says the rest)
    maximum: float | None = None
    items: tuple[str, ...] = ()  # enum choices
    size: int = 0  # vector length
    required: bool = False


def _bounds(metadata: list[Any]) -> tuple[float | None, float | None]:
    low = high = None
    for rule in metadata:
        for attr in ("ge", "gt"):
            if getattr(rule, attr, None) is not None:
                low = getattr(rule, attr)
        for attr in ("le", "lt"):
            if getattr(rule, attr, None) is not None:
                high = getattr(rule, attr)
    return low, high


def _vector_kind(annotation: Any) -> tuple[str, int] | None:
    """(kind, size) for tuple[float, float] and friends; None for anything else."""
    if typing.get_origin(annotation) is not tuple:
        return None
    args = typing.get_args(annotation)
    if not 2 <= len(args) <= 4 or Ellipsis in args or len(set(args)) != 1:
        return None
    if args[0] is float:
        return "float_vector", len(args)
    if args[0] is int:
        return "int_vector", len(args)
    return None


def _literal_items(annotation: Any) -> tuple[str, ...] | None:
    if typing.get_origin(annotation) is Literal:
        values = typing.get_args(annotation)
        if values and all(isinstance(v, str) for v in values):
            return tuple(values)
    return None


def field_spec(name: str, info: Any) -> FieldSpec:
    """The UI field for one pydantic field (`model.model_fields[name]`)."""
    annotation = info.annotation
    if info.default is not PydanticUndefined:
        default, required = info.default, False
    elif info.default_factory is not None:
        default, required = info.default_factory(), False
    else:
        default, required = None, True
    low, high = _bounds(info.metadata)
    common: dict[str, Any] = {"name": name, "description": info.description or "", "required": required}
    if annotation is bool:
        return FieldSpec(kind="bool", default=bool(default) if default is not None else False, **common)
    if annotation is int:
        return FieldSpec(kind="int", default=int(default or 0), minimum=low, maximum=high, **common)
    if annotation is float:
        return FieldSpec(kind="float", default=float(default or 0.0), minimum=low, maximum=high, **common)
    if annotation is str:
        return FieldSpec(kind="str", default=default or "", **common)
    if (items := _literal_items(annotation)) is not None:
        return FieldSpec(kind="enum", default=default if default in items else items[0], items=items, **common)
    if (vector := _vector_kind(annotation)) is not None:
        kind, size = vector
        cast = float if kind == "float_vector" else int
        values = tuple(cast(v) for v in default) if default is not None else (cast(0),) * size
        return FieldSpec(kind=kind, default=values, size=size, minimum=low, maximum=high, **common)  # type: ignore[arg-type]
    shown = "" if default is None else json.dumps(default if not isinstance(default, BaseModel) else default.model_dump(mode="json"))
    return FieldSpec(kind="json", default=shown, **common)


def field_specs(model: type[BaseModel]) -> list[FieldSpec]:
    """Every field of `model`, in declaration order."""
    return [field_spec(name, info) for name, info in model.model_fields.items()]


def params_from_values(model: type[BaseModel], values: dict[str, Any], family: str = "params") -> dict[str, Any]:
    """UI values (as the properties hold them) -> the validated params dict (JSON-ready).

    Raises ParamsError with one line, e.g. "shape_count.max_instances = 9: Input should be less than or equal to 5".
    """
    params: dict[str, Any] = {}
    for spec in field_specs(model):
        if spec.name not in values:
            continue
        value = values[spec.name]
        if spec.kind in ("int_vector", "float_vector"):
            value = tuple(value)
        elif spec.kind == "json":
            text = str(value).strip()
            if not text:
                continue  # the model's default
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ParamsError(f"{family}.{spec.name} = {text!r}: not valid JSON ({exc.msg})") from None
        params[spec.name] = value
    try:
        return model.model_validate(params).model_dump(mode="json")
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "params"
        shown = "" if isinstance(error.get("input"), dict) else f" = {error.get('input')!r}"
        raise ParamsError(f"{family}.{where}{shown}: {error['msg']}") from None
