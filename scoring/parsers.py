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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
          "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
NUMBER_WORDS: dict[str, int] = {word: n for n, word in enumerate(_UNITS)} | _TENS
_NUMBER_WORD = re.compile(
    r"\b(?:(?P<tens>" + "|".join(_TENS) + r")(?:[\s-](?P<unit>" + "|".join(_UNITS[1:10]) + r"))?"
    r"|(?P<small>" + "|".join(_UNITS) + r"))\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.])\d{1,9}(?:\.\d+)?(?![\w])")  # 10+ digits: not an answer
_MARKER = re.compile(r"(?:final\s+answer\s*(?:is\b|:|=)?|\banswer\s*(?:is\b|:|=))", re.IGNORECASE)
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


@dataclass(frozen=True)
class Parsed:
    """A parse: `value` is the canonical answer, or None with the `reason` it could not be read."""

    value: Any
    reason: str = ""
    source: str = ""  # where it was found: boxed, grammar, marker, text

    @property
    def valid(self) -> bool:
        return self.value is not None

    @property
    def strict(self) -> bool:
        """Read from the protocol's own format (a \\boxed{} answer or a formal token), not from free text.

        OddGridBench asks for `\\boxed{Row X, Column Y}`: a plain "row 3, column 5" is
        valid and scored, but not strict.
        """
        return self.valid and self.source in ("boxed", "grammar")


def _invalid(reason: str) -> Parsed:
    return Parsed(None, reason)


def normalise(text: str) -> str:
    """Drop markdown emphasis and code ticks; they never belong to an answer."""
    return re.sub(r"[*`_]", "", text)


def last_boxed(text: str) -> str | None:
    """Content of the last \\boxed{...}, braces balanced; None when there is none."""
    start = text.rfind("\\boxed")
    while start != -1:
        brace = text.find("{", start)
        if brace != -1 and not text[start + 6:brace].strip():
            depth = 0
            for i in range(brace, len(text)):
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                if depth == 0:
                    return text[brace + 1:i]
            return text[brace + 1:]  # unclosed: the rest
        start = text.rfind("\\boxed", 0, start)
    return None


def answer_span(text: str) -> tuple[str, str]:
    """(span, source): the boxed content, else the text after the last answer marker, else everything."""
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed, "boxed"
    markers = list(_MARKER.finditer(text))
    if markers:
        return text[markers[-1].end():], "marker"
    return text, "text"


def _word_numbers(text: str) -> str:
    """Number words to digits ("twenty-one" -> "21"), so that one number pattern reads both."""
    def value(m: re.Match) -> str:
        if m.group("small"):
            return str(NUMBER_WORDS[m.group("small").lower()])
        unit = NUMBER_WORDS[m.group("unit").lower()] if m.group("unit") else 0
        return str(NUMBER_WORDS[m.group("tens").lower()] + unit)
    return _NUMBER_WORD.sub(value, text)


# -- integer -----------------------------------------------------------------------------------------

def parse_integer(response: str) -> Parsed:
    """A count: "There are 3 spheres." -> 3, "three" -> 3, "\\boxed{3}" -> 3, "COUNT(3)" -> 3, "none" -> 0."""
    text = normalise(response)
    span, source = answer_span(text)
    if source == "text":
        counts = list(_COUNT.finditer(text))
        if counts:
            span, source = counts[-1].group(1), "grammar"
    digits = _word_numbers(span)
    numbers = list(_NUMBER.finditer(digits))
    if not numbers:
        if re.search(r"\bnone\b|\bno\b(?!\s+(?:idea|clue)\b)", span, re.IGNORECASE):
            return Parsed(0, source=source)
        return _invalid(f"no number in the {source} answer")
    chosen = numbers[-1] if source == "text" else numbers[0]
    if "." in chosen.group():
        return _invalid(f"{chosen.group()} is not a whole number")
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
        return Parsed(short, source=source) if short else _invalid(f"no letters in the {source} answer")
    short = _letters_short_form(text)
    if short:
        return Parsed(short, source="text")
    run = _letters_last_run(text)
    return Parsed(run, source="text") if run else _invalid("no upper-case letters in the response")


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
        return _invalid("both yes and no")
    if words:
        return Parsed(words.pop(), source=source)
    if source != "text":
        found = _YES_NO.search(span)
        return Parsed(found.group(1).lower(), source=source) if found else _invalid(f"no yes/no in the {source} answer")
    return _invalid("no yes/no answer")


