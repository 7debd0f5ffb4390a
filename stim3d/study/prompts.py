"""What a person reads above the picture: one people's prompt per family and question type, in one table.

A record's question is written for a model. Some families wrap it in a model's framing
("You are solving an odd-one-out visual perception task ...", ROSE's "Output only the
formal answer ... COUNT(n)"), and every question ends in an answer protocol that the
page's widget writes for the person. The page shows instead the prompt of this table,
`PEOPLE_PROMPTS`, keyed by (family, answer type as the trial asks it): each rule reads
the facts out of the family's own question (`reads`, a regular expression over the whole
question, its named groups the facts) and writes them in plain words (`says`). Reading
the facts from the model's question keeps both sides fair: a person is told exactly what
the model is told (the grid's size, which attribute differs when the model is told so, the
region to count in), never more and never less, in other words. The model's question stays
in the records; trials.json never holds it.

- Every built-in family has its rules here; tests/test_study_prompts.py fails when a
  registered family or one of its answer types has none, and when a rule no longer reads
  its family's question (the wording changed): write the rule before the family ships.
- The `describe` question set (a rubric, any family) has one rule for all families, and
  its trial lists what a description must mention (`mention_topics`: the topics of the
  rubric's Must-Right items, never their values).
- A family without a rule (a plug-in) or a question its rule does not read gets the
  generic prompt (`generic_prompt`): the question without the sentences of a model's
  framing and answer protocol. `study build` names such families in its summary.

docs/study.md ("Trials") is the user's side of this.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

ANY_FAMILY = "*"  # a rule every family shares (the describe question set)


@dataclass(frozen=True)
class Rule:
    """One people's prompt: `reads` matches the family's whole question; `says` writes its named groups plainly."""

    reads: str
    says: Callable[[dict[str, str]], str]

    def prompt(self, question: str) -> str | None:
        match = re.fullmatch(self.reads, question.strip(), flags=re.S)
        return None if match is None else self.says({k: v or "" for k, v in match.groupdict().items()})


CHOOSE = r"(?: Choose one(?: from below)?: .*)?"  # the options a model is read out; the page shows them as buttons
ROSE_GRID = (r"You are given a grid image: (?P<rows>\d+) rows and (?P<cols>\d+) columns of 3D objects standing on "
             r"the ground\. .*? Examples: [^.]*\. ")


def _grid(g: dict[str, str]) -> str:
    return (f"The picture shows a grid of objects, {g['rows']} rows by {g['cols']} columns (rows counted from the "
            "top, columns from the left).")


def _block(where: str) -> str:
    """ROSE's region in plain words: "in rows 1 to 3", "in the block from row 1, column 2 to row 3, column 4"."""
    where = re.sub(r"row (\d+) column (\d+)", r"row \1, column \2", where)
    if where.startswith("from row"):
        return f"in the block {where}"
    return where.replace("the rectangle from", "the block from")


