"""Answer types and gold answers: the vocabulary shared by items, records and parsers.

Owned by the scoring core (it defines what can be scored); `stim3d.scenes` uses the
same names for its questions, so a question and its record can never disagree.
"""

from __future__ import annotations

from typing import Literal, Union

from .rubric import Rubric

AnswerType = Literal["integer", "letters", "yes_no", "cell", "cell_set", "rubric", "box", "number", "choice"]
Gold = Union[int, float, str, tuple[int, int], tuple[int, int, int, int], list[tuple[int, int]], Rubric]
"""A `rubric` gold is a Rubric (scoring/rubric.py): Must-Right and Easy-Wrong items and a golden caption.
AVA-3D (docs/ava.md): a `box` gold is (x0, y0, x1, y1) in pixels, x1 and y1 exclusive; a `number` gold
is a float (metres); a `choice` gold is one of the answer's options."""
