"""Per-object masks as files (`render: {object_masks: true}`): masks/<id>_visible.png and masks/<id>_amodal.png.

- `<id>_visible.png`: 255 where the item's mask.png holds the object (the renderer's
  object-index pass when it has one, else the ray cast): the object's visible pixels.
- `<id>_amodal.png`: 255 where the pixel-centre ray hits the object when every other
  object is ignored (`scenes/visibility.py cast_object`, one ray per pixel), in the frame:
  its whole silhouette, hidden parts included. Exact, no renderer: the rays Cycles' pass
  uses, against the same triangles (scenes/meshes.py).

Both are 8-bit greyscale PNGs of the image's size. Their pixels relate to the item's ground
truth as: visible pixels = `visible_px` (with one ray per pixel), amodal pixels = the
in-frame part of `amodal_px`.
"""

from __future__ import annotations

import numpy as np

from stim3d.scenes.camera import geometry
from stim3d.scenes.model import Item
from stim3d.scenes.visibility import cast_object


def amodal_mask(item: Item, object_id: int) -> np.ndarray:
    """(H, W) bool: the pixels whose centre ray hits object `object_id` alone."""
    cam = item.scene.camera
    cast = cast_object(item.scene.object(object_id), geometry(cam), 1)
    inside = (cast.gx >= 0) & (cast.gx < cam.width) & (cast.gy >= 0) & (cast.gy < cam.height)
    mask = np.zeros((cam.height, cam.width), dtype=bool)
    mask[cast.gy[inside], cast.gx[inside]] = True
    return mask


def object_masks(item: Item, mask: np.ndarray) -> dict[str, np.ndarray]:
    """File name (inside masks/) -> bool mask, two per object of the scene, in object order."""
    files: dict[str, np.ndarray] = {}
    for obj in item.scene.objects:
        files[f"{obj.id}_visible.png"] = mask == obj.id
        files[f"{obj.id}_amodal.png"] = amodal_mask(item, obj.id)
    return files
