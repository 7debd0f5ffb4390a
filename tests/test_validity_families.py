"""Ground truth of the new families where geometry tests are strong but these lines went unnoticed (issue 30.3).

Each expected value is derived by hand (from the font's glyph strings, a grid
drawn on paper, boxes written out) or read back from the ray-cast ground truth,
never from the function under test.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from stim3d.scenes.camera import geometry
from stim3d.scenes.families.ava.ava_common import boxes_overlap
from stim3d.scenes.families.ava.ava_spatial import relation_margin
from stim3d.scenes.families.base import Frame
from stim3d.scenes.families.oddgrid.grid_labels import number_dots
from stim3d.scenes.families.oddgrid.odd_attributes import normalised_magnitudes
from stim3d.scenes.families.oddgrid.odd_measure import grid_neighbours
from stim3d.scenes.families.rose.rose_grid import RoseGridParams, plan_tasks
from stim3d.scenes.families.rose.rose_regions import EXCLUSION_KINDS, NUMERIC_KINDS, blocks, permitted
from stim3d.scenes.items import make_item

# -- OddGrid label digits ------------------------------------------------------------------------


def test_a_two_digit_label_reads_left_to_right():
    """12: every dot of the "1" (digit 1) lies left of every dot of the "2" (digit 2); reversed, "21" would show."""
    dots = number_dots(12)
    ones = [x for digit, index, x, _ in dots if (digit, index) == ("1", 1)]
    twos = [x for digit, index, x, _ in dots if (digit, index) == ("2", 2)]
    assert ones and twos and max(ones) < min(twos)


def test_digit_rows_are_not_upside_down():
    """The font's "7" is "#####" on top and ".#..." at the bottom: the 5 highest dots form its top bar.

    Its glyph has 5 + 1 + 1 + 1 + 1 + 1 + 1 = 11 dots; the highest row (largest y, y up) holds 5,
    the lowest holds 1. Drawn upside down, the lowest row would hold 5.
    """
    dots = number_dots(7)
    assert len(dots) == 11
    ys = sorted({round(y, 6) for *_, y in dots})
    assert sum(round(y, 6) == ys[-1] for *_, y in dots) == 5
    assert sum(round(y, 6) == ys[0] for *_, y in dots) == 1
    one = number_dots(1)  # "1": ".###." at the bottom (3 dots), "..#.." at the top (1 dot)
    ys = sorted({round(y, 6) for *_, y in one})
    assert sum(round(y, 6) == ys[0] for *_, y in one) == 3
    assert sum(round(y, 6) == ys[-1] for *_, y in one) == 1


# -- OddGrid position and size oddities ----------------------------------------------------------


def test_grid_neighbours_are_the_eight_around_and_fewer_at_a_corner():
    """In a 5x5 grid (ids row-major from 1): (1, 1) has (1,2), (2,1), (2,2) = ids 2, 6, 7; (3, 3) has 8 cells."""
    objects = [SimpleNamespace(id=(r - 1) * 5 + c, attributes={"row": r, "col": c}) for r in range(1, 6)
               for c in range(1, 6)]
    item = SimpleNamespace(scene=SimpleNamespace(objects=objects))
    assert sorted(grid_neighbours(item, 1, 1)) == [2, 6, 7]  # type: ignore[arg-type]
    assert sorted(grid_neighbours(item, 3, 3)) == [7, 8, 9, 12, 14, 17, 18, 19]  # type: ignore[arg-type]


def test_size_discrepancy_is_the_same_for_shrunk_and_grown():
    """|0.9 - 1| = |1.1 - 1| = 0.1, halfway through SIZE_STEP 0.05-0.15: 0.5 for both; 0.95 and 1.15 span 0 to 1."""
    assert normalised_magnitudes({"size_ratio": 0.9}, (5.0, 20.0))["size"] == pytest.approx(0.5)
    assert normalised_magnitudes({"size_ratio": 1.1}, (5.0, 20.0))["size"] == pytest.approx(0.5)
    assert normalised_magnitudes({"size_ratio": 0.95}, (5.0, 20.0))["size"] == pytest.approx(0.0)
    assert normalised_magnitudes({"size_ratio": 0.85}, (5.0, 20.0))["size"] == pytest.approx(1.0)


@pytest.mark.parametrize("layout", ["ground", "board"])
def test_a_position_oddity_moves_the_way_its_shift_says(layout):
    """+x is to the right in the image (u grows); +y on the ground (away) and +z on the board (up) are up (v shrinks).

    The measured shift (`shift_px_u/v`) must have those signs, and its size must
    match projecting the two centres by hand.
    """
    for seed in range(40):
        item = make_item("odd_grid", {"rows": 5, "cols": 5, "odd_types": "position", "layout": layout, "p_none": 0.0},
                         [30, 1, seed], "pos", Frame(320, 240))
        odd = next(o for o in item.scene.objects if o.attributes.get("odd"))
        a = odd.attributes
        assert np.sign(a["shift_px_u"]) == np.sign(a["shift_share_x"])
        assert np.sign(a["shift_px_v"]) == -np.sign(a["shift_share_y"])
        if seed >= 2:
            break
    area = odd.attributes["area_ratio"]
    assert 0.5 < area < 2.0


@pytest.mark.parametrize(("ratio_low", "ratio_high", "grown"), [(0.7, 0.99, False), (1.01, 1.45, True)])
def test_a_size_oddity_measures_smaller_when_shrunk_and_larger_when_grown(ratio_low, ratio_high, grown):
    """area_ratio (odd's projected area over an unchanged twin's in the same cell) follows size_ratio squared."""
    seen = False
    for seed in range(30):
        item = make_item("odd_grid", {"rows": 5, "cols": 5, "odd_types": "size", "p_none": 0.0},
                         [31, 0, seed], "size", Frame(320, 240))
        a = next(o for o in item.scene.objects if o.attributes.get("odd")).attributes
        if (a["size_ratio"] > 1.0) != grown:
            continue
        seen = True
        assert ratio_low < a["area_ratio"] < ratio_high
        assert a["area_ratio"] == pytest.approx(a["size_ratio"] ** 2, rel=0.12)
        break
    assert seen


# -- ROSE majority and regions -------------------------------------------------------------------


def test_rose_majority_is_right_when_an_exception_holds_the_first_cell():
    """Find a seed whose exceptions include (1, 1); the recorded majority shape must be the most common shape."""
    params = RoseGridParams(rows=4, cols=4, exception="shape", min_exceptions=3, max_exceptions=4)
    for seed in range(60):
        exceptions, _ = plan_tasks(params, np.random.default_rng(np.random.SeedSequence([40, 0, seed])))
        if (1, 1) in exceptions:
            break
    else:
        pytest.fail("no seed put an exception at (1, 1)")
    item = make_item("rose_grid", params.model_dump(), [40, 0, seed], "maj", Frame(240, 180))
    shapes = [o.shape for o in item.scene.objects if o.attributes.get("role") != "cue"]
    first = next(o for o in item.scene.objects if (o.attributes.get("row"), o.attributes.get("col")) == (1, 1))
    assert first.attributes["exception"] is True
    most = max(set(shapes), key=shapes.count)
    assert shapes.count(most) > len(shapes) / 2
    assert item.difficulty["majority_shape"] == most != first.shape


@pytest.mark.parametrize("rows", range(2, 10))
@pytest.mark.parametrize("cols", range(2, 10))
def test_no_region_is_the_whole_grid_and_no_exclusion_is_empty(rows, cols):
    whole = {(r, c) for r in range(1, rows + 1) for c in range(1, cols + 1)}
    for kind in NUMERIC_KINDS:
        for region in blocks(kind, rows, cols):
            assert region.cells() != whole, (kind, region)
    for kind in EXCLUSION_KINDS:
        for region in blocks(kind, rows, cols):
            assert permitted(region, rows, cols, exclude=True), (kind, region)


def test_region_counts_by_hand():
    """4 rows: single rows 4; row ranges (a < b) but not 1-4: C(4, 2) - 1 = 5; rectangles: (10 - 1) * (10 - 1) = 81."""
    assert len(blocks("row", 4, 4)) == 4
    assert len(blocks("rows", 4, 4)) == 5
    assert len(blocks("rectangle", 4, 4)) == 81


# -- AVA ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("a", "b", "expected"), [
    ((0, 0, 10, 10), (10, 0, 20, 10), False),  # touching edges share no area
    ((0, 0, 10, 10), (9, 9, 20, 20), True),  # a 1 x 1 corner in common
    ((0, 0, 10, 10), (0, 11, 10, 20), False),  # apart along y only (an x-only test would say True)
    ((0, 0, 10, 10), (11, 0, 20, 10), False),  # apart along x only
    ((0, 0, 10, 10), (2, 2, 5, 5), True),  # one inside the other
])
def test_boxes_overlap(a, b, expected):
    assert boxes_overlap(a, b) is expected
    assert boxes_overlap(b, a) is expected


def _truth(box, depth_min=1.0, depth_centroid=1.0):
    return SimpleNamespace(bbox_visible=box, depth_min=depth_min, depth_centroid=depth_centroid)


def test_spatial_margin_is_taken_along_the_relations_axis():
    """First box x 0-10, y 0-100; second x 20-30, y 50-60: horizontal gap 10 px; vertically they overlap: 0."""
    first, second = _truth((0, 0, 10, 100)), _truth((20, 50, 30, 60))
    assert relation_margin("horizontal", first, second) == 10.0
    assert relation_margin("horizontal", second, first) == -10.0
    assert relation_margin("vertical", first, second) == 0.0
    # above: first y 0-10, second y 40-50, x overlapping: vertical gap 30, horizontal 0
    first, second = _truth((0, 0, 50, 10)), _truth((10, 40, 20, 50))
    assert relation_margin("vertical", first, second) == 30.0
    assert relation_margin("horizontal", first, second) == 0.0


def test_depth_margin_uses_the_nearest_point_and_the_centre_and_takes_the_smaller():
    """Nearest points 2.0 vs 3.0 (gap 1.0), centres 2.5 vs 2.8 (gap 0.3): 0.3; centres disagreeing in sign: 0."""
    assert relation_margin("depth", _truth(None, 2.0, 2.5), _truth(None, 3.0, 2.8)) == pytest.approx(0.3)
    assert relation_margin("depth", _truth(None, 2.0, 2.9), _truth(None, 3.0, 2.8)) == 0.0


def test_relative_depth_gap_is_at_the_nearest_visible_points():
    """The recorded gap equals |depth_min(1) - depth_min(2)| from the ground truth, not the centroids' gap."""
    differed = 0
    for seed in range(3):
        item = make_item("ava_depth_relative", {}, [50, 0, seed], "rel", Frame(160, 120))
        a, b = item.ground_truth.of(1), item.ground_truth.of(2)
        assert item.difficulty["depth_gap"] == pytest.approx(abs(a.depth_min - b.depth_min), abs=1e-6)
        differed += abs(abs(a.depth_centroid - b.depth_centroid) - abs(a.depth_min - b.depth_min)) > 1e-3
        closer = item.questions[0].gold
        red = item.questions[0].subject["red_object_id"]
        near = 1 if a.depth_min < b.depth_min else 2
        assert (closer == "red") == (red == near)
    assert differed  # the centroid gap would have given other numbers


