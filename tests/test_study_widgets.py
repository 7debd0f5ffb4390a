"""The response widgets (stim3d/study/assets/js/widgets.js and the files it uses) in headless Chromium: the text
they submit parses.

Each answer type is driven once from the keyboard (and by accessible names) and once with
the mouse, through tests/fixtures/study_widgets/harness.html; every response must parse with
`stim3d.scoring.answers.parse` to the answer the test meant to give, clicks and drags on a
scaled image must land in the image's own pixels, Submit must stay disabled until the answer
is complete, and the page must log no console error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, get_args

import pytest

from stim3d.scoring.answers import AnswerType, parse
from stim3d.scoring.parsers_actions import Submission
from tests.study_widgets_support import JSPSYCH, ROOT, chromium_browser, grid, grid_image, harness_url, serve, trial

pytestmark = pytest.mark.browser
pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra)")

W, H = 400, 300  # the test picture (shown at its size or larger)
BIG_W, BIG_H = 800, 600  # shown at about half its size in a 1000x500 window
DEADLINE_MS = 5000


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not JSPSYCH.is_file():
        pytest.fail("jsPsych is not vendored: run scripts/install.sh (npm pack jspsych@8.3.0 into "
                    "stim3d/study/vendor/jspsych/)")
    scratch = tmp_path_factory.mktemp("widgets")
    grid_image(scratch / "small.png", W, H, grid(3, 4, W, H))
    grid_image(scratch / "big.png", BIG_W, BIG_H, grid(3, 4, BIG_W, BIG_H))
    with serve(scratch) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium_browser() as chromium:
        yield chromium


class Harness:
    """One harness page running a list of trials; collects console errors and the finished data."""

    def __init__(self, browser: Any, site: str, entries: list[dict[str, Any]], viewport=(1000, 900),
                 page: Any = None) -> None:
        self.page = page or browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.set_default_timeout(DEADLINE_MS)
        self.page.goto(harness_url(site, entries))
        self.page.wait_for_selector(".stim3d-trial[data-ready]")  # the widget takes answers from now on
        self.expected = len(entries)

    def submit(self) -> Any:
        return self.page.get_by_role("button", name="Submit")

    def wait_trial(self, n: int) -> None:
        """Wait until `n` trials have finished (and the next one, if any, is on screen)."""
        self.page.wait_for_function(f"window.__results.length >= {n}", timeout=DEADLINE_MS)
        if n < self.expected:
            self.page.wait_for_selector(".stim3d-trial[data-ready]")

    def responses(self) -> list[str]:
        self.page.wait_for_function("window.__done === true", timeout=DEADLINE_MS)
        results = self.page.evaluate("window.__results")
        assert not self.errors, f"console errors: {self.errors}"
        self.page.close()
        return [r["response"] for r in results]

    def stage_box(self) -> dict[str, float]:
        return self.page.locator(".stim3d-stage").bounding_box()

    def click_image(self, x: float, y: float, width: int) -> None:
        """Click the image at its own pixel (x, y), whatever the display scale."""
        box = self.stage_box()
        scale = box["width"] / width
        self.page.mouse.click(box["x"] + x * scale, box["y"] + y * scale)


def tab_to(page: Any, name: str, limit: int = 30) -> None:
    """Press Tab until the control named `name` has the focus (a keyboard user's way there)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == name:
            return
    raise AssertionError(f"{name} is not reachable with Tab")


def centre(cells: dict[str, Any], row: int, col: int) -> tuple[float, float]:
    x0, y0, x1, y1 = next(c["box"] for c in cells["cells"] if (c["row"], c["col"]) == (row, col))
    return (x0 + x1) / 2, (y0 + y1) / 2


def small(answer_type: str, n: int = 0, **extra: Any) -> dict[str, Any]:
    return trial(answer_type, "/scratch/small.png", W, H, n=n, **extra)


def test_the_widgets_limits_are_the_contracts():
    """A response or time the server would refuse (contract.TrialResult) is never produced."""
    import re

    from stim3d.study.contract import MAX_RESPONSE_CHARS, MAX_RT_MS

    source = (ROOT / "stim3d" / "study" / "assets" / "js" / "responses.js").read_text()
    assert re.search(r"const MAX_TEXT = (\d+);", source)[1] == str(MAX_RESPONSE_CHARS)
    assert re.search(r"const MAX_RT_MS = (\d+);", source)[1] == str(MAX_RT_MS)


def test_every_answer_type_of_the_scoring_core_has_a_widget(browser, site):
    """Each type scoring/answers.py defines is shown with a widget, no error, Submit waiting for an answer.

    A new answer type fails here (the page throws 'unknown answer type') until js/widgets.js has its widget
    and contract.RESPONSE_FORMS the text it writes (the list `study build` checks items against).
    """
    from stim3d.study.contract import RESPONSE_FORMS

    types = sorted(get_args(AnswerType))
    assert sorted(RESPONSE_FORMS) == types
    needs: dict[str, dict[str, Any]] = {"choice": {"options": ["left", "right"]}}
    for kind in types:
        h = Harness(browser, site, [small(kind, grid=grid(3, 4, W, H)) if "cell" in kind else small(kind, **needs.get(
            kind, {}))])
        shown = h.page.locator(f".stim3d-trial[data-answer-type='{kind}'] .stim3d-widget")
        assert shown.locator("input, textarea, button").count() > 0, kind
        # Submit waits for an answer, except ROSE's "click every cell ..., then DONE": no click is an answer
        assert h.page.locator(".stim3d-submit").is_disabled() == (kind != "strict_cell_set"), kind
        assert not h.errors, (kind, h.errors)
        h.page.close()


def test_the_open_text_box_submits_what_the_scoring_core_reads(browser, site):
    """OCR's text and an object named in the open: typed, Enter submits, the text as parse_text reads it back."""
    typed = ["  open  now ", '"EXIT".', "Stop!", "*NO* _ENTRY_", "it\u2019s", "\u201cDOOR\u201d", "'PUSH'"]
    expected = ["open now", "EXIT", "Stop", "NO ENTRY", "it\u2019s", "DOOR", "PUSH"]
    h = Harness(browser, site, [small("text", n) for n in range(len(typed) + 1)])
    for n, text in enumerate(typed):
        box = h.page.get_by_label("Your answer", exact=True)
        box.press_sequentially(text)
        box.press("Enter")
        h.wait_trial(n + 1)
    box = h.page.get_by_label("Your answer", exact=True)
    box.press_sequentially(" ?. ")  # nothing but punctuation: no answer yet
    assert h.submit().is_disabled()
    box.fill("")
    box.press_sequentially("Sign")
    h.submit().click()
    responses = h.responses()
    assert responses == [*expected, "Sign"]
    assert [parse("text", r).value for r in responses] == responses  # read back exactly as submitted


def test_integer_and_count_from_the_keyboard_and_the_keypad(browser, site):
    h = Harness(browser, site, [small("integer", 0), small("integer", 1), small("strict_count", 2)])
    assert h.submit().is_disabled()
    h.page.keyboard.type("120")  # digits typed anywhere go into the entry
    h.page.keyboard.press("Backspace")
    h.page.keyboard.type("7")
    assert h.page.get_by_label("Your answer (a whole number)").input_value() == "127"
    h.page.keyboard.press("Enter")
    h.wait_trial(1)
    for name in ("Digit 4", "Digit 2", "One more", "One more", "One less"):
        h.page.get_by_role("button", name=name, exact=True).click()
    h.submit().click()
    h.wait_trial(2)
    h.page.get_by_role("button", name="Digit 5").click()
    h.page.keyboard.press("Enter")  # submits: the clicked digit did not keep the focus
    h.wait_trial(3)
    responses = h.responses()
    assert responses == ["127", "43", "COUNT(5)"]
    assert [parse(t, r).value for t, r in zip(("integer", "integer", "strict_count"), responses)] == [127, 43, 5]


def test_yes_no_and_choice_by_keys_and_buttons(browser, site):
    options = ["front", "front left", "behind"]
    h = Harness(browser, site, [small("yes_no", 0), small("yes_no", 1), small("choice", 2, options=options),
                                small("choice", 3, options=options)])
    assert h.submit().is_disabled()
    h.page.keyboard.press("n")
    assert h.page.get_by_role("button", name="No").get_attribute("aria-pressed") == "true"
    h.page.keyboard.press("Enter")
    h.wait_trial(1)
    h.page.get_by_role("button", name="Yes").click()
    h.submit().click()
    h.wait_trial(2)
    h.page.keyboard.press("2")
    h.page.keyboard.press("Enter")
    h.wait_trial(3)
    h.page.get_by_role("button", name="front", exact=True).click()
    h.submit().click()
    responses = h.responses()
    assert [parse("yes_no", r).value for r in responses[:2]] == ["no", "yes"]
    assert [parse("choice", r, options).value for r in responses[2:]] == ["front left", "front"]


def test_letters_number_and_rubric_text_entries(browser, site):
    h = Harness(browser, site, [small("letters", 0), small("number", 1), small("rubric", 2)])
    entry = h.page.get_by_label("The letters, in reading order")
    entry.press_sequentially("q p-1")
    assert entry.input_value() == "QP"
    entry.press("Enter")
    h.wait_trial(1)
    metres = h.page.get_by_label("Your answer in metres")
    metres.press_sequentially("2,35 m")
    metres.press("Enter")
    h.wait_trial(2)
    area = h.page.get_by_label("Your description")
    area.press_sequentially("Three green rings.")
    area.press("Enter")  # a new line, not a submission
    area.press_sequentially("One is red.")
    assert h.page.evaluate("window.__results.length") == 2
    area.press("Control+Enter")
    responses = h.responses()
    assert parse("letters", responses[0]).value == "QP"
    assert parse("number", responses[1]).value == pytest.approx(2.35)
    assert responses[2] == "Three green rings.\nOne is red."


def test_cell_and_cell_set_clicked_on_the_image_with_undo(browser, site):
    cells = grid(3, 4, W, H)
    h = Harness(browser, site, [small("cell", 0, grid=cells), small("cell_set", 1, grid=cells),
                                small("cell_set", 2, grid=cells)])
    assert h.submit().is_disabled()
    h.click_image(*centre(cells, 2, 3), W)
    h.click_image(*centre(cells, 1, 1), W)  # a cell answer holds one cell: this replaces (2, 3)
    h.page.get_by_role("button", name="Undo the last change").click()
    assert h.page.get_by_role("button", name="Row 2, Column 3").get_attribute("aria-pressed") == "true"
    h.submit().click()
    h.wait_trial(1)
    for rc in ((2, 3), (1, 1), (3, 4), (3, 2)):
        h.click_image(*centre(cells, *rc), W)
    h.click_image(*centre(cells, 3, 4), W)  # clicked again: deselected
    h.page.get_by_role("button", name="Undo the last change").click()  # takes (3, 4) back
    h.page.get_by_role("button", name="Undo the last change").click()  # and (3, 2) off
    h.submit().click()
    h.wait_trial(2)
    h.page.get_by_role("button", name="Row 1, Column 2").press("Space")
    h.page.get_by_role("button", name="None of the cells").click()
    h.submit().click()
    responses = h.responses()
    assert parse("cell", responses[0]).value == (2, 3)
    assert parse("cell_set", responses[1]).value == ((2, 3), (1, 1), (3, 4))
    assert responses[2] == "none" and parse("cell_set", responses[2]).value == ()


def test_cells_from_the_keyboard_on_an_image_shown_at_half_scale(browser, site):
    cells = grid(3, 4, BIG_W, BIG_H)
    big = trial("cell_set", "/scratch/big.png", BIG_W, BIG_H, grid=cells)
    h = Harness(browser, site, [big, {**big, "trial_id": "t-mouse"}], viewport=(1000, 500))
    scale = h.stage_box()["width"] / BIG_W
    assert 0.3 < scale < 0.6, f"the image is shown at {scale:.2f} of its size, not about half"
    first = h.page.get_by_role("button", name="Row 1, Column 1")
    first.focus()
    for key in ("ArrowDown", "ArrowRight", "ArrowRight", "Space", "ArrowUp", "Enter"):
        h.page.keyboard.press(key)  # Enter on a cell button presses it, like Space
    tab_to(h.page, "Submit")
    h.page.keyboard.press("Enter")
    h.wait_trial(1)
    h.click_image(*centre(cells, 3, 4), BIG_W)
    h.click_image(cells["cells"][0]["box"][0] + 2, cells["cells"][0]["box"][1] + 2, BIG_W)  # a corner of (1, 1)
    h.click_image(5, 5, BIG_W)  # the margin: no cell
    h.submit().click()
    responses = h.responses()
    assert parse("cell_set", responses[0]).value == ((2, 3), (1, 3))
    assert parse("cell_set", responses[1]).value == ((3, 4), (1, 1))


def test_strict_click_sequences_list_undo_and_finish(browser, site):
    cells = grid(3, 4, W, H)
    h = Harness(browser, site, [small("strict_cell_set", 0, grid=cells), small("strict_cell_set", 1, grid=cells),
                                small("strict_cell_set_count", 2, grid=cells)])
    done = h.page.get_by_role("button", name="Done")
    for rc in ((1, 2), (3, 4), (2, 2)):
        h.click_image(*centre(cells, *rc), W)
    h.page.get_by_role("button", name="Undo the last change").click()
    clicks = h.page.get_by_role("list", name="Your clicks, in order").get_by_role("listitem")
    assert clicks.all_inner_texts() == ["Row 1, Column 2", "Row 3, Column 4"]  # numbered 1, 2 by the style
    done.click()
    h.wait_trial(1)
    h.page.get_by_role("button", name="Done").click()  # no click at all is an answer: DONE
    h.wait_trial(2)
    h.page.get_by_role("button", name="Row 2, Column 1").press("Enter")
    h.page.get_by_role("button", name="Row 1, Column 4").press("Space")
    assert h.submit().is_disabled()  # the submitted count is still missing
    h.page.get_by_label("How many did you click?").fill("2")
    h.page.keyboard.press("Enter")
    responses = h.responses()
    assert responses[0] == "CLICK(R1,C2); CLICK(R3,C4); DONE"
    assert parse("strict_cell_set", responses[0]).value == ((1, 2), (3, 4))
    assert parse("strict_cell_set", responses[1]).value == ()
    assert parse("strict_cell_set_count", responses[2]).value == Submission(((2, 1), (1, 4)), 2)


def test_box_dragged_on_a_half_scale_image_is_in_image_pixels(browser, site):
    box = trial("box", "/scratch/big.png", BIG_W, BIG_H)
    h = Harness(browser, site, [box, {**box, "trial_id": "t-drag-out"}, {**box, "trial_id": "t-typed"}],
                viewport=(1000, 500))
    stage = h.stage_box()
    scale = stage["width"] / BIG_W
    assert 0.3 < scale < 0.6
    assert h.submit().is_disabled()
    at = lambda x, y: (stage["x"] + x * scale, stage["y"] + y * scale)  # noqa: E731
    h.page.mouse.move(*at(300, 420))
    h.page.mouse.down()
    h.page.mouse.move(*at(200, 300), steps=4)
    h.page.mouse.move(*at(101, 150), steps=4)  # dragged up and left: the corners are sorted
    h.page.mouse.up()
    h.submit().click()
    h.wait_trial(1)
    stage = h.stage_box()
    h.page.mouse.move(*at(700, 500))
    h.page.mouse.down()
    h.page.mouse.move(stage["x"] + stage["width"] + 40, stage["y"] + stage["height"] + 40, steps=4)  # off the image
    h.page.mouse.up()
    h.submit().click()
    h.wait_trial(2)
    labels = ["Left edge x0", "Top edge y0", "Right edge x1", "Bottom edge y1"]
    for label, value in zip(labels, ("10", "20", "5", "40")):
        h.page.get_by_label(label).fill(value)
    assert h.submit().is_disabled()  # x1 <= x0 is not a box
    h.page.get_by_label("Right edge x1").fill("30")
    h.page.get_by_label("Right edge x1").press("Enter")
    responses = h.responses()
    parsed = [parse("box", r).value for r in responses]
    assert all(abs(a - b) <= 1 for a, b in zip(parsed[0], (101, 150, 300, 420))), responses[0]
    assert responses[0] == "[" + ", ".join(str(int(v)) for v in parsed[0]) + "]"  # integers
    assert parsed[1][2:] == (BIG_W, BIG_H) and all(abs(a - b) <= 1 for a, b in zip(parsed[1][:2], (700, 500)))
    assert responses[2] == "[10, 20, 30, 40]"


MASK_SEEN = """
window.__masks = 0;
new MutationObserver((changes) => changes.forEach((c) => c.addedNodes.forEach((n) => {
  if (n.classList && n.classList.contains("stim3d-mask")) window.__masks += 1;
}))).observe(document, {childList: true, subtree: true});
"""


def test_timed_presentation_masks_then_answers_without_the_image(browser, site):
    cells = grid(3, 4, W, H)
    entries = [{"trial": small("integer", 0), "present_ms": 200, "mask_ms": 150},
               {"trial": small("cell", 1, grid=cells), "present_ms": 200, "mask_ms": 150}]
    page = browser.new_page()
    page.add_init_script(MASK_SEEN)  # counts masks however briefly they show, under any load
    h = Harness(browser, site, entries, page=page)
    entry = h.page.get_by_label("Your answer (a whole number)")
    entry.wait_for(state="visible")
    assert h.page.evaluate("window.__masks") == 1 and h.page.locator(".stim3d-mask").count() == 0
    assert not h.page.locator(".stim3d-stage").is_visible()  # a count is answered without the picture
    h.page.keyboard.type("4")
    h.page.keyboard.press("Enter")
    h.wait_trial(1)
    h.page.wait_for_selector(".stim3d-frame:not([hidden])")  # the grid's frame, no image
    assert h.page.evaluate("window.__masks") == 2
    assert not h.page.locator(".stim3d-image").is_visible()
    assert h.page.locator(".stim3d-outline").count() == len(cells["cells"])
    h.click_image(*centre(cells, 3, 1), W)
    h.submit().click()
    h.page.wait_for_function("window.__done === true")
    results = h.page.evaluate("window.__results")
    assert h.responses() == ["4", "Row 3, Column 1"]
    for r in results:  # on screen at least as long as asked (within half a frame); generous above, for loaded CI
        assert 190 <= r["presented_ms"] <= 2000 and r["rt_ms"] >= 0 and r["role"] == "main"
    assert [r["trial_id"] for r in results] == ["t-integer-0", "t-cell-1"]
