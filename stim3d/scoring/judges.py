"""The reference judge of rubric items: deterministic, and undecided rather than guessing.

A judge is `judge(response, rubric_item) -> (satisfied, evidence)`: satisfied is True,
False, or None when the judge cannot decide (reported as undecided, never guessed);
evidence quotes what decided it. The reference judge (`reference_judge`) reads the
structured fact of each item against the shapes, colours and counts the description
names (scoring/mentions.py, with the number words of parsers.py); it decides:

- count: the first number phrase for the shape (and colour), e.g. "two red cubes",
  "a blue cube", "no cylinders", also split by colour ("three cubes (two red, one
  blue)", "two red and one blue cube"); a shape's total is the sum over its colours when no
  phrase counts the shape alone. Not named at all -> 0. Named without a number
  ("the cubes") -> undecided.
- presence / colour: the shape, colour or object word ("car" for a toy car) occurs
  outside a negation ("no", "not", "without", ... within four words before it).
- absence: satisfied unless the shape is named outside a negation (a hallucination).
- relation: a sentence naming both objects (colour + shape) with "left of", "right of",
  "in front of", "behind", "closer than", "farther than"; the mirrored claim fails.
  Both named in a sentence with spatial words it cannot read ("beside", "next to",
  "on the left") -> undecided; otherwise not stated -> False.
- attribute: the letter string, the grid's rows and columns, which group is turned,
  the odd cell (parsers.parse_cell), and heavy occlusion ("hidden", "occluded", ...
  in a sentence naming the object).

Model-based judges plug in through the entry-point group `stim3d.judges`
(scoring/judge_plugins.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .mentions import COLOUR_OF, NEGATORS, ONE, TOKEN, Mention, mentions, number, snippet, split_sentences, word_list
from .parse_text import normalise
from .parsers import parse_cell
from .rubric import Rubric, RubricItem

_LEFT_RIGHT = re.compile(r"\b(left|right)(?:\s+(?:side|hand\s+side))?\s+(?:of|than)\b")
_FRONT = re.compile(r"\bin\s+front\s+of\b|\b(?:closer|nearer)\s+(?:to\s+(?:the\s+)?(?:camera|viewer)\s+)?than\b")
_BEHIND = re.compile(r"\bbehind\b|\bin\s+back\s+of\b|\b(?:farther|further)\s+(?:back\s+|away\s+)?"
                     r"(?:from\s+(?:the\s+)?(?:camera|viewer)\s+)?than\b")
_SPATIAL = re.compile(r"\b(?:left|right|front|behind|back|closer|nearer|farther|further|beside|next\s+to|near|"
                      r"between|before|ahead|side|above|below|under|over)\b")
_OCCLUDED = re.compile(r"\b(?:hidden|occluded|obscured|blocked|covered|partly\s+visible|partially\s+visible|"
                       r"half[\s-]hidden|peeks?|peeking|hides|hiding|covers|covering|obscures|obscuring|blocks|"
                       r"blocking)\b")
_OUT_OF_VIEW = re.compile(r"\b(?:cut\s+off|out\s+of\s+(?:the\s+)?(?:view|frame|picture|image)|cropped|clipped|"
                          r"(?:partly|partially)\s+outside|outside\s+(?:the\s+)?(?:frame|image|picture)|"
                          r"beyond\s+the\s+edge)")
_SAME_ORIENTATION = re.compile(r"\bsame\s+(?:orientations?|way)\b|\bidentically\s+oriented\b|"
                               r"\boriented\s+(?:the\s+same|alike|identically)\b|"
                               r"\b(?:not|n't|never|no)\s+(?:\w+\s+)?(?:rotated|turned|tilted)\b|\bno\s+rotation\b")
_IDENTICAL = re.compile(r"\b(?:look|looks|are|appear|appears)\s+(?:exactly\s+)?(?:identical|alike|the\s+same)\b")
_TURNED = re.compile(r"\b(?:rotated|turned|tilted|twisted|oriented\s+differently|different\s+orientations?|"
                     r"differ\s+in\s+orientation)\b")
_LETTER_TALK = re.compile(r"\b(?:letters?|spell\w*|reads?|digits?|characters?|word)\b", re.IGNORECASE)


# -- the structured types ----------------------------------------------------------------------------

def _count(response: str, fact: dict) -> tuple[bool | None, str]:
    if fact.get("state") == "out_of_view":
        return _out_of_view(response, int(fact["count"]))
    shape, colour, gold = fact["shape"], fact.get("color"), int(fact["count"])
    named = [m for m in mentions(response) if m.shape == shape]
    label = f"{colour} {shape}" if colour else str(shape)
    if colour:
        own = [m for m in named if m.colour == colour]
        explicit = [m for m in own if m.count is not None]
        if explicit:
            claimed, where = explicit[0].count, explicit[0].start
        elif own or (named and any(COLOUR_OF.get(w) == colour for w in word_list(response))):
            return None, f"mentions {label}s without a number it can read"
        else:
            return gold == 0, f"no {label} named (count 0)"
    else:
        alone = [m for m in named if m.colour is None and m.count is not None]
        firsts: dict[str, Mention] = {}
        for m in named:
            if m.colour is not None and m.count is not None:
                firsts.setdefault(m.colour, m)
        if alone:
            claimed, where = alone[0].count, alone[0].start
        elif firsts:
            claimed, where = sum(m.count or 0 for m in firsts.values()), min(m.start for m in firsts.values())
        elif named:
            return None, f"mentions {shape}s without a number it can read"
        else:
            return gold == 0, f"no {shape} named (count 0)"
    return claimed == gold, f"reads {claimed} {label}(s) (gold {gold}): {snippet(response, where)}"


def _out_of_view(response: str, gold: int) -> tuple[bool | None, str]:
    text = normalise(response).lower()
    for _, sentence in split_sentences(text):
        match = _OUT_OF_VIEW.search(sentence)
        if not match:
            continue
        numbers = [n for n in (number(t) for t in TOKEN.findall(sentence[:match.start()])) if n is not None]
        if not numbers:
            return None, f"mentions objects out of view without a number: {sentence.strip()[:70]}"
        return numbers[0] == gold, f"reads {numbers[0]} out of view (gold {gold}): {sentence.strip()[:70]}"
    return False, "no object out of view is mentioned"


def _presence(response: str, fact: dict) -> tuple[bool | None, str]:
    if "object" in fact:  # an assembly, e.g. "toy car": its last word, as a viewer names it ("a car")
        noun = str(fact["object"]).split()[-1].lower()
        words = word_list(response)
        for i, word in enumerate(words):
            if word in (noun, noun + "s") and not set(words[max(0, i - 3):i]) & NEGATORS:
                return True, f"names a {noun}"
        return False, f"names no {noun}"
    if "shape" in fact:
        named = [m for m in mentions(response) if m.shape == fact["shape"] and not m.negated]
        if named:
            return True, f"names {fact['shape']}: {snippet(response, named[0].start)}"
        return False, f"no {fact['shape']} named"
    return _colour(response, fact)


def _colour(response: str, fact: dict) -> tuple[bool | None, str]:
    words = word_list(response)
    for i, word in enumerate(words):
        if COLOUR_OF.get(word) == fact["color"] and not set(words[max(0, i - 3):i]) & NEGATORS:
            return True, f"names the colour {word}"
    return False, f"the colour {fact['color']} is not named"


def _absence(response: str, fact: dict) -> tuple[bool | None, str]:
    named = [m for m in mentions(response) if m.shape == fact["shape"]]
    claimed = [m for m in named if not m.negated]
    if claimed:
        return False, f"claims a {fact['shape']}: {snippet(response, claimed[0].start)}"
    return True, f"says there is no {fact['shape']}" if named else f"names no {fact['shape']}"


def _relation_words(sentence: str) -> list[tuple[int, int, str]]:
    """(start, end, direction) of every relation phrase, in order: left, right, front, behind."""
    found = [(m.start(), m.end(), m.group(1)) for m in _LEFT_RIGHT.finditer(sentence)]
    found += [(m.start(), m.end(), "front") for m in _FRONT.finditer(sentence)]
    found += [(m.start(), m.end(), "behind") for m in _BEHIND.finditer(sentence)]
    return sorted(found)


def _relation(response: str, fact: dict) -> tuple[bool | None, str]:
    """X rel Y: X is the last name between the previous relation phrase and this one, Y the first name after it
    (before the next phrase); "To the left of Y is X" (no name before) reads the two names after it."""
    subject = (fact["subject_color"], fact["subject_shape"])
    other = (fact["object_color"], fact["object_shape"])
    lateral = fact["relation"] == "left_of"
    primary, axis = ("left", ("left", "right")) if lateral else ("front", ("front", "behind"))
    text = normalise(response).lower()
    by_sentence: dict[int, list[Mention]] = {}
    for m in mentions(response):
        if (m.colour, m.shape) in (subject, other):
            by_sentence.setdefault(m.sentence, []).append(m)
    claims: list[tuple[bool, str]] = []
    unreadable = False  # both named in a sentence with spatial words it cannot read: a paraphrase, perhaps
    for index, (offset, sentence) in enumerate(split_sentences(text)):
        named = by_sentence.get(index, [])
        if not {(m.colour, m.shape) for m in named} >= {subject, other}:
            continue
        phrases = _relation_words(sentence)
        rest = "".join(sentence[(phrases[k - 1][1] if k else 0):start] for k, (start, _, _) in enumerate(phrases))
        rest += sentence[phrases[-1][1]:] if phrases else sentence
        unreadable = unreadable or bool(_SPATIAL.search(rest))
        for k, (start, end, direction) in enumerate(phrases):
            if direction not in axis:
                continue
            low = offset + (phrases[k - 1][1] if k else 0)
            high = offset + (phrases[k + 1][0] if k + 1 < len(phrases) else len(sentence))
            before = [m for m in named if low <= m.start < offset + start]
            after = [m for m in named if offset + end <= m.start < high]
            if before and after:
                x, y = before[-1], after[0]
            elif not before and len(after) >= 2:
                x, y = after[1], after[0]
            else:
                continue
            if (x.colour, x.shape) == (y.colour, y.shape):
                continue
            holds = ((x.colour, x.shape) == subject) == (direction == primary)
            claims.append((holds, sentence.strip()[:90]))
    if claims:
        verdicts = {holds for holds, _ in claims}
        if verdicts == {True}:
            return True, f"states it: {claims[0][1]}"
        if verdicts == {False}:
            return False, f"states the opposite: {claims[0][1]}"
        return False, f"states both ways: {claims[0][1]}"
    if unreadable:
        return None, "names both objects with spatial words it cannot read as this relation"
    return False, "never states how the two objects are placed on this axis"


def _occluded(response: str, fact: dict) -> tuple[bool | None, str]:
    target = (fact.get("color"), fact["shape"])
    text = normalise(response).lower()
    sentences = split_sentences(text)
    named = {m.sentence for m in mentions(response) if (m.colour, m.shape) == target
             or (target[0] is None and m.shape == target[1])}
    for index in sorted(named):
        if _OCCLUDED.search(sentences[index][1]):
            return True, f"says it is hidden: {sentences[index][1].strip()[:90]}"
    if not _OCCLUDED.search(text):
        return False, "says nothing about any object being hidden"
    return None, "mentions hiding, but not in a sentence naming this object"


def _letters(response: str, gold: str) -> tuple[bool | None, str]:
    text = normalise(response)
    joint = r"[\s,\-/'\"“”‘’]*(?:and\s+|then\s+)?[\s'\"“”‘’]*"
    pattern = r"(?<![A-Za-z0-9])" + joint.join(re.escape(c) for c in gold) + r"(?![A-Za-z0-9])"
    if re.search(pattern, text):
        return True, f"reads {gold}"
    for _, sentence in split_sentences(text):
        if _LETTER_TALK.search(sentence):
            tokens = [m.group() for m in re.finditer(r"\b[A-Z0-9]{1,8}\b", sentence)
                      if not re.match(r"\s+[a-z]", sentence[m.end():])]
            if tokens:
                return False, f"reads {''.join(tokens)} (gold {gold})"
            return None, f"talks about letters without naming them it can read: {sentence.strip()[:70]}"
    return False, "names no letters"


def _grid(response: str, rows: int, cols: int) -> tuple[bool | None, str]:
    text = " ".join(str(number(w)) if number(w) is not None and not w.isdigit() and w not in ONE else w
                    for w in word_list(response))
    said_rows = re.search(r"\b(\d+)\s+rows?\b", text)
    said_cols = re.search(r"\b(\d+)\s+col(?:umn)?s?\b", text)
    if said_rows or said_cols:
        got = (int(said_rows.group(1)) if said_rows else None, int(said_cols.group(1)) if said_cols else None)
        if (got[0] is not None and got[0] != rows) or (got[1] is not None and got[1] != cols):
            return False, f"reads {got[0]} rows, {got[1]} columns (gold {rows} x {cols})"
        if None in got:
            return None, f"reads only one of rows/columns: {got}"
        return True, f"reads {rows} rows and {cols} columns"
    pair = re.search(r"\b(\d+)\s*(?:x|by)\s*(\d+)\b", text)
    if pair:
        got = (int(pair.group(1)), int(pair.group(2)))
        if got == (rows, cols):
            return True, f"reads a {got[0]} x {got[1]} grid"
        return (None, "reads the grid size in the other order") if got == (cols, rows) else (False, f"reads {got}")
    return (None, "mentions a grid without its size") if "grid" in text else (False, "no grid size stated")


def _turned(response: str, gold: str) -> tuple[bool | None, str]:
    said = set()
    for _, sentence in split_sentences(normalise(response).lower()):
        if _SAME_ORIENTATION.search(sentence):
            said.add("none")
        elif _TURNED.search(sentence):
            said.add("turned")
        elif _IDENTICAL.search(sentence) and "group" in sentence:  # "the two groups look identical"
            said.add("none")
    if not said:
        return False, "says nothing about the groups' orientations"
    if len(said) > 1:
        return None, "says both that the groups match and that one is turned"
    claim = said.pop()
    expected = "none" if gold == "none" else "turned"
    return claim == expected, f"says {'no group is' if claim == 'none' else 'a group is'} turned (gold: {gold})"


_SIDE = r"(?:front|back|rear)(?:[\s-]+(?:left|right))?|left|right|top|above"
_VIEW = re.compile(rf"\b(?:seen|viewed|shown|photographed|pictured)\s+from\s+(?:the\s+)?(?:directly\s+)?(?P<side>{_SIDE})\b"
                   rf"|\b(?P<side2>{_SIDE})\s+view\b")
_VIEW_TALK = re.compile(r"\b(?:seen|viewed|view|facing|faces|angle|side|oriented|orientation)\b")


def _view(response: str, gold: str) -> tuple[bool | None, str]:
    """From which side an object is seen: "seen from the front left", "a top view"; rear = back, above = top."""
    text = normalise(response).lower()
    match = _VIEW.search(text)
    if match:
        side = re.sub(r"[\s-]+", " ", match.group("side") or match.group("side2"))
        side = {"above": "top"}.get(side, side.replace("rear", "back"))
        return side == gold, f"seen from the {side} (gold {gold})"
    if _VIEW_TALK.search(text):
        return None, "talks about the view without a side it can read"
    return False, "never says from which side"


_TEXTURE_WORDS = {  # a texture class (scenes/surfaces.py TEXTURE_CLASSES) and the words people use for it
    "striped": r"strip(?:e|es|ed|y)",
    "chequered": r"che(?:que|cke)red|checker(?:ed|board)|chequerboard|checks?|checked",
    "polka-dotted": r"polka[\s-]*dot(?:s|ted)?|dot(?:s|ted)|spot(?:s|ted|ty)",
    "grid": r"grids?|lattice|gridded",
    "zigzagged": r"zig[\s-]*zag(?:s|ged|ging)?|chevrons?",
    "cracked": r"crack(?:s|ed|le|led)?",
}


def _texture(response: str, gold: str) -> tuple[bool | None, str]:
    """A sign's pattern: the gold class's words named and no other class's; both named is undecided."""
    text = normalise(response).lower()
    named = {name for name, words in _TEXTURE_WORDS.items() if re.search(rf"\b(?:{words})\b", text)}
    if gold not in _TEXTURE_WORDS:
        return None, f"the reference judge does not know the texture {gold!r}"
    if gold in named:
        others = sorted(named - {gold})
        return (True, f"names a {gold} pattern") if not others else (None, f"names {gold} and {', '.join(others)}")
    return False, f"names {', '.join(sorted(named))} (gold {gold})" if named else f"names no pattern (gold {gold})"


