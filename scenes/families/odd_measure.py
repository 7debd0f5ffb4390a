"""The odd cell's colour difference as rendered: measured on the image, after lighting and shading.

The nominal CIEDE2000 difference (`delta_e` on the odd object) is between the two
albedos; what a viewer sees is the shaded pixels. After rendering, every object's
`measured_srgb` in the ground truth is the median sRGB of its visible pixels
(render/batch/produce.py), so the measured difference is

    measured_delta_e = CIEDE2000(odd's measured sRGB, per-channel median of its
                                 8-connected grid neighbours' measured sRGB)

and `neighbour_delta_e`, the median CIEDE2000 of each neighbour from that same
median, is the spread identical objects show under this lighting: the noise floor
the odd colour must stand out from. Pure Python on an `Item` (item.json), so the
records (render/batch/records.py, through `Family.rendered_difficulty`) and the
tests compute it the same way.
"""

from __future__ import annotations

import numpy as np

from ..colors import delta_e_srgb
from ..model import Item, round6


def grid_neighbours(item: Item, row: int, col: int) -> list[int]:
    """Ids of the grid objects in the (up to 8) cells around (row, col)."""
    return [o.id for o in item.scene.objects
            if "row" in o.attributes and max(abs(int(o.attributes["row"]) - row), abs(int(o.attributes["col"]) - col)) == 1]


def measured_color_difference(item: Item) -> dict[str, float]:
    """{"measured_delta_e", "neighbour_delta_e"} for an item with an odd cell and measured colours; else {}."""
    odd = next((o for o in item.scene.objects if o.attributes.get("odd")), None)
    if odd is None:
        return {}
    colors = {t.id: t.measured_srgb for t in item.ground_truth.objects}
    around = [colors[i] for i in grid_neighbours(item, int(odd.attributes["row"]), int(odd.attributes["col"]))]
    around = [c for c in around if c is not None]
    if colors.get(odd.id) is None or not around:
        return {}
    reference = np.median(np.array(around), axis=0)
    return {
        "measured_delta_e": round6(float(delta_e_srgb(np.asarray(colors[odd.id]), reference))),
        "neighbour_delta_e": round6(float(np.median(delta_e_srgb(np.array(around), reference[None, :])))),
    }
