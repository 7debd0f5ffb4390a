"""Behaviours a one-line mutation used to change without any test failing, each pinned on a hand-made case.

Each test names the mutation it catches; with the mutation applied, the test files
that cover the code around it (listed in the comment) still passed. No rendering.
Mutations already caught elsewhere, so not pinned again here: boxes_overlap ignoring y
(tests/test_validity_families.py::test_boxes_overlap), relation_margin taking x for every
relation (tests/test_ava.py, test_validity_families.py), iou scaling y by the width
(tests/test_validity_scoring.py), fit_logistic counting levels with len(xs)
(tests/test_eval_baselines.py); the last three are pinned below too, beside their neighbours.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from stim3d.eval.stats import MAX_LEVELS, axis_cells, fit_logistic, varied_axes
from stim3d.scenes.families.ava import ava_depth
from stim3d.scenes.families.ava.ava_common import ObjectSpec, make_object
from stim3d.scenes.families.base import Frame
from stim3d.scenes.families.shared.stage import counting_camera
from stim3d.scenes.items import make_item
from stim3d.scenes.placement import Bounds, InfeasibleError, Layout
from stim3d.scenes.visibility import VisibilityCanvas
from stim3d.scoring.answers import parse
from stim3d.scoring.rules import apply
from tests.helpers import obj, scene

# -- a yes/no the sentence rules miss, found in a formal answer span, is read as given ----------------
# Mutation caught: in parsers.py parse_yes_no's fallback, `found.group(1).lower()` -> the other word
# (survived tests/test_scoring_parsers.py, test_parsers_model_responses.py, test_validity_scoring.py,
# test_answer_types.py, test_records.py, test_hardening_scoring.py).


@pytest.mark.parametrize(("response", "gold", "expected_score"), [
    ("\\boxed{I would say no they do not}", "no", 1.0),  # "no" inside a sentence: only the fallback reads it
    ("\\boxed{I would say no they do not}", "yes", 0.0),
    ("Final answer: I think yes they match", "yes", 1.0),  # a marker span, "yes" mid-sentence
    ("Final answer: I think yes they match", "no", 0.0),
])
def test_a_yes_or_no_inside_a_formal_answer_is_the_answer_given(response, gold, expected_score):
    parsed = parse("yes_no", response)
    assert parsed.valid
    assert apply("exact", parsed.value, gold, {}) == expected_score


# -- strict: only \boxed{} and the grammar, never an answer marker ------------------------------------
# Mutation caught: parse_text.py Parsed.strict accepting source "marker" too (survived
# tests/test_scoring_parsers.py, test_validity_scoring.py, test_records.py, test_score_end_to_end.py,
# test_parsers_model_responses.py, test_hardening_scoring.py).


@pytest.mark.parametrize(("answer_type", "marked", "boxed"), [
    ("cell", "The answer is Row 2, Column 3.", "\\boxed{Row 2, Column 3}"),
    ("integer", "Final answer: 4", "\\boxed{4}"),
    ("yes_no", "Answer: yes", "\\boxed{yes}"),
])
def test_an_answer_after_a_marker_is_valid_but_not_strict(answer_type, marked, boxed):
    from_marker, from_box = parse(answer_type, marked), parse(answer_type, boxed)
    assert from_marker.valid and not from_marker.strict
    assert from_box.valid and from_box.strict and from_box.value == from_marker.value


# -- a box given in fractions is scaled by the image's own width and height ---------------------------
# Mutation caught: rules.py giou scaling y by the width (`pred[1] * w`, `pred[3] * w`); the same in iou is
# caught by test_validity_scoring.py, giou's survived it and test_scoring_parsers.py, test_records.py,
# test_hardening_scoring.py, test_eval_baselines.py.


@pytest.mark.parametrize("rule", ["iou", "giou", "exact"])
def test_a_fraction_box_scores_as_the_same_box_in_pixels_on_a_wide_image(rule):
    """200 x 100 image, gold (50, 25, 150, 75): "[0.25, 0.25, 0.75, 0.75]" is that box, "[0.25, 0.5, 0.75, 1]" not."""
    size = {"width": 200, "height": 100}
    gold = (50.0, 25.0, 150.0, 75.0)
    answer = parse("box", "[0.25, 0.25, 0.75, 0.75]").value
    assert apply(rule, answer, gold, size) == pytest.approx(1.0)
    lower_half = parse("box", "[0.25, 0.5, 0.75, 1.0]").value  # y 50-100: half of it overlaps the gold
    assert apply(rule, lower_half, gold, size) == pytest.approx(apply(rule, (50.0, 50.0, 150.0, 100.0), gold, {}))
    assert apply(rule, lower_half, gold, size) < 1.0


# -- AVA relative depth: nearest visible points, in the gold and in the gap -------------------------------
# Mutations caught: ava_depth.py compose_relative deciding `near_id` by depth_centroid, and its accept test
# measuring the gap between centroids (both survived tests/test_ava.py and test_validity_families.py).

FRAME = Frame(160, 120)


def _tall_cube_and_small_sphere(specs):
    """Object 1 a 1.4 m cube whose front top edge is nearer than object 2, a 0.3 m sphere placed so that its
    centre is nearer than the cube's centre: nearest points ~0.65 m apart, centres ~0.17 m."""
    cube = make_object(1, ObjectSpec("cube", specs[0].color, 1.4, "marked"), -1.2, 0.0, 0.0)
    sphere = make_object(2, ObjectSpec("sphere", specs[1].color, 0.3, "marked"), 1.2, -0.55, 0.0)
    return [cube, sphere]


