"""The trial's layout in headless Chromium: the question above the picture, and the question, the picture and Submit
in one screen without scrolling, for every answer type, on a laptop (1280x800) and on a phone held upright (390x844,
touch). The picture is a 640x480 render-sized image and the prompt the longest a family writes (ROSE's exclusion task),
with each type's real instructions; the stage (js/stage.js) must give the picture the room the rest leaves."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, get_args

import pytest

from stim3d.scoring.answers import AnswerType
from stim3d.study.instructions import answer_instructions
from stim3d.study.prompts import people_prompt
from tests.study_widgets_support import JSPSYCH, chromium_browser, grid, grid_image, harness_url, serve, trial

pytestmark = pytest.mark.browser
pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra)")

W, H = 640, 480
SCREENS = {"laptop": {"viewport": {"width": 1280, "height": 800}},
           "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
                     "device_scale_factor": 3}}
ROSE_T5 = ("You are given a grid image: 5 rows and 5 columns of 3D objects standing on the ground. Rows are counted from "
           "top to bottom, and columns from left to right, both starting from 1. Output only the formal answer in the "
           "required format. Do not output any explanation. Allowed answer formats: 1) COUNT(n) 2) CLICK(Rr,Cc); "
           "CLICK(Rr,Cc); ...; DONE 3) CLICK(Rr,Cc); CLICK(Rr,Cc); ...; SUBMIT(n). Examples: COUNT(3) | CLICK(R2,C5); "
           "CLICK(R4,C7); DONE | CLICK(R2,C5); CLICK(R4,C7); SUBMIT(2). Click all cells that are different from the "
           "majority in all cells except the rectangle from row 2 column 1 to row 4 column 3, then submit the total "
           "number of clicked cells.")
AVA_OBJECTS = ["car", "chair", "dumbbell", "house", "lamp", "mug", "mushroom", "rocket", "snowman", "table",
               "traffic cone", "tree"]  # the longest option list a family asks (ava_object)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not JSPSYCH.is_file():
        pytest.fail("jsPsych is not vendored: run scripts/install.sh")
    scratch = tmp_path_factory.mktemp("layout")
    grid_image(scratch / "render.png", W, H, grid(5, 5, W, H))
    with serve(scratch) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium_browser() as chromium:
        yield chromium


def longest_trial(answer_type: str, n: int) -> dict[str, Any]:
    prompt, written = people_prompt("rose_grid", "strict_cell_set_count", ROSE_T5)
    assert written
    extra: dict[str, Any] = {"grid": grid(5, 5, W, H)} if "cell" in answer_type else {}
    if answer_type == "choice":
        extra["options"] = AVA_OBJECTS
    mention = ["how many objects there are of each shape (and colour)", "the colours you see",
               "where the objects are relative to each other"]
    return trial(answer_type, "/scratch/render.png", W, H, n=n, prompt=prompt,
                 instructions=answer_instructions(answer_type, mention), **extra)


@pytest.mark.parametrize("screen", sorted(SCREENS))
def test_question_picture_and_submit_fit_one_screen_for_every_answer_type(browser, site, screen):
    context = browser.new_context(**SCREENS[screen])
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    viewport = SCREENS[screen]["viewport"]
    misfits = []
    for n, kind in enumerate(sorted(get_args(AnswerType))):
        page.goto(harness_url(site, [longest_trial(kind, n)]).replace("#", f"?type={kind}#", 1))
        page.wait_for_selector(".stim3d-trial[data-ready]")
        page.wait_for_function("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        prompt = page.locator(".stim3d-prompt").bounding_box()
        stage = page.locator(".stim3d-stage").bounding_box()
        submit = page.locator(".stim3d-submit").bounding_box()
        scrolled = page.evaluate("[window.scrollX, window.scrollY, document.documentElement.scrollHeight]")
        assert prompt["y"] + prompt["height"] <= stage["y"], (screen, kind, "the question is above the picture")
        inside = (submit["x"] >= 0 and submit["y"] >= 0 and submit["x"] + submit["width"] <= viewport["width"]
                  and submit["y"] + submit["height"] <= viewport["height"])
        if not inside or scrolled[:2] != [0, 0] or scrolled[2] > viewport["height"]:
            misfits.append((kind, submit, scrolled))
        # the picture gets the room: at least a quarter of the window's height, and the trial's width or its share
        assert stage["height"] >= viewport["height"] * 0.25 - 1, (screen, kind, stage)
        assert stage["width"] / stage["height"] == pytest.approx(W / H, rel=0.01)
    context.close()
    assert not misfits, f"{screen}: Submit is not in the first screen for {misfits}"
    assert not errors, errors
