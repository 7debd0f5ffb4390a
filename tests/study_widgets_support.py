"""What the widget tests and the widget screenshots share: the harness served over http, trials, images.

The harness (tests/fixtures/study_widgets/harness.html) loads the vendored jsPsych and
stim3d/study/assets/js/widgets.js (with the files it uses) by paths relative to the repository root, so the server
serves the checkout; test images live in a scratch folder served under `/scratch/`. The
server binds 127.0.0.1 on a free port and runs in a thread until the `with` block ends.
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[1]
HARNESS = "/tests/fixtures/study_widgets/harness.html"
JSPSYCH = ROOT.joinpath("stim3d", "study", "vendor", "jspsych", "jspsych.js")  # fetched, never committed
CHROMIUM = "/usr/bin/chromium"


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Files of the checkout, and of the scratch folder under /scratch/; no logging to stderr."""

    scratch: Path = ROOT

    def translate_path(self, path: str) -> str:
        clean = urllib.parse.urlsplit(path).path
        if clean.startswith("/scratch/"):
            return str(self.scratch / Path(urllib.parse.unquote(clean[len("/scratch/"):])).name)
        return super().translate_path(path)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


@contextmanager
def serve(scratch: Path) -> Iterator[str]:
    """Serve the checkout (and `scratch` under /scratch/) on 127.0.0.1; yield the base URL."""
    handler = type("Handler", (_Handler,), {"scratch": scratch})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(ROOT)))
    with running(server) as base:
        yield base


@contextmanager
def running(server: http.server.ThreadingHTTPServer) -> Iterator[str]:
    """Serve in a thread until the block ends; yields the base URL (127.0.0.1 only)."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextmanager
def chromium_browser() -> Iterator[Any]:
    """Debian's Chromium driven by playwright (the test extra), closed afterwards; a test fails, never skips, when
    it is not installed (CI must not pass a browser test by skipping it)."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).is_file():
        pytest.fail("chromium is not installed: run `scripts/install.sh --test` (Debian package 'chromium')")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def harness_url(base: str, entries: list[dict[str, Any]]) -> str:
    """The harness running `entries` (Trials, or {"trial": Trial, "present_ms": ..., "mask_ms": ...})."""
    return f"{base}{HARNESS}#" + urllib.parse.quote(json.dumps(entries))


def grid(rows: int, cols: int, width: int, height: int, margin: int = 20) -> dict[str, Any]:
    """A contract Grid of equal cells filling the image but for a margin, boxes in image pixels."""
    cw, ch = (width - 2 * margin) / cols, (height - 2 * margin) / rows
    cells = [{"row": r, "col": c, "box": [margin + (c - 1) * cw, margin + (r - 1) * ch, margin + c * cw,
                                          margin + r * ch]}
             for r in range(1, rows + 1) for c in range(1, cols + 1)]
    return {"rows": rows, "cols": cols, "cells": cells}


def grid_image(path: Path, width: int, height: int, cells: dict[str, Any] | None = None) -> Path:
    """A test picture: a light background, the grid's cells drawn (when given) with a dot in each."""
    image = Image.new("RGB", (width, height), (225, 228, 232))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, width - 1, height - 1], outline=(60, 60, 60))
    for cell in (cells or {}).get("cells", []):
        x0, y0, x1, y1 = cell["box"]
        draw.rectangle([x0, y0, x1 - 1, y1 - 1], outline=(120, 120, 120))
        r = min(x1 - x0, y1 - y0) / 4
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(40, 150, 60))
    image.save(path)
    return path


def trial(answer_type: str, image: str, width: int, height: int, **extra: Any) -> dict[str, Any]:
    """A contract Trial (validated by stim3d.study.contract.Trial) for the harness."""
    from stim3d.study.contract import Trial

    fields = {"trial_id": f"t-{answer_type}-{extra.pop('n', 0)}", "item_id": "item-00000", "question_id": "q0",
              "family": "test", "role": "main", "answer_type": answer_type,
              "prompt": extra.pop("prompt", f"A {answer_type} question?"),
              "instructions": extra.pop("instructions", f"Answer the {answer_type} question."),
              "image": image, "width": width, "height": height, **extra}
    return Trial.model_validate(fields).model_dump(exclude_none=True)