# -- cells -------------------------------------------------------------------------------------------

def _cells(span: str) -> list[tuple[int, int]]:
    cells = []
    for m in _CELL.finditer(_word_numbers(span)):
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
        bare = _BARE_PAIR.match(_word_numbers(span))
        if bare:
            return Parsed((int(bare.group(1)), int(bare.group(2))), source=source)
    if not cells:
        return _invalid(f"no row and column in the {source} answer")
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
    return _invalid(f"no cells in the {source} answer")


# -- ROSE's strict action grammar ---------------------------------------------------------------------

@dataclass(frozen=True)
class Submission:
    """A click-and-submit answer: the clicks in the order given (repeats kept) and the submitted count."""

    cells: tuple[tuple[int, int], ...]
    count: int


_STRICT_COUNT = re.compile(r"\s*COUNT\s*\(\s*(\d{1,9})\s*\)\s*", re.IGNORECASE)
_STRICT_CLICK = r"CLICK\s*\(\s*R\s*(\d{1,9})\s*,\s*C\s*(\d{1,9})\s*\)\s*;\s*"
_STRICT_CLICKS = re.compile(r"\s*(?P<clicks>(?:CLICK\s*\(\s*R\s*\d{1,9}\s*,\s*C\s*\d{1,9}\s*\)\s*;\s*)*)"
                            r"(?:DONE|SUBMIT\s*\(\s*(?P<count>\d{1,9})\s*\))\s*", re.IGNORECASE)


def _strict_clicks(response: str, submit: bool) -> Parsed:
    """ROSE's parser: case-insensitive, whitespace allowed inside tokens, nothing else around them."""
    found = _STRICT_CLICKS.fullmatch(response)
    ending = "SUBMIT(n)" if submit else "DONE"
    if found is None or (found["count"] is None) == submit:
        return _invalid(f"not CLICK(Rr,Cc); ...; {ending}")
    cells = tuple((int(r), int(c)) for r, c in re.findall(_STRICT_CLICK, found["clicks"], re.IGNORECASE))
    return Parsed(Submission(cells, int(found["count"])) if submit else cells, source="grammar")


def parse_strict_count(response: str) -> Parsed:
    """"COUNT(3)", " count ( 3 ) " -> 3; anything else ("3", "COUNT(3) cells") is invalid."""
    found = _STRICT_COUNT.fullmatch(response)
    return Parsed(int(found.group(1)), source="grammar") if found else _invalid("not COUNT(n)")


def parse_strict_cell_set(response: str) -> Parsed:
    """"CLICK(R1,C2); CLICK(R3,C4); DONE" -> ((1, 2), (3, 4)); "DONE" -> (); repeats and row 0 are kept."""
    return _strict_clicks(response, submit=False)


def parse_strict_cell_set_count(response: str) -> Parsed:
    """"CLICK(R1,C2); SUBMIT(1)" -> Submission(((1, 2),), 1); "SUBMIT(0)" -> Submission((), 0)."""
    return _strict_clicks(response, submit=True)


# -- AVA-3D: boxes, numbers with units, one of a question's options ----------------------------------

