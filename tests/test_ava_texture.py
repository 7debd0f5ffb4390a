"""AVA-3D texture, composition only: determinism, the gold on the marked sign, the recorded period in pixels
recomputed from the sign's mesh corners through the camera matrix, and answers balanced over a batch.

The rendered side (the pattern on the image is the class's definition, resolvable) is in
tests/test_ava_texture_render.py.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from stim3d.render.batch.config import parse_config
from stim3d.render.batch.plan import expand
from stim3d.scenes.families.base import Frame
from stim3d.scenes.interchange import camera_matrices
from stim3d.scenes.items import make_item
from stim3d.scenes.primitives import world_vertices
from stim3d.scenes.surfaces import TEXTURE_CLASSES, face_uv, texture_ink
from stim3d.scenes.visibility import measure

FRAME = Frame(320, 240)


def items(n: int, seed: int = 4, **params):
    return [make_item("ava_texture", params, [seed, 0, i], f"ava_texture-{i}", FRAME) for i in range(n)]


def sign_of(item):
    (sign,) = [o for o in item.scene.objects if o.attributes.get("marker") == "red"]
    return sign


def project(item, points: np.ndarray) -> np.ndarray:
    """Pixels of world points through the recorded intrinsics and the OpenCV camera-to-world matrix."""
    matrices = camera_matrices(item.scene.camera)
    to_world = np.asarray(matrices.camera_to_world_opencv)
    cam = (points - to_world[:3, 3]) @ to_world[:3, :3]
    pixels = cam @ np.asarray(matrices.K).T
    return pixels[:, :2] / pixels[:, 2:]


def period_px(item) -> float:
    """One period along the pattern's two axes at the sign's centre, shorter of the two, from the mesh corners."""
    sign = sign_of(item)
    corners = world_vertices("tile", sign.size, sign.location, sign.rotation_quat)
    centre = np.asarray(sign.location)
    local = (corners - centre) @ _rotation(sign.rotation_quat)  # back to the tile's own axes
    ex = _rotation(sign.rotation_quat)[:, 0] * (local[:, 0].max() - local[:, 0].min()) / sign.size
    ey = _rotation(sign.rotation_quat)[:, 1] * (local[:, 1].max() - local[:, 1].min()) / sign.size
    a = np.radians(sign.attributes["texture_angle_deg"])
    period = sign.attributes["texture_period_m"]
    lengths = []
    for du, dv in ((np.cos(a), np.sin(a)), (-np.sin(a), np.cos(a))):
        step = (du * ex + dv * ey) * period / 2
        ends = project(item, np.stack([centre - step, centre + step]))
        lengths.append(float(np.linalg.norm(ends[1] - ends[0])))
    return min(lengths)


def _rotation(quat) -> np.ndarray:
    w, x, y, z = quat
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def test_composition_is_deterministic():
    (a,), (b,) = items(1, seed=11), items(1, seed=11)
    assert a.to_json() == b.to_json()


def test_gold_is_the_marked_sign_s_texture_and_the_sign_stands_facing_the_camera():
    for item in items(8):
        question, sign = item.questions[0], sign_of(item)
        assert question.gold == sign.attributes["texture"] == item.difficulty["texture"]
        assert question.subject["options"].split("|") == list(TEXTURE_CLASSES)
        assert [o.id for o in item.scene.objects if "texture" in o.attributes] == [sign.id]
        normal = _rotation(sign.rotation_quat) @ np.array([0.0, 0.0, 1.0])
        assert abs(normal[2]) < 1e-5  # upright
        to_camera = np.asarray(item.scene.camera.location) - np.asarray(sign.location)
        assert normal @ to_camera > 0  # the face, not the back, is seen
        assert np.isclose(sign.location[2], sign.size / 2, atol=1e-5)  # standing on the ground


def test_recorded_period_in_pixels_holds_and_meets_the_floor():
    for item in items(8, min_period=0.012):
        d = item.difficulty
        assert d["period_px"] == pytest.approx(period_px(item), rel=0.02)
        assert d["period_px"] >= 0.012 * FRAME.width
        assert 4.0 <= d["periods_across"] <= 8.0
        truth = measure(item.scene)
        assert truth.truths[0].visibility >= 0.6 and d["target_visibility"] == truth.truths[0].visibility
        assert 0.0 < d["contrast"] < 1.0 and 0.0 <= d["viewing_angle_deg"] < 90.0


def test_an_occluder_in_front_hides_part_of_the_sign_within_the_visibility_floor():
    found = [item for item in items(8, occluder_share=1.0) if item.difficulty["occlusion"] > 0.01]
    assert len(found) >= 3
    for item in found:
        (occluder,) = [o for o in item.scene.objects if o.attributes.get("role") == "occluder"]
        camera, sign = np.asarray(item.scene.camera.location), np.asarray(sign_of(item).location)
        assert np.linalg.norm(np.asarray(occluder.location) - camera) < np.linalg.norm(sign - camera)
        assert measure(item.scene).truths[0].visibility >= 0.6


def test_every_class_is_defined_and_distinct_on_a_grid_of_face_points():
    x, y = np.meshgrid(np.linspace(-0.5, 0.5, 101), np.linspace(-0.5, 0.5, 101))
    u, v = face_uv(x, y, 0.2, 30.0)
    masks = {name: texture_ink(name, u, v) for name in TEXTURE_CLASSES if name != "cracked"}
    for name, mask in masks.items():
        assert 0.15 < mask.mean() < 0.6, name  # ink and paper both present
        for other, other_mask in masks.items():
            if other != name:
                assert (mask != other_mask).mean() > 0.1, (name, other)
    with pytest.raises(ValueError, match="unknown texture"):
        texture_ink("paisley", u, v)


def test_answers_are_balanced_so_the_best_constant_is_at_chance():
    config = parse_config({"seed": 9, "render": {"width": 160, "height": 120},
                           "tasks": [{"family": "ava_texture", "count": 24}]})
    golds = [make_item(p.family, p.params, [config.seed, p.task_index, p.item_index], p.item_id, FRAME, p.split)
             .questions[0].gold for p in expand(config)]
    counts = Counter(golds)
    assert set(counts) == set(TEXTURE_CLASSES) and max(counts.values()) / len(golds) == pytest.approx(1 / 6)


def test_bad_parameters_are_one_line_errors():
    from stim3d.scenes.families.ava.ava_texture import AvaTextureParams

    with pytest.raises(ValueError, match="answer 'paisley' cannot be realised"):
        AvaTextureParams(answer="paisley")
    with pytest.raises(ValueError, match="periods must be"):
        AvaTextureParams(periods=(5.0, 3.0))


@pytest.mark.parametrize("family", ["ava_texture", "ava_ocr"])
def test_distribution_matched_splits_never_repeat_a_scene(family):
    config = parse_config({"seed": 3, "render": {"width": 160, "height": 120},
                           "tasks": [{"family": family, "splits": {"train": 12, "test": 6}}]})
    plans = expand(config)
    scenes = {p.split: set() for p in plans}
    golds: dict[str, Counter] = {p.split: Counter() for p in plans}
    for p in plans:
        item = make_item(p.family, p.params, [config.seed, p.task_index, p.item_index], p.item_id, FRAME, p.split)
        scenes[p.split].add(item.scene.model_dump_json())
        golds[p.split][item.questions[0].gold] += 1
        assert item.split == p.split and item.difficulty["ability"] in ("texture", "ocr")
    assert sum(len(s) for s in scenes.values()) == len(plans) == 18
    if family == "ava_texture":  # six classes, each twice in train and once in test
        assert set(golds["train"].values()) == {2} and set(golds["test"].values()) == {1}
