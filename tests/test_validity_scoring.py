"""Scoring behaviours a user relies on, each pinned by a hand-written response and a hand-computed value (issue 30.3).

Every expected value here is worked out by hand in the comment beside it, not
read back from the code; each test fails under the plausible one-line bug named
in its docstring (checked by making that change by hand).
"""

from __future__ import annotations

import math

import pytest

from stim3d.scoring.answers import parse
from stim3d.scoring.judges import reference_judge
from stim3d.scoring.mentions import mentions
from stim3d.scoring.parsers_actions import Submission
from stim3d.scoring.rubric import Rubric, RubricItem, judge_rubric
from stim3d.scoring.rules import apply

# -- the last candidate counts -------------------------------------------------------------------


@pytest.mark.parametrize(("answer_type", "response", "expected", "source"), [
    ("cell", "I first thought Row 2, Column 3 but actually Row 4, Column 5.", (4, 5), "text"),
    ("cell", "\\boxed{Row 1, Column 1} ... no, final: \\boxed{Row 3, Column 2}", (3, 2), "boxed"),
    ("cell", "Answer: Row 2, Column 2. On reflection, Answer: Row 6, Column 1", (6, 1), "marker"),
    ("box", "First [10, 20, 30, 40], then corrected to [50, 60, 70, 80]", (50.0, 60.0, 70.0, 80.0), "text"),
    ("integer", "Answer: 3. Hmm, recounting. Answer: 5", 5, "marker"),
    ("integer", "\\boxed{3} no wait \\boxed{7}", 7, "boxed"),
    ("integer", "COUNT(2) ... no, recounting: COUNT(4)", 4, "grammar"),  # ROSE's grammar stated twice
])
def test_the_last_stated_candidate_is_the_answer(answer_type, response, expected, source):
    """A parser taking the first match (re.search instead of the last of re.finditer) answers the first candidate."""
    parsed = parse(answer_type, response)
    assert (parsed.value, parsed.source) == (expected, source)


# -- yes and no in every position ----------------------------------------------------------------


@pytest.mark.parametrize(("response", "expected"), [
    ("Yes", "yes"), ("no", "no"), ("Yes.", "yes"), ("No.", "no"), ("yes, I think so", "yes"),
    ("I would say yes", "yes"), ("The answer is no.", "no"), ("Answer: no", "no"), ("\\boxed{yes}", "yes"),
    ("\\boxed{no}", "no"), ("No, they differ.", "no"), ("no they are not the same", "no"),  # a leading "no"
    ("No, it is not. Yes!", None),  # both words: undecidable, never a guess
])
def test_yes_and_no_are_read_as_themselves_wherever_they_stand(response, expected):
    assert parse("yes_no", response).value == expected


# -- number words at the edges of the table ------------------------------------------------------


@pytest.mark.parametrize(("response", "expected"), [
    ("There are zero.", 0), ("There are nine.", 9), ("There are ten.", 10), ("nineteen", 19), ("twenty", 20),
    ("ninety-nine", 99), ("I count nine, no, ten", 10),
])
def test_number_words_at_the_table_edges(response, expected):
    """Off-by-one in the units table (a missing "zero" shifts every word down) or a units/tens split at 9/10."""
    assert parse("integer", response).value == expected


# -- distance reward and tolerance around "no cell" ----------------------------------------------

GRID = {"rows": 5, "cols": 5}


def test_distance_reward_by_hand():
    """sigma = 0.25 * sqrt(5^2 + 5^2) = 1.767767; one cell away: exp(-1 / (2 * 3.125)) - 0.3 = 0.552144."""
    assert apply("cell_distance", (2, 3), (2, 2), GRID) == pytest.approx(math.exp(-0.16) - 0.3)
    assert apply("cell_distance", (2, 3), (2, 2), GRID) == pytest.approx(0.552144, abs=1e-6)
    # four cells away in both: d^2 = 32, exp(-32 / 6.25) = 0.006 < beta 0.3: no credit
    assert apply("cell_distance", (5, 5), (1, 1), GRID) == 0.0