PEOPLE_PROMPTS: dict[tuple[str, str], Rule] = {
    # DYSM-3D
    ("shape_count", "integer"): Rule(
        r"How many (?P<things>.+?) are in the scene\?",
        lambda g: f"How many {g['things']} are in the picture?"),
    ("shape_color_count", "integer"): Rule(
        r"How many (?P<things>.+?) are in the scene\?",
        lambda g: f"How many {g['things']} are in the picture?"),
    ("letters", "letters"): Rule(
        r"What (?P<kind>.+?)\(s\) do the (?P<things>.+?) in this scene form\? Read them from left to right\.",
        lambda g: f"The {g['things']} in the picture form one or more {g['kind']}s. Which? Read from left to right."
        if " or " not in g["kind"] else
        f"The {g['things']} in the picture form letters or digits. Which? Read from left to right."),
    ("form_constancy", "yes_no"): Rule(
        r"Do all the shapes in the left group and right group have the same orientations\?",
        lambda g: "Compare the group of shapes on the left with the group on the right. Do all the shapes in both "
                  "groups have the same orientation?"),
    ("spatial_grid", "integer"): Rule(
        r"The shapes stand in a grid of (?P<rows>\d+) rows and (?P<cols>\d+) columns; rows are numbered from the top "
        r"of the image, columns from the left\. Starting from the (?P<reference>.+?) at \(row (?P<row>\d+), column "
        r"(?P<col>\d+)\), how many (?P<things>.+?) are there (?P<where>to the (?:left|right) of it in the same row|"
        r"(?:above|below) it in the same column)\?",
        lambda g: f"The shapes stand in a grid of {g['rows']} rows and {g['cols']} columns (rows counted from the "
                  f"top, columns from the left). Find the {g['reference']} in row {g['row']}, column {g['col']}. "
                  f"How many {g['things']} are {g['where']}?"),
    # OddGridBench-3D
    ("odd_grid", "cell"): Rule(
        r"You are solving an odd-one-out visual perception task\. You are given an image showing a (?P<rows>\d+)"
        r"×(?P<cols>\d+) grid of (?P<things>.+?)\. All .+? appear the same, except one that is visually different"
        r"(?P<how> in [^.]+)?\. Carefully inspect the grid\. Identify the grid position \(row and column\) of the "
        r"(?P<thing>.+?) that is different\. .*",
        lambda g: f"The picture shows a grid of {g['things']}, {g['rows']} rows by {g['cols']} columns. They all look "
                  f"the same except one, which is different{g['how']}. Which {g['thing']} is different? (If you "
                  "find none, say so.)"),
    # ROSE-3D: the grid's protocol read for its size, then the task
    ("rose_grid", "strict_count"): Rule(
        ROSE_GRID + r"Count the number of cells that are different from the majority (?P<where>.+?)\.",
        lambda g: f"{_grid(g)} How many objects differ from the majority {_block(g['where'])}?"),
    ("rose_grid", "strict_cell_set"): Rule(
        ROSE_GRID + r"Click all cells that are different from the majority (?P<where>.+?)\.",
        lambda g: f"{_grid(g)} Click every object that differs from the majority {_block(g['where'])}."),
    ("rose_grid", "strict_cell_set_count"): Rule(
        ROSE_GRID + r"Click all cells that are different from the majority in all cells except (?P<where>.+?), then "
        r"submit the total number of clicked cells\.",
        lambda g: f"{_grid(g)} Click every object that differs from the majority, leaving out those in "
                  f"{_block(g['where'])}; then give how many objects you clicked."),
    # AVA-3D
    ("ava_count", "integer"): Rule(
        r"How many (?P<things>.+?) are there in the image\?",
        lambda g: f"How many {g['things']} are there in the picture?"),
    ("ava_localize", "box"): Rule(
        r"Provide the bounding box coordinates of the (?P<thing>.+?)\.",
        lambda g: f"Where is the {g['thing']}? Draw a box around it."),
    ("ava_depth_absolute", "number"): Rule(
        r"Estimate how far the closest point of the (?P<thing>.+?) \(highlighted by a (?P<marker>\w+) box\) is from "
        r"the camera, in metres\.",
        lambda g: f"How far is the nearest point of the {g['thing']} in the {g['marker']} box from the camera, in "
                  "metres? Give your best estimate."),
    ("ava_depth_relative", "choice"): Rule(
        r"Which object is closer to the camera, the (?P<red>.+?) \(highlighted by a red box\) or the (?P<blue>.+?) "
        r"\(highlighted by a blue box\)\?" + CHOOSE,
        lambda g: f"Which is closer to the camera: the {g['red']} in the red box or the {g['blue']} in the blue box?"),
    ("ava_color", "choice"): Rule(
        r"What colou?r is the (?P<thing>.+?) in the (?P<marker>\w+) box\?" + CHOOSE,
        lambda g: f"What colour is the {g['thing']} in the {g['marker']} box?"),
    ("ava_spatial", "choice"): Rule(
        r"Is the (?P<red>.+?) \(in the red box\) (?P<relation>.+?) the (?P<blue>.+?) \(in the blue box\)\?" + CHOOSE,
        lambda g: f"Is the {g['red']} in the red box {g['relation']} the {g['blue']} in the blue box?"),
    ("ava_orientation", "choice"): Rule(
        r"What is the orientation of the (?P<thing>.+?) in the image\?" + CHOOSE,
        lambda g: f"Which way is the {g['thing']} turned: which side of it faces the camera?"),
    ("ava_texture", "choice"): Rule(
        r"What is the texture of the sign in the (?P<marker>\w+) box\?" + CHOOSE,
        lambda g: f"What pattern is on the sign in the {g['marker']} box?"),
    ("ava_ocr", "text"): Rule(
        r"What is written on the sign in the (?P<marker>\w+) box\? Answer with the exact text\.",
        lambda g: f"What is written on the sign in the {g['marker']} box? Copy the text exactly."),
    ("ava_object", "choice"): Rule(
        r"What is in the (?P<marker>\w+) box\?" + CHOOSE,
        lambda g: f"What is the object in the {g['marker']} box?"),
    ("ava_object", "text"): Rule(  # asked in the open: typed, not chosen (trials.py)
        r"What is in the (?P<marker>\w+) box\? Name the object\.",
        lambda g: f"What is the object in the {g['marker']} box? Name it in a word or two."),
    # The describe question set, any family (scenes/rubrics.py DESCRIBE_TEXT)
    (ANY_FAMILY, "rubric"): Rule(
        r"Describe the scene in detail: the objects, their shapes, colours, how many there are, and where they are\.",
        lambda g: "Describe the picture in a few sentences: the objects, their shapes and colours, how many there "
                  "are and where they are."),
}

