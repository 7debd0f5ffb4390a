"""Which items of a batch a command works on: the KEY=VALUE rule the gallery, contact sheets, `stim3d eval` and
`stim3d study build` share.

A filter `KEY=VALUE` keeps the items whose difficulty value (else family parameter, else `look`) named KEY
equals VALUE read as YAML (0.7 is a number, true a boolean, red text); numbers compare within a relative
1e-9. A key no item has, or filters that keep nothing, is a SelectionError naming the keys there are.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from stim3d.errors import Stim3dError
from stim3d.render.batch.reading import Batch
from stim3d.scenes.model import Item
from stim3d.scoring.records import Record


class SelectionError(Stim3dError, ValueError):
    """A filter that cannot select: malformed, a key no item has, or nothing left (one line naming it)."""


def parse_filters(pairs: Iterable[str]) -> dict[str, str]:
    """`KEY=VALUE` strings -> {key: value}; the value is compared after YAML parsing (0.7, true, red)."""
    filters: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise SelectionError("expected KEY=VALUE, e.g. min_visibility=0.7", field="filters", value=repr(pair))
        filters[key.strip()] = value.strip()
    return filters


def _parse_value(text: str) -> Any:
    """A filter value as YAML reads it (0.7 -> float, true -> bool); text that is not YAML stays text."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _values_equal(actual: Any, parsed: Any, wanted: str) -> bool:
    numeric = (int, float)
    if isinstance(actual, numeric) and not isinstance(actual, bool) and isinstance(parsed, numeric) and not isinstance(parsed, bool):
        return math.isclose(actual, parsed, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(actual, bool) or isinstance(parsed, bool):
        return actual is parsed
    return actual == parsed or str(actual) == wanted


def _lookup(item: Item, key: str) -> tuple[bool, Any]:
    """A filter key names a difficulty value first, then a family parameter, then `look` (studio items carry no
    `look` in their difficulty, docs/looks.md)."""
    if key in item.difficulty:
        return True, item.difficulty[key]
    if key in item.params:
        return True, item.params[key]
    if key == "look":
        return True, item.scene.look.name
    return False, None


def select_items(items: list[Item], family: str | None, filters: dict[str, str]) -> list[Item]:
    """The items a gallery (or sheet) shows: all of `family` (when given) whose keys equal the filter values."""
    if family is not None:
        families = sorted({item.family for item in items})
        if family not in families:
            raise SelectionError(f"no items of that family here; families: {', '.join(families)}", field="family",
                               value=repr(family))
        items = [item for item in items if item.family == family]
    for key, wanted in filters.items():
        if not any(_lookup(item, key)[0] for item in items):
            keys = sorted({k for item in items for k in (*item.difficulty, *item.params)})
            raise SelectionError(f"no item has a difficulty or parameter {key!r}; keys: {', '.join(keys)}",
                               field="filters", value=f"{key}={wanted}")
        parsed = _parse_value(wanted)
        items = [item for item in items if (found := _lookup(item, key))[0] and _values_equal(found[1], parsed, wanted)]
    if not items:
        shown = " ".join([f"`family={family}`"] * (family is not None)
                         + [f"`filters={k}={v}`" for k, v in filters.items()])
        raise SelectionError(f"no items match {shown}")
    return items


def selected_records(batch: Batch, filters: Mapping[str, str] | None) -> list[Record]:
    """The batch's records (records.jsonl order) whose item `filters` keep (all of them without filters)."""
    if not filters:
        return list(batch.records)
    chosen = {item.item_id for item in select_items(list(batch.items), None, dict(filters))}
    return [record for record in batch.records if record.item_id in chosen]
