"""The task families, by name. Each module defines FAMILY (see base.Family)."""

from __future__ import annotations

from .base import Composed, Family, FamilyParams, Frame
from .form_constancy import FAMILY as _FORM_CONSTANCY
from .letters import FAMILY as _LETTERS
from .shape_color_count import FAMILY as _SHAPE_COLOR_COUNT
from .shape_count import FAMILY as _SHAPE_COUNT
from .spatial_grid import FAMILY as _SPATIAL_GRID

FAMILIES: dict[str, Family] = {
    f.name: f for f in (_SHAPE_COUNT, _SHAPE_COLOR_COUNT, _LETTERS, _FORM_CONSTANCY, _SPATIAL_GRID)
}


def get_family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise KeyError(f"unknown family {name!r}; allowed: {', '.join(sorted(FAMILIES))}") from None


__all__ = ["Composed", "FAMILIES", "Family", "FamilyParams", "Frame", "get_family"]
