"""Markers: the boxes drawn on the image around the objects a question is about (AVA-3D).

A family says what to draw on each marked object's `attributes` (`marker` = colour
name, `marker_x0`, `marker_y0`, `marker_x1`, `marker_y1` = the outer rectangle in
pixels with x1 and y1 exclusive, `marker_px` = line width; scenes/markers.py), so the
ground truth holds the exact geometry. Drawing happens after rendering and
after the measured colours are taken from the unmarked image: the item folder keeps
that unmarked render as `image_raw.png`, and `image.png` is the marked image, which
is what a model (and the gallery) is shown.

Measures that need the render come from the item's family, never from here: its
`rendered_difficulty` hook (scenes/families/base.py; AVA colour's palette distances,
odd_grid's measured colour difference) joins the item's difficulty, so item.json and
the records (render/batch/records.py) hold the same keys. This module imports no
family module.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stim3d.scenes.families import FAMILIES
from stim3d.scenes.markers import MARKER_RGB, with_marker
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


def rendered_truth(item: Item) -> dict[str, object]:
    """The difficulty keys the item's family measures on the rendered item (its `rendered_difficulty` hook), else {}."""
    family = FAMILIES.get(item.family)
    return family.rendered_difficulty(item) if family is not None and family.rendered_difficulty is not None else {}


def with_current_markers(item: Item) -> Item:
    """Marker rectangles redrawn around each marked object's current visible box.

    A composed item's rectangles already are; an item edited by hand (the add-on re-measures its
    ground truth) gets its boxes moved with its objects instead of pointing at where they were.
    """
    objects = []
    for obj in item.scene.objects:
        box = item.ground_truth.of(obj.id).bbox_visible if "marker" in obj.attributes else None
        objects.append(with_marker(obj, str(obj.attributes["marker"]), box, item.scene.camera) if box is not None else obj)
    if objects == item.scene.objects:
        return item
    return item.model_copy(update={"scene": item.scene.model_copy(update={"objects": objects})})


def annotate(item: Item, image: np.ndarray) -> tuple[Item, np.ndarray | None]:
    """(item with its family's rendered measures added, the marked image or None when nothing is marked)."""
    extra = rendered_truth(item)
    if extra:
        item = item.model_copy(update={"difficulty": {**item.difficulty, **extra}})
    item = with_current_markers(item)
    markers = markers_of(item)
    return item, (draw_markers(image, markers) if markers else None)
