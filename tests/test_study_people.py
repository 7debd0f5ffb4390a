"""Three scripted participants take a real study of EVERY registered family in Chromium, then `stim3d study score`.

The batch is `every_family_batch` (tests/study_support.py: one Workbench item of each family at 64x48, the render
test_study_score_families.py shares), built as for real participants (no pilot, no describe question) and served by
`stim3d study serve`'s server on 127.0.0.1. Each participant works as people do:

- ann, on a laptop (1280x800), by keyboard: digits typed anywhere, y/n and option numbers, cells reached by their
  names and pressed with Space, Enter to submit; every answer the gold;
- ben, on a phone held upright (390x844, touch): taps on the keypad, the options, the picture's cells and Submit;
  counts one too many on main trials, right elsewhere;
- cat, on a smaller laptop window (1024x700), with the mouse: clicks, cells clicked on the picture, the box dragged
  on it; every answer the gold (a dragged box within a pixel of it).

On every trial the page must show the people's prompt of trials.json (never the model's protocol) above the picture
and Submit inside the window without scrolling; no page may log a console error or throw, and every participant
must reach "Your answers are saved" (no dead end). `stim3d study score` then includes all three and writes
people-vs-models.html. Playwright's clock jumps 2 s before each answer, so nobody is "too fast" and nothing sleeps.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from stim3d.cli import main
from stim3d.render.batch.reading import load_batch
from stim3d.scoring.answers import answer_text
from stim3d.scoring.records import Record
from stim3d.study.build import BuildOptions
from stim3d.study.contract import Trial, participant_plan
from stim3d.study.serve import make_server
from tests.study_support import build_real
from tests.study_widgets_support import CHROMIUM, chromium_browser, running

pytestmark = [pytest.mark.browser, pytest.mark.bpy]
STEP_MS = 20_000
THINK_MS = 2_000
SEED = 2
MODEL_WORDS = re.compile(r"You are (solving|given)|\\boxed|COUNT\(|CLICK\(|Output only|Answer with|Choose one")
SCREENS = {
    "ann": {"viewport": {"width": 1280, "height": 800}},
    "ben": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 3},
    "cat": {"viewport": {"width": 1024, "height": 700}},
}


@pytest.fixture(scope="module")
def chromium() -> Any:
    """Playwright's sync API (each participant's thread starts its own: one instance per thread)."""
    playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra)")
    if not Path(CHROMIUM).is_file():
        pytest.fail("chromium is not installed: run `scripts/install.sh --test` (Debian package 'chromium')")
    return playwright


# -- what each participant does on one trial (the answer given, not yet submitted; then `submit`) -----------------

def cell_point(page: Any, trial: Trial, row: int, col: int) -> tuple[float, float]:
    """The viewport point of a cell's centre on the displayed picture."""
    assert trial.grid is not None
    x0, y0, x1, y1 = next(c.box for c in trial.grid.cells if (c.row, c.col) == (row, col))
    stage = page.locator(".stim3d-stage").bounding_box()
    scale = stage["width"] / trial.width
    return stage["x"] + (x0 + x1) / 2 * scale, stage["y"] + (y0 + y1) / 2 * scale


def by_keyboard(page: Any, trial: Trial, record: Record, main_trial: bool) -> None:
    kind, gold = trial.answer_type, record.answer.gold
    if kind in ("integer", "strict_count", "letters", "number", "text"):
        if kind in ("letters", "number", "text"):  # the entry has the keyboard already (a laptop)
            assert page.evaluate("document.activeElement.tagName") == "INPUT", kind
        page.keyboard.type(str(gold) if kind != "number" else f"{float(gold):g}")
    elif kind == "yes_no":
        page.keyboard.press(str(gold)[0])
    elif kind == "choice":
        page.keyboard.press(str(trial.options.index(gold) + 1))
    elif kind in ("cell", "strict_cell_set", "strict_cell_set_count"):
        picks = [] if kind == "cell" and tuple(gold) == (0, 0) else [tuple(gold)] if kind == "cell" else gold
        if kind == "cell" and not picks:
            page.get_by_role("button", name="None of the cells").press("Space")
        for row, col in picks:
            page.get_by_role("button", name=f"Row {row}, Column {col}", exact=True).press("Space")
        if kind == "strict_cell_set_count":
            page.get_by_label("How many did you click?").fill(str(len(gold)))
        page.locator(".stim3d-submit").focus()
    elif kind == "box":
        labels = ("Left edge x0", "Top edge y0", "Right edge x1 (exclusive)", "Bottom edge y1 (exclusive)")
        for label, value in zip(labels, gold):
            page.get_by_label(label, exact=True).fill(str(int(value)))
    else:
        raise AssertionError(f"no keyboard script for {kind}")