def _scatter_by_hand(specs, frame, rng, min_visibility, accept):
    """ava_common.scatter's contract on a hand-made scene: the family's own `accept` decides, once."""
    layout = Layout(counting_camera(frame))
    for placed in _tall_cube_and_small_sphere(specs):
        assert layout.try_put(placed, Bounds())
    truth = layout.canvas.result()
    failed = accept(layout, truth)
    if failed is not None:
        raise InfeasibleError(failed, "the hand-made scene")
    return layout, truth


@pytest.mark.parametrize("closer", ["red", "blue"])
def test_the_closer_object_is_the_one_whose_nearest_visible_point_is_nearer(monkeypatch, closer):
    monkeypatch.setattr(ava_depth, "scatter", _scatter_by_hand)
    item = make_item("ava_depth_relative", {"answer": closer, "max_distractors": 0}, [5, 0, 0], "depth", FRAME)
    cube, sphere = item.ground_truth.of(1), item.ground_truth.of(2)
    # the case means something only if the nearest points and the centres disagree, and only the first clear 0.5 m
    assert cube.depth_min + 0.5 <= sphere.depth_min and cube.depth_centroid > sphere.depth_centroid
    assert abs(cube.depth_centroid - sphere.depth_centroid) < 0.5
    question = item.questions[0]
    assert question.gold == closer
    boxed = {o.attributes["marker"]: o.id for o in item.scene.objects}
    assert boxed[question.gold] == 1  # the gold's box holds the cube
    assert item.difficulty["depth_gap"] == pytest.approx(sphere.depth_min - cube.depth_min, abs=1e-6)


# -- AVA spatial: the margin a vertical relation needs is a share of the image height --------------------
# Mutation caught: ava_spatial.py compose taking `frame.width` for every image axis (survived
# tests/test_ava.py and test_validity_families.py).


@pytest.mark.parametrize(("answer", "axis_px"), [("above", 120), ("left", 160)])
def test_the_spatial_margin_is_measured_along_the_relations_own_image_axis(answer, axis_px):
    item = make_item("ava_spatial", {"answer": answer, "margin_frac": 0.05, "max_distractors": 0}, [9, 0, 1],
                     "spatial", FRAME)
    assert item.difficulty["margin_required"] == pytest.approx(0.05 * axis_px)
    assert item.difficulty["margin"] >= 0.05 * axis_px
    red, blue = (item.ground_truth.of(item.questions[0].subject[f"{c}_object_id"]).bbox_visible for c in ("red", "blue"))
    axis = 1 if answer == "above" else 0
    assert blue[axis] - red[axis + 2] == pytest.approx(item.difficulty["margin"])  # red wholly before blue


