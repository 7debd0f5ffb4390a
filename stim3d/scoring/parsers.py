"""Deterministic answer parsers: a model's free-text response -> a canonical answer, or invalid.

No model, no randomness: the same response always parses the same way. A parser
never raises on a response; what it cannot read is `Parsed(value=None, reason=...)`,
which the scorer counts as invalid and wrong.

Where the answer is looked for, in order (the first that applies wins):

1. the content of the last `\\boxed{...}` (OddGridBench's protocol), or the last
   ROSE token (`COUNT(n)`, or the `CLICK(Rr,Cc); ...; DONE|SUBMIT(n)` sequence);
2. the text after the last answer marker ("answer:", "answer is", "final answer");
3. the whole response.

Within an explicit span (1 or 2) the FIRST value is taken ("The answer is 3 spheres,
not 4" -> 3); in the whole response the LAST value is taken, because models state
their conclusion at the end ("1, 2, 3... so there are 3 spheres" -> 3). A cell set
takes every cell named in its span, so a response that names cells while reasoning
and gives no boxed or marked answer is read as naming all of them.

The `strict_*` types (ROSE's formal grammar) are read differently: the whole
response must be `COUNT(n)`, `CLICK(Rr,Cc); ...; DONE` or `CLICK(Rr,Cc); ...;
SUBMIT(n)` (case-insensitive, whitespace allowed inside and around tokens), or it
is invalid; repeated and out-of-grid cells are grammatical and left to the rules.

Canonical values: integer and strict_count -> int; strict_cell_set -> like cell_set;
strict_cell_set_count -> Submission(cells, count); letters -> upper-case str; yes_no -> "yes"/"no";
box -> (x0, y0, x1, y1) floats; number -> float metres; choice -> the option as the record lists it;
cell -> (row, col); cell_set -> tuple of (row, col) in the order given, repeats kept
(the set F1 rule treats a repeat as ROSE does: the whole answer scores 0).
"""

from __future__ import annotations

import re

from .parse_text import Parsed, answer_span, invalid, normalise, word_numbers

_NUMBER = re.compile(r"(?<![\w.])\d{1,9}(?:\.\d+)?(?![\w])")  # 10+ digits: not an answer

_COUNT = re.compile(r"\bCOUNT\s*\(\s*([^()]*?)\s*\)", re.IGNORECASE)

_CLICKS = re.compile(r"\bCLICK\s*\(.*?(?:\bDONE\b|\bSUBMIT\s*\(\s*\d+\s*\)|$)", re.IGNORECASE | re.DOTALL)

_CELL = re.compile(
    r"\brow\s*(?P<r1>\d{1,9})\s*[,;]?\s*(?:and\s+)?(?:col(?:umn)?|c)\.?\s*(?P<c1>\d{1,9})"
    r"|\b(?:col(?:umn)?)\.?\s*(?P<c2>\d{1,9})\s*[,;]?\s*(?:and\s+)?row\s*(?P<r2>\d{1,9})"
    r"|\bR\s*(?P<r3>\d{1,9})\s*[,;]?\s*C\s*(?P<c3>\d{1,9})\b"
    r"|[(\[]\s*(?P<r4>\d{1,9})\s*,\s*(?P<c4>\d{1,9})\s*[)\]]",
    re.IGNORECASE,
)

_BARE_PAIR = re.compile(r"^\s*(\d{1,9})\s*,\s*(\d{1,9})\s*$")

_EMPTY_SET = re.compile(r"^\s*(?:done|none|no cells?|nothing|empty|\{\s*\}|\[\s*\]|\(\s*\))\s*\.?\s*$", re.IGNORECASE)

_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)

_YES_NO_FINAL = re.compile(r"\b(yes|no)\b(?=\s*(?:[.,!;:)\]\"']|$))", re.IGNORECASE)

_LETTER_SEPARATORS = re.compile(r"(?:[\s,;/&+|\-]|\band\b|\bthen\b)+", re.IGNORECASE)

_UPPER_TOKEN = re.compile(r"\b[A-Z0-9]{1,10}\b")

