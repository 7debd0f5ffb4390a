"""Answer types and gold answers: the vocabulary shared by items, records and parsers.

Owned by the scoring core (it defines what can be scored); `stim3d.scenes` uses the
same names for its questions, so a question and its record can never disagree.
"""

from __future__ import annotations

from typing import Literal, Union

from .rubric import Rubric

AnswerType = Literal["integer", "letters", "yes_no", "cell", "cell_set",
                     "strict_count", "strict_cell_set", "strict_cell_set_count", "rubric",
                     "box", "number", "choice"]
"""The `strict_*` types are ROSE's formal action grammar (`COUNT(n)`, `CLICK(Rr,Cc); ...; DONE`,
`CLICK(Rr,Cc); ...; SUBMIT(n)`): the whole response must be the formal answer. Their golds are
an int, and a list of distinct cells for both click types (the submitted count is its length)."""
Gold = Union[int, float, str, tuple[int, int], tuple[int, int, int, int], list[tuple[int, int]], Rubric]
"""A `rubric` gold is a Rubric (scoring/rubric.py): Must-Right and Easy-Wrong items and a golden caption.
AVA-3D (docs/ava.md): a `box` gold is (x0, y0, x1, y1) in pixels, x1 and y1 exclusive; a `number` gold
is a float (metres); a `choice` gold is one of the answer's options."""