# -- the visibility canvas after a removal ----------------------------------------------------------------
# Mutation caught: visibility.py VisibilityCanvas.remove not marking the first-hit map stale (survived
# tests/test_visibility.py and test_occluder_choice.py).


def test_removing_the_occluder_gives_the_target_back_its_pixels():
    camera = scene([]).camera
    target, occluder = obj(1, "sphere", 1.2, 0.0, 1.0), obj(2, "cube", 1.0, 0.4, -0.3)
    canvas = VisibilityCanvas(camera)
    canvas.put(target)
    alone = canvas.visibility()[1]
    canvas.put(occluder)
    assert canvas.visibility()[1] < alone  # the cube hides part of the sphere
    canvas.remove(2)
    assert canvas.visibility() == {1: alone}
    result = canvas.result()
    assert set(np.unique(result.instance_map)) == {0, 1}  # no pixel still belongs to the removed cube
    assert [t.id for t in result.truths] == [1]


# -- the eval report's psychometric fit and its top bin ----------------------------------------------------
# Mutations caught: stats.py fit_logistic counting levels with `len(xs)` instead of distinct values, and
# axis_cells without `min(..., MAX_LEVELS - 1)` (both survived tests/test_eval_report.py and
# test_eval_baselines.py).


def test_no_curve_is_fitted_through_one_level_given_twice():
    assert fit_logistic([0.5, 0.5], [1, 4], [5, 5]) is None
    assert fit_logistic([0.4, 0.6], [1, 4], [5, 5]) is not None


def test_the_largest_value_of_a_binned_axis_falls_in_the_top_bin():
    """Values 0, 1, ..., 24 (25 distinct, more than MAX_LEVELS): 12 bins of width 2, the last holding 22, 23 and 24."""
    values = list(range(25))
    records = [SimpleNamespace(difficulty={"occlusion": v}) for v in values]
    results = [SimpleNamespace(correct=v >= 22) for v in values]
    cells = axis_cells(records, results, "occlusion")  # type: ignore[arg-type]
    assert len(cells) == MAX_LEVELS == 12
    top = cells[-1]
    assert (top.label, top.n, top.correct) == (23.0, 3, 3)
    assert sum(c.n for c in cells) == 25


# -- AVA marker boxes: overlap on both axes, whatever the boxes' proportions -----------------------------------
# Mutation caught: ava_common.py boxes_overlap comparing an x index with a y index (`b[1] < a[3]` -> `b[1] < a[2]`),
# which only a tall (or wide) box shows: tests/test_validity_families.py's table uses boxes of similar sides.


def test_marker_boxes_overlap_exactly_when_they_share_a_pixel_tall_and_wide_boxes_included():
    """Against the pixels each box covers (x1, y1 exclusive), over boxes from 1 to 60 px on either side."""
    from stim3d.scenes.families.ava.ava_common import boxes_overlap

    rng = np.random.default_rng(54)
    for _ in range(3000):
        boxes = []
        for _side in range(2):
            x0, y0 = (int(v) for v in rng.integers(0, 40, size=2))
            w, h = (int(v) for v in rng.integers(1, 61, size=2))
            boxes.append((x0, y0, x0 + w, y0 + h))
        a, b = boxes
        share = max(a[0], b[0]) < min(a[2], b[2]) and max(a[1], b[1]) < min(a[3], b[3])
        assert boxes_overlap(a, b) is share and boxes_overlap(b, a) is share, (a, b)
    tall, beside = (10, 0, 14, 100), (20, 50, 30, 60)  # a tall box and one to its right: apart
    assert not boxes_overlap(tall, beside) and not boxes_overlap(beside, tall)


# -- ROSE: the majority's size is the majority's, wherever the exceptions are -----------------------------------
# Mutation caught: rose_grid.py _size_contrast taking the majority's size from the grid's first cell
# (`cells[min(set(cells))]`), which is an exception when one stands in cell (1, 1).


