"""Parsers on realistic model responses (and malformed ones), and the scoring rules' definitions from the papers."""

from __future__ import annotations

import math

import pytest

from stim3d.scoring.answers import parse
from stim3d.scoring.records import answer_text
from stim3d.scoring.rules import RuleError, applicable_rules, apply, check_rule

# (response, expected canonical value; None = invalid)
INTEGER = [
    ("3", 3),
    ("There are 3 spheres.", 3),
    ("three", 3),
    ("Three.", 3),
    ("\\boxed{3}", 3),
    ("Let me count: the red one, the blue one... Final answer: \\boxed{ 4 }", 4),
    ("COUNT(2)", 2),
    ("count( 0 )", 0),
    ("I count 1, 2, 3... so there are 4 cubes.", 4),           # in free text the last number wins
    ("The answer is 3 spheres, not 4.", 3),                   # after an answer marker the first number wins
    ("**Answer:** 5", 5),
    ("There are twenty-one cubes.", 21),
    ("There are no spheres in the scene.", 0),
    ("None.", 0),
    ("I see two spheres, one partly hidden behind the cube, so \\boxed{2}.", 2),
    ("No idea.", None),
    ("I can't tell from this image.", None),
    ("2.5", None),
    ("\\boxed{}", None),
    ("", None),
    ("   ", None),
    (None, None),
]
LETTERS = [
    ("QP", "QP"),
    ("Q, P", "QP"),
    ("q p", "QP"),
    ("Q and P", "QP"),
    ("QP.", "QP"),
    ('"QP"', "QP"),
    ("\\boxed{Q, P}", "QP"),
    ("The letters are Q and P.", "QP"),
    ("I see the letters Q and P", "QP"),
    ("Q and P, I think.", "QP"),
    ("The letter is A.", "A"),
    ("Answer: H, E", "HE"),
    ("There are 2 letters: X then Y.", "XY"),
    ("I don't know", None),
    ("the image is too blurry", None),
    ("", None),
]
YES_NO = [
    ("Yes", "yes"),
    ("yes.", "yes"),
    ("Yes, they have the same orientation.", "yes"),
    ("No.", "no"),
    ("NO", "no"),
    ("The right group is rotated, so no.", "no"),
    ("There are no differences. Yes.", "yes"),
    ("Answer: no", "no"),
    ("\\boxed{Yes}", "yes"),
    ("Yes or no? I'd say no.", "no"),
    ("There are no differences.", None),       # "no" inside a sentence is not an answer
    ("Maybe yes, maybe no.", None),            # both: ambiguous
    ("I cannot determine this.", None),
]
CELL = [
    ("\\boxed{Row 2, Column 5}", (2, 5)),
    ("(2, 5)", (2, 5)),
    ("[2,5]", (2, 5)),
    ("row 2 column 5", (2, 5)),
    ("Row 2, Col 5", (2, 5)),
    ("column 5, row 2", (2, 5)),
    ("R2C5", (2, 5)),
    ("CLICK(R2,C5)", (2, 5)),
    ("The odd one is at row two, column five.", (2, 5)),
    ("\\boxed{2, 5}", (2, 5)),
    ("Row 3, Column 4 looks similar, but the answer is Row 2, Column 5.", (2, 5)),
    ("I compared all cells. It is in row 4, column 1.", (4, 1)),
    ("\\boxed{Row 0, Column 0}", (0, 0)),
    ("The top left one.", None),
    ("Row 2", None),
    ("", None),
]
CELL_SET = [
    ("CLICK(R1,C2); CLICK(R3,C4); DONE", ((1, 2), (3, 4))),
    ("click(r1, c2);click(r3,c4);done", ((1, 2), (3, 4))),
    ("CLICK(R1,C2); CLICK(R3,C4); SUBMIT(2)", ((1, 2), (3, 4))),
    ("Row 1, Column 2; Row 3, Column 4", ((1, 2), (3, 4))),
    ("\\boxed{(1,2), (3,4)}", ((1, 2), (3, 4))),
    ("The odd cells are Row 1, Column 2 and Row 3, Column 4.", ((1, 2), (3, 4))),
    ("CLICK(R1,C2); CLICK(R1,C2); DONE", ((1, 2), (1, 2))),    # repeats are kept: the rule punishes them
    ("DONE", ()),
    ("none", ()),
    ("Answer: none", ()),
    ("I cannot tell which ones.", None),
    ("", None),
]
TABLES = {"integer": INTEGER, "letters": LETTERS, "yes_no": YES_NO, "cell": CELL, "cell_set": CELL_SET}
CASES = [(kind, response, expected) for kind, table in TABLES.items() for response, expected in table]


@pytest.mark.parametrize("answer_type, response, expected", CASES)
def test_parser_reads_realistic_responses(answer_type, response, expected):
    parsed = parse(answer_type, response)
    assert parsed.value == expected, (response, parsed)
    assert parsed.valid == (expected is not None)
    if expected is None:
        assert parsed.reason  # an invalid answer says why


