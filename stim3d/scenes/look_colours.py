"""Colour golds under a look: is each object's named colour still the nearest palette colour in the image?

A look changes how light leaves an object (an HDRI tints it, a metal mirrors its
surroundings), so the colour a question names may no longer be the colour a person
sees. `colour_failures` takes the colours measured in the rendered image (median of
each object's visible pixels, render/batch/produce.py `measured_colors`) and returns
the objects whose measured colour is not nearer its own palette colour than any
other palette colour by at least MARGIN_DE (CIEDE2000). The caller renders the item
again up to MAX_REDRAWS times and records how often it did (`Look.redraws`).

What it renders next is `next_draw`'s choice, the way a photographer brackets an
exposure before moving the set. A fresh draw alone cannot save a colour the light
itself pushes off its name: an orange (sRGB red already 1.0) lit twice too bright
clips its red channel and reads yellow under every draw of clevr's rig (issue 44: ROSE
grids seen from above, their lit tops filling the view), and an orange metal mirroring
a dark ground reads red. So while the failing objects' measured luminance says the
light is off (`exposure_correction`: the stops back to their names' luminance), the same
draw is rendered again with its lights scaled by that much (scenes/looks.py
`draw_look`), and again while the meter keeps pointing the same way; a correction that
would turn back, a step under MIN_CORRECTION_EV, or any object under the contrast floor
(which needs another ground or material) takes a fresh draw (the next look stream,
uncorrected) instead. A correction measured on one
draw is never carried to another: a fresh draw may give the object another material,
ground or map, under which the same stops would be wrong.

Objects with fewer than MIN_VISIBLE_PX visible pixels are not judged: a median of a
few silhouette pixels measures anti-aliasing, not the surface, and a family asks
about colour only for objects it keeps well visible. Nor are signs carrying a texture
or a text (scenes/surfaces.py): their pixels are mostly paper, their colour names the ink,
and no question asks about it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from . import surfaces
from .colors import PALETTE, delta_e2000, srgb_to_lab, srgb_to_linear
from .model import Item

MARGIN_DE = 5.0  # CIEDE2000: the measured colour must be at least this much nearer its own name than any other
MIN_VISIBLE_PX = 30.0
MAX_REDRAWS = 3
MAX_CORRECTION_EV = 1.0  # one redraw's exposure step at most: clipping hides how far off a channel is
MIN_CORRECTION_EV = 0.1  # a smaller step is not worth a render: draw afresh instead
LUMINANCE = np.array([0.2126, 0.7152, 0.0722])  # linear sRGB to relative luminance (Rec. 709)


def colour_margin(measured_srgb, name: str) -> float:
    """dE2000 to the nearest other palette colour minus dE2000 to `name`'s (positive: `name` is nearest)."""
    lab = srgb_to_lab(np.asarray(measured_srgb, dtype=float))
    own = float(delta_e2000(lab, srgb_to_lab(PALETTE[name])))
    others = min(float(delta_e2000(lab, srgb_to_lab(srgb))) for other, srgb in PALETTE.items() if other != name)
    return others - own


def colour_failures(item: Item, measured: Mapping[int, tuple[float, float, float] | None],
                    margin: float = MARGIN_DE) -> list[int]:
    """Ids of well-visible objects whose measured colour no longer names their palette colour by `margin`."""
    failures = []
    for obj in item.scene.objects:
        colour = measured.get(obj.id)
        if colour is None or obj.color.name not in PALETTE or surfaces.carries_print(obj.attributes):
            continue
        if item.ground_truth.of(obj.id).visible_px < MIN_VISIBLE_PX:
            continue
        if colour_margin(colour, obj.color.name) < margin:
            failures.append(obj.id)
    return failures


def exposure_correction(item: Item, measured: Mapping[int, tuple[float, float, float] | None]) -> float:
    """Stops (within +-MAX_CORRECTION_EV) the next draw's light should change by: the median over the objects
    failing `colour_failures` of log2(named luminance / measured luminance); 0 when none fails."""
    stops = []
    for object_id in colour_failures(item, measured):
        obj = item.scene.object(object_id)
        seen = float(LUMINANCE @ srgb_to_linear(measured[object_id]))
        named = float(LUMINANCE @ srgb_to_linear(PALETTE[obj.color.name]))
        if seen > 0.0:
            stops.append(np.log2(named / seen))
    return float(np.clip(np.median(stops), -MAX_CORRECTION_EV, MAX_CORRECTION_EV)) if stops else 0.0


@dataclass(frozen=True)
class Draw:
    """Which look to render: the look stream's draw (`scenes.looks.draw_look`'s `attempt`) and the exposure
    correction in stops on its lights."""

    index: int = 0
    ev: float = 0.0


def next_draw(current: Draw, step: float) -> Draw:
    """The draw to render after `current` failed, given the correction its render measured (`exposure_correction`):
    the same draw corrected by `step` while the step is worth a render and points the way of the correction it
    already has (none yet, or the same sign); otherwise the next fresh draw, uncorrected."""
    if abs(step) >= MIN_CORRECTION_EV and (current.ev == 0.0 or np.sign(step) == np.sign(current.ev)):
        return Draw(current.index, round(current.ev + step, 3))
    return Draw(current.index + 1)
