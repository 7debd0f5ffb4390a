"""Answer types and gold answers: the vocabulary shared by items, records and parsers, and one table row per type.

Owned by the scoring core (it defines what can be scored); `stim3d.scenes` uses the
same names for its questions, so a question and its record can never disagree.

Everything stim3d knows about an answer type is in its row of `ANSWER_TYPES`: the
protocol line a record asks the model to follow, the default partial-credit rule, the
parser (model response -> canonical answer), the canonical form of a record's gold,
and how a gold is written (records' answer text, exports, the gallery, the add-on).
`scoring/rules.py` says which rules can score which types; everything else reads here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args

from .parse_text import Parsed, invalid
from .parsers import parse_cell, parse_cell_set, parse_integer, parse_letters, parse_yes_no
from .parsers_actions import (
    Submission,
    parse_box,
    parse_choice,
    parse_number,
    parse_strict_cell_set,
    parse_strict_cell_set_count,
    parse_strict_count,
    parse_text,
)
from .rubric import Rubric

AnswerType = Literal["integer", "letters", "yes_no", "cell", "cell_set",
                     "strict_count", "strict_cell_set", "strict_cell_set_count", "rubric",
                     "box", "number", "choice", "text"]
"""The `strict_*` types are ROSE's formal action grammar (`COUNT(n)`, `CLICK(Rr,Cc); ...; DONE`,
`CLICK(Rr,Cc); ...; SUBMIT(n)`): the whole response must be the formal answer. Their golds are
an int, and a list of distinct cells for both click types (the submitted count is its length)."""
Gold = Union[int, float, str, tuple[int, int], tuple[int, int, int, int], list[tuple[int, int]], Rubric]
"""A `rubric` gold is a Rubric (scoring/rubric.py): Must-Right and Easy-Wrong items and a golden caption.
AVA-3D (docs/ava.md): a `box` gold is (x0, y0, x1, y1) in pixels, x1 and y1 exclusive; a `number` gold
is a float (metres); a `choice` gold is one of the answer's options; a `text` gold is the string on a sign (OCR)."""

Synonyms = Mapping[str, Sequence[str]]  # a choice option -> other words for it (records.choice_synonyms)
Parser = Callable[[str, list[str], Synonyms], Parsed]  # (response, the record's options, their synonyms) -> Parsed


@dataclass(frozen=True)
class AnswerKind:
    """One answer type: what a record asks for, how a response is read and scored, how a gold is written."""

    name: str
    protocol: str  # the line a record adds to its question
    default_rule: str  # the partial-credit rule (exact-match accuracy is always reported too)
    parse: Parser
    canonical: Callable[[Any], Any] = lambda gold: gold  # a record's gold (JSON) in the parser's canonical form
    text: Callable[[Any], str] = str  # a gold (or a canonical answer) written as the protocol asks


def _options_ignored(parser: Callable[[str], Parsed]) -> Parser:
    return lambda response, options, synonyms: parser(response)


def _cells(gold: Any) -> tuple[tuple[int, int], ...]:
    return tuple((int(r), int(c)) for r, c in gold)


def _cell_text(gold: Any) -> str:
    return f"Row {gold[0]}, Column {gold[1]}"


def _cell_set_text(gold: Any) -> str:
    return "; ".join(f"Row {r}, Column {c}" for r, c in gold) if gold else "none"


def _clicks_text(cells: Any, end: str) -> str:
    cells = getattr(cells, "cells", cells)  # a parsed Submission or the gold list
    return "".join(f"CLICK(R{r},C{c}); " for r, c in cells) + end.format(n=len(cells))


def _rubric_text(gold: Any) -> str:  # its golden caption
    return gold.caption if isinstance(gold, Rubric) else str(Rubric.model_validate(gold).caption)


def _rubric_parse(response: str, options: list[str], synonyms: Synonyms) -> Parsed:
    return invalid("a rubric answer is judged, not parsed (scoring/rubric.py)")


ANSWER_TYPES: dict[str, AnswerKind] = {kind.name: kind for kind in (
    AnswerKind("integer", "Answer with a single integer.", "count_soft", _options_ignored(parse_integer)),
    AnswerKind("letters", "Answer with the letters only, in reading order.", "exact", _options_ignored(parse_letters),
               canonical=lambda gold: str(gold).upper()),
    AnswerKind("yes_no", "Answer yes or no.", "exact", _options_ignored(parse_yes_no)),
    AnswerKind("cell", "Answer as Row X, Column Y (1-based, row 1 at the top, column 1 at the left).", "cell_tolerance",
               _options_ignored(parse_cell), canonical=lambda gold: (int(gold[0]), int(gold[1])), text=_cell_text),
    AnswerKind("cell_set", "Answer with every cell as Row X, Column Y, separated by semicolons, or none if there is "
               "none.", "set_f1", _options_ignored(parse_cell_set), canonical=_cells, text=_cell_set_text),
    AnswerKind("rubric", "Answer in plain sentences.", "gated", _rubric_parse, text=_rubric_text),
    AnswerKind("strict_count", "Answer only in the format: COUNT(n).", "count_soft", _options_ignored(parse_strict_count),
               text=lambda gold: f"COUNT({gold})"),
    AnswerKind("strict_cell_set", "Answer only using CLICK(Rr,Cc); ...; DONE.", "set_f1",
               _options_ignored(parse_strict_cell_set), canonical=_cells, text=lambda gold: _clicks_text(gold, "DONE")),
    AnswerKind("strict_cell_set_count", "Answer only using CLICK(Rr,Cc); ...; SUBMIT(n).", "click_submit_soft",
               _options_ignored(parse_strict_cell_set_count), canonical=lambda gold: Submission(_cells(gold), len(gold)),
               text=lambda gold: _clicks_text(gold, "SUBMIT({n})")),
    AnswerKind("box", "Answer with the box as [x_min, y_min, x_max, y_max] in pixels (origin at the top-left corner).",
               "iou", _options_ignored(parse_box), canonical=lambda gold: tuple(float(v) for v in gold),
               text=lambda gold: "[" + ", ".join(f"{v:g}" for v in gold) + "]"),
    AnswerKind("number", "Answer with a single number in metres.", "delta125", _options_ignored(parse_number),
               canonical=float),
    AnswerKind("choice", "Answer with one of the options.", "exact", parse_choice),
    AnswerKind("text", "Answer with the text only, exactly as written.", "anls", _options_ignored(parse_text),
               canonical=str),
)}
assert set(ANSWER_TYPES) == set(get_args(AnswerType)), "every answer type has exactly one row"


def parse(answer_type: str, response: str | None, options: list[str] | None = None,
          synonyms: Synonyms | None = None) -> Parsed:
    """Parse a response for an answer type (a `choice` among `options`, each also named by its `synonyms`); a missing
    or empty response is invalid."""
    if response is None or not response.strip():
        return invalid("empty response")
    return ANSWER_TYPES[answer_type].parse(response, options or [], synonyms or {})


def canonical_gold(answer_type: str, gold: Any) -> Any:
    """A record's gold in the parsers' canonical form (JSON lists -> tuples)."""
    return ANSWER_TYPES[answer_type].canonical(gold)


def answer_text(answer_type: str, gold: Any) -> str:
    """An answer written as the protocol asks: "3", "QP", "yes", "Row 2, Column 5", "Row 1, Column 2; ..." or "none"."""
    kind = ANSWER_TYPES.get(answer_type)
    return kind.text(gold) if kind is not None else str(gold)