def pointing(touch: bool) -> Callable[[Any, Trial, Record, bool], None]:
    """Taps (ben, on a phone: one too many on main trials' counts) or mouse clicks (cat: every answer the gold)."""
    def hit(locator: Any) -> None:
        locator.tap() if touch else locator.click()

    def at(page: Any, x: float, y: float) -> None:
        page.touchscreen.tap(x, y) if touch else page.mouse.click(x, y)

    def act(page: Any, trial: Trial, record: Record, main_trial: bool) -> None:
        kind, gold = trial.answer_type, record.answer.gold
        if kind in ("integer", "strict_count"):
            for digit in str(int(gold) + (1 if touch and main_trial else 0)):
                hit(page.get_by_role("button", name=f"Digit {digit}"))
        elif kind == "yes_no":
            hit(page.get_by_role("button", name="Yes" if gold == "yes" else "No", exact=True))
        elif kind == "choice":
            hit(page.get_by_role("group", name="Options").get_by_role("button", name=str(gold), exact=True))
        elif kind in ("letters", "number", "text"):
            entry = page.locator(".stim3d-widget input")
            hit(entry)
            entry.fill(str(gold) if kind != "number" else f"{float(gold):g}")
        elif kind in ("cell", "strict_cell_set", "strict_cell_set_count"):
            none = kind == "cell" and tuple(gold) == (0, 0)
            if none:
                hit(page.get_by_role("button", name="None of the cells"))
            for row, col in [] if none else [tuple(gold)] if kind == "cell" else gold:
                at(page, *cell_point(page, trial, row, col))
            if kind == "strict_cell_set_count":
                page.get_by_label("How many did you click?").fill(str(len(gold)))
        elif kind == "box" and not touch:  # dragged from corner to corner of the gold, in the picture's own pixels
            stage = page.locator(".stim3d-stage").bounding_box()
            scale = stage["width"] / trial.width
            x0, y0, x1, y1 = (float(v) for v in gold)
            page.mouse.move(stage["x"] + (x0 + 0.5) * scale, stage["y"] + (y0 + 0.5) * scale)
            page.mouse.down()
            page.mouse.move(stage["x"] + (x1 - 0.5) * scale, stage["y"] + (y1 - 0.5) * scale, steps=4)
            page.mouse.up()
        elif kind == "box":  # typed into the four fields on the phone
            labels = ("Left edge x0", "Top edge y0", "Right edge x1 (exclusive)", "Bottom edge y1 (exclusive)")
            for label, value in zip(labels, gold):
                page.get_by_label(label, exact=True).fill(str(int(value)))
        else:
            raise AssertionError(f"no script for {kind}")
    return act


ACTS: dict[str, Callable[[Any, Trial, Record, bool], None]] = {"ann": by_keyboard, "ben": pointing(touch=True),
                                                                "cat": pointing(touch=False)}


# -- one participant ---------------------------------------------------------------------------------------------

def take_part(base: str, name: str, plan: list[Trial], records: dict[str, Record], pages: int) -> None:
    """One participant in a browser of their own (one playwright per thread), start to "Your answers are saved"
    (the module docstring)."""
    with chromium_browser() as browser:
        answer_all(browser, base, name, plan, records, pages)


