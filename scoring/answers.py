"""Answer types and gold answers: the vocabulary shared by items, records and parsers.

Owned by the scoring core (it defines what can be scored); `stim3d.scenes` uses the
same names for its questions, so a question and its record can never disagree.
"""

from __future__ import annotations

from typing import Literal, Union

from .rubric import Rubric

AnswerType = Literal["integer", "letters", "yes_no", "cell", "cell_set", "rubric"]
Gold = Union[int, str, tuple[int, int], list[tuple[int, int]], Rubric]
"""A `rubric` gold is a Rubric (scoring/rubric.py): Must-Right and Easy-Wrong items and a golden caption."""
