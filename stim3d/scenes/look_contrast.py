"""A visibility floor in colour: how much each object stands out from its surroundings in the rendered image.

Visibility keeps every object above a visible *area* (scenes/visibility.py), but an
object can cover its pixels and still vanish: a grey object on CLEVR's grey ground,
a black torus on a dark photoreal floor. `object_contrasts` measures, per object,
the CIEDE2000 difference between the median colour of its visible pixels and the
median colour of a ring of pixels within RING_PX outside its silhouette (whatever
they belong to: ground, background or other objects), in the final image and with
the instance map render/batch/produce.py `finish_item` chose. Medians are taken per
sRGB channel, as for `measured_srgb`, then compared in CIELAB.

Objects with fewer than look_colours.MIN_VISIBLE_PX visible pixels are not judged
(None): their median measures anti-aliasing, not the surface, and their ring is
mostly the silhouette's own blur. An object whose ring is empty (it fills the
image) is not judged either.

Some objects are parts of one figure: the dots of a grid label's number
(scenes/families/oddgrid/grid_labels.py) or of a DYSM letter. A dot's own ring is
mostly its neighbouring dots, which are the figure, not what it stands on, so a
black dot of a black digit on a light board would measure about 0 and fail. The
family names each part's figure (`Family.figure_of`); the parts of a figure are
judged together, the figure's pixels against the ring around all of them, and every
part records the figure's contrast.

FLOOR_DE is the floor an object must clear; `contrast_failures` lists the judged
objects under it, and produce.py redraws the look while any remain. Studio draws no
look, so there the redraw changes only the stage's ground to a lighter or darker grey
(`with_studio_ground`, STUDIO_REDRAW_GROUNDS), recorded in item.json's
`scene.stage.ground_srgb` and the studio look's `ground_redraws`; an item that clears the
floor keeps the ground it always had. Both clevr and studio rank their redraw tones by
`ground_tone`. The floor: docs/looks_colour.md "Contrast floor"; its justification in bench/results/looks_NOTES.md,
measured by bench/look_contrast.py.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .colors import delta_e2000, delta_e_srgb, srgb_to_lab
from .look_colours import MIN_VISIBLE_PX
from .model import Item, Scene, round6

RING_PX = 2  # the ring: pixels within this Euclidean distance outside the silhouette
FLOOR_DE = 5.0  # CIEDE2000 an object must stand out from its ring by (docs/looks_colour.md "Contrast floor")
# Studio's ground tones for a contrast redraw (sRGB grey levels), ranked per scene by `ground_tone`: its own
# ground (0.62) sits next to the palette's grey (0.5), so a grey object in shade can vanish into it.
STUDIO_REDRAW_GROUNDS = (0.85, 0.35)
_OFFSETS = tuple((dy, dx) for dy in range(-RING_PX, RING_PX + 1) for dx in range(-RING_PX, RING_PX + 1)
                 if 0 < dy * dy + dx * dx <= RING_PX * RING_PX)


def dilate(region: np.ndarray, offsets: tuple[tuple[int, int], ...] = _OFFSETS) -> np.ndarray:
    """`region` (H, W bool) grown by every offset (a disc of radius RING_PX by default); numpy shifts only."""
    height, width = region.shape
    pad = max((max(abs(dy), abs(dx)) for dy, dx in offsets), default=0)
    padded = np.pad(region, pad)
    grown = region.copy()
    for dy, dx in offsets:
        grown |= padded[pad + dy:pad + dy + height, pad + dx:pad + dx + width]
    return grown


def ring(own: np.ndarray) -> np.ndarray:
    """Pixels within RING_PX outside the region `own` (H, W bool; an object's or a figure's silhouette), never
    its own pixels."""
    return dilate(own) & ~own


def _median_lab(pixels: np.ndarray) -> np.ndarray:
    return srgb_to_lab(np.median(pixels, axis=0) / 255.0)


def region_contrast(image: np.ndarray, own: np.ndarray) -> float | None:
    """dE2000 between the median colour of the pixels in `own` (H, W bool) and of the ring around them; None if
    either is empty.

    Works on the region's box grown by RING_PX (the ring cannot reach farther), so a scene of many small
    objects in a large image costs little."""
    ys, xs = np.nonzero(own)
    if not len(ys):
        return None
    window = (slice(max(0, ys.min() - RING_PX), ys.max() + RING_PX + 1),
              slice(max(0, xs.min() - RING_PX), xs.max() + RING_PX + 1))
    own, image = own[window], image[window]
    around = ring(own)
    if not around.any():
        return None
    return round6(float(delta_e2000(_median_lab(image[own]), _median_lab(image[around]))))


def object_contrast(image: np.ndarray, mask: np.ndarray, object_id: int) -> float | None:
    """dE2000 between the median colour of the object's pixels and of its ring; None if either is empty."""
    return region_contrast(image, mask == object_id)