# What each task family asks, for the study's opening pages ("Depending on the picture, you will be asked to: ...").
FAMILY_TASKS: dict[str, str] = {
    "shape_count": "count the objects of one shape",
    "shape_color_count": "count the objects of one shape and colour",
    "letters": "read the letters or digits that small objects spell out",
    "form_constancy": "say whether two groups of shapes are turned the same way",
    "spatial_grid": "count shapes on one side of a shape in a grid",
    "odd_grid": "find the one object in a grid that looks different from the others",
    "rose_grid": "find the objects of a grid that differ from the majority, and count or click them",
    "ava_count": "count objects of one kind among other objects",
    "ava_localize": "draw a box around one object",
    "ava_depth_absolute": "estimate how far an object is from the camera, in metres",
    "ava_depth_relative": "say which of two objects is closer to the camera",
    "ava_color": "name the colour of an object in a box",
    "ava_spatial": "say where one boxed object is relative to another",
    "ava_orientation": "say which way a toy car is facing",
    "ava_texture": "name the pattern on a sign",
    "ava_ocr": "read the text on a sign",
    "ava_object": "name an object in a box",
}
GENERIC_TASK = "answer a question about a picture"

# The sentences of a model's framing and answer protocol, matched per sentence; a person's widget writes the answer.
_MODEL_SENTENCES = (
    re.compile(r"^You are (solving|an?|given a task)\b", re.I),
    re.compile(r"^Carefully (inspect|look|examine)\b", re.I),
    re.compile(r"^Think step by step\b", re.I),
    re.compile(r"^End the response with\b", re.I),
    re.compile(r"^If no .* exists, output\b", re.I),
    re.compile(r"^Output only the formal answer\b", re.I),
    re.compile(r"^Do not output any explanation\b", re.I),
    re.compile(r"^Allowed answer formats:", re.I),
    re.compile(r"^Examples?:", re.I),
    re.compile(r"^Answer (only )?(with|in|using|as)\b", re.I),
    re.compile(r"^Choose one( from below)?:", re.I),
    re.compile(r"\\boxed\{"),
    re.compile(r"\b(COUNT|CLICK|SUBMIT)\("),
)
_GIVEN = re.compile(r"^You are given (an? )?(image|picture|grid image)( showing)?:?\s*", re.I)
# A sentence ends at ". ", "? " or "! " followed by a capital, digit or quote; numbered options ("1. left") stay whole.
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z\"'(])")


def generic_prompt(question: str) -> str:
    """A question without the sentences of a model's framing and answer protocol (a plug-in family's prompt).

    "You are given an image showing X." becomes "The picture shows X."; "You are solving ... task.", "Carefully
    inspect ...", "End the response with \\boxed{...}", ROSE's grammar and "Choose one: 1. left, 2. right." (the
    widget lists the options) are dropped. Falls back to the whole question when every sentence would go.
    """
    sentences = [s.strip() for s in _SENTENCE_END.split(question.strip()) if s.strip()]
    kept = []
    for sentence in sentences:
        given = _GIVEN.match(sentence)
        if given:
            rest = sentence[given.end():]
            sentence = f"The picture shows {rest}" if rest else ""
        if sentence and not any(p.search(sentence) for p in _MODEL_SENTENCES):
            kept.append(sentence)
    return " ".join(kept) if kept else question.strip()


def rule_for(family: str, answer_type: str) -> Rule | None:
    """The family's rule for the answer type, or the rule every family shares for it (describe), or None."""
    return PEOPLE_PROMPTS.get((family, answer_type)) or PEOPLE_PROMPTS.get((ANY_FAMILY, answer_type))


def people_prompt(family: str, answer_type: str, question: str) -> tuple[str, bool]:
    """(the prompt a person reads, whether it is the table's): the table's rule, else `generic_prompt`."""
    rule = rule_for(family, answer_type)
    written = rule.prompt(question) if rule is not None else None
    return (written, True) if written is not None else (generic_prompt(question), False)


# What a description must mention, per rubric item type (and per attribute): topics, never the values.
_TOPICS: dict[str, str] = {
    "count": "how many objects there are of each shape (and colour)",
    "presence": "what the objects are",
    "absence": "which shapes are missing",
    "colour": "the colours you see",
    "relation": "where the objects are relative to each other",
}
_ATTRIBUTE_TOPICS: dict[str, str] = {
    "letters": "the letters or digits the dots spell",
    "view": "which side of the object faces the camera",
    "texture": "the pattern on the sign",
    "text": "what is written on the sign",
    "grid": "how the objects are arranged (rows and columns)",
    "turned_group": "which group of shapes is turned",
    "odd_cell": "which object of the grid is different",
    "occluded": "which objects are partly hidden",
}


def mention_topics(rubric: Mapping[str, Any]) -> list[str]:
    """The topics of a rubric's Must-Right items, in order and each once: what a description must mention."""
    topics: list[str] = []
    for item in rubric.get("must_right", []):
        fact = item.get("fact", {})
        if item.get("type") == "attribute":
            topic = _ATTRIBUTE_TOPICS.get(str(fact.get("attribute")), "what stands out in the picture")
        elif item.get("type") == "count" and fact.get("state") == "out_of_view":
            topic = "objects cut off at the picture's edge"
        else:
            topic = _TOPICS.get(str(item.get("type")), "what the picture shows")
        if topic not in topics:
            topics.append(topic)
    return topics