def answer_all(browser: Any, base: str, name: str, plan: list[Trial], records: dict[str, Record], pages: int) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(**SCREENS[name])
    page = context.new_page()
    page.set_default_timeout(STEP_MS)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"{m.text} ({(m.location or {}).get('url', '')})")
            if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.clock.install()
    page.goto(f"{base}/index.html?participant={name}")
    press = (lambda locator: locator.tap()) if name == "ben" else (lambda locator: locator.click())
    press(page.get_by_role("button", name="I agree"))
    press(page.get_by_role("button", name="Stay in this window"))
    for _ in range(pages):
        press(page.get_by_role("button", name="Next"))
    viewport = SCREENS[name]["viewport"]
    for index, trial in enumerate(plan):
        if trial.role != "practice" and index > 0 and plan[index - 1].role == "practice":
            press(page.get_by_role("button", name="Start"))
        current = page.locator(".stim3d-trial[data-ready]")
        current.wait_for()
        assert current.get_attribute("data-answer-type") == trial.answer_type
        prompt = page.locator("#stim3d-prompt")
        assert prompt.text_content() == trial.prompt and not MODEL_WORDS.search(trial.prompt), trial.prompt
        submit = page.locator(".stim3d-submit")
        box, top = submit.bounding_box(), page.locator(".stim3d-stage").bounding_box()["y"]
        assert prompt.bounding_box()["y"] < top, (name, trial.trial_id, "the question is above the picture")
        assert box["y"] + box["height"] <= viewport["height"] and box["x"] + box["width"] <= viewport["width"], (
            name, trial.trial_id, trial.answer_type, box)
        assert page.evaluate("window.scrollY") == 0, (name, trial.trial_id)
        handle = current.element_handle()
        page.clock.fast_forward(THINK_MS)
        with page.expect_response(lambda r: r.url.endswith("/api/session") and r.request.method == "PUT") as put:
            ACTS[name](page, trial, records[trial.trial_id], trial.role == "main")
            if name == "ann":
                page.keyboard.press("Enter")
            else:
                press(submit)
        assert put.value.ok, put.value.text()
        handle.wait_for_element_state("hidden")
        if trial.role == "practice":
            press(page.get_by_role("button", name="Continue"))
    expect(page.get_by_text("Your answers are saved.")).to_be_visible()
    context.close()
    assert not errors, (name, errors)


def test_three_people_complete_a_study_of_every_family_and_are_scored_beside_each_other(every_family_batch, chromium,
                                                                                          tmp_path, capsys):
    import stim3d

    batch, study = tmp_path / "batch", tmp_path / "study"
    shutil.copytree(every_family_batch, batch)
    report = build_real(batch, study, BuildOptions(practice=1, catch=1, seed=SEED))
    assert any(line.startswith("left out 1 describe question") for line in report.summary_lines())
    trials = [Trial.model_validate(t) for t in json.loads((study / "trials.json").read_text())["trials"]]
    assert {t.family for t in trials} == set(stim3d.families())
    assert not [t for t in trials if t.role != "practice" and (t.gold is not None or t.gold_text is not None)]
    records = {r.question_id: r for r in load_batch(batch).records}
    by_id = {t.trial_id: t for t in trials}
    pages = len(json.loads((study / "study.json").read_text())["instructions"])
    plans = {name: [by_id[t] for t in participant_plan(trials, SEED, name, None)] for name in SCREENS}
    assert {t.answer_type for t in trials} == {"integer", "yes_no", "letters", "cell", "strict_count",
                                               "strict_cell_set", "strict_cell_set_count", "box", "number",
                                               "choice", "text"}

    with running(make_server(study, "127.0.0.1", 0, log=lambda line: None)) as base, \
            ThreadPoolExecutor(len(plans)) as people:  # at the same time, as a study's participants are
        taking = [people.submit(take_part, base, name, plan, records, pages) for name, plan in plans.items()]
        for done in taking:
            done.result()

    assert main(["study", "score", str(study)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("3 participants: 3 included, 0 excluded; 0 session files skipped"), out
    versus = (batch / "eval" / "people-vs-models.html").read_text()
    assert "Agreement between participants" in versus
    scored = {name: json.loads((batch / "eval" / f"human-{name}" / "scores.json").read_text())["questions"]
              for name in SCREENS}
    mains = {t.trial_id for t in trials if t.role == "main"}
    for name in ("ann", "cat"):  # the gold, by keyboard and by mouse: every main question right
        assert {q["question_id"] for q in scored[name]} == mains
        assert [q["question_id"] for q in scored[name] if not q["correct"]] == [], name
    wrong = {q["question_id"] for q in scored["ben"] if not q["correct"]}
    counts = {t.trial_id for t in trials if t.role == "main" and t.answer_type in ("integer", "strict_count")}
    assert wrong == counts  # one too many on every count, right on everything else (tapped)
    responses = [json.loads(line) for line in (batch / "eval" / "human-ben" / "responses.jsonl").read_text().splitlines()]
    assert all(r["response"] != answer_text(records[r["question_id"]].answer.type, records[r["question_id"]].answer.gold)
               for r in responses if r["question_id"] in counts)
