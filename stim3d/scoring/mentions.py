"""Reading a free-form description: sentences, number words, and the shapes and colours it names.

The reference judge (scoring/judges.py) checks rubric facts against these readings.
A `Mention` is one shape word with the colour and count written before it ("two red
cubes", "a blue cube", "no cylinders") or split from it ("three cubes (two red, one
blue)"). Word lists are fixed, so the same text always reads the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .parse_text import NUMBER_WORDS, normalise

SHAPE_WORDS: dict[str, tuple[str, ...]] = {
    "sphere": ("sphere", "spheres", "ball", "balls"),
    "cube": ("cube", "cubes", "box", "boxes", "block", "blocks"),
    "cone": ("cone", "cones"),
    "cylinder": ("cylinder", "cylinders"),
    "torus": ("torus", "tori", "toruses", "ring", "rings", "donut", "donuts", "doughnut", "doughnuts"),
}
COLOUR_WORDS: dict[str, tuple[str, ...]] = {
    "red": ("red",), "green": ("green",), "blue": ("blue",), "orange": ("orange",), "purple": ("purple", "violet"),
    "black": ("black",), "gray": ("gray", "grey"), "yellow": ("yellow",), "white": ("white",), "brown": ("brown",),
    "pink": ("pink",),
}
SHAPE_OF = {word: shape for shape, words in SHAPE_WORDS.items() for word in words}
COLOUR_OF = {word: colour for colour, words in COLOUR_WORDS.items() for word in words}
ONE = {"a": 1, "an": 1, "single": 1, "lone": 1, "both": 2, "no": 0, "zero": 0}
NEGATORS = {"no", "not", "without", "nor", "neither", "none", "zero", "never", "0"}
VAGUE = {"some", "several", "many", "few", "multiple", "various", "numerous", "more", "most", "all"}
STOP = {"the", "this", "that", "these", "those", "its", "their", "is", "are", "of", "to", "and", "or", "with",
        "there", "which", "other", "another", "each", "every", "in", "on", "at", "by", "from", "than", "as"}
TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
SENTENCE = re.compile(r"(?<!\d)[.!?](?!\d)|[;\n]")


@dataclass(frozen=True)
class Mention:
    """A shape word in the response, with the colour and the count written before it."""

    shape: str
    colour: str | None
    count: int | None
    negated: bool
    sentence: int
    start: int  # character offset in the lower-cased response


def split_sentences(text: str) -> list[tuple[int, str]]:
    """(offset, sentence) pieces of the lower-cased text."""
    pieces, last = [], 0
    for m in SENTENCE.finditer(text):
        pieces.append((last, text[last:m.start()]))
        last = m.end()
    pieces.append((last, text[last:]))
    return [(offset, s) for offset, s in pieces if s.strip()]


def number(token: str) -> int | None:
    if token.isdigit() and len(token) <= 6:
        return int(token)
    return NUMBER_WORDS.get(token, ONE.get(token))


def mentions(response: str) -> list[Mention]:
    """Every shape word of the response, read back to the nearest number (up to two adjectives between)."""
    text = normalise(response).lower()
    found = []
    for index, (offset, sentence) in enumerate(split_sentences(text)):
        tokens = list(TOKEN.finditer(sentence))
        for i, token in enumerate(tokens):
            shape = SHAPE_OF.get(token.group())
            if shape is None:
                continue
            colour, count, skipped, after = None, None, 0, token.start()
            for back in reversed(tokens[max(0, i - 4):i]):
                word = back.group()
                if sentence[back.end():after].strip(" -"):  # punctuation ends the phrase: "objects: cubes"
                    break
                after = back.start()
                if word in COLOUR_OF and colour is None:
                    colour = COLOUR_OF[word]
                    continue
                value = number(word)
                if value is not None:
                    count = value
                    break
                if word in STOP or word in SHAPE_OF or word in VAGUE or skipped == 2:
                    break
                skipped += 1
            window = {t.group() for t in tokens[max(0, i - 4):i]}
            negated = count == 0 if count is not None else (
                bool(window & NEGATORS) or any(w.endswith("n't") for w in window))
            found.append(Mention(shape, colour, count, negated, index, offset + token.start()))
        found += _split_counts(tokens, index, offset)
    return sorted(found, key=lambda m: m.start)


def _split_counts(tokens: list[re.Match], sentence: int, offset: int) -> list[Mention]:
    """Counts by colour written apart from the shape word: "two cubes, one red and one yellow",
    "three cubes (two red, one blue)", "two red and one blue cube", "a red one".

    A number followed by a colour and no shape word belongs to the next shape word when
    only "and"/"or", numbers and colours come between, else to the last shape word before it.
    """
    words = [t.group() for t in tokens]
    found = []
    for j in range(len(words) - 1):
        count, colour = number(words[j]), COLOUR_OF.get(words[j + 1])
        if count is None or colour is None or any(w in SHAPE_OF for w in words[j + 2:j + 4]):
            continue
        shape = None
        for w in words[j + 2:j + 8]:
            if w in SHAPE_OF:
                shape = SHAPE_OF[w]
                break
            if w not in ("and", "or") and number(w) is None and w not in COLOUR_OF:
                break
        if shape is None:
            before = [SHAPE_OF[w] for w in words[:j] if w in SHAPE_OF]
            shape = before[-1] if before else None
        if shape is not None:
            found.append(Mention(shape, colour, count, count == 0, sentence, offset + tokens[j].start()))
    return found


def snippet(response: str, start: int, width: int = 70) -> str:
    text = normalise(response)
    begin = max(0, start - 25)
    return ("..." if begin else "") + text[begin:begin + width].replace("\n", " ").strip() + "..."


def word_list(response: str) -> list[str]:
    return TOKEN.findall(normalise(response).lower())
