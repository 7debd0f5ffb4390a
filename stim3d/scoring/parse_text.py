"""What every parser shares: the `Parsed` result, where an answer is looked for in a response, number words.

The search order and the canonical values are described in `scoring/parsers.py`.
"""

from __future__ import annotations

import re
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

_MARKER = re.compile(r"(?:final\s+answer\s*(?:is\b|:|=)?|\banswer\s*(?:is\b|:|=))", re.IGNORECASE)


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


def invalid(reason: str) -> Parsed:
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


def word_numbers(text: str) -> str:
    """Number words to digits ("twenty-one" -> "21"), so that one number pattern reads both."""
    def value(m: re.Match) -> str:
        if m.group("small"):
            return str(NUMBER_WORDS[m.group("small").lower()])
        unit = NUMBER_WORDS[m.group("unit").lower()] if m.group("unit") else 0
        return str(NUMBER_WORDS[m.group("tens").lower()] + unit)
    return _NUMBER_WORD.sub(value, text)
