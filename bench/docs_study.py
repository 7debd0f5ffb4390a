"""Screenshots of the study's trials and response widgets: `python -m bench.docs --only study`.

Two screenshots of one whole trial as a participant sees it, the question above the picture and Submit
in the same screen (`trial_screenshots`): on a laptop (1280x800, docs/images/study_trial_desktop.png)
and on a phone held upright (390x844, touch, docs/images/study_trial_phone.png). The trial is ROSE's
exclusion task on docs/families/rose_grid.png, its prompt the people's prompt stim3d/study/prompts.py
writes from the family's own question, its instructions the page's; the answer is given (two cones
clicked, tapped on the phone, and their count typed) as a participant would before pressing Submit.

Then one PNG per answer type (`screenshots`):

Each widget is opened in tests/fixtures/study_widgets/harness.html (the vendored jsPsych and
stim3d/study/assets/js/widgets.js) in the Debian chromium through Playwright, answered the way
a participant would (clicks on the picture, keys, typing), photographed, then submitted; the
response text it really submitted goes into the table of docs/study_widgets.md (block
`study-widgets`), so the table cannot drift from the widgets. The pictures are the docs' own
renders (docs/families/); the cells of the ROSE grid are read off its picture (the objects'
extents, padded), as the study's build would take them from the item. Also run by
`python -m bench.docs --only study`.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from stim3d.study.instructions import answer_instructions
from stim3d.study.prompts import people_prompt
from tests.study_widgets_support import CHROMIUM, JSPSYCH, harness_url, serve, trial

from .docs_examples import ROOT

TARGET = ROOT / "docs" / "images" / "study"
TRIAL_SHOTS = {  # file name -> the browser's context: a laptop, and a phone held upright (CSS pixels, 1x PNGs)
    "study_trial_desktop.png": {"viewport": {"width": 1280, "height": 800}},
    "study_trial_phone.png": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}
PAGE = ROOT / "docs" / "study_widgets.md"
VIEWPORT = {"width": 800, "height": 600}
FAMILIES = ROOT / "docs" / "families"


def _runs(indices: np.ndarray, gap: int = 2) -> list[tuple[int, int]]:
    out, start, last = [], int(indices[0]), int(indices[0])
    for i in indices[1:]:
        if i > last + gap:
            out.append((start, last))
            start = int(i)
        last = int(i)
    return [*out, (start, last)]


def rose_grid(path: Path, pad: int = 6) -> dict[str, Any]:
    """The cells of docs/families/rose_grid.png: each object's extent (saturated or dark pixels), padded."""
    rgb = np.asarray(Image.open(path).convert("RGB")).astype(float) / 255
    high, low = rgb.max(axis=2), rgb.min(axis=2)
    mask = ((high - low) / np.maximum(high, 1e-6) > 0.35) | (high < 0.25)
    height, width = mask.shape
    cells = []
    for r, (y0, y1) in enumerate(_runs(np.flatnonzero(mask.any(axis=1))), start=1):
        for c, (x0, x1) in enumerate(_runs(np.flatnonzero(mask[y0:y1 + 1].any(axis=0))), start=1):
            cells.append({"row": r, "col": c, "box": [max(0, x0 - pad), max(0, y0 - pad), min(width, x1 + 1 + pad),
                                                      min(height, y1 + 1 + pad)]})
    return {"rows": max(c["row"] for c in cells), "cols": max(c["col"] for c in cells), "cells": cells}


def _centre(cells: dict[str, Any], row: int, col: int) -> tuple[float, float]:
    x0, y0, x1, y1 = next(c["box"] for c in cells["cells"] if (c["row"], c["col"]) == (row, col))
    return (x0 + x1) / 2, (y0 + y1) / 2


def _click(page: Any, width: int, x: float, y: float) -> None:
    box = page.locator(".stim3d-stage").bounding_box()
    scale = box["width"] / width
    page.mouse.click(box["x"] + x * scale, box["y"] + y * scale)


@dataclass(frozen=True)
class Shot:
    """One widget: the trial shown (its instructions the page's own), how it is answered, and its table row."""

    answer_type: str
    picture: str  # a file of docs/families/
    prompt: str
    widget: str
    keyboard: str
    answer: Callable[[Any, dict[str, Any]], None]  # (page, trial) -> the answer given, not submitted
    extra: dict[str, Any] = field(default_factory=dict)


def _cells_clicked(*cells: tuple[int, int]) -> Callable[[Any, dict[str, Any]], None]:
    return lambda page, t: [_click(page, t["width"], *_centre(t["grid"], r, c)) for r, c in cells]  # type: ignore


def _drag(page: Any, t: dict[str, Any]) -> None:
    box = page.locator(".stim3d-stage").bounding_box()
    scale = box["width"] / t["width"]
    page.mouse.move(box["x"] + 226 * scale, box["y"] + 120 * scale)
    page.mouse.down()
    page.mouse.move(box["x"] + 254 * scale, box["y"] + 151 * scale, steps=5)
    page.mouse.up()


