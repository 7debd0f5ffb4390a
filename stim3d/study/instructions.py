"""What a naive participant reads besides the prompt: how to answer each type, and the study's opening pages.

The prompt above the picture is the people's prompt of prompts.py (one per family and
question type). Each trial carries beside it a short how-to for its answer type
(`ANSWER_INSTRUCTIONS`: what to do with the widget, js/answer_widgets.js), and a
describe trial the topics its description must mention. The study's opening pages
(`overview_pages`) say what the study is, the tasks in it (prompts.py `FAMILY_TASKS`),
where the question, the picture and the controls are, and what comes first.
docs/study.md quotes these texts' rules.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from stim3d.study.prompts import FAMILY_TASKS, GENERIC_TASK

# How to answer, per answer type of scoring/answers.py: what the widget asks of the participant.
ANSWER_INSTRUCTIONS: dict[str, str] = {
    "integer": "Type the number or use the keypad, then press Submit.",
    "strict_count": "Type the number or use the keypad, then press Submit.",
    "yes_no": "Choose Yes or No, then press Submit.",
    "letters": "Type what you read, left to right, then press Submit.",
    "cell": "Click or tap that object on the picture (or reach it with Tab and the arrow keys and press Space), then "
            "press Submit. If there is none, press None of the cells.",
    "cell_set": "Click or tap each such object on the picture (again to undo), then press Submit. If there is none, "
                "press None of the cells.",
    "strict_cell_set": "Click or tap each such object on the picture (again to undo), then press Done. If there is "
                       "none, press Done without clicking any.",
    "strict_cell_set_count": "Click or tap each such object on the picture (again to undo), type how many you "
                             "clicked, then press Submit.",
    "box": "Drag a rectangle on the picture that just encloses the object (drag again to redo), then press Submit.",
    "number": "Type your estimate in metres (for example 2.5), then press Submit.",
    "choice": "Choose one of the options, then press Submit.",
    "text": "Type the text exactly as it is written, then press Submit.",
    "rubric": "Describe the picture in a few plain sentences in the text box, then press Submit.",
}
# A choice asked openly (AVA object recognition's open question) is typed in the text box: it asks for a name.
OPEN_NAME_INSTRUCTIONS = "Type the name of the object in a word or two, then press Submit."


def answer_instructions(answer_type: str, mention: list[str] | None = None) -> str:
    """The how-to line of one trial (a choice's options are its buttons); a description's says what to mention."""
    text = ANSWER_INSTRUCTIONS.get(answer_type, "Give your answer, then press Submit.")
    if answer_type == "rubric" and mention:
        text = f"Describe the picture in a few plain sentences. Mention {'; '.join(mention)}. Then press Submit."
    return text


def overview_pages(families: Iterable[str], answer_types: Iterable[str], practice: int, catch: int,
                   present_ms: int | None) -> list[str]:
    """The opening pages (HTML): what the study is, the tasks in it, how answering works, what comes first."""
    fams = sorted(set(families))
    tasks = "".join(f"<li>{html.escape(FAMILY_TASKS.get(f, GENERIC_TASK))}</li>" for f in fams)
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
        "<h2>How to answer</h2><p>Each question is written above its picture; under the picture you find how to "
        "answer and the controls to do it. Every control can be used with the mouse, a finger or the keyboard (Tab "
        "moves between them). The Submit button becomes active once your answer is complete. The bar at the top "
        "shows how far you are.</p>",
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
