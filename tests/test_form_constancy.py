"""Form constancy: yes means identical orientations, no means a turn by exactly theta that breaks symmetry."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from stim3d.render.batch.config import load_config
from stim3d.render.batch.plan import expand
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.primitives import axis_angle_quat, quat_to_matrix

FRAME = Frame(320, 240)
PRESET = Path(__file__).resolve().parents[1] / "stim3d" / "scenes" / "presets" / "dysm3d.yaml"


def item(index: int, **params):
    return make_item("form_constancy", params, [31, 0, index], f"fc-{index}", FRAME)


def pairs(it):
    """(left object, right counterpart) for every slot."""
    objects = {o.id: o for o in it.scene.objects}
    lefts = [o for o in it.scene.objects if o.attributes["group"] == "left"]
    return [(o, objects[o.attributes["counterpart"]]) for o in lefts]


def rotation(obj) -> np.ndarray:
    return quat_to_matrix(obj.rotation_quat)


def angle_deg(matrix: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip((np.trace(matrix) - 1) / 2, -1, 1))))


def recorded_turn(obj) -> np.ndarray:
    a = obj.attributes
    return quat_to_matrix(axis_angle_quat((a["axis_x"], a["axis_y"], a["axis_z"]), a["rotation_deg"]))


def cube_group() -> list[np.ndarray]:
    """The 24 proper rotations of a cube, built here independently of the family code."""
    mats = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            m = np.zeros((3, 3))
            m[range(3), perm] = signs
            if np.linalg.det(m) > 0:
                mats.append(m)
    return mats


def test_yes_items_have_identical_world_rotations_and_a_translated_copy():
    for index in range(4):
        it = item(index, n_shapes=1 + index, answer="yes", rotation=["objects", "group"][index % 2])
        assert it.questions[0].gold == "yes"
        shifts = []
        for left, right in pairs(it):
            assert left.shape == right.shape and left.size == right.size and left.color == right.color
            assert np.allclose(rotation(left), rotation(right), atol=1e-9)
            assert right.attributes["rotation_deg"] == 0.0 and "axis_x" not in right.attributes
            shifts.append(np.subtract(right.location, left.location))
        assert np.allclose(shifts, shifts[0], atol=1e-6) and shifts[0][0] > 0  # copy moved to the right


@pytest.mark.parametrize("theta", [5.0, 12.5])
def test_no_items_turn_each_shape_by_exactly_theta_about_a_symmetry_breaking_axis(theta):
    symmetries = cube_group()
    turned_shapes = Counter()
    for index in range(5):
        it = item(10 + index, n_shapes=4, theta_deg=theta, answer="no", rotation="objects")
        shifts = [np.subtract(right.location, left.location) for left, right in pairs(it)]
        assert np.allclose(shifts, shifts[0], atol=1e-6)  # each shape turns in place
        for left, right in pairs(it):
            relative = rotation(right) @ rotation(left).T
            if left.shape == "sphere":
                assert angle_deg(relative) < 1e-3 and right.attributes["rotation_deg"] == 0.0
                continue
            turned_shapes[left.shape] += 1
            assert angle_deg(relative) == pytest.approx(theta, abs=0.01)
            assert np.allclose(relative, recorded_turn(right), atol=2e-5)
            axis = np.array([right.attributes[k] for k in ("axis_x", "axis_y", "axis_z")])
            if left.shape in ("cylinder", "cone", "torus"):  # never about the shape's own axis: perpendicular to it
                own = rotation(left)[:, 2]
                assert abs(own @ axis) / np.linalg.norm(axis) < 1e-4
            if left.shape == "cube":  # the turn, seen in the cube's frame, is none of its 24 symmetries
                local = rotation(left).T @ rotation(right)
                assert min(angle_deg(local @ s.T) for s in symmetries) > 1.0
    assert len(turned_shapes) >= 3


def test_group_rotation_turns_the_right_group_rigidly():
    for index in range(4):
        it = item(20 + index, n_shapes=3 + index % 2, theta_deg=10.0, answer="no", rotation="group")
        matched = pairs(it)
        turn = recorded_turn(matched[0][1])
        assert angle_deg(turn) == pytest.approx(10.0, abs=1e-6)
        for left, right in matched:
            assert np.allclose(rotation(right), turn @ rotation(left), atol=2e-5)
            if left.shape in ("cylinder", "cone", "torus"):
                axis = turn_axis(turn)
                assert abs(rotation(left)[:, 2] @ axis) < np.cos(np.radians(59.9))
        for (l1, r1), (l2, r2) in itertools.combinations(matched, 2):  # distances and directions turn with the group
            assert np.allclose(np.subtract(r1.location, r2.location), turn @ np.subtract(l1.location, l2.location), atol=1e-5)


def turn_axis(matrix: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eig(matrix)
    axis = np.real(v[:, np.argmin(np.abs(w - 1))])
    return axis / np.linalg.norm(axis)


def test_groups_sit_left_and_right_in_the_image_all_shapes_whole():
    for index in range(4):
        it = item(30 + index, n_shapes=4, theta_deg=15.0, rotation=["objects", "group"][index % 2])
        truths = {t.id: t for t in it.ground_truth.objects}
        assert all(t.visibility == 1.0 and t.truncation == 0.0 for t in truths.values())
        left = [truths[o.id].bbox_visible for o in it.scene.objects if o.attributes["group"] == "left"]
        right = [truths[o.id].bbox_visible for o in it.scene.objects if o.attributes["group"] == "right"]
        assert max(b[2] for b in left) < min(b[0] for b in right)
        assert it.difficulty["view_angle_deg"] <= 1.0 + 1e-6  # perspective cannot fake a turn larger than 1 degree


def test_random_answers_are_balanced():
    batch = [item(100 + i, n_shapes=1, theta_deg=7.5) for i in range(30)]
    golds = Counter(it.questions[0].gold for it in batch)
    assert set(golds) == {"yes", "no"} and max(golds.values()) <= 21  # p(> 21 of 30) < 2 %


def test_difficulty_does_not_reveal_the_answer():
    """The same scene made as a yes item and as a no item reports the same difficulty.

    Turns are chosen for yes items too, so every control value and `least_silhouette_change`
    are equal; only `smallest_shape_px`, measured on the image, may move with the turn, and it
    moves either way, so its value does not tell a no item from a yes item.
    """
    moved = []
    for index in range(6):
        params = {"n_shapes": 2, "theta_deg": 7.5, "rotation": ["objects", "group"][index % 2]}
        yes = item(200 + index, answer="yes", **params)
        no = item(200 + index, answer="no", **params)
        assert (yes.questions[0].gold, no.questions[0].gold) == ("yes", "no")
        assert set(yes.difficulty) == set(no.difficulty)
        differing = {k for k in yes.difficulty if yes.difficulty[k] != no.difficulty[k]}
        assert differing <= {"smallest_shape_px"}, differing
        assert yes.difficulty["least_silhouette_change"] > 0.0
        moved.append(no.difficulty["smallest_shape_px"] / yes.difficulty["smallest_shape_px"] - 1.0)
    assert min(moved) < 0.0 < max(moved), moved


def test_dysm3d_preset_gives_exactly_equal_yes_and_no_in_every_cell():
    plans = [p for p in expand(load_config(PRESET)) if p.family == "form_constancy"]
    assert len(plans) == 80
    cells = Counter((p.params["theta_deg"], p.params["n_shapes"], p.params["rotation"], p.params["answer"]) for p in plans)
    assert set(cells.values()) == {1} and len(cells) == 80
    assert Counter(p.params["answer"] for p in plans) == {"yes": 40, "no": 40}
