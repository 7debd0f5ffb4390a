"""Viewport colours that show how visible each object is, so occluded objects stand out.

Green: fully visible. Yellow: at the item's min_visibility. Red: hidden
completely. Between those, linear blends; an object below min_visibility is
drawn in the red-to-orange half so a broken constraint is never mistaken for a
fine one. The add-on shows these as Blender *object* colours (viewport Solid
shading, colour by Object), so the materials, and what Render and Save reads
back, stay untouched; switching back shows the true material colours.
"""

from __future__ import annotations

RGBA = tuple[float, float, float, float]

GREEN: RGBA = (0.10, 0.75, 0.20, 1.0)
YELLOW: RGBA = (0.95, 0.85, 0.10, 1.0)
ORANGE: RGBA = (1.00, 0.45, 0.00, 1.0)
RED: RGBA = (0.90, 0.05, 0.05, 1.0)
UNMEASURED: RGBA = (0.60, 0.60, 0.60, 1.0)  # an object added since the last measurement


def _mix(a: RGBA, b: RGBA, t: float) -> RGBA:
    t = min(1.0, max(0.0, t))
    return tuple(x + (y - x) * t for x, y in zip(a, b))  # type: ignore[return-value]


def visibility_rgba(visibility: float | None, min_visibility: float | None) -> RGBA:
    """The viewport colour of an object `visibility` visible in an item with this floor (None: no floor)."""
    if visibility is None:
        return UNMEASURED
    floor = min_visibility if min_visibility is not None and 0.0 < min_visibility <= 1.0 else 0.5
    if visibility >= floor:
        return GREEN if floor >= 1.0 else _mix(YELLOW, GREEN, (visibility - floor) / (1.0 - floor))
    if visibility <= 0.0:
        return RED
    return _mix(RED, ORANGE, visibility / floor)
