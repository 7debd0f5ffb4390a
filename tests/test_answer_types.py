"""One table row per answer type (scoring/answers.py): every type has one, and a gold written the one way
stim3d writes golds (records' answer text, exports, gallery, contact sheet, add-on) parses back to that gold."""

from __future__ import annotations

from typing import get_args

import pytest

from stim3d.scoring.answers import ANSWER_TYPES, AnswerType, answer_text, canonical_gold, parse
from stim3d.scoring.records import DEFAULT_RULE, PROTOCOL
from stim3d.scoring.rules import RULES

# (answer type, a record's gold as JSON gives it, the text a model following the protocol would write)
GOLDS = [
    ("integer", 3, "3"),
    ("letters", "qp", "qp"),
    ("yes_no", "no", "no"),
    ("cell", [2, 5], "Row 2, Column 5"),
    ("cell_set", [[1, 2], [3, 4]], "Row 1, Column 2; Row 3, Column 4"),
    ("cell_set", [], "none"),
    ("strict_count", 4, "COUNT(4)"),
    ("strict_cell_set", [[1, 2], [2, 3]], "CLICK(R1,C2); CLICK(R2,C3); DONE"),
    ("strict_cell_set_count", [[1, 2]], "CLICK(R1,C2); SUBMIT(1)"),
    ("box", [10, 20.5, 30, 40], "[10, 20.5, 30, 40]"),
    ("number", 1.25, "1.25"),
    ("choice", "blue", "blue"),
    ("text", "K7XA", "K7XA"),
]


def test_every_answer_type_has_one_row_and_a_default_rule_that_scores_it():
    assert set(ANSWER_TYPES) == set(get_args(AnswerType))
    for name, kind in ANSWER_TYPES.items():
        assert name in RULES[kind.default_rule].answer_types, name
        assert PROTOCOL[name] == kind.protocol and DEFAULT_RULE[name] == kind.default_rule


@pytest.mark.parametrize("answer_type, gold, written", GOLDS)
def test_a_gold_is_written_as_the_protocol_asks_and_parses_back_to_itself(answer_type, gold, written):
    assert answer_text(answer_type, gold) == written
    parsed = parse(answer_type, written, ["red", "blue"])
    assert parsed.value == canonical_gold(answer_type, gold), parsed.reason
