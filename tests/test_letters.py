"""Letters: the dots spell the gold string in image order, every dot whole and in frame, the font reads right."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest
from pydantic import ValidationError

from stim3d.scenes.camera import geometry
from stim3d.scenes.families.base import Frame
from stim3d.scenes.families.dysm.letters import MIN_DOT_PX, LettersParams, draw_string
from stim3d.scenes.families.shared.font import GLYPHS
from stim3d.scenes.items import make_item
from stim3d.scenes.placement import InfeasibleError

FRAME = Frame(320, 240)


def letters_item(index: int, frame: Frame = FRAME, **params):
    return make_item("letters", params, [21, 0, index], f"letters-{index}", frame)


def pattern(cells) -> frozenset:
    """A set of (row, col) shifted to its top-left corner: comparable whatever the offset."""
    rows = [r for r, _ in cells]
    cols = [c for _, c in cells]
    return frozenset((r - min(rows), c - min(cols)) for r, c in cells)


def glyph_cells(char: str) -> set[tuple[int, int]]:
    return {(r, c) for r, line in enumerate(GLYPHS[char]) for c, mark in enumerate(line) if mark == "#"}


def plane_points(item) -> dict[int, np.ndarray]:
    """Where each dot's measured image centroid lands on the letter plane y = 0 (back-projected ray)."""
    cam = geometry(item.scene.camera)
    points = {}
    for truth in item.ground_truth.objects:
        u, v = truth.centroid_px
        origin, direction = cam.rays(np.array([u]), np.array([v]))
        t = -origin[0, 1] / direction[0, 1]
        points[truth.id] = origin[0] + t * direction[0]
    return points


def read_string(item) -> str:
    """Decode the string from the image alone: measured dot centroids -> plane grid -> glyph lookup."""
    pitch = item.params["spacing"]
    points = plane_points(item)
    letters = defaultdict(list)
    for obj in item.scene.objects:
        letters[obj.attributes["letter_index"]].append(points[obj.id])
    by_pattern = {pattern(glyph_cells(ch)): ch for ch in GLYPHS}
    left, top = min(p[0] for p in points.values()), max(p[2] for p in points.values())
    decoded = []
    for dots in sorted(letters.values(), key=lambda pts: np.mean([p[0] for p in pts])):  # image order = left to right
        cells = {(int(round((top - p[2]) / pitch)), int(round((p[0] - left) / pitch))) for p in dots}  # rows grow down
        decoded.append(by_pattern.get(pattern(cells), "?"))
    return "".join(decoded)


# -- the font ---------------------------------------------------------------------------------------


def test_font_has_every_letter_and_digit_as_distinct_5x7_glyphs():
    assert set(GLYPHS) == set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    for char, glyph in GLYPHS.items():
        assert len(glyph) == 7 and all(len(line) == 5 and set(line) <= {"#", "."} for line in glyph), char
    patterns = Counter(pattern(glyph_cells(ch)) for ch in GLYPHS)
    assert max(patterns.values()) == 1  # decoding a glyph up to its offset is unambiguous


def test_font_is_upright_and_not_mirrored():
    # Facts about the letters themselves, not the code: L's bar is at the bottom, F's at the top, both stems left.
    assert GLYPHS["L"][6] == "#####" and all(line[0] == "#" for line in GLYPHS["L"])
    assert GLYPHS["F"][0] == "#####" and GLYPHS["F"][6] == "#...."
    assert GLYPHS["7"][0] == "#####" and GLYPHS["J"][0].endswith("###")
    assert all(line == line[::-1] for line in GLYPHS["A"]) and GLYPHS["V"][6] == "..#.."


# -- the scenes -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "index, params",
    [
        (0, {"primitive": "sphere", "dot_size": 0.05, "spacing": 0.5, "n_letters": 2}),
        (1, {"primitive": "cube", "dot_size": 0.14, "spacing": 0.4, "n_letters": 1}),
        (2, {"primitive": "cylinder", "dot_size": 0.11, "spacing": 0.4, "n_letters": 5}),
        (3, {"primitive": "cube", "dot_size": 0.08, "spacing": 0.5, "n_letters": 4, "charset": "alphanumeric"}),
    ],
)
def test_dots_spell_the_gold_string_in_image_order(index, params):
    item = letters_item(index, Frame(480, 360) if params["n_letters"] > 3 else FRAME, **params)
    (question,) = item.questions
    assert question.answer_type == "letters" and len(question.gold) == params["n_letters"]
    assert read_string(item) == question.gold


def test_every_dot_is_fully_visible_in_frame_and_large_enough():
    for index in range(4):
        item = letters_item(10 + index, primitive=["sphere", "cube", "cylinder"][index % 3], n_letters=2, dot_size=0.05)
        truths = item.ground_truth.objects
        assert all(t.visibility == 1.0 and t.truncation == 0.0 and t.occlusion == 0.0 for t in truths)
        assert min(t.visible_px for t in truths) >= MIN_DOT_PX
        assert len(truths) == len(item.scene.objects) == sum(len(glyph_cells(ch)) for ch in item.questions[0].gold)


def test_letters_stand_upright_facing_the_camera_above_the_ground():
    item = letters_item(20, n_letters=3)
    ys = {o.location[1] for o in item.scene.objects}
    zs = [o.location[2] for o in item.scene.objects]
    assert len(ys) == 1  # one vertical plane
    assert max(zs) - min(zs) == pytest.approx(6 * item.params["spacing"], abs=1e-5)  # seven rows stacked upwards
    assert min(z - o.dimensions[2] / 2 for z, o in zip(zs, item.scene.objects)) > 0.0
    forward = geometry(item.scene.camera).forward
    assert np.degrees(np.arccos(abs(forward[1]) / np.linalg.norm(forward))) < 23.0  # plane normal within 23 deg of the view


def test_letters_are_distinct_unless_repeats_are_allowed():
    item = letters_item(30, Frame(480, 360), n_letters=5, charset="digits", dot_size=0.1)
    assert len(set(item.questions[0].gold)) == 5 and set(item.questions[0].gold) <= set("0123456789")
    rng = np.random.default_rng(0)
    distinct = [draw_string(LettersParams(n_letters=5, charset="digits"), rng) for _ in range(200)]
    assert all(len(set(s)) == 5 for s in distinct)
    repeated = [draw_string(LettersParams(n_letters=5, charset="digits", allow_repeats=True), rng) for _ in range(200)]
    assert 0.5 < np.mean([len(set(s)) < 5 for s in repeated]) < 0.9  # 5 digits with replacement repeat 70 % of the time


def test_single_letters_spread_over_the_alphabet():
    golds = [letters_item(100 + i, Frame(160, 120), n_letters=1, dot_size=0.14, spacing=0.4, primitive="cube").questions[0].gold
             for i in range(52)]
    counts = Counter(golds)
    assert len(counts) >= 18 and max(counts.values()) <= 7  # uniform over 26: constant answer ~ 4 %


def test_touching_dots_are_a_clear_parameter_error():
    with pytest.raises(ValidationError, match="spacing must be at least"):
        LettersParams(dot_size=0.3, spacing=0.5)


def test_dots_too_small_for_the_frame_are_reported_infeasible():
    with pytest.raises(InfeasibleError) as error:
        letters_item(0, Frame(64, 48), n_letters=5, dot_size=0.05, spacing=0.5)
    assert error.value.constraint == "dot_pixels"
