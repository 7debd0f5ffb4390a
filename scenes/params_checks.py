"""Checks every family's parameters share (used by `FamilyParams`): no bools as numbers, usable ranges.

pydantic's lax mode takes `true` for 1 and accepts `[1.05, 0.75]`, `[0, 0]` or
`[.nan, 1]` for a `tuple[float, float]`; none of those can render, so they are
refused when the config is validated.
"""

from __future__ import annotations

import math
import typing
from typing import Any

from pydantic import BaseModel


def _allows_bool(annotation: Any) -> bool:
    if annotation is bool or annotation is Any:
        return True
    return any(_allows_bool(arg) for arg in typing.get_args(annotation))


def _has_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    return isinstance(value, (list, tuple)) and any(_has_bool(v) for v in value)


def reject_bools(model: type[BaseModel], data: Any) -> Any:
    """`data` unchanged, or ValueError when a number field (or a number in a list field) is given a bool."""
    if not isinstance(data, dict):
        return data
    for name, info in model.model_fields.items():
        if name in data and not _allows_bool(info.annotation) and _has_bool(data[name]):
            raise ValueError(f"{name} = {data[name]!r}: a true/false value where a number is expected")
    return data


def check_ranges(params: BaseModel) -> None:
    """ValueError unless every `*_range` field is a (low, high) pair of finite positive numbers with low <= high."""
    for name in type(params).model_fields:
        value = getattr(params, name)
        if not name.endswith("_range") or not isinstance(value, (tuple, list)) or len(value) != 2:
            continue
        low, high = value
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in value):
            raise ValueError(f"{name} = {list(value)}: both ends must be finite numbers")
        if low <= 0 or high <= 0:
            raise ValueError(f"{name} = {list(value)}: both ends must be positive")
        if low > high:
            raise ValueError(f"{name} = {list(value)}: the low end comes first ({high}, {low})")