def test_a_size_exception_in_the_first_cell_is_measured_against_the_majority():
    """3x3 grid, the exception in cell (1, 1) at 1.3x the majority's size and twice its area: seen as grown."""
    from stim3d.scenes.families.rose.rose_grid import _size_contrast

    cells = {(r, c): {"size": 1.3 if (r, c) == (1, 1) else 1.0} for r in range(1, 4) for c in range(1, 4)}
    objects = [SimpleNamespace(id=i, attributes={"row": r, "col": c}) for i, (r, c) in enumerate(cells, start=1)]
    areas = {o.id: 200 if (o.attributes["row"], o.attributes["col"]) == (1, 1) else 100 for o in objects}
    layout = SimpleNamespace(canvas=SimpleNamespace(casts={i: SimpleNamespace(gx=np.zeros(a)) for i, a in areas.items()}))
    ratios = _size_contrast(layout, objects, cells, {(1, 1)})  # type: ignore[arg-type]
    assert ratios == {(1, 1): {"area_ratio_row": 2.0, "area_ratio_grid": 2.0}}


# -- the eval report shows an axis the batch varies over two values ---------------------------------------------
# Mutation caught: stats.py varied_axes keeping keys with more than two values (`len(seen) > 2`), which drops a
# yes/no-like axis (two sizes, labels on and off) from every report.


def test_a_difficulty_axis_with_two_values_is_reported_and_one_with_one_value_is_not():
    records = [SimpleNamespace(difficulty={"rows": 5 + 2 * (i % 2), "layout_px": 640, "n": i % 3}) for i in range(6)]
    assert varied_axes(records) == ["n", "rows"]  # type: ignore[arg-type]
    results = [SimpleNamespace(correct=i % 2 == 0) for i in range(6)]
    cells = axis_cells(records, results, "rows")  # type: ignore[arg-type]
    assert [(c.label, c.n, c.correct) for c in cells] == [(5.0, 3, 3), (7.0, 3, 0)]


# -- a box question's record carries the image's width as width and its height as height ------------------------
# Mutation caught: records.py scoring_for giving `width=image_size[1], height=image_size[0]`; every box family's
# tests render square-ish frames or score pixel boxes only.


def test_a_box_record_on_a_wide_image_scores_a_fraction_box_against_its_own_sides():
    from stim3d.render.batch.records import records_for
    from tests.helpers import PROVENANCE

    item = make_item("ava_localize", {}, [5, 0, 0], "ava_localize-t0-00000", Frame(200, 100))
    (record,) = [r for r in records_for(item.model_copy(update={"provenance": PROVENANCE}), "items/x/image.png",
                                        "ab" * 32) if r.answer.type == "box"]
    assert (record.scoring.params["width"], record.scoring.params["height"]) == (200, 100)
    x0, y0, x1, y1 = record.answer.gold
    fractions = parse("box", f"[{x0 / 200}, {y0 / 100}, {x1 / 200}, {y1 / 100}]").value
    assert apply(record.scoring.rule, fractions, record.answer.gold, record.scoring.params) == pytest.approx(1.0)


# -- a sign's text: the last of several quoted strings ------------------------------------------------------------
# Mutation caught: parsers_actions.py parse_text taking the first quoted string (`quoted[0]`).


@pytest.mark.parametrize("response", [
    'It could be "APPLE" or "GRAPE", but looking closer I read "LEMON".',
    "At first \u201cAPPLE\u201d, then \u201cLEMON\u201d.",
])
def test_of_several_quoted_strings_the_last_is_the_text_read(response):
    from stim3d.scoring.parsers_actions import parse_text

    assert parse_text(response).value == "LEMON"


# -- a figure's contrast is the whole figure's, not its first part's ----------------------------------------------
# Mutation caught: look_contrast.py object_contrasts judging a figure by its first part only
# (`np.isin(mask, ids)` -> `mask == ids[0]`); tests/test_look_contrast.py's two dots have one colour.