_COORD = r"\d{1,9}(?:\.\d+)?"
_BOX_SEP = r"(?:[\s,;()\[\]\-–]|\bto\b)+"
_BOX = re.compile(rf"(?<![\w.])({_COORD}){_BOX_SEP}({_COORD}){_BOX_SEP}({_COORD}){_BOX_SEP}({_COORD})(?!\w)(?!\.\d)",
                  re.IGNORECASE)
_BOX_KEY = re.compile(r"\b(xmin|ymin|xmax|ymax|left|top|right|bottom|x0|y0|x1|y1|x2|y2|width|height|w|h|x|y)\b"
                      rf"[\"']?\s*[:=]\s*({_COORD})", re.IGNORECASE)
_BOX_KEYSETS = (("xmin", "ymin", "xmax", "ymax"), ("left", "top", "right", "bottom"), ("x0", "y0", "x1", "y1"),
                ("x1", "y1", "x2", "y2"))
_LENGTH_UNITS = {"mm": 0.001, "millimet": 0.001, "cm": 0.01, "centimet": 0.01, "km": 1000.0, "kilomet": 1000.0,
                 "m": 1.0, "met": 1.0, "ft": 0.3048, "foot": 0.3048, "feet": 0.3048, "inch": 0.0254}
_QUANTITY = re.compile(
    rf"(?<![\w.])({_COORD})(?:\s*(?:-|–|to)\s*({_COORD}))?\s*"
    r"(millimet(?:er|re)s?|centimet(?:er|re)s?|kilomet(?:er|re)s?|met(?:er|re)s?|mm|cm|km|m|feet|foot|ft|inch(?:es)?)?"
    r"(?!\w)", re.IGNORECASE)
_CHOICE_SYNONYMS = {"grey": "gray"}


def _keyed_box(span: str) -> tuple[float, float, float, float] | None:
    """A box written with named coordinates: x_min/y_min/x_max/y_max, left/top/right/bottom, x0..y1, x1..y2, x/y/w/h."""
    found: dict[str, float] = {}
    for m in _BOX_KEY.finditer(span):
        found.setdefault(m.group(1).lower(), float(m.group(2)))
    for keys in _BOX_KEYSETS:
        if all(key in found for key in keys):
            return tuple(found[key] for key in keys)  # type: ignore[return-value]
    for w, h in (("width", "height"), ("w", "h")):
        if all(key in found for key in ("x", "y", w, h)):
            return (found["x"], found["y"], found["x"] + found[w], found["y"] + found[h])
    return None


def parse_box(response: str) -> Parsed:
    """A box (x_min, y_min, x_max, y_max): "[10, 20, 30, 40]", "(10,20),(30,40)", "x_min=10, y_min=20, ...",
    "left: 10, top: 20, right: 30, bottom: 40", "x=10, y=20, w=20, h=20", "10 20 30 40", JSON {"bbox_2d": [...]}.

    Values are kept as written (pixels, or fractions of the image when all are <= 1; the
    `iou` rule scales those). A box whose max is not beyond its min is invalid.
    """
    text = normalise(response)
    span, source = answer_span(text)
    box = _keyed_box(span)
    if box is None:
        found = list(_BOX.finditer(span))
        if not found:
            return _invalid(f"no box (four numbers) in the {source} answer")
        chosen = found[-1] if source == "text" else found[0]
        x0, y0, x1, y1 = (float(chosen.group(i)) for i in range(1, 5))
        box = (x0, y0, x1, y1)
    if not (box[0] < box[2] and box[1] < box[3]):
        return _invalid(f"{list(box)} is not a box: x_max and y_max must exceed x_min and y_min")
    return Parsed(box, source=source)


