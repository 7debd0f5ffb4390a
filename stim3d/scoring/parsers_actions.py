"""Parsers for ROSE's strict action grammar and AVA-3D's measures: boxes, lengths with units, one of a question's options.

The canonical values are described in `scoring/parsers.py`, whose `parse` dispatches here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .parse_text import Parsed, answer_span, invalid, normalise, word_numbers

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
        return invalid(f"not CLICK(Rr,Cc); ...; {ending}")
    cells = tuple((int(r), int(c)) for r, c in re.findall(_STRICT_CLICK, found["clicks"], re.IGNORECASE))
    return Parsed(Submission(cells, int(found["count"])) if submit else cells, source="grammar")


def parse_strict_count(response: str) -> Parsed:
    """"COUNT(3)", " count ( 3 ) " -> 3; anything else ("3", "COUNT(3) cells") is invalid."""
    found = _STRICT_COUNT.fullmatch(response)
    return Parsed(int(found.group(1)), source="grammar") if found else invalid("not COUNT(n)")


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
                      rf"[\"']?\s*[:=]\s*([-–−]?\s*{_COORD})", re.IGNORECASE)
_MINUS = "-–−"  # hyphen-minus, en dash, minus sign
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
        number = re.sub(r"\s", "", m.group(2))
        found.setdefault(m.group(1).lower(), -float(number[1:]) if number[0] in _MINUS else float(number))
    for keys in _BOX_KEYSETS:
        if all(key in found for key in keys):
            return tuple(found[key] for key in keys)  # type: ignore[return-value]
    for w, h in (("width", "height"), ("w", "h")):
        if all(key in found for key in ("x", "y", w, h)):
            return (found["x"], found["y"], found["x"] + found[w], found["y"] + found[h])
    return None


def _signed(span: str, match: re.Match[str], group: int) -> float:
    """A coordinate of a `_BOX` match, negative when a minus sign stands before it that does not separate it from
    a number before ("[-10, ..." and "[-\\n10, ..." are -10; in "10 - 20 - 30 - 40" the dashes are separators)."""
    value = float(match.group(group))
    i = match.start(group) - 1
    while i >= 0 and span[i].isspace():
        i -= 1
    if i < 0 or span[i] not in _MINUS:
        return value
    i -= 1
    while i >= 0 and span[i].isspace():
        i -= 1
    return value if i >= 0 and (span[i].isdigit() or span[i] == ".") else -value


def parse_box(response: str) -> Parsed:
    """A box (x_min, y_min, x_max, y_max): "[10, 20, 30, 40]", "(10,20),(30,40)", "x_min=10, y_min=20, ...",
    "left: 10, top: 20, right: 30, bottom: 40", "x=10, y=20, w=20, h=20", "10 20 30 40", JSON {"bbox_2d": [...]}.

    Values are kept as written (pixels, or fractions of the image when all are <= 1; the
    `iou` rule scales those), a minus sign included ("[-10, 20, 30, 40]" is x_min -10, never 10).
    A box whose max is not beyond its min is invalid.
    """
    text = normalise(response)
    span, source = answer_span(text)
    box = _keyed_box(span)
    if box is None:
        found = list(_BOX.finditer(span))
        if not found:
            return invalid(f"no box (four numbers) in the {source} answer")
        chosen = found[-1] if source == "text" else found[0]
        x0, y0, x1, y1 = (_signed(span, chosen, i) for i in range(1, 5))
        box = (x0, y0, x1, y1)
    if not (box[0] < box[2] and box[1] < box[3]):
        return invalid(f"{list(box)} is not a box: x_max and y_max must exceed x_min and y_min")
    return Parsed(box, source=source)


def parse_number(response: str) -> Parsed:
    """A length in metres: "7.5", "7.5 m", "about 7.5 metres", "750 cm", "seven meters", "25 ft";
    a range "7-8 m" gives its midpoint. No unit means metres."""
    text = normalise(response)
    span, source = answer_span(text)
    found = list(_QUANTITY.finditer(word_numbers(span)))
    if not found:
        return invalid(f"no number in the {source} answer")
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


# Words that end a noun phrase: between two names they make the names two phrases ("a mug next to a lamp"),
# not a modifier and its head ("a light gray table").
_PHRASE_BREAKS = frozenset(
    "a an the this that these those one some its their his her my your our it i which who what "
    "and or but nor not no rather instead than as is are was were be been looks look seems seem appears appear "
    "stands stand sits sit has have there of to on in at by with without next near beside behind under over "
    "above below into onto for from like between among inside atop against around across along".split())
# Colour words: a name before one is a shade ("light gray", "light-brown"), not the object.
_COLOUR_WORDS = frozenset(
    "red green blue orange purple violet black gray white yellow brown pink tan beige cream silver gold golden "
    "teal cyan magenta maroon navy olive".split())
# A name before one of these describes another thing's look ("cone-shaped", "light-coloured"), not the object.
_LOOK_SUFFIXES = r"shaped|colou?red|tinted|toned"


def _names_in(text: str, options: list[str], synonyms: Mapping[str, Sequence[str]] | None) -> list[tuple[int, int, str]]:
    """(start, end, option) of every option named in `text` (`_choice_text` already applied), by its name or one of
    its `synonyms`; longer names first ("front left" before "front", "desk lamp" before "desk"), so a name inside a
    longer one is not read twice."""
    names = [(option, option) for option in options]
    names += [(word, option) for option in options for word in (synonyms or {}).get(option, ())]
    found: list[tuple[int, int, str]] = []
    for name, option in sorted(names, key=lambda pair: len(pair[0]), reverse=True):
        pattern = r"(?<![a-z])" + re.escape(_choice_text(name)).replace(r"\ ", r"\s+") + r"(?![a-z])"
        for m in re.finditer(pattern, text):
            if all(m.end() <= start or m.start() >= end for start, end, _ in found):
                found.append((m.start(), m.end(), option))
    return sorted(found)


def _modifies(text: str, end: int, next_start: int | None) -> bool:
    """Whether the name ending at `end` describes something else rather than naming the answer: it is followed by a
    colour ("light gray") or a look suffix ("cone-shaped"), or by the next name `next_start` within the same noun
    phrase, whose head that one is ("a light wooden table", "a table lamp")."""
    rest = text[end:]
    after = re.match(r"\s*([a-z]+)", rest)
    if after and (after.group(1) in _COLOUR_WORDS or re.fullmatch(_LOOK_SUFFIXES, after.group(1))):
        return True
    if next_start is None:
        return False
    between = text[end:next_start]
    return not re.search(r"[^a-z\s']", between) and not _PHRASE_BREAKS.intersection(between.split())


def _options_in(text: str, options: list[str], synonyms: Mapping[str, Sequence[str]] | None = None) -> list[tuple[int, str]]:
    """(position, option) of every option `text` names as a noun phrase's head, by its name or one of its `synonyms`.

    Only the head counts: a name used as a modifier of a later one in the same phrase, of a colour or of a shape
    is left out, so "a light-gray table" is table (not the lamp's "light"), "a table lamp" is lamp and "a
    cone-shaped tree" is tree (not the traffic cone's "cone").
    """
    text = _choice_text(text)
    names = _names_in(text, options, synonyms)
    starts = [start for start, _, _ in names[1:]] + [None]
    return [(start, option) for (start, end, option), next_start in zip(names, starts)
            if not _modifies(text, end, next_start)]


def parse_choice(response: str, options: list[str], synonyms: Mapping[str, Sequence[str]] | None = None) -> Parsed:
    """One of `options`: "front left", "Front-left.", "The red box", "\\boxed{blue}", "2" (the option's number), or an
    option's synonym when the record lists them ("a coffee cup" -> mug; AVA object recognition's open answers).

    In an explicit span the first option named wins; in free text, the first option of the
    last sentence that names one ("The cube in the red box is closer than the blue one." -> red).
    """
    if not options:
        return invalid("the question lists no options")
    text = normalise(response)
    span, source = answer_span(text)
    if source == "text":
        sentences = [s for s in re.split(r"[.!?\n]+(?:\s|$)", span) if _options_in(s, options, synonyms)]
        span = sentences[-1] if sentences else span
    found = _options_in(span, options, synonyms)
    if found:
        return Parsed(found[0][1], source=source)
    numbered = re.fullmatch(r"\W*(?:option\s*)?(\d{1,2})\W*", span, re.IGNORECASE)
    if numbered and 1 <= int(numbered.group(1)) <= len(options):
        return Parsed(options[int(numbered.group(1)) - 1], source=source)
    return invalid(f"none of the options in the {source} answer")


# -- AVA-3D text (OCR) ---------------------------------------------------------------------------------

_QUOTED = re.compile(r'"([^"\n]+)"|\u201c([^\u201d\n]+)\u201d')
_SAYS = re.compile(r"\b(?:says|reads|written(?: on it)?(?: is)?|text is|word is)\s*:?\s*(.+)$", re.IGNORECASE)
_EDGES = "\"'\u201c\u201d\u2018\u2019.,;:!? \t"


def parse_text(response: str) -> Parsed:
    """The text a response reads off a sign, spaces collapsed, case kept (rules compare it case-insensitively).

    An explicit span (\\boxed{APPLE}, "Answer: APPLE") is the answer; in free text the last
    double-quoted string ('The sign says "APPLE".'), else what follows "says", "reads" or
    "written" in the last line, else the last line; surrounding quotes and end punctuation go.
    """
    span, source = answer_span(normalise(response))
    if source == "text":
        quoted = _QUOTED.findall(span)
        if quoted:
            span = next(q for q in quoted[-1] if q)
        else:
            lines = [line for line in span.splitlines() if line.strip()]
            span = lines[-1] if lines else ""
            said = _SAYS.search(span)
            span = said.group(1) if said else span
    text = " ".join(span.strip(_EDGES).split())
    return Parsed(text, source=source) if text else invalid(f"no text in the {source} answer")