def test_a_figures_contrast_is_measured_over_all_its_parts():
    """A digit of two parts on a grey board: part 1 (a few pixels) grey like the board, part 2 (most of the digit)
    black. The figure's median colour is black, so it stands out; its first part alone would not."""
    from stim3d.scenes.look_contrast import object_contrasts, region_contrast

    mask = np.zeros((40, 40), np.uint16)
    mask[10:14, 10:20], mask[14:30, 10:20] = 1, 2
    image = np.full((40, 40, 3), 128, np.uint8)
    image[mask == 2] = (10, 10, 10)
    pixels = {1: float((mask == 1).sum()), 2: float((mask == 2).sum())}
    figure = object_contrasts(image, mask, pixels, {1: "digit", 2: "digit"})
    whole = region_contrast(image, mask > 0)
    assert figure == {1: whole, 2: whole} and whole is not None and whole > 20
    assert region_contrast(image, mask == 1) < 1  # what the first part alone would have given both


# -- the contrast floor is 5 dE2000 (docs/looks.md "Contrast floor") ------------------------------------------------
# Mutation caught: look_contrast.py FLOOR_DE changed (tests compared with FLOOR_DE itself, so they moved with it).


def test_the_contrast_floor_is_the_documented_five_de2000():
    from stim3d.scenes.look_contrast import contrast_failures
    from stim3d.scenes.model import GroundTruth

    item = make_item("shape_count", {}, [1, 0, 0], "shape_count-t0-00000", FRAME)
    values = [4.99, 5.0, 5.01, None, 2.0, 30.0]
    truths = [t.model_copy(update={"contrast_de": values[i % len(values)]})
              for i, t in enumerate(item.ground_truth.objects)]
    assert len(truths) >= 3
    judged = item.model_copy(update={"ground_truth": GroundTruth(objects=truths)})
    DOCUMENTED_FLOOR = 5.0  # docs/looks.md: "The floor: 5 dE2000"
    expected = sorted(t.id for t in truths if t.contrast_de is not None and t.contrast_de < DOCUMENTED_FLOOR)
    assert contrast_failures(judged) == expected
    assert [t.id for t in truths if t.contrast_de in (4.99, 2.0)] == expected


# -- ava_object among distractors: the gold and the red box are the target's ----------------------------------------
# Mutations caught: ava_object.py compose marking another object (`markers={2: "red"}`) or naming another object's
# kind as the gold; tests/test_ava_object.py's seeds drew no distractor, so only the golden hash noticed.


@pytest.mark.parametrize("seed", [0, 1, 2, 4])
def test_ava_objects_gold_and_red_box_are_the_targets_with_distractors_present(seed):
    from stim3d.scenes.markers import marker_box

    frame = Frame(320, 240)
    item = make_item("ava_object", {"max_distractors": 6}, [seed, 0, seed], f"ava_object-t0-{seed:05d}", frame)
    assert item.difficulty["n_distractors"] >= 1 and len(item.scene.objects) >= 2
    marked = [o for o in item.scene.objects if "marker" in o.attributes]
    assert [(o.id, o.attributes["marker"]) for o in marked] == [(1, "red")]
    target = marked[0]
    kind = target.source.name.replace("_", " ")
    assert [q.gold for q in item.questions] == [kind, kind]
    assert all(o.source.name != target.source.name for o in item.scene.objects if o.id != target.id)
    box = (target.attributes["marker_x0"], target.attributes["marker_y0"], target.attributes["marker_x1"],
           target.attributes["marker_y1"])
    assert box == marker_box(item.ground_truth.of(target.id).bbox_visible, frame)


# -- a composed object's mesh is centred on its bounding box and one unit at its longest ----------------------------
# Mutation caught: meshes.py composed_mesh centring on the vertices' mean instead of the box's centre (an object
# with a handle or a chimney moves off its location, and off the ray cast Blender shares).


@pytest.mark.parametrize("name", ["mug", "house", "car", "snowman", "lamp", "rocket"])
def test_a_composed_objects_mesh_is_centred_on_its_box(name):
    from stim3d.scenes.meshes import composed_mesh
    from stim3d.scenes.object_library import composed_source

    vertices = composed_mesh(composed_source(name).parts)[0].vertices
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    assert np.allclose((low + high) / 2, 0.0, atol=1e-12)
    assert (high - low).max() == pytest.approx(1.0)