_RUN_GAP = re.compile(r"^(?:[\s,;/&+|\-\"'“”‘’]|\band\b|\bthen\b|\bor\b)+$")  # 'The letters are "D" and "A".'

_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4,
             "5th": 5}

_ORDINAL_LETTER = re.compile(
    r"(?i:\b(first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th)\b)[^.;\n]*?(?i:\b(?:is|reads|:))\s*(?:(?i:an?)\s+)?"
    r"[\"'“‘]?([A-Z0-9])[\"'”’]?(?=[\s.,;!)]|$)"
)

_OPTIONS_ECHO = re.compile(r"\b(?:yes|no)\s*(?:/|\bor\b)\s*(?:yes|no)\s*\?", re.IGNORECASE)  # "Yes or no? ..."

_YES_AND_NO = re.compile(r"\b(?:yes\s*(?:/|\bor\b|\band\b|&)\s*no|no\s*(?:/|\bor\b|\band\b|&)\s*yes)\b", re.IGNORECASE)


# -- integer -----------------------------------------------------------------------------------------

def parse_integer(response: str) -> Parsed:
    """A count: "There are 3 spheres." -> 3, "three" -> 3, "\\boxed{3}" -> 3, "COUNT(3)" -> 3, "none" -> 0."""
    text = normalise(response)
    span, source = answer_span(text)
    if source == "text":
        counts = list(_COUNT.finditer(text))
        if counts:
            span, source = counts[-1].group(1), "grammar"
    digits = word_numbers(span)
    numbers = list(_NUMBER.finditer(digits))
    if not numbers:
        if re.search(r"\bnone\b|\bno\b(?!\s+(?:idea|clue)\b)", span, re.IGNORECASE):
            return Parsed(0, source=source)
        return invalid(f"no number in the {source} answer")
    chosen = numbers[-1] if source == "text" else numbers[0]
    if "." in chosen.group():
        return invalid(f"{chosen.group()} is not a whole number")
    return Parsed(int(chosen.group()), source=source)


# -- letters -----------------------------------------------------------------------------------------

def _letters_short_form(span: str) -> str | None:
    """Letters written alone: "Q, P", "q and p", "QP.", '"QP"' -> "QP"; None for anything else (a sentence)."""
    stripped = span.strip().strip("\"'“”‘’()[]{}<>").strip().rstrip(".!").strip().strip("\"'“”‘’")
    tokens = [t for t in _LETTER_SEPARATORS.split(stripped) if t]
    if not tokens or not all(t.isalnum() and t.isascii() for t in tokens):
        return None
    if len(tokens) > 1 and any(len(t) > 1 for t in tokens):
        return None  # several words: a sentence, not letters
    return "".join(tokens).upper()


def _letters_last_run(text: str) -> str | None:
    """The last run of upper-case letter tokens joined only by separators ("I see Q and P." -> "QP")."""
    tokens = [m for m in _UPPER_TOKEN.finditer(text)
              if not (m.group() == "I" and re.match(r"\s+[a-z]|['’][a-z]", text[m.end():])  # "I think", "I'm"
                      and not re.match(r"\s+(?:and|then|or)\b", text[m.end():]))]
    if not tokens:
        return None
    run = [tokens[-1]]
    for previous in reversed(tokens[:-1]):
        if not _RUN_GAP.match(text[previous.end():run[0].start()]):
            break
        run.insert(0, previous)
    return "".join(m.group() for m in run)


def _letters_by_ordinal(text: str) -> str | None:
    """"The first letter is D and the second is A." -> "DA": letters named by ordinals 1..k, each once."""
    named: dict[int, str] = {}
    for m in _ORDINAL_LETTER.finditer(text):
        named.setdefault(_ORDINALS[m.group(1).lower()], m.group(2))
    if len(named) < 2 or sorted(named) != list(range(1, len(named) + 1)):
        return None
    return "".join(named[i] for i in sorted(named))


