"""Checks every family's parameters share (used by `FamilyParams`): no bools as numbers or words, usable ranges.

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


def _string_words(annotation: Any) -> set[str] | None:
    """The words a string field allows (empty: any string), or None when the field takes no string."""
    if annotation is str:
        return set()
    if typing.get_origin(annotation) is typing.Literal:
        words = {arg for arg in typing.get_args(annotation) if isinstance(arg, str)}
        return words or None
    for arg in typing.get_args(annotation):
        found = _string_words(arg)
        if found is not None:
            return found
    return None


def _yaml_word(name: str, value: bool, annotation: Any) -> str:
    """A string field given a YAML boolean: the word `yes`/`no` where the field allows it, else ValueError.

    YAML 1.1 (PyYAML) reads bare yes/no/on/off/true/false as booleans; only yes/no can be
    told back from the value, so other words must be quoted."""
    words = _string_words(annotation)
    word = "yes" if value else "no"
    if words is not None and word in words:
        return word
    allowed = f" (allowed: {', '.join(sorted(words))})" if words else ""
    raise ValueError(f"{name} = {str(value).lower()}: YAML read a bare yes/no/on/off/true/false as a true/false "
                     f"value where a word is expected; quote it{allowed}")


def _has_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    return isinstance(value, (list, tuple)) and any(_has_bool(v) for v in value)


def reject_bools(model: type[BaseModel], data: Any) -> Any:
    """`data`, or ValueError when a number field (or a number in a list field) is given a bool. A word field
    given a YAML boolean gets the word `yes`/`no` where it allows it, else a ValueError saying to quote it."""
    if not isinstance(data, dict):
        return data
    for name, info in model.model_fields.items():
        if name not in data or _allows_bool(info.annotation) or not _has_bool(data[name]):
            continue
        if isinstance(data[name], bool) and _string_words(info.annotation) is not None:
            data = {**data, name: _yaml_word(name, data[name], info.annotation)}
            continue
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
