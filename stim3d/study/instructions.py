"""What a naive participant reads: the question without the model's answer protocol, how to answer each type, what each task is.

A record's question is written for a model: it may end with a formatting protocol
("End the response with ... \\boxed{Row X, Column Y}", ROSE's CLICK grammar). A person
answers through a widget (js/widgets.js) that writes exactly that text for them, so the
protocol sentences are dropped from the prompt (`participant_prompt`) and each trial
carries instead a short how-to for its answer type (`ANSWER_INSTRUCTIONS`). The study's
opening pages (`overview_pages`) say what the study is and, per task family present,
what to look for, in plain words. docs/study.md quotes these texts' rules.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

# How to answer, per answer type of scoring/answers.py: what the widget asks of the participant.
ANSWER_INSTRUCTIONS: dict[str, str] = {
    "integer": "Type the number (0, 1, 2, ...) in the answer box, then press Submit.",
    "strict_count": "Type the number (0, 1, 2, ...) in the answer box, then press Submit.",
    "yes_no": "Choose Yes or No, then press Submit.",
    "letters": "Type the letters or digits you read, left to right, in the answer box, then press Submit.",
    "cell": "Click the grid cell that answers the question (or move to it with the arrow keys and press Space), "
            "then press Submit. If the question says there may be none and you see none, press None of the cells.",
    "cell_set": "Click every grid cell that answers the question (click again to undo), then press Submit. "
                "If there is none, press None of the cells.",
    "strict_cell_set": "Click every grid cell that answers the question (click again to undo), then press Done. "
                       "If there is none, press Done without selecting any cell.",
    "strict_cell_set_count": "Click every grid cell that answers the question (click again to undo), check the "
                             "number of cells you selected, then press Submit.",
    "box": "Drag a rectangle on the picture that just encloses the object (drag again to redo), then press Submit.",
    "number": "Type your estimate in metres (for example 2.5) in the answer box, then press Submit.",
    "choice": "Choose one of the options, then press Submit.",
    "text": "Type the text exactly as it is written, then press Submit.",
    "rubric": "Describe the picture in a few plain sentences in the text box, then press Submit.",
}
# A choice asked openly (AVA object recognition's open question) is typed in the text box: it asks for a name.
OPEN_NAME_INSTRUCTIONS = "Type the name of the object in a word or two, then press Submit."

# What each task family asks, for the opening pages (a family without an entry gets the generic line).
FAMILY_INTROS: dict[str, str] = {
    "shape_count": "count the objects of one shape in a scene",
    "shape_color_count": "count the objects of one shape and colour in a scene",
    "letters": "read the letters or digits that small objects spell out",
    "form_constancy": "say whether two groups of shapes are turned the same way",
    "spatial_grid": "count shapes on one side of a cell in a grid of objects",
    "odd_grid": "find the one object in a grid that looks different from the others",
    "rose_grid": "find the cells of a grid that differ from the majority, and count or click them",
    "ava_count": "count objects of one kind among other objects",
    "ava_localize": "draw a box around one object",
    "ava_depth_absolute": "estimate how far an object is from the camera, in metres",
    "ava_depth_relative": "say which of two objects is closer to the camera",
    "ava_color": "name the colour of the object in the red box",
    "ava_spatial": "say where one boxed object is relative to another",
    "ava_orientation": "say which way a toy car is facing",
    "ava_texture": "name the pattern on the sign in the red box",
    "ava_ocr": "read the text on the sign in the red box",
}

# Sentences that tell a model how to format its answer; a person's widget does that. Matched per sentence.
_PROTOCOL_SENTENCES = (
    re.compile(r"^End the response with\b", re.I),
    re.compile(r"^If no .* exists, output\b", re.I),
    re.compile(r"^Output only the formal answer\b", re.I),
    re.compile(r"^Do not output any explanation\b", re.I),
    re.compile(r"^Allowed answer formats:", re.I),
    re.compile(r"^Examples?:", re.I),
    re.compile(r"^Answer (only )?(with|in|using|as)\b", re.I),
    re.compile(r"^Choose one:", re.I),
    re.compile(r"\\boxed\{"),
    re.compile(r"\b(COUNT|CLICK|SUBMIT)\("),
)
# A sentence ends at ". ", "? " or "! " followed by a capital, digit or quote; numbered options ("1. left") stay whole.
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z\"'(])")


def participant_prompt(question: str) -> str:
    """The record's question without the sentences that only tell a model how to format its answer.

    `Choose one: 1. left, 2. right.` is dropped too: the choice widget lists the options.
    Falls back to the whole question when every sentence would go.
    """
    sentences = [s.strip() for s in _SENTENCE_END.split(question.strip()) if s.strip()]
    kept = [s for s in sentences if not any(p.search(s) for p in _PROTOCOL_SENTENCES)]
    return " ".join(kept) if kept else question.strip()


def answer_instructions(answer_type: str, options: list[str] | None = None) -> str:
    """The how-to line of one trial; a choice names its options."""
    text = ANSWER_INSTRUCTIONS.get(answer_type, "Give your answer, then press Submit.")
    if answer_type == "choice" and options:
        text = f"Choose one of: {', '.join(options)}; then press Submit."
    return text


def overview_pages(families: Iterable[str], answer_types: Iterable[str], practice: int, catch: int,
                   present_ms: int | None) -> list[str]:
    """The opening pages (HTML): what the study is, the tasks in it, how answering works, what comes first."""
    fams = sorted(set(families))
    tasks = "".join(f"<li>{html.escape(FAMILY_INTROS.get(f, 'answer a question about a picture'))}</li>" for f in fams)
    timing = (f"<p>Each picture is shown for only {present_ms / 1000:g} seconds, then hidden; answer from memory. "
              "Look at it as soon as it appears.</p>" if present_ms else
              "<p>The picture stays on the screen until you answer. There is no time limit, but please answer "
              "at a steady pace and do not leave the page.</p>")
    pages = [
        "<h2>Welcome</h2><p>In this study you will see computer-rendered pictures of simple 3D objects and answer "
        "one question about each picture. There are no trick questions: answer what you see as accurately as you "
        "can. Please do not use any tools (zoom, screenshots, rulers) and keep this window in front while you "
        "work.</p>",
        f"<h2>The tasks</h2><p>Depending on the picture, you will be asked to:</p><ul>{tasks}</ul>{timing}",
        "<h2>How to answer</h2><p>Under each picture you find the question and the controls to answer it. "
        "Every control can be used with the mouse or the keyboard (Tab moves between them). The Submit button "
        "becomes active once your answer is complete. The bar at the top shows how far you are.</p>",
    ]
    first = []
    if practice:
        first.append(f"<p>You start with {practice} practice question{'s' * (practice != 1)}; after each one we "
                     "show you the right answer.</p>")
    if catch:
        first.append("<p>A few very easy questions are mixed in to check that the study works well for you.</p>")
    first.append("<p>Your progress is saved after every answer.</p>")
    pages.append("<h2>Before you start</h2>" + "".join(first))
    return pages
