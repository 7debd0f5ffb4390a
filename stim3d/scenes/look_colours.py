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
a dark ground reads red. So when an exposure is predicted to bring every judged
object clear of the margin (`exposure_correction`: each measured colour scaled in
linear light and clipped, over a +-2 stop bracket), the same draw is rendered again
with its lights scaled by that much (scenes/looks.py `draw_look`); when none is (a
board whose shaded objects read red while its lit ones near yellow), or an object is
under the contrast floor (it needs another ground or material), the next fresh draw
is rendered instead, uncorrected. A correction measured on one draw is never carried
to another: a fresh draw may give the object another material, ground or map, under
which the same stops would be wrong.

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
from .colors import PALETTE, delta_e2000, linear_to_srgb, srgb_to_lab, srgb_to_linear
from .model import Item

MARGIN_DE = 5.0  # CIEDE2000: the measured colour must be at least this much nearer its own name than any other
MIN_VISIBLE_PX = 30.0
MAX_REDRAWS = 3
MAX_CORRECTION_EV = 2.0  # a bracket's reach either way, in stops (a photographer's +-2)
MIN_CORRECTION_EV = 0.1  # a smaller step is not worth a render: draw afresh instead
CLIPPED = 0.98  # a linear channel this bright was probably clipped by the render (the Standard view transform)
CORRECTION_STEPS = np.round(np.arange(-MAX_CORRECTION_EV, MAX_CORRECTION_EV + 1e-9, 0.05), 2)
_NAMES = tuple(PALETTE)
_PALETTE_LAB = srgb_to_lab(np.array([PALETTE[name] for name in _NAMES]))


def colour_margins(measured_srgb, names: list[str]) -> np.ndarray:
    """Each colour's dE2000 to the nearest palette colour other than its name minus dE2000 to its name (positive:
    the name is nearest), for `measured_srgb` of shape (..., len(names), 3)."""
    distances = delta_e2000(srgb_to_lab(np.asarray(measured_srgb, dtype=float))[..., None, :], _PALETTE_LAB)
    own = np.array([_NAMES.index(name) for name in names])
    mine = np.take_along_axis(distances, np.broadcast_to(own[:, None], (*distances.shape[:-1], 1)), axis=-1)[..., 0]
    others = np.where(np.arange(len(_NAMES)) == own[:, None], np.inf, distances).min(axis=-1)
    return others - mine


def colour_margin(measured_srgb, name: str) -> float:
    """dE2000 to the nearest other palette colour minus dE2000 to `name`'s (positive: `name` is nearest)."""
    return float(colour_margins(np.asarray(measured_srgb, dtype=float)[None], [name])[0])


def measured_colours(item: Item) -> dict[int, tuple[float, float, float] | None]:
    """A rendered item's measured colour per object id (median of its visible pixels; None when not measured)."""
    return {t.id: t.measured_srgb for t in item.ground_truth.objects}


def judged(item: Item, measured: Mapping[int, tuple[float, float, float] | None]) -> dict[int, tuple[str, tuple]]:
    """The objects the check judges, id -> (palette name, measured colour): measured, at least MIN_VISIBLE_PX
    visible pixels, a palette colour, no print."""
    chosen = {}
    for obj in item.scene.objects:
        colour = measured.get(obj.id)
        if colour is None or obj.color.name not in PALETTE or surfaces.carries_print(obj.attributes):
            continue
        if item.ground_truth.of(obj.id).visible_px >= MIN_VISIBLE_PX:
            chosen[obj.id] = (obj.color.name, tuple(colour))
    return chosen


def colour_failures(item: Item, measured: Mapping[int, tuple[float, float, float] | None],
                    margin: float = MARGIN_DE) -> list[int]:
    """Ids of well-visible objects whose measured colour no longer names their palette colour by `margin`."""
    objects = judged(item, measured)
    if not objects:
        return []
    margins = colour_margins([colour for _name, colour in objects.values()], [name for name, _c in objects.values()])
    return [object_id for object_id, value in zip(objects, margins) if value < margin]


def exposure_correction(item: Item, measured: Mapping[int, tuple[float, float, float] | None],
                        margin: float = MARGIN_DE, least: bool = False) -> float | None:
    """The exposure change, in stops within +-MAX_CORRECTION_EV, under which every judged object is predicted to
    name its colour by `margin`; None when none is (or nothing fails). The prediction scales each measured colour
    in linear light by 2**ev and clips it, as a render with every light scaled would; of the changes predicted to
    pass it takes the one whose worst object clears the margin most, or with `least` the smallest one (studio's
    second bracket, render/batch/produce.py: it moves the rig as little as it can, which disturbs least what the
    prediction does not see). A channel the render clipped is first restored from the object's own colour
    (`_unclipped`), or dimming would only darken the hue the clip gave."""
    objects = judged(item, measured)
    names = [name for name, _colour in objects.values()]
    linear = srgb_to_linear(np.array([colour for _name, colour in objects.values()], dtype=float).reshape(-1, 3))
    if not objects or (colour_margins(linear_to_srgb(linear), names) >= margin).all():
        return None
    scaled = np.clip(_unclipped(linear, names)[None] * 2.0 ** CORRECTION_STEPS[:, None, None], 0.0, 1.0)
    worst = colour_margins(linear_to_srgb(scaled), names).min(axis=1)
    if least:
        passing = np.flatnonzero(worst >= margin)
        return float(CORRECTION_STEPS[passing[np.argmin(np.abs(CORRECTION_STEPS[passing]))]]) if len(passing) else None
    best = int(np.argmax(worst))
    return float(CORRECTION_STEPS[best]) if worst[best] >= margin else None


@dataclass(frozen=True)
class Draw:
    """Which look to render: the look stream's draw (`scenes.looks.draw_look`'s `attempt`) and the exposure
    correction in stops on its lights."""

    index: int = 0
    ev: float = 0.0


def _unclipped(linear: np.ndarray, names: list[str]) -> np.ndarray:
    """Measured linear colours (N, 3) with each clipped channel (>= CLIPPED) raised to what the object's own
    palette colour says it was: its named channel times the gain its unclipped, well-lit channels show (an orange
    at (1.0, 0.48, 0.02) linear, named (1.0, 0.21, 0.0015), was lit 2.2 times: its red was 2.2, not 1)."""
    restored = linear.copy()
    for row, name in enumerate(names):
        named = srgb_to_linear(PALETTE[name])
        clipped = linear[row] >= CLIPPED
        usable = ~clipped & (named >= 0.05)
        if clipped.any() and usable.any():
            gain = float(np.median(linear[row][usable] / named[usable]))
            restored[row][clipped] = np.maximum(linear[row][clipped], gain * named[clipped])
    return restored


def next_draw(current: Draw, step: float | None) -> Draw:
    """The draw to render after `current` failed, given the exposure change its render predicts will pass
    (`exposure_correction`; None: none will): the same draw with its lights scaled by `step` when that is worth a
    render, otherwise the next fresh draw, uncorrected."""
    if step is not None and abs(step) >= MIN_CORRECTION_EV:
        return Draw(current.index, round(current.ev + step, 3))
    return Draw(current.index + 1)