def _text(response: str, gold: str) -> tuple[bool | None, str]:
    """A sign's text: the exact string as a whole word, case ignored (a description quotes what it reads)."""
    if re.search(rf"(?<![A-Za-z0-9]){re.escape(gold)}(?![A-Za-z0-9])", normalise(response), re.IGNORECASE):
        return True, f"reads {gold}"
    return False, f"never reads {gold}"


def _attribute(response: str, fact: dict) -> tuple[bool | None, str]:
    kind = fact["attribute"]
    if kind == "letters":
        return _letters(response, str(fact["value"]))
    if kind == "grid":
        return _grid(response, int(fact["rows"]), int(fact["cols"]))
    if kind == "turned_group":
        return _turned(response, str(fact["value"]))
    if kind == "odd_cell":
        parsed = parse_cell(response)
        gold = (int(fact["row"]), int(fact["col"]))
        if not parsed.valid:
            return False, "names no cell"
        return parsed.value == gold, f"names row {parsed.value[0]}, column {parsed.value[1]} (gold {gold})"
    if kind == "occluded":
        return _occluded(response, fact)
    if kind == "view":
        return _view(response, str(fact["value"]))
    if kind == "texture":
        return _texture(response, str(fact["value"]))
    if kind == "text":
        return _text(response, str(fact["value"]))
    return None, f"the reference judge does not know attribute {kind!r}"


_BY_TYPE: dict[str, Callable[[str, dict], tuple[bool | None, str]]] = {
    "count": _count, "presence": _presence, "colour": _colour, "absence": _absence,
    "relation": _relation, "attribute": _attribute,
}


def reference_judge(response: str, item: RubricItem) -> tuple[bool | None, str]:
    """The deterministic reference judge: see the module docstring for what it reads."""
    try:
        return _BY_TYPE[item.type](response, item.fact)
    except KeyError as exc:
        return None, f"the fact lacks {exc} for a {item.type} item"


def caption_failures(rubric: Rubric) -> list[str]:
    """Ids of the rubric items its own golden caption does not satisfy under the reference judge ([] = consistent)."""
    return [item.id for item in rubric.items() if reference_judge(rubric.caption, item)[0] is not True]