def shots(grid: dict[str, Any]) -> list[Shot]:
    """The widgets in the order of the docs' table."""
    return [
        Shot("integer", "shape_count.png", "How many objects are in the picture?",
             "number entry with a keypad (0-9, one less, one more, delete)",
             "digits type anywhere; Backspace deletes; Enter submits",
             lambda p, t: p.keyboard.type("7")),
        Shot("yes_no", "form_constancy.png", "Do both groups show the same orientations?",
             "Yes and No buttons (the chosen one stays pressed)", "Y or N chooses; Enter submits",
             lambda p, t: p.keyboard.press("y")),
        Shot("letters", "letters.png", "Which letters do the objects spell?",
             "text entry, upper-cased, letters only",
             "type; Enter submits", lambda p, t: p.get_by_label("The letters, in reading order").press_sequentially("qp")),
        Shot("choice", "ava_spatial.png", "Where is the object in the red box relative to the one in the blue box?",
             "one button per option", "1..n chooses option n; Enter submits",
             lambda p, t: p.keyboard.press("1"), {"options": ["left", "right", "in front", "behind"]}),
        Shot("number", "ava_depth_absolute.png", "How far is the boxed object from the camera, in metres?",
             "decimal entry in metres",
             "type; Enter submits", lambda p, t: p.get_by_label("Your answer in metres").press_sequentially("4,5")),
        Shot("text", "ava_ocr.png", "What does the sign in the red box say?",
             "one-line text entry (at most 200 characters); white space "
             "collapsed, double quotes and end punctuation dropped, as the scoring core reads the text",
             "type; Enter submits", lambda p, t: p.get_by_label("Your answer", exact=True).press_sequentially(
                 ' "WJLGG7". ')),
        Shot("rubric", "shape_color_count.png", "Describe the picture.",
             "free-text area (at most 4000 characters)", "type; Enter starts a new line; Ctrl+Enter submits",
             lambda p, t: p.get_by_label("Your description").press_sequentially(
                 "Several shapes stand on a grey floor; two of them are red.")),
        Shot("cell", "rose_grid.png", "Which cone is green?",
             "click a cell on the picture; again to deselect; Undo", "Tab to the grid, arrows move, Space/Enter "
             "selects; Enter submits", _cells_clicked((2, 2)), {"grid": grid}),
        Shot("cell_set", "rose_grid.png", "Which cones are not red?",
             "click cells on the picture; again to deselect; Undo; None of the cells",
             "as cell; Enter submits", _cells_clicked((2, 2), (2, 3), (5, 4)), {"grid": grid}),
        Shot("strict_cell_set", "rose_grid.png", "Click every cone that is not red.",
             "clicks listed in order (numbered on the picture); Undo; Done", "as cell; Enter presses Done",
             _cells_clicked((2, 2), (2, 3), (5, 4)), {"grid": grid}),
        Shot("strict_cell_set_count", "rose_grid.png", "Click every cone that is not red, then give how many you clicked.",
             "as strict_cell_set, plus the count submitted",
             "as cell; Enter submits", lambda p, t: (_cells_clicked((2, 2), (2, 3), (5, 4))(p, t),
                                                     p.get_by_label("How many did you click?").fill("3")),
             {"grid": grid}),
        Shot("strict_count", "rose_grid.png", "How many cones are red?",
             "as integer", "as integer", lambda p, t: p.keyboard.type("22")),
        Shot("box", "ava_localize.png", "Where is the yellow cube? Draw a box around it.",
             "drag a rectangle on the picture; four edge fields; Clear box",
             "Tab through the four fields (x0, y0, x1, y1 in image pixels); Enter submits", _drag),
    ]


def _one(browser: Any, base: str, shot: Shot, n: int) -> tuple[bytes, str]:
    size = Image.open(FAMILIES / shot.picture).size
    t = trial(shot.answer_type, f"/scratch/{shot.picture}", *size, n=n, prompt=shot.prompt,
              instructions=answer_instructions(shot.answer_type), **shot.extra)
    page = browser.new_page(viewport=VIEWPORT)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_default_timeout(5000)
    try:
        page.goto(harness_url(base, [t]))
        page.wait_for_selector(".stim3d-trial[data-ready]")
        page.wait_for_function("document.querySelector('.stim3d-image').complete")
        shot.answer(page, t)
        page.mouse.move(0, 0)
        png = _small_png(page.screenshot(clip={"x": 0, "y": 0, **VIEWPORT}))
        page.locator(".stim3d-submit").click()
        page.wait_for_function("window.__done === true")
        response = page.evaluate("window.__results[0].response")
    finally:
        page.close()
    if errors:
        raise SystemExit(f"{shot.answer_type}: console errors: {errors}")
    return png, response


def _small_png(png: bytes) -> bytes:
    """A screenshot in 256 colours (a third of the size; the widgets are flat colours, the pictures small)."""
    out = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").quantize(256, dither=Image.Dither.NONE).save(out, "PNG", optimize=True)
    return out.getvalue()


