"""Responses in the styles real models give, per answer type, and what the README promises they parse to."""

from __future__ import annotations

import pytest

from stim3d.scoring.answers import parse

# (response, expected canonical value; None = invalid)
LETTERS = [
    ('The letters are "D" and "A".', "DA"),                   # every letter is kept, not only the last
    ("The first letter is D and the second is A.", "DA"),
    ("The first letter is a D, the second letter is an A.", "DA"),
    ("The 1st letter is 'K'; the 2nd is 'M'.", "KM"),
    ("Reading from left to right, the spheres form the letters **D** and **A**.", "DA"),
    ("From left to right: D, then A.", "DA"),
    ("The dots spell out “DA”.", "DA"),
    ("It reads 'DA'.", "DA"),
    ("Answer: D A", "DA"),
    ("The letters formed are: D, A", "DA"),
    ("I can see the letter Q.", "Q"),
    ("\\boxed{DA}", "DA"),
    ("The second letter is A.", "A"),                          # an ordinal alone is just one letter named
    ("I'm not able to make out any letters.", None),
]
YES_NO = [
    ("No. Wait, yes.", None),                                  # both answer words: ambiguous (README)
    ("Yes and no.", None),
    ("yes/no", None),
    ("Yes or no? I'd say no.", "no"),                         # the options echoed, then an answer
    ("Yes, the shapes in both groups have the same orientations.", "yes"),
    ("No, the cube in the right group is rotated slightly.", "no"),
    ("Yes, there is no difference between the groups.", "yes"),  # "no difference" is not an answer
    ("After comparing each pair, the orientations match. Yes.", "yes"),
    ("**No**", "no"),
    ("The answer is no, the torus is tilted.", "no"),
    ("Answer: No. Wait, yes.", None),
    ("\\boxed{no}", "no"),
    ("I can't tell from the image.", None),
]
INTEGER = [
    ("There are 3 spheres in the scene.", 3),
    ("I count the cubes one by one: there are 3 cubes.", 3),
    ("Answer: 2", 2),
    ("There are **2** cones.", 2),
    ("There are no red tori.", 0),
    ("\\boxed{4}", 4),
]
TABLES = {"letters": LETTERS, "yes_no": YES_NO, "integer": INTEGER}


@pytest.mark.parametrize("answer_type, response, expected",
                         [(kind, response, expected) for kind, table in TABLES.items() for response, expected in table])
def test_model_style_responses(answer_type, response, expected):
    parsed = parse(answer_type, response)
    assert parsed.value == expected, (response, parsed)
    assert parsed.valid == (expected is not None)
