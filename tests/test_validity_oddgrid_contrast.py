"""OddGrid size and position oddities are measured against their neighbours in the image (issue 30.2).

The measures (scenes/families/oddgrid/odd_contrast.py) are checked on hand-made pixel areas
and centres whose ratios are computed by hand below; the composed items are checked
against the recorded ray-cast truth with a separate computation, and against the
margin: no size or position oddity is composed below it.
"""

from __future__ import annotations

import numpy as np
import pytest

from stim3d.scenes.families.base import Frame
from stim3d.scenes.families.oddgrid.odd_contrast import (
    SHIFT_MARGIN,
    SIZE_MARGIN,
    shift_contrast,
    size_contrast,
    visible_as_odd,
)
from stim3d.scenes.items import make_item

# A 3x3 grid's amodal areas: row 1 far (small), row 3 near (large), the odd cell (2, 2).
AREAS = {(1, 1): 80.0, (1, 2): 82.0, (1, 3): 80.0,
         (2, 1): 100.0, (2, 2): 121.0, (2, 3): 104.0,
         (3, 1): 150.0, (3, 2): 160.0, (3, 3): 150.0}


def test_a_grown_oddity_is_measured_against_its_row_and_the_grids_largest():
    # row 2's others: 100 and 104, median 102 -> 121 / 102 = 1.1863; grid's largest majority area 160 -> 0.7562
    assert size_contrast(AREAS, (2, 2), grown=True) == {"area_ratio_row": 1.1863, "area_ratio_grid": 0.7562}


def test_a_shrunk_oddity_is_measured_against_the_grids_smallest():
    areas = {**AREAS, (2, 2): 85.0}
    # 85 / 102 = 0.8333; smallest majority area 80 -> 85 / 80 = 1.0625 (inside the majority's range)
    assert size_contrast(areas, (2, 2), grown=False) == {"area_ratio_row": 0.8333, "area_ratio_grid": 1.0625}


def test_an_oddity_in_the_first_row_is_compared_with_its_row_not_the_nearer_row():
    # (1, 2) grown to 88: its row's others are 80 and 80 -> 1.1; the 8 cells around it would give a median of
    # 100 (80, 80, 100, 121, 104) and call it smaller
    areas = {**AREAS, (1, 2): 88.0, (2, 2): 102.0}
    assert size_contrast(areas, (1, 2), grown=True)["area_ratio_row"] == 1.1


def test_a_shift_is_divided_by_the_local_spacing_with_the_images_signs():
    # row 2 centres at u = 100, 140, 180 -> spacing 40 on both sides; column 2 at v = 50, 80, 120 -> gaps 30 and 40,
    # mean 35. A shift of (+4, -7) px is 0.1 of the spacing rightwards and 0.2 upwards (negative: towards row 1).
    centres = {(r, c): (60.0 + 40.0 * c + 3.0 * r, {1: 50.0, 2: 80.0, 3: 120.0}[r]) for r in (1, 2, 3) for c in (1, 2, 3)}
    centres[(2, 1)], centres[(2, 3)] = (100.0, 80.0), (180.0, 80.0)
    centres[(2, 2)] = (140.0, 80.0)
    assert shift_contrast(centres, (2, 2), (4.0, -7.0)) == {"shift_spacing_u": 0.1, "shift_spacing_v": -0.2}


def test_a_shift_at_the_grids_corner_uses_its_one_neighbour_on_each_axis():
    centres = {(1, 1): (10.0, 10.0), (1, 2): (60.0, 10.0), (2, 1): (10.0, 50.0), (2, 2): (60.0, 50.0)}
    # spacing 50 across, 40 down: (-5, 2) px -> -0.1 and 0.05
    assert shift_contrast(centres, (1, 1), (-5.0, 2.0)) == {"shift_spacing_u": -0.1, "shift_spacing_v": 0.05}


@pytest.mark.parametrize(("found", "size_ratio", "visible"), [
    ({"area_ratio_row": 1.06}, 1.1, True),
    ({"area_ratio_row": 1.04}, 1.1, False),     # grown, but under 5 % larger than its row
    ({"area_ratio_row": 0.94}, 1.1, False),     # grown, yet smaller than its row in the image
    ({"area_ratio_row": 0.95}, 0.9, True),      # 1 / 1.05 = 0.952
    ({"area_ratio_row": 0.96}, 0.9, False),
    ({"area_ratio_row": 1.2}, 0.9, False),      # shrunk, yet larger than its row
    ({"shift_spacing_u": 0.01, "shift_spacing_v": -0.026}, None, True),
    ({"shift_spacing_u": 0.024, "shift_spacing_v": -0.024}, None, False),  # half the smallest nominal 5 % is 0.025
    ({"area_ratio_row": 1.3, "shift_spacing_u": 0.0, "shift_spacing_v": 0.02}, 1.1, False),
])
def test_the_margins(found, size_ratio, visible):
    assert (SIZE_MARGIN, SHIFT_MARGIN) == (1.05, 0.025)
    assert visible_as_odd(found, size_ratio) is visible


def _odd(layout: str, odd_types: str, seed: int):
    item = make_item("odd_grid", {"rows": 5, "cols": 6, "odd_types": odd_types, "layout": layout, "p_none": 0.0},
                     [33, 0, seed], f"contrast-{seed}", Frame(320, 240))
    return item, next(o for o in item.scene.objects if o.attributes.get("odd"))


@pytest.mark.parametrize("layout", ["ground", "board"])
def test_composed_size_oddities_record_their_row_ratio_and_clear_the_margin(layout):
    """The recorded ratio is the odd object's amodal area over its row's median, recomputed from the ground truth."""
    for seed in range(4):
        item, odd = _odd(layout, "size", seed)
        areas = {t.id: t.amodal_px for t in item.ground_truth.objects}
        row = [areas[o.id] for o in item.scene.objects
               if o.attributes.get("row") == odd.attributes["row"] and o.id != odd.id]  # labels carry no row
        assert len(row) == 5  # the other cells of a 6-column row
        ratio = areas[odd.id] / float(np.median(row))
        assert odd.attributes["area_ratio_row"] == pytest.approx(ratio, abs=1e-4)
        grown = odd.attributes["size_ratio"] > 1.0
        assert (ratio >= 1.05) if grown else (ratio <= 1 / 1.05)
        assert item.difficulty["area_ratio_row"] == odd.attributes["area_ratio_row"]
        assert item.difficulty["contrast_redraws"] >= 0


@pytest.mark.parametrize("layout", ["ground", "board"])
def test_composed_position_oddities_shift_the_way_they_were_drawn_by_about_their_share(layout):
    """+x moves right in the image (u grows), +y moves away from the viewer, up the image (v shrinks); the shift over
    the neighbours' spacing is about the drawn share of the pitch (perspective changes both alike)."""
    for seed in range(3):
        item, odd = _odd(layout, "position", seed)
        a = odd.attributes
        assert np.sign(a["shift_spacing_u"]) == np.sign(a["shift_share_x"])
        assert np.sign(a["shift_spacing_v"]) == -np.sign(a["shift_share_y"])
        assert abs(a["shift_spacing_u"]) == pytest.approx(abs(a["shift_share_x"]), rel=0.35)
        assert max(abs(a["shift_spacing_u"]), abs(a["shift_spacing_v"])) >= 0.025
