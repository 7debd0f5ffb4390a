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

from stim3d.eval.stats import MAX_LEVELS, axis_cells, fit_logistic
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
