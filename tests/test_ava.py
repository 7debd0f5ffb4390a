"""AVA-3D families: every gold recomputed from the scene by an independent ray cast, answers balanced,
markers where the ground truth says, and the metrics checked on hand-computed cases.

The renderer's side (depth pass against the ray cast, markers on the image, the renderer's
mask against the gold box, scoring the records) is in tests/test_ava_render.py.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from stim3d.render.batch.config import parse_config
from stim3d.render.batch.plan import expand
from stim3d.render.markers import annotate, draw_markers, markers_of
from stim3d.scenes.colors import PALETTE, delta_e_srgb
from stim3d.scenes.families.ava.ava_common import boxes_overlap
from stim3d.scenes.families.ava.ava_orientation import VIEWS
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.markers import marker_geometry
from stim3d.scenes.visibility import measure
from stim3d.scoring.answers import canonical_gold, parse
from stim3d.scoring.records import Answer, answer_text
from stim3d.scoring.rules import applicable_rules, apply

FRAME = Frame(160, 120)


def items(family: str, n: int, seed: int = 3, **params):
    return [make_item(family, params, [seed, 0, i], f"{family}-{i}", FRAME) for i in range(n)]


def marked(item, color: str):
    """The object the marker of `color` is drawn around (read from the scene, not from the question)."""
    (obj,) = [o for o in item.scene.objects if o.attributes.get("marker") == color]
    return obj


def pixel_box(ids: np.ndarray, object_id: int) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(ids == object_id)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


# -- golds from the scene ----------------------------------------------------------------------------

def test_count_gold_is_the_number_of_target_objects_all_above_the_floor():
    for item in items("ava_count", 8, max_count=12, min_visibility=0.6):
        q = item.questions[0]
        targets = [o for o in item.scene.objects if (o.shape, o.color.name) == (q.subject["shape"], q.subject["color"])]
        assert q.gold == len(targets) == item.difficulty["count"]
        low, high = map(int, str(item.difficulty["count_bin"]).split("-"))
        assert low <= q.gold <= high and high - low == 4
        truth = measure(item.scene)
        assert min(t.visibility for t in truth.truths) >= 0.6


def test_count_reaches_forty():
    (item,) = items("ava_count", 1, answer=40, max_distractors=2)
    q = item.questions[0]
    assert sum((o.shape, o.color.name) == (q.subject["shape"], q.subject["color"]) for o in item.scene.objects) == 40


def test_localize_gold_is_the_visible_box_of_the_only_instance():
    for item in items("ava_localize", 10):
        q = item.questions[0]
        same = [o for o in item.scene.objects if (o.shape, o.color.name) == (q.subject["shape"], q.subject["color"])]
        assert len(same) == 1
        ids = measure(item.scene).instance_map
        assert tuple(q.gold) == pixel_box(ids, same[0].id)
        area = (q.gold[2] - q.gold[0]) * (q.gold[3] - q.gold[1]) / (FRAME.width * FRAME.height)
        assert 0.002 <= area <= 0.5 and area == pytest.approx(item.difficulty["box_area_fraction"], abs=1e-6)


def test_depth_absolute_gold_is_the_nearest_visible_depth():
    for item in items("ava_depth_absolute", 8):
        q = item.questions[0]
        target = marked(item, "red")
        truth = measure(item.scene)
        nearest = float(truth.depth[truth.instance_map == target.id].min())
        assert q.gold == pytest.approx(nearest, abs=1e-3)
        assert item.difficulty["depth_centroid"] > item.difficulty["depth_min"]


def test_depth_relative_gold_names_the_closer_box_by_at_least_the_gap():
    batch = items("ava_depth_relative", 12)
    for item in batch:
        truth = measure(item.scene)
        depth = {c: float(truth.depth[truth.instance_map == marked(item, c).id].min()) for c in ("red", "blue")}
        gold = item.questions[0].gold
        other = "blue" if gold == "red" else "red"
        assert depth[gold] + 0.5 <= depth[other] + 1e-6
        assert not boxes_overlap(*[m.box for m in markers_of(item)])
    assert Counter(i.questions[0].gold for i in batch).keys() == {"red", "blue"}


def test_color_gold_is_the_object_colour_and_never_a_nominally_ambiguous_one():
    for item in items("ava_color", 10, ambiguity_de=20.0):
        q = item.questions[0]
        target = marked(item, "white")
        assert q.gold == target.color.name
        assert q.gold not in ("blue", "purple")  # 14.3 apart in CIEDE2000, within 20
        recorded = {k.removeprefix("nominal_de_"): v for k, v in item.difficulty.items() if k.startswith("nominal_de_")}
        assert set(recorded) == set(PALETTE)
        for name, value in recorded.items():
            assert value == pytest.approx(float(delta_e_srgb(PALETTE[q.gold], PALETTE[name])), abs=1e-5)


def _relation(item) -> tuple[str, float]:
    """The relation of the red object to the blue one, recomputed from the ray cast."""
    truth = measure(item.scene)
    red, blue = (truth.truths[marked(item, c).id - 1] for c in ("red", "blue"))
    relation = item.questions[0].subject["relation"]
    if relation == "depth":
        ahead = blue.depth_min - red.depth_min
        return ("in front" if ahead > 0 else "behind"), abs(ahead)
    axis = 0 if relation == "horizontal" else 1
    if red.bbox_visible[axis + 2] <= blue.bbox_visible[axis]:
        return ("left" if axis == 0 else "above"), blue.bbox_visible[axis] - red.bbox_visible[axis + 2]
    assert blue.bbox_visible[axis + 2] <= red.bbox_visible[axis], "boxes overlap along the asked axis"
    return ("right" if axis == 0 else "below"), red.bbox_visible[axis] - blue.bbox_visible[axis + 2]


def test_spatial_gold_follows_from_the_boxes_and_depths_by_the_recorded_margin():
    for item in items("ava_spatial", 18):
        answer, margin = _relation(item)
        assert item.questions[0].gold == answer
        assert margin >= item.difficulty["margin_required"] - 1e-9
        assert margin >= item.difficulty["margin"] - 1e-6


def _view(item) -> str:
    """The side of the toy car facing the camera, from the parts' positions and the camera alone."""
    parts = {o.attributes["part"]: np.asarray(o.location) for o in item.scene.objects}
    front = parts["nose"] - parts["body_middle"]
    front = front / np.linalg.norm(front)
    left = np.cross([0.0, 0.0, 1.0], front)
    to_camera = np.asarray(item.scene.camera.location) - parts["body_middle"]
    if math.degrees(math.atan2(to_camera[2], np.hypot(to_camera[0], to_camera[1]))) > 50.0:
        return "top"
    azimuth = math.degrees(math.atan2(to_camera @ left, to_camera @ front)) % 360.0
    sides = ["front", "front left", "left", "back left", "back", "back right", "right", "front right"]
    return sides[int(((azimuth + 22.5) % 360.0) // 45.0)]


def test_orientation_gold_is_the_side_facing_the_camera():
    batch = [make_item("ava_orientation", {"answer": view}, [4, 0, i], f"o-{i}", FRAME)
             for i, view in enumerate(VIEWS * 2)]
    for item in batch:
        assert item.questions[0].gold == _view(item)
        assert abs(item.difficulty["yaw_jitter_deg"]) <= 12.0
        assert {o.attributes["part_of"] for o in item.scene.objects} == {"toy_car"}
        assert all(t.truncation == 0.0 for t in item.ground_truth.objects)


# -- balance over a batch ------------------------------------------------------------------------------

BALANCE_CONFIG = {
    "seed": 9,
    "render": {"width": 160, "height": 120},
    "tasks": [
        {"family": "ava_count", "count": 24, "params": {"max_count": 8, "max_distractors": 2}},
        {"family": "ava_depth_relative", "count": 20},
        {"family": "ava_color", "count": 24},
        {"family": "ava_spatial", "count": 24},
        {"family": "ava_orientation", "count": 27},
    ],
}


def test_best_constant_answer_is_within_five_points_of_chance():
    config = parse_config(BALANCE_CONFIG)
    golds: dict[str, list] = {}
    for plan in expand(config):
        item = make_item(plan.family, plan.params, [config.seed, plan.task_index, plan.item_index], plan.item_id,
                         FRAME, plan.split)
        golds.setdefault(plan.family, []).append(item.questions[0].gold)
    for family, answers in golds.items():
        counts = Counter(answers)
        best = max(counts.values()) / len(answers)
        chance = 1.0 / len(counts)
        assert best - chance <= 0.05, (family, counts)


# -- markers -------------------------------------------------------------------------------------------

def test_markers_are_outlines_in_their_colour_around_the_visible_box():
    (item,) = items("ava_depth_relative", 1, seed=8)
    image = np.full((FRAME.height, FRAME.width, 3), 128, np.uint8)
    marked_image = draw_markers(image, markers_of(item))
    for marker in markers_of(item):
        x0, y0, x1, y1 = marker.box
        rgb = {"red": (255, 0, 0), "blue": (0, 0, 255)}[marker.color]
        assert tuple(marked_image[y0, x0]) == rgb and tuple(marked_image[y1 - 1, x1 - 1]) == rgb
        assert tuple(marked_image[(y0 + y1) // 2, (x0 + x1) // 2]) == (128, 128, 128)  # inside stays clear
        visible = item.ground_truth.of(marker.object_id).bbox_visible
        assert x0 < visible[0] and y0 < visible[1] and x1 > visible[2] and y1 > visible[3]
    changed = np.any(marked_image != image, axis=2)
    outline = sum(2 * m.width * ((m.box[2] - m.box[0]) + (m.box[3] - m.box[1]) - 2 * m.width) for m in markers_of(item))
    assert changed.sum() == outline


# -- parsers and metrics, by hand ------------------------------------------------------------------------

@pytest.mark.parametrize("response", [
    "[10, 20, 30, 40]", "(10, 20, 30, 40)", "The box is [10,20,30,40].", "(10, 20), (30, 40)", "(10,20) to (30,40)",
    "x_min=10, y_min=20, x_max=30, y_max=40", "left: 10, top: 20, right: 30, bottom: 40", "x1=10 y1=20 x2=30 y2=40",
    "x: 10, y: 20, width: 20, height: 20", '{"bbox_2d": [10, 20, 30, 40]}', "\\boxed{10 20 30 40}",
    "I think it is at [1, 2, 3, 4]. Final answer: [10, 20, 30, 40]",
])
def test_box_formats(response):
    assert parse("box", response).value == (10.0, 20.0, 30.0, 40.0)


@pytest.mark.parametrize("response", ["[30, 20, 10, 40]", "no idea", "[10, 20, 30]"])
def test_box_not_a_box_is_invalid(response):
    assert parse("box", response).value is None


@pytest.mark.parametrize("response,metres", [
    ("7.5", 7.5), ("7.5 m", 7.5), ("About 7.5 metres.", 7.5), ("750 cm", 7.5), ("seven meters", 7.0),
    ("\\boxed{7.5m}", 7.5), ("It is 7-8 m away", 7.5), ("25 ft", 7.62), ("7500 mm", 7.5),
])
def test_numbers_with_units(response, metres):
    assert parse("number", response).value == pytest.approx(metres)


VIEW_OPTIONS = list(VIEWS)


@pytest.mark.parametrize("response,expected", [
    ("front left", "front left"), ("Front-left.", "front left"), ("The car is seen from the back right.", "back right"),
    ("\\boxed{top}", "top"), ("9", "top"), ("Answer: 2. front right", "front right"), ("front", "front"),
])
def test_orientation_words(response, expected):
    assert parse("choice", response, VIEW_OPTIONS).value == expected


@pytest.mark.parametrize("response,expected", [
    ("red", "red"), ("The cube in the red box is closer than the one in the blue box.", "red"),
    ("Looking at both boxes, red and blue... The blue one is closer.", "blue"), ("Answer: Blue", "blue"),
])
def test_closer_words(response, expected):
    assert parse("choice", response, ["red", "blue"]).value == expected


def test_colour_names_and_relation_words():
    colours = list(PALETTE)
    assert parse("choice", "It looks grey to me.", colours).value == "gray"
    assert parse("choice", "The object is purple.", colours).value == "purple"
    assert parse("choice", "It is in front of the sphere.", ["in front", "behind"]).value == "in front"
    assert parse("choice", "Left.", ["left", "right"]).value == "left"
    assert parse("choice", "maybe", ["left", "right"]).value is None


def test_iou_by_hand():
    gold = canonical_gold("box", [10, 20, 30, 40])  # 20 x 20 = 400
    assert apply("iou", (10.0, 20.0, 30.0, 40.0), gold, {}) == 1.0
    assert apply("iou", (20.0, 20.0, 40.0, 40.0), gold, {}) == pytest.approx(200 / 600)  # half overlaps
    assert apply("iou", (15.0, 25.0, 35.0, 45.0), gold, {}) == pytest.approx(225 / 575)
    assert apply("exact", (15.0, 25.0, 35.0, 45.0), gold, {}) == 0.0  # IoU 0.39 < 0.5
    assert apply("exact", (12.0, 20.0, 30.0, 40.0), gold, {}) == 1.0  # IoU 0.9
    assert apply("iou", (50.0, 50.0, 60.0, 60.0), gold, {}) == 0.0
    # fractions of a 100 x 80 image: (0.1, 0.25, 0.3, 0.5) -> (10, 20, 30, 40)
    assert apply("iou", (0.1, 0.25, 0.3, 0.5), gold, {"width": 100, "height": 80}) == pytest.approx(1.0)
    assert apply("iou", None, gold, {}) == 0.0
    # GIoU: IoU minus the empty share of the enclosing box
    assert apply("giou", (20.0, 20.0, 40.0, 40.0), gold, {}) == pytest.approx(1 / 3)  # hull 600 = union
    assert apply("giou", (50.0, 20.0, 70.0, 40.0), gold, {}) == pytest.approx(-400 / 1200)  # disjoint
    assert apply("giou", None, gold, {}) == -1.0


def test_depth_metrics_by_hand():
    gold = canonical_gold("number", 8.0)
    assert apply("delta125", 9.9, gold, {}) == 1.0  # 9.9 / 8 = 1.2375
    assert apply("delta125", 10.0, gold, {}) == 0.0  # 1.25 is not < 1.25
    assert apply("delta125", 6.5, gold, {}) == 1.0  # 8 / 6.5 = 1.23
    assert apply("delta125", 6.4, gold, {}) == 0.0  # 8 / 6.4 = 1.25
    assert apply("abs_rel", 10.0, gold, {}) == pytest.approx(0.25)
    assert apply("abs_rel", 6.0, gold, {}) == pytest.approx(0.25)
    assert apply("abs_rel", None, gold, {}) == 1.0  # an unparsed answer is the worst case, not 0 error
    assert apply("exact", 9.0, gold, {}) == 1.0 and apply("exact", 11.0, gold, {}) == 0.0
    assert apply("abs_rel", 30, 40, {}) == pytest.approx(0.25)  # counting's MAE/GT
    assert "abs_rel" in applicable_rules("integer", {}) and "delta125" in applicable_rules("number", {})


def test_choice_answers_need_their_options_and_gold_parses_back():
    with pytest.raises(ValueError):
        Answer(type="choice", gold="green", options=["red", "blue"])
    with pytest.raises(ValueError):
        Answer(type="choice", gold="red")
    with pytest.raises(ValueError):
        Answer(type="box", gold=[30, 20, 10, 40])
    for kind, gold, options in [("box", [10, 20, 30, 40], None), ("number", 7.234, None),
                                ("choice", "front left", VIEW_OPTIONS)]:
        answer = Answer(type=kind, gold=gold, options=options)
        value = canonical_gold(kind, answer.gold)
        assert parse(kind, answer_text(kind, value), options).value == value


def test_preset_gives_every_ability_a_test_split_with_answers_at_chance():
    from pathlib import Path

    import stim3d.scenes.presets as presets
    from stim3d.render.batch.config import load_config

    plans = expand(load_config(Path(presets.__file__).parent / "ava3d.yaml"))
    assert {p.family for p in plans} == {"ava_count", "ava_localize", "ava_depth_absolute", "ava_depth_relative",
                                         "ava_color", "ava_spatial", "ava_orientation", "ava_texture", "ava_ocr",
                                         "ava_object"}
    assert {p.split for p in plans} == {"test"}
    for family in ("ava_count", "ava_depth_relative", "ava_color", "ava_spatial", "ava_orientation", "ava_texture",
                   "ava_object"):
        answers = Counter(p.params["answer"] for p in plans if p.family == family)
        assert max(answers.values()) / sum(answers.values()) - 1 / len(answers) <= 0.05, (family, answers)
    counts = Counter((p.params["target_shape"], p.params["answer"]) for p in plans if p.family == "ava_count")
    assert len(counts) == 200 and set(counts.values()) == {1}  # every count 1..40 once per target shape


def test_markers_follow_an_object_moved_by_hand():
    """annotate() redraws each marker around the object's current visible box (the add-on re-measures it)."""
    (item,) = items("ava_depth_absolute", 1, seed=5)
    image = np.zeros((FRAME.height, FRAME.width, 3), np.uint8)
    same, _ = annotate(item, image)
    assert same.scene == item.scene  # a composed item's markers already fit
    target = marked(item, "red")
    moved_truth = item.ground_truth.of(target.id).model_copy(update={"bbox_visible": (10, 10, 30, 30)})
    edited = item.model_copy(update={"ground_truth": item.ground_truth.model_copy(
        update={"objects": [moved_truth if t.id == target.id else t for t in item.ground_truth.objects]})})
    annotated, marked_image = annotate(edited, image)
    (marker,) = markers_of(annotated)
    grow = sum(marker_geometry(FRAME))  # padding + line width
    assert marker.box == (10 - grow, 10 - grow, 30 + grow, 30 + grow)
    assert tuple(marked_image[10 - grow, 10 - grow]) == (255, 0, 0)
