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

from ...colors import delta_e_srgb
from ...model import Item, round6

MIN_MEASURED_DE = 2.0  # CIEDE2000: below this an odd colour is hard to see even side by side
NOISE_FACTOR = 2.0  # the odd cell must differ at least twice as much as identical neighbours differ


def look_colour_check(item: Item) -> tuple[dict[str, float], list[int]]:
    """Under a look: the odd colour's measured difference, and the odd cell when it no longer stands out.

    The family's margin under a look is `max(MIN_MEASURED_DE, NOISE_FACTOR * neighbour_delta_e)`:
    the odd cell must differ from its neighbours by a visible amount (CIEDE2000 2: a difference
    seen side by side) and by clearly more than identical cells differ from each other under the
    same light (the noise floor). Not the nominal `delta_e_range`: that is a difference of albedos,
    and shading alone moves the measured value far from it (studio renders of nominal dE 5 measure
    2.0 to 10, bench/results/odd_look_margin.json). Only items whose odd cell differs in colour are
    judged; the measures are recorded whenever they can be made (Family.look_colour_check).
    """
    odd = next((o for o in item.scene.objects if o.attributes.get("odd")), None)
    measured = measured_color_difference(item)
    if odd is None or not measured or "delta_e" not in odd.attributes:
        return measured, []
    margin = round6(max(MIN_MEASURED_DE, NOISE_FACTOR * measured["neighbour_delta_e"]))
    failing = [odd.id] if measured["measured_delta_e"] < margin else []
    return {**measured, "delta_e_margin": margin}, failing


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