# -- OddGrid label digits as the camera sees them ----------------------------------------------------


@pytest.mark.parametrize("layout", ["ground", "board"])
def test_label_digits_read_left_to_right_and_upright_in_the_image(layout):
    """Column label 10 of a 5x10 grid: the "1"'s dots project left of the "0"'s; column label 7: the font's top bar
    (its 5 highest dots) projects above (smaller image v) its bottom dot. A label built with the digits' order
    or the font's rows flipped in the scene (x or y negated in label_objects) would show "01" or an upside-down 7,
    which the font-level tests above cannot see."""
    item = make_item("odd_grid", {"rows": 5, "cols": 10, "layout": layout, "labels": True, "p_none": 0.0},
                     [34, 0, 0], "labels", Frame(640, 480))
    cam = geometry(item.scene.camera)

    def label(number: int) -> tuple[list, np.ndarray, np.ndarray]:
        dots = [o for o in item.scene.objects
                if o.attributes.get("label_axis") == "col" and o.attributes.get("label_number") == number]
        u, v, _ = cam.project(np.array([o.location for o in dots]))
        return dots, u, v

    dots, u, _ = label(10)
    ones = [u[i] for i, o in enumerate(dots) if o.attributes["digit_index"] == 1]
    zeros = [u[i] for i, o in enumerate(dots) if o.attributes["digit_index"] == 2]
    assert ones and zeros and max(ones) < min(zeros)
    dots, _, v = label(7)
    font = number_dots(7)  # label_objects emits the dots in the font's order
    assert len(dots) == len(font) == 11
    top = max(y for *_, y in font)
    bottom = min(y for *_, y in font)
    top_v = [v[i] for i, (*_, y) in enumerate(font) if y == top]
    bottom_v = [v[i] for i, (*_, y) in enumerate(font) if y == bottom]
    assert len(top_v) == 5 and len(bottom_v) == 1 and max(top_v) < min(bottom_v)