def parse_number(response: str) -> Parsed:
    """A length in metres: "7.5", "7.5 m", "about 7.5 metres", "750 cm", "seven meters", "25 ft";
    a range "7-8 m" gives its midpoint. No unit means metres."""
    text = normalise(response)
    span, source = answer_span(text)
    found = list(_QUANTITY.finditer(_word_numbers(span)))
    if not found:
        return _invalid(f"no number in the {source} answer")
    chosen = found[-1] if source == "text" else found[0]
    low = float(chosen.group(1))
    value = (low + float(chosen.group(2))) / 2 if chosen.group(2) else low
    unit = (chosen.group(3) or "m").lower()
    factor = next(f for prefix, f in sorted(_LENGTH_UNITS.items(), key=lambda kv: -len(kv[0])) if unit.startswith(prefix))
    return Parsed(value * factor, source=source)


def _choice_text(text: str) -> str:
    text = re.sub(r"[\s\-_]+", " ", text.lower())
    for word, canonical in _CHOICE_SYNONYMS.items():
        text = re.sub(rf"\b{word}\b", canonical, text)
    return text


def _options_in(text: str, options: list[str]) -> list[tuple[int, str]]:
    """(position, option) of every option named in `text`; longer options first ("front left" before "front")."""
    text = _choice_text(text)
    taken: list[tuple[int, int]] = []
    found = []
    for option in sorted(options, key=len, reverse=True):
        pattern = r"(?<![a-z])" + re.escape(_choice_text(option)).replace(r"\ ", r"\s+") + r"(?![a-z])"
        for m in re.finditer(pattern, text):
            if all(m.end() <= a or m.start() >= b for a, b in taken):
                taken.append((m.start(), m.end()))
                found.append((m.start(), option))
    return sorted(found)


def parse_choice(response: str, options: list[str]) -> Parsed:
    """One of `options`: "front left", "Front-left.", "The red box", "\\boxed{blue}", "2" (the option's number).

    In an explicit span the first option named wins; in free text, the first option of the
    last sentence that names one ("The cube in the red box is closer than the blue one." -> red).
    """
    if not options:
        return _invalid("the question lists no options")
    text = normalise(response)
    span, source = answer_span(text)
    if source == "text":
        sentences = [s for s in re.split(r"[.!?\n]+(?:\s|$)", span) if _options_in(s, options)]
        span = sentences[-1] if sentences else span
    found = _options_in(span, options)
    if found:
        return Parsed(found[0][1], source=source)
    numbered = re.fullmatch(r"\W*(?:option\s*)?(\d{1,2})\W*", span, re.IGNORECASE)
    if numbered and 1 <= int(numbered.group(1)) <= len(options):
        return Parsed(options[int(numbered.group(1)) - 1], source=source)
    return _invalid(f"none of the options in the {source} answer")


PARSERS: dict[str, Callable[[str], Parsed]] = {
    "integer": parse_integer,
    "letters": parse_letters,
    "yes_no": parse_yes_no,
    "cell": parse_cell,
    "cell_set": parse_cell_set,
    "strict_count": parse_strict_count,
    "strict_cell_set": parse_strict_cell_set,
    "strict_cell_set_count": parse_strict_cell_set_count,
    "box": parse_box,
    "number": parse_number,
}


def parse(answer_type: str, response: str | None, options: list[str] | None = None) -> Parsed:
    """Parse a response for an answer type (a `choice` among `options`); a missing or empty response is invalid."""
    if response is None or not response.strip():
        return _invalid("empty response")
    if answer_type == "choice":
        return parse_choice(response, options or [])
    return PARSERS[answer_type](response)


def canonical_gold(answer_type: str, gold: Any) -> Any:
    """A record's gold in the parsers' canonical form (JSON lists -> tuples)."""
    if answer_type == "cell":
        return (int(gold[0]), int(gold[1]))
    if answer_type in ("cell_set", "strict_cell_set"):
        return tuple((int(r), int(c)) for r, c in gold)
    if answer_type == "strict_cell_set_count":
        return Submission(tuple((int(r), int(c)) for r, c in gold), len(gold))
    if answer_type == "letters":
        return str(gold).upper()
    if answer_type == "box":
        return tuple(float(v) for v in gold)
    if answer_type == "number":
        return float(gold)
    return gold