@pytest.mark.parametrize("rule", ["cell_distance", "cell_tolerance"])
@pytest.mark.parametrize(("pred", "gold"), [((0, 0), (1, 1)), ((1, 1), (0, 0)), ((0, 0), (1, 2))])
def test_no_cell_earns_nothing_from_being_near_a_cell(rule, pred, gold):
    """(0, 0) is one diagonal step from (1, 1): without the no-cell rule it would earn 0.426 or 1."""
    assert apply(rule, pred, gold, GRID) == 0.0


@pytest.mark.parametrize("rule", ["cell_distance", "cell_tolerance"])
def test_no_cell_for_no_cell_is_exact(rule):
    assert apply(rule, (0, 0), (0, 0), GRID) == 1.0


def test_tolerance_is_per_axis_not_euclidean():
    """(1, 1) vs (2, 2): |d_row| = |d_col| = 1 <= 1 -> right; (1, 1) vs (3, 1): |d_row| = 2 -> wrong."""
    assert apply("cell_tolerance", (1, 1), (2, 2), GRID) == 1.0
    assert apply("cell_tolerance", (1, 1), (3, 1), GRID) == 0.0


# -- sets with duplicate clicks ------------------------------------------------------------------


def test_a_repeated_click_voids_the_set_f1():
    """Clicking (1, 2) twice for gold {(1, 2)}: ROSE's c_i fails -> 0 (a set() first would give 1)."""
    clicks = parse("strict_cell_set", "CLICK(R1,C2); CLICK(R1,C2); DONE").value
    assert clicks == ((1, 2), (1, 2))
    assert apply("set_f1", clicks, ((1, 2),), GRID) == 0.0
    assert apply("exact", clicks, ((1, 2),), GRID) == 0.0
    # without the repeat: 2 * 1 / (1 + 2) = 2/3 for gold {(1, 2), (3, 3)}
    assert apply("set_f1", ((1, 2),), ((1, 2), (3, 3)), GRID) == pytest.approx(2.0 / 3.0)


def test_click_submit_soft_with_a_repeated_click():
    """F1 0 (repeat), count SOFT 1 / (1 + |2 - 1|) = 0.5, consistency 0 (2 submitted, 1 unique click): 0.5 / 3."""
    pred = Submission(cells=((1, 2), (1, 2)), count=2)
    gold = Submission(cells=((1, 2),), count=1)
    assert apply("click_submit_soft", pred, gold, GRID) == pytest.approx(0.5 / 3.0)


def test_region_ok_counts_unique_clicks():
    """Clicks (1, 1) twice and (3, 3) once, region rows 1-2 x cols 1-2: unique {(1,1), (3,3)} -> 1 of 2 inside."""
    params = {**GRID, "region_row_min": 1, "region_row_max": 2, "region_col_min": 1, "region_col_max": 2}
    assert apply("region_ok", ((1, 1), (1, 1), (3, 3)), (), params) == 0.5
    assert apply("region_ok", ((1, 1), (1, 1), (3, 3)), (), {**params, "region_exclude": 1}) == 0.5
    assert apply("region_ok", ((3, 3),), (), {**params, "region_exclude": 1}) == 1.0


# -- IoU: pixels all <= 1 and normalised boxes ---------------------------------------------------


def test_iou_in_pixels_by_hand():
    """(0, 0, 10, 10) vs (5, 5, 15, 15): intersection 25, union 100 + 100 - 25 = 175 -> 1/7."""
    assert apply("iou", (0.0, 0.0, 10.0, 10.0), (5.0, 5.0, 15.0, 15.0), {"width": 64, "height": 48}) == pytest.approx(1 / 7)


def test_a_box_with_every_coordinate_at_most_one_is_normalised():
    """(0.1, 0.2, 0.5, 0.6) in a 100 x 50 image is (10, 10, 50, 30): IoU 1 with that gold box."""
    size = {"width": 100, "height": 50}
    assert apply("iou", (0.1, 0.2, 0.5, 0.6), (10.0, 10.0, 50.0, 30.0), size) == pytest.approx(1.0)
    # a pixel box all <= 1 ((0, 0, 1, 1)) is read as the whole image: IoU with the whole image is 1,
    # with the 1-pixel box (0, 0, 1, 1) it is 1 / 5000
    assert apply("iou", (0.0, 0.0, 1.0, 1.0), (0.0, 0.0, 100.0, 50.0), size) == pytest.approx(1.0)
    assert apply("iou", (0.0, 0.0, 1.0, 1.0), (0.0, 0.0, 1.0, 1.0), size) == pytest.approx(1 / 5000)
    # without the image size nothing is rescaled: the same 1-pixel boxes match exactly
    assert apply("iou", (0.0, 0.0, 1.0, 1.0), (0.0, 0.0, 1.0, 1.0), {}) == pytest.approx(1.0)