def table(rows: list[tuple[Shot, str]]) -> str:
    def code(text: str) -> str:
        return "`" + text.replace("\n", " ").replace("|", "\\|") + "`"
    lines = ["| answer type | widget | response text submitted | keyboard |", "|---|---|---|---|"]
    lines += [f"| `{s.answer_type}` | {s.widget} ([picture](images/study/{s.answer_type}.png)) | {code(r)} "
              f"| {s.keyboard} |" for s, r in rows]
    return "\n".join(lines) + ("\n\n*Written by `python -m bench.docs --only study`: each widget answered as the picture "
                               "shows, then submitted; the third column is what it submitted.*")


def screenshots(target: Path = TARGET) -> tuple[str, list[str]]:
    """Photograph every widget into `target`; return (the table, the PNGs that changed)."""
    from playwright.sync_api import sync_playwright

    if not JSPSYCH.is_file():
        raise SystemExit("jsPsych is not vendored: run scripts/install.sh (npm pack jspsych@8.3.0)")
    grid = rose_grid(FAMILIES / "rose_grid.png")
    rows, changed = [], []
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch, serve(Path(scratch)) as base, sync_playwright() as p:
        for picture in {s.picture for s in shots(grid)}:
            (Path(scratch) / picture).write_bytes((FAMILIES / picture).read_bytes())
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for n, shot in enumerate(shots(grid)):
                png, response = _one(browser, base, shot, n)
                path = target / f"{shot.answer_type}.png"
                if not path.is_file() or path.read_bytes() != png:
                    path.write_bytes(png)
                    changed.append(f"images/study/{path.name}")
                rows.append((shot, response))
        finally:
            browser.close()
    return table(rows), changed


def rose_trial(grid: dict[str, Any]) -> dict[str, Any]:
    """ROSE's exclusion task (T5) on the docs' rose_grid picture, as `study build` writes its trial."""
    from stim3d.scenes.families.rose.rose_questions import PROTOCOL, TASKS
    from stim3d.scenes.families.rose.rose_regions import Region

    rows, cols = grid["rows"], grid["cols"]
    question = f"{PROTOCOL.format(rows=rows, cols=cols)} {TASKS['T5'].format(phrase=Region('row', rows, rows, 1, cols).phrase())}"
    prompt, written = people_prompt("rose_grid", "strict_cell_set_count", question)
    if not written:
        raise SystemExit("stim3d/study/prompts.py no longer reads ROSE's T5 question")
    size = Image.open(FAMILIES / "rose_grid.png").size
    return trial("strict_cell_set_count", "/scratch/rose_grid.png", *size, n=0, prompt=prompt,
                 instructions=answer_instructions("strict_cell_set_count"), grid=grid)


def _trial_shot(browser: Any, base: str, screen: dict[str, Any], grid: dict[str, Any]) -> bytes:
    """The ROSE trial answered (two cones clicked or tapped, their count typed) and photographed in one context."""
    context = browser.new_context(**screen)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_default_timeout(5000)
    try:
        t = rose_trial(grid)
        page.goto(harness_url(base, [t]))
        page.wait_for_selector(".stim3d-trial[data-ready]")
        for row, col in ((2, 2), (2, 3)):  # the green and the orange cone: the right answer
            box = page.locator(".stim3d-stage").bounding_box()
            scale = box["width"] / t["width"]
            x, y = _centre(t["grid"], row, col)
            point = (box["x"] + x * scale, box["y"] + y * scale)
            page.touchscreen.tap(*point) if screen.get("has_touch") else page.mouse.click(*point)
        page.get_by_label("How many did you click?").fill("2")
        page.mouse.move(0, 0)
        png = _small_png(page.screenshot())
    finally:
        context.close()
    if errors:
        raise SystemExit(f"console errors: {errors}")
    return png


def trial_screenshots(target: Path = ROOT / "docs" / "images") -> list[str]:
    """The whole trial on a laptop and on a phone (the module docstring) into `target`; the PNGs that changed."""
    from playwright.sync_api import sync_playwright

    if not JSPSYCH.is_file():
        raise SystemExit("jsPsych is not vendored: run scripts/install.sh (npm pack jspsych@8.3.0)")
    grid = rose_grid(FAMILIES / "rose_grid.png")
    changed = []
    with tempfile.TemporaryDirectory() as scratch, serve(Path(scratch)) as base, sync_playwright() as p:
        (Path(scratch) / "rose_grid.png").write_bytes((FAMILIES / "rose_grid.png").read_bytes())
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for name, screen in TRIAL_SHOTS.items():
                png = _trial_shot(browser, base, screen, grid)
                path = target / name
                if not path.is_file() or path.read_bytes() != png:
                    path.write_bytes(png)
                    changed.append(f"images/{name}")
        finally:
            browser.close()
    return changed
