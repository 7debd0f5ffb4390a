"""Markers: the boxes drawn on the image around the objects a question is about (AVA-3D).

A family says what to draw on each marked object's `attributes` (`marker` = colour
name, `marker_x0`, `marker_y0`, `marker_x1`, `marker_y1` = the outer rectangle in
pixels with x1 and y1 exclusive, `marker_px` = line width; scenes/families/ava_common.py),
so the ground truth holds the exact geometry. Drawing happens after rendering and
after the measured colours are taken from the unmarked image: the item folder keeps
that unmarked render as `image_raw.png`, and `image.png` is the marked image, which
is what a model (and the gallery) is shown.

AVA colour items also get their measured colour compared with the palette here,
since that needs the render: `measured_de_<name>` (CIEDE2000 from the object's
measured sRGB to every palette colour), `measured_nearest`, `measured_margin_de`
(second nearest minus nearest) and `measured_ambiguous` (margin below the family's
`ambiguity_de`) join the item's difficulty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stim3d.scenes.families.ava_color import palette_distances
from stim3d.scenes.families.ava_common import MARKER_RGB, with_marker
from stim3d.scenes.families.base import Frame
from stim3d.scenes.model import Item

RAW_IMAGE = "image_raw.png"


@dataclass(frozen=True)
class Marker:
    object_id: int
    color: str
    box: tuple[int, int, int, int]  # outer rectangle, x1 and y1 exclusive
    width: int


def markers_of(item: Item) -> list[Marker]:
    """The markers the item's objects ask for, in object order."""
    found = []
    for obj in item.scene.objects:
        a = obj.attributes
        if "marker" in a:
            box = (int(a["marker_x0"]), int(a["marker_y0"]), int(a["marker_x1"]), int(a["marker_y1"]))
            found.append(Marker(obj.id, str(a["marker"]), box, int(a["marker_px"])))
    return found


def draw_markers(image: np.ndarray, markers: list[Marker]) -> np.ndarray:
    """A copy of `image` (H, W, 3 uint8) with each marker's rectangle outline drawn in its colour."""
    marked = image.copy()
    for marker in markers:
        x0, y0, x1, y1 = marker.box
        w, rgb = marker.width, np.asarray(MARKER_RGB[marker.color], dtype=np.uint8)
        marked[y0:min(y0 + w, y1), x0:x1] = rgb
        marked[max(y1 - w, y0):y1, x0:x1] = rgb
        marked[y0:y1, x0:min(x0 + w, x1)] = rgb
        marked[y0:y1, max(x1 - w, x0):x1] = rgb
    return marked


def measured_color_truth(item: Item) -> dict[str, object]:
    """For an AVA colour question: the measured colour's CIEDE2000 distances to the palette (else {})."""
    question = item.questions[0] if item.questions else None
    if question is None or question.subject.get("ability") != "color":
        return {}
    measured = item.ground_truth.of(int(question.subject["object_id"])).measured_srgb
    if measured is None:
        return {"measured_nearest": None}
    distances = palette_distances(measured)
    ranked = sorted(distances, key=distances.__getitem__)
    margin = round(distances[ranked[1]] - distances[ranked[0]], 6)
    threshold = float(item.difficulty.get("ambiguity_de", 0.0) or 0.0)
    return {**{f"measured_de_{name}": d for name, d in distances.items()}, "measured_nearest": ranked[0],
            "measured_margin_de": margin, "measured_ambiguous": margin < threshold}


def with_current_markers(item: Item) -> Item:
    """Marker rectangles redrawn around each marked object's current visible box.

    A composed item's rectangles already are; an item edited by hand (the add-on re-measures its
    ground truth) gets its boxes moved with its objects instead of pointing at where they were.
    """
    frame = Frame(item.scene.camera.width, item.scene.camera.height)
    objects = []
    for obj in item.scene.objects:
        box = item.ground_truth.of(obj.id).bbox_visible if "marker" in obj.attributes else None
        objects.append(with_marker(obj, str(obj.attributes["marker"]), box, frame) if box is not None else obj)
    if objects == item.scene.objects:
        return item
    return item.model_copy(update={"scene": item.scene.model_copy(update={"objects": objects})})


def annotate(item: Item, image: np.ndarray) -> tuple[Item, np.ndarray | None]:
    """(item with any measured colour truth added, the marked image or None when nothing is marked)."""
    extra = measured_color_truth(item)
    if extra:
        item = item.model_copy(update={"difficulty": {**item.difficulty, **extra}})
    item = with_current_markers(item)
    markers = markers_of(item)
    return item, (draw_markers(image, markers) if markers else None)