# -- rubric and mentions --------------------------------------------------------------------------


def _count_item(shape: str, color: str | None, count: int, item_id: str) -> RubricItem:
    fact = {"shape": shape, "count": count, **({"color": color} if color else {})}
    return RubricItem(id=item_id, statement=f"{count} {shape}", type="count", fact=fact)


def test_a_whitespace_only_description_fails_the_gate():
    """A description of spaces and newlines says nothing: every Must-Right item fails, score 0."""
    rubric = Rubric(must_right=[_count_item("cube", None, 0, "count.cube")], caption="No cubes.")
    # the reference judge alone would pass "no cube named (count 0)" for a gold of 0
    assert reference_judge("   \n\t", rubric.must_right[0])[0] is True
    score = judge_rubric(rubric, "   \n\t", reference_judge)
    assert (score.must_right_passed, score.score) == (False, 0.0)


def test_each_mention_takes_the_number_written_before_it():
    """Three shapes named in one sentence: each count goes to its own shape, not to the first one named."""
    found = [(m.shape, m.colour, m.count) for m in mentions("I see two red cubes, a blue sphere and three green cones.")]
    assert found == [("cube", "red", 2), ("sphere", "blue", 1), ("cone", "green", 3)]
    cones = _count_item("cone", "green", 3, "count.cone.green")
    assert reference_judge("I see two red cubes, a blue sphere and three green cones.", cones)[0] is True
    assert reference_judge("I see three red cubes, a blue sphere and two green cones.", cones)[0] is False


def test_counts_written_apart_from_their_shape_go_to_the_last_shape_named_before_them():
    """"a cone and three spheres, two red and one blue": the colour counts follow the spheres, the last shape
    named before them (not the cone, the first); taking the first would credit a red cone count."""
    found = [(m.shape, m.colour, m.count)
             for m in mentions("There is a cone and there are three spheres, two red and one blue.")]
    assert found == [("cone", None, 1), ("sphere", None, 3), ("sphere", "red", 2), ("sphere", "blue", 1)]


# -- ROSE: pairing tasks with the T1 count of the same scene ---------------------------------------


def test_rose_pairing_leaves_out_scenes_without_their_anchor():
    """Scene A: T1 right, T2 right, T3 wrong, T4 (cue image, same scene) right; B: T1 wrong, T2 wrong;
    C: no T1 at all (its anchor item failed), T2 right, T3 right.

    By hand: T2 after a right T1: A only -> n 1, PASS 1.0; after a wrong T1: B -> n 1, PASS 0.0.
    T3: A -> n 1, PASS 0.0; no scene with a wrong T1 has T3 -> n 0, None. T4: A -> n 1, PASS 1.0.
    C counts nowhere (pairing it with "wrong" would make T2's wrong-anchor PASS 0.5).
    """
    from types import SimpleNamespace

    from stim3d.scoring.rose_report import paired_rows

    rows = [("A", "T1", True), ("A", "T2", True), ("A", "T3", False), ("A", "T4", True),
            ("B", "T1", False), ("B", "T2", False), ("C", "T2", True), ("C", "T3", True)]
    records = [SimpleNamespace(scene_id=scene, subject={"task": task}) for scene, task, _ in rows]
    results = [SimpleNamespace(correct=correct) for *_, correct in rows]
    found = {(r.task, r.n_anchor_right, r.pass_anchor_right, r.n_anchor_wrong, r.pass_anchor_wrong)
             for r in paired_rows(records, results)}  # type: ignore[arg-type]
    assert found == {("T2", 1, 1.0, 1, 0.0), ("T3", 1, 0.0, 0, None), ("T4", 1, 1.0, 0, None)}