def object_contrasts(image: np.ndarray, mask: np.ndarray, visible_px: Mapping[int, float],
                     figures: Mapping[int, str] | None = None) -> dict[int, float | None]:
    """Per object (id -> its ray-cast visible pixels): its ring contrast, None when too small to judge.

    `figures` maps the ids of objects that are parts of a figure to the figure's name; those are judged as one
    region (the figure's visible pixels summed against MIN_VISIBLE_PX) and each part gets the figure's value."""
    figures = figures or {}
    parts: dict[str, list[int]] = {}
    for object_id in visible_px:
        if object_id in figures:
            parts.setdefault(figures[object_id], []).append(object_id)
    contrasts = {object_id: object_contrast(image, mask, object_id) if px >= MIN_VISIBLE_PX else None
                 for object_id, px in visible_px.items() if object_id not in figures}
    for ids in parts.values():
        judged = sum(visible_px[i] for i in ids) >= MIN_VISIBLE_PX
        value = region_contrast(image, np.isin(mask, ids)) if judged else None
        contrasts.update(dict.fromkeys(ids, value))
    return {object_id: contrasts[object_id] for object_id in visible_px}


def contrast_failures(item: Item, floor: float = FLOOR_DE) -> list[int]:
    """Ids of the judged objects of a rendered item that stand out from their ring by less than `floor`."""
    return sorted(t.id for t in item.ground_truth.objects if t.contrast_de is not None and t.contrast_de < floor)


def min_contrast(item: Item) -> float | None:
    """The item's least judged contrast (difficulty `min_contrast_de`); None before rendering or if none judged."""
    values = [t.contrast_de for t in item.ground_truth.objects if t.contrast_de is not None]
    return min(values) if values else None


def ground_tone(scene: Scene, tones: tuple[float, ...], attempt: int) -> tuple[float, float, float]:
    """The grey of redraw `attempt` (>= 1): `tones` ranked by their least CIEDE2000 to the scene's object
    colours, farthest first (stable: ties keep `tones`' order), taken in turn."""
    colours = np.array([obj.color.srgb for obj in scene.objects] or [(0.5, 0.5, 0.5)], dtype=float)

    def least(tone: float) -> float:
        return float(np.min(delta_e_srgb(np.full(3, tone), colours)))

    tone = sorted(tones, key=least, reverse=True)[(attempt - 1) % len(tones)]
    return (tone, tone, tone)


def with_studio_ground(item: Item, attempt: int) -> Item:
    """A studio item whose stage ground is redraw `attempt`'s grey, the attempt recorded as its look's
    `ground_redraws`."""
    stage = item.scene.stage.model_copy(update={"ground_srgb": ground_tone(item.scene, STUDIO_REDRAW_GROUNDS, attempt)})
    look = item.scene.look.model_copy(update={"ground_redraws": attempt})
    return item.model_copy(update={"scene": item.scene.model_copy(update={"stage": stage, "look": look})})