GOLDS = {
    "integer": [0, 1, 7, 40],
    "letters": ["A", "QP", "HELLO", "A1"],
    "yes_no": ["yes", "no"],
    "cell": [(1, 1), (2, 5), (9, 9), (0, 0)],
    "cell_set": [(), ((1, 2),), ((1, 2), (3, 4), (5, 1))],
}


@pytest.mark.parametrize("answer_type", sorted(GOLDS))
def test_every_gold_written_as_the_protocol_asks_parses_back(answer_type):
    for gold in GOLDS[answer_type]:
        assert parse(answer_type, answer_text(answer_type, gold)).value == gold


GARBAGE = ["\\boxed{", "\\boxed{\\boxed{}", "}}}{{{", "CLICK(", "COUNT()", "row column", "(,)", "\x00\x01", "ⅷ ٣ 𝟑",
           "yes" * 1000, "1" * 5000, "Row 99999999999999999999, Column 1", "\n\n\t", "\\boxed{Row 2, Column}"]


@pytest.mark.parametrize("answer_type", sorted(TABLES))
def test_malformed_responses_never_crash_the_parser(answer_type):
    for response in GARBAGE:
        parsed = parse(answer_type, response)
        assert parsed.valid or parsed.reason
        assert parse(answer_type, response) == parsed  # deterministic


def test_exact_match_ignores_letter_case_and_click_order_but_not_repeats():
    assert apply("exact", "QP", "QP", {}) == 1.0
    assert apply("exact", "PQ", "QP", {}) == 0.0
    assert apply("exact", ((3, 4), (1, 2)), ((1, 2), (3, 4)), {}) == 1.0
    assert apply("exact", ((1, 2), (1, 2), (3, 4)), ((1, 2), (3, 4)), {}) == 0.0
    assert apply("exact", ((1, 2), (3, 9)), ((1, 2), (3, 9)), {"rows": 5, "cols": 5}) == 0.0  # out of the grid
    assert apply("exact", None, 3, {}) == 0.0


def test_count_soft_is_one_over_one_plus_the_error():
    assert [apply("count_soft", n, 3, {}) for n in (3, 2, 4, 0, 7)] == [1.0, 0.5, 0.5, 0.25, 0.2]
    assert apply("count_soft", None, 3, {}) == 0.0


def test_cell_tolerance_accepts_the_eight_neighbours_only():
    gold = (3, 3)
    near = [(r, c) for r in range(2, 5) for c in range(2, 5)]
    far = [(1, 3), (5, 3), (3, 1), (3, 5), (1, 1), (5, 5)]
    assert all(apply("cell_tolerance", cell, gold, {"tolerance": 1}) == 1.0 for cell in near)
    assert all(apply("cell_tolerance", cell, gold, {"tolerance": 1}) == 0.0 for cell in far)
    assert apply("cell_tolerance", (1, 1), (0, 0), {}) == 0.0  # "no odd cell" earns no nearness credit


def test_cell_distance_reward_follows_oddgridbench():
    params = {"rows": 6, "cols": 8}  # sigma = 0.25 * sqrt(36 + 64) = 2.5
    assert apply("cell_distance", (4, 4), (4, 4), params) == 1.0
    assert apply("cell_distance", (4, 5), (4, 4), params) == pytest.approx(math.exp(-1 / 12.5) - 0.3)
    assert apply("cell_distance", (2, 3), (4, 5), params) == pytest.approx(math.exp(-8 / 12.5) - 0.3)
    assert apply("cell_distance", (1, 1), (6, 8), params) == 0.0  # far: the bias clips it to zero
    with pytest.raises(RuleError, match="needs scoring params rows, cols"):
        check_rule("cell_distance", "cell", {})


def test_set_f1_is_roses_strict_coordinate_f1():
    gold = ((1, 2), (3, 4))
    assert apply("set_f1", ((1, 2), (3, 4)), gold, {}) == 1.0
    assert apply("set_f1", ((1, 2),), gold, {}) == pytest.approx(2 / 3)
    assert apply("set_f1", ((1, 2), (5, 5), (6, 6)), gold, {}) == pytest.approx(2 * 1 / 5)
    assert apply("set_f1", (), (), {}) == 1.0
    assert apply("set_f1", ((1, 1),), (), {}) == 0.0
    assert apply("set_f1", (), gold, {}) == 0.0
    assert apply("set_f1", ((1, 2), (1, 2), (3, 4)), gold, {}) == 0.0  # a repeated click
    assert apply("set_f1", ((1, 2), (3, 4), (9, 9)), gold, {"rows": 5, "cols": 5}) == 0.0  # out of the grid


def test_rules_refuse_answer_types_they_do_not_score():
    assert applicable_rules("integer", {}) == ["exact", "count_soft", "abs_rel"]
    assert applicable_rules("cell", {"rows": 5, "cols": 5}) == ["exact", "cell_tolerance", "cell_distance"]
    with pytest.raises(RuleError, match="does not score yes_no"):
        check_rule("count_soft", "yes_no", {})
    with pytest.raises(RuleError, match="unknown scoring rule"):
        check_rule("fuzzy", "integer", {})