def parse_letters(response: str) -> Parsed:
    """Letters in reading order, case and separators ignored: "Q, P" -> "QP", "The letters are Q and P." -> "QP".

    Every letter of the answer is kept: a run of letters joined by separators or
    quotes ('The letters are "D" and "A".' -> "DA"), or letters named by ordinals
    ("The first letter is D and the second is A." -> "DA").
    """
    text = normalise(response)
    span, source = answer_span(text)
    ordinal = _letters_by_ordinal(span)
    if ordinal:
        return Parsed(ordinal, source=source)
    if source != "text":
        short = _letters_short_form(span.split("\n")[0]) or _letters_last_run(span)
        return Parsed(short, source=source) if short else invalid(f"no letters in the {source} answer")
    short = _letters_short_form(text)
    if short:
        return Parsed(short, source="text")
    run = _letters_last_run(text)
    return Parsed(run, source="text") if run else invalid("no upper-case letters in the response")


# -- yes / no ----------------------------------------------------------------------------------------

def _yes_no_words(text: str) -> set[str]:
    """The answer words of a text: a yes/no at its start, or alone at a sentence's end; both for "yes/no"."""
    text = _OPTIONS_ECHO.sub(" ", text)  # the question's options echoed ("Yes or no? I'd say no.")
    if _YES_AND_NO.search(text):
        return {"yes", "no"}
    words = {m.group(1).lower() for m in _YES_NO_FINAL.finditer(text)}
    leading = re.match(r"^\W*(yes|no)\b", text, re.IGNORECASE)
    return words | {leading.group(1).lower()} if leading else words


def parse_yes_no(response: str) -> Parsed:
    """"Yes, they match." -> "yes"; a yes/no at the start, in the answer span, or alone at a sentence end.

    "no" inside a sentence ("there are no differences") is not an answer; a response
    whose answer words are both yes and no ("No. Wait, yes.", "Yes and no.", "yes/no")
    is ambiguous and invalid.
    """
    text = normalise(response)
    span, source = answer_span(text)
    words = _yes_no_words(span)
    if len(words) == 2:
        return invalid("both yes and no")
    if words:
        return Parsed(words.pop(), source=source)
    if source != "text":
        found = _YES_NO.search(span)
        return Parsed(found.group(1).lower(), source=source) if found else invalid(f"no yes/no in the {source} answer")
    return invalid("no yes/no answer")


# -- cells -------------------------------------------------------------------------------------------

def _cells(span: str) -> list[tuple[int, int]]:
    cells = []
    for m in _CELL.finditer(word_numbers(span)):
        row = next(m.group(g) for g in ("r1", "r2", "r3", "r4") if m.group(g) is not None)
        col = next(m.group(g) for g in ("c1", "c2", "c3", "c4") if m.group(g) is not None)
        cells.append((int(row), int(col)))
    return cells


def parse_cell(response: str) -> Parsed:
    """One grid cell: "\\boxed{Row 2, Column 5}", "(2, 5)", "row 2 column 5", "R2C5" -> (2, 5)."""
    text = normalise(response)
    span, source = answer_span(text)
    cells = _cells(span)
    if not cells and source == "boxed":
        bare = _BARE_PAIR.match(word_numbers(span))
        if bare:
            return Parsed((int(bare.group(1)), int(bare.group(2))), source=source)
    if not cells:
        return invalid(f"no row and column in the {source} answer")
    return Parsed(cells[-1] if source == "text" else cells[0], source=source)


def parse_cell_set(response: str) -> Parsed:
    """Several cells: "Row 1, Column 2; Row 3, Column 4", "CLICK(R1,C2); CLICK(R3,C4); DONE", "none" -> ()."""
    text = normalise(response)
    span, source = answer_span(text)
    if source == "text":
        clicks = list(_CLICKS.finditer(text))
        if clicks:
            span, source = clicks[-1].group(), "grammar"
    cells = _cells(span)
    if cells:
        return Parsed(tuple(cells), source=source)
    if _EMPTY_SET.match(span):
        return Parsed((), source=source)
    return invalid(f"no cells in the {source} answer")
