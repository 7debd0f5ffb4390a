"""The HTML gallery (stim3d/views/gallery.py), checked in a real browser.

A tiny batch (5 items, Cycles 64x48 at 4 samples) is rendered once; the gallery
built from it is opened in headless Chromium, driven over the DevTools protocol
on a pipe (`--remote-debugging-pipe`: no driver binary, no extra Python
package, no port). The page must load without console errors, show one card per
item, hide the right cards under a filter, and change the detail image where the
mask says when an overlay is switched on. The overlay layers themselves are
checked against mask.png and item.json pixel by pixel.
"""

from __future__ import annotations

import base64
import fcntl
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from stim3d.render.batch.config import parse_config
from stim3d.render.batch.driver import render_batch
from stim3d.render.batch.item_folder import load_item, load_mask
from stim3d.scenes.camera import geometry
from stim3d.views.gallery import GalleryError, build_gallery
from stim3d.views.overlays import boxes_layer, grid_layer, mask_layer, object_colour, overlay_scale

pytestmark = pytest.mark.bpy  # the batch is rendered with Cycles

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--mute-audio", "--remote-debugging-pipe",
]


# -- a minimal DevTools-protocol client over Chromium's pipe ------------------------------------------

class Chromium:
    """Headless Chromium driven over fds 3/4 (NUL-delimited JSON messages), one page attached."""

    def __init__(self, profile: Path, width: int = 1280, height: int = 800):
        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        if binary is None:
            pytest.fail("chromium is not installed: run `scripts/install.sh --test` (Debian package 'chromium')")
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # above 9 so the shell's 3<&N 4>&M redirections can never clobber one another
        child_in = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)
        command = f'exec "$0" "$@" 3<&{child_in} 4>&{child_out}'
        self.process = subprocess.Popen(
            ["bash", "-c", command, binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(child_in, child_out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(child_in)
        os.close(child_out)
        self.writer = os.fdopen(to_browser_w, "wb", buffering=0)
        self.reader = os.fdopen(from_browser_r, "rb", buffering=0)
        self.buffer = b""
        self.last_id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", page=True)
        self.call("Emulation.setDeviceMetricsOverride", page=True, width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _message(self) -> dict:
        while b"\0" not in self.buffer:
            chunk = self.reader.read(1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, page: bool = False, **params) -> dict:
        self.last_id += 1
        message = {"id": self.last_id, "method": method, "params": params}
        if page:
            message["sessionId"] = self.session
        self.writer.write(json.dumps(message).encode() + b"\0")
        while True:
            reply = self._message()
            if reply.get("id") == self.last_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def js(self, expression: str):
        result = self.call("Runtime.evaluate", page=True, expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.js(expression):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for: {expression}")
            time.sleep(0.05)

    def open(self, url: str) -> None:
        self.call("Page.navigate", page=True, url=url)
        self.wait_for("document.readyState === 'complete'")

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the element (fails if something covers it)."""
        x, y = self.js(f"(function(){{var r=document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                       "return [r.left + r.width / 2, r.top + r.height / 2];})()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", page=True, type=kind, x=x, y=y, button="left", clickCount=1)

    def screenshot(self, selector: str | None = None) -> np.ndarray:
        params: dict = {"format": "png"}
        if selector:
            x, y, w, h = self.js(f"(function(){{var r=document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                                 "return [r.left, r.top, r.width, r.height];})()")
            params["clip"] = {"x": x, "y": y, "width": w, "height": h, "scale": 1}
        data = base64.b64decode(self.call("Page.captureScreenshot", page=True, **params)["data"])
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(np.int16)

    def errors(self) -> list[str]:
        """Everything DevTools' console would show as an error: console.error, uncaught exceptions, failed loads."""
        found = []
        for event in self.events:
            params = event.get("params", {})
            if event.get("method") == "Runtime.exceptionThrown":
                found.append(json.dumps(params["exceptionDetails"])[:300])
            elif event.get("method") == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(json.dumps(params.get("args"))[:300])
            elif event.get("method") == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(f"{params['entry'].get('text')} {params['entry'].get('url', '')}")
        return found

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except RuntimeError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.writer.close()
        self.reader.close()

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- the batch -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gallery") / "batch"
    config = parse_config({
        "seed": 3,
        "render": {"engine": "cycles", "width": 64, "height": 48, "samples": 4, "denoise": False},
        "tasks": [
            {"family": "shape_count", "count": 3, "grid": {"min_visibility": [0.7, 0.9]}},
            {"family": "shape_color_count", "count": 2, "grid": {"min_visibility": [0.8]}},
        ],
    })
    report = render_batch(config, out)
    assert not report.failed, report.failed
    return out


def items_of(out: Path) -> dict:
    return {folder.name: load_item(folder) for folder in sorted((out / "items").iterdir()) if not folder.name.startswith(".")}


# -- overlays: drawn from mask.png and item.json ---------------------------------------------------------

def test_mask_overlay_colours_exactly_the_mask_pixels(batch):
    for folder in sorted((batch / "items").iterdir()):
        mask = load_mask(folder)
        layer = np.asarray(mask_layer(mask))
        assert layer.shape[:2] == mask.shape
        np.testing.assert_array_equal(layer[..., 3] > 0, mask > 0)
        for object_id in np.unique(mask[mask > 0]):
            assert (layer[mask == object_id][:, :3] == object_colour(int(object_id))).all()


def _outline_band(box, scale: int, width: int, size) -> np.ndarray:
    x0, y0, x1, y1 = (v * scale for v in box)
    band = np.zeros(size[::-1], dtype=bool)
    band[max(y0, 0):max(y1, 0), max(x0, 0):max(x1, 0)] = True
    band[max(y0 + width, 0):max(y1 - width, 0), max(x0 + width, 0):max(x1 - width, 0)] = False
    return band


@pytest.mark.parametrize("which, key", [("modal", "bbox_visible"), ("amodal", "bbox_amodal")])
def test_box_overlays_trace_the_recorded_boxes(batch, which, key):
    for item in items_of(batch).values():
        layer = boxes_layer(item, which)
        ink = np.asarray(layer)[..., 3] > 0
        scale = overlay_scale(item.scene.camera.width)
        assert layer.size == (item.scene.camera.width * scale, item.scene.camera.height * scale)
        allowed = np.zeros_like(ink)
        boxes = [(t.id, getattr(t, key)) for t in item.ground_truth.objects if getattr(t, key) is not None]
        assert boxes
        pixels = np.asarray(layer)[..., :3]
        for object_id, box in boxes:
            allowed |= _outline_band(box, scale, width=8, size=layer.size)
            # every box that lies in the frame shows up along its own outline (dashed: more than half), in its colour
            if box[0] >= 0 and box[1] >= 0 and box[2] <= item.scene.camera.width and box[3] <= item.scene.camera.height:
                ring = _outline_band(box, scale, width=1, size=layer.size)
                assert ink[ring].mean() > 0.5, (item.item_id, object_id, which)
                assert (pixels[ring & ink] == object_colour(object_id)).all(axis=1).mean() > 0.3, (item.item_id, object_id)
        assert not (ink & ~allowed).any(), f"{item.item_id}: {which} ink away from every recorded box"


def test_grid_overlay_follows_row_and_col_attributes(batch):
    item = next(iter(items_of(batch).values()))
    assert grid_layer(item) is None  # counting scenes have no grid: no layer, the page disables its toggle
    cam = item.scene.camera
    u, v, _ = geometry(cam).project(np.array([o.location for o in item.scene.objects]))
    order = np.argsort(v)  # rows from the top of the image, as grid families number them
    objects = [o.model_copy(update={"attributes": {"row": int(rank) // 3 + 1, "col": int(rank) % 3 + 1}})
               for rank, o in zip(np.argsort(order), item.scene.objects)]
    gridded = item.model_copy(update={"scene": item.scene.model_copy(update={"objects": objects})})
    layer = grid_layer(gridded)
    assert layer is not None
    ink = np.asarray(layer)[..., 3] > 0
    scale = overlay_scale(cam.width)
    for x, y in zip(u * scale, v * scale):  # a line or a tag at every object's projected centre
        x, y = int(round(x)), int(round(y))
        assert ink[max(y - 6, 0):y + 6, max(x - 6, 0):x + 6].any()
    assert ink.mean() < 0.5


# -- the page in a browser ----------------------------------------------------------------------------

def visible_card_ids(browser: Chromium) -> list[str]:
    return browser.js("Array.from(document.querySelectorAll('.card')).filter(c => !c.hidden && c.offsetParent !== null)"
                      ".map(c => c.querySelector('img').alt).sort()")


def choose(browser: Chromium, selector: str, value: str) -> None:
    browser.js(f"(function(){{var el=document.querySelector({json.dumps(selector)}); el.value={json.dumps(value)};"
               "el.dispatchEvent(new Event('change', {bubbles: true}));})()")


@pytest.mark.browser
def test_gallery_in_headless_chromium(batch, tmp_path):
    report = build_gallery(batch)
    items = items_of(batch)
    assert report.items == len(items) == 5
    with Chromium(tmp_path / "profile") as browser:
        browser.open((batch / "gallery" / "index.html").as_uri())
        # one card per item, every thumbnail (all in view here) loaded, all declared lazy
        assert browser.js("Array.from(document.querySelectorAll('.card img')).map(i => i.alt).sort()") == sorted(items)
        browser.wait_for("Array.from(document.querySelectorAll('.card img')).every(i => i.complete && i.naturalWidth > 0)")
        assert browser.js("Array.from(document.querySelectorAll('.card img')).every(i => i.loading === 'lazy')")

        # filters hide exactly the cards that do not match
        choose(browser, "#f-family", "shape_count")
        assert visible_card_ids(browser) == sorted(i for i, item in items.items() if item.family == "shape_count")
        choose(browser, "#f-family", "")
        axis = browser.js("Array.from(document.querySelectorAll('label.axis')).findIndex(l => l.textContent.startsWith('min_visibility '))")
        assert axis >= 0
        choose(browser, f'.f-axis[data-k="{axis}"]', "0.9")
        assert visible_card_ids(browser) == sorted(i for i, item in items.items() if item.difficulty["min_visibility"] == 0.9)
        assert browser.js("document.getElementById('count').textContent").startswith("showing 1 of 5")
        browser.click("#f-reset")
        assert visible_card_ids(browser) == sorted(items)

        # the detail view: switching the mask overlay on changes the image exactly where the mask has objects
        first = sorted(items)[0]
        browser.click(f'.card img[alt="{first}"]')
        browser.wait_for("document.getElementById('detail').open && document.getElementById('d-image').complete "
                         "&& document.getElementById('d-image').naturalWidth > 0")
        assert browser.js("document.getElementById('d-title').textContent").startswith(first)
        assert browser.js("document.getElementById('ov-grid').disabled")  # no grid in a counting scene
        before = browser.screenshot("#d-stage")
        browser.click("#ov-mask")
        browser.wait_for("(function(){var l=document.querySelector('#d-stage img.layer-mask');"
                         "return l && !l.hidden && l.complete && l.naturalWidth > 0;})()")
        after = browser.screenshot("#d-stage")
        changed = np.abs(after - before).max(axis=2) > 8
        mask = load_mask(batch / "items" / first)
        expected = np.asarray(Image.fromarray((mask > 0).astype(np.uint8) * 255).resize(changed.shape[::-1], Image.Resampling.NEAREST)) > 0
        overlap = (changed & expected).sum() / (changed | expected).sum()
        assert overlap > 0.9, f"changed pixels and mask disagree (IoU {overlap:.3f})"

        # modal boxes: the image changes, only around the recorded boxes
        browser.click("#ov-mask")
        browser.click("#ov-modal")
        browser.wait_for("(function(){var l=document.querySelector('#d-stage img.layer-modal');"
                         "return l && !l.hidden && l.complete && l.naturalWidth > 0;})()")
        boxed = browser.screenshot("#d-stage")
        changed = np.abs(boxed - before).max(axis=2) > 8
        assert changed.any()
        k = changed.shape[1] / items[first].scene.camera.width
        near_boxes = np.zeros_like(changed)
        for truth in items[first].ground_truth.objects:
            if truth.bbox_visible:
                x0, y0, x1, y1 = (round(c * k) for c in truth.bbox_visible)
                near_boxes[max(y0 - 3, 0):y1 + 3, max(x0 - 3, 0):x1 + 3] = True
        assert not (changed & ~near_boxes).any()

        # a link to a detail view with overlays opens it (how docs/gallery.png is made)
        browser.open("about:blank")
        browser.open((batch / "gallery" / "index.html").as_uri() + f"#item={first}&show=labels")
        browser.wait_for("document.getElementById('detail').open")
        assert browser.js("document.getElementById('ov-labels').checked && !document.getElementById('ov-mask').checked")

        page = browser.screenshot()
        assert page.std() > 10 and len(np.unique(page.reshape(-1, 3), axis=0)) > 200, "blank screenshot"
        assert browser.errors() == []

        # the error capture itself works: a page with a broken image and a thrown error is caught
        browser.open("data:text/html,<img src='file:///nonexistent.png'><script>throw new Error('boom')</script>")
        deadline = time.monotonic() + 10
        while not browser.errors() and time.monotonic() < deadline:  # the events arrive as the page runs
            browser.js("1")  # drain pending events
        assert len(browser.errors()) >= 1


def _copy_batch(source: Path, target: Path, copies: int) -> None:
    """A large batch made of copies of one item under new ids (the gallery reads only item folders)."""
    folder = sorted((source / "items").iterdir())[0]
    item = json.loads((folder / "item.json").read_text())
    for n in range(copies):
        item_id = f"copy-{n:05d}"
        dest = target / "items" / item_id
        dest.mkdir(parents=True)
        for name in ("image.png", "mask.png"):
            shutil.copyfile(folder / name, dest / name)
        (dest / "item.json").write_text(json.dumps({**item, "item_id": item_id}))


@pytest.mark.browser
def test_many_items_load_lazily_and_thumbnails_are_reused(batch, tmp_path):
    """200 items: enough for lazy loading to show. How long thousands take is measured in bench/gallery_scale.py."""
    big = tmp_path / "big"
    _copy_batch(batch, big, 200)
    first = build_gallery(big)
    assert (first.items, first.thumbs_made, first.overlays_made) == (200, 200, 200)
    thumb = big / "gallery" / "thumbs" / "copy-00007.jpg"
    made_at = thumb.stat().st_mtime_ns
    again = build_gallery(big)
    assert (again.thumbs_made, again.thumbs_reused, again.overlays_made) == (0, 200, 0)
    assert thumb.stat().st_mtime_ns == made_at
    image = big / "items" / "copy-00007" / "image.png"
    os.utime(image, ns=(made_at + 10**9, made_at + 10**9))  # a re-rendered item: only its files are remade
    assert build_gallery(big).thumbs_made == 1

    with Chromium(tmp_path / "profile") as browser:
        browser.open((big / "gallery" / "index.html").as_uri())
        loaded_js = "Array.from(document.querySelectorAll('.card img')).filter(i => i.complete && i.naturalWidth > 0).length"
        browser.wait_for(f"document.querySelectorAll('.card').length === 200 && {loaded_js} > 0", timeout=30)
        assert browser.js("document.querySelectorAll('.card').length") == 200
        loaded = browser.js(loaded_js)
        assert 0 < loaded < 100, f"{loaded} of 200 thumbnails loaded on open"
        assert browser.errors() == []


@pytest.mark.browser
def test_question_text_that_looks_like_markup_cannot_switch_the_page_off(batch, tmp_path):
    """`<!--<script>` in a question once put the HTML parser into its double-escaped state: the rest of the page,
    gallery.js included, became part of the JSON element (issue 25.7). The page must still work, and no text
    from an item may run as script."""
    hostile = tmp_path / "hostile"
    _copy_batch(batch, hostile, 2)
    item_json = hostile / "items" / "copy-00000" / "item.json"
    item = json.loads(item_json.read_text())
    text = "<!--<script>How many? </script><script>window.injected = 1</script> & more"
    item["questions"][0]["text"] = text
    item_json.write_text(json.dumps(item))
    build_gallery(hostile)
    with Chromium(tmp_path / "profile") as browser:
        browser.open((hostile / "gallery" / "index.html").as_uri())
        browser.wait_for("document.getElementById('count').textContent === 'showing 2 of 2'")  # gallery.js ran
        browser.click('.card img[alt="copy-00000"]')
        browser.wait_for("document.getElementById('detail').open")
        assert browser.js("document.getElementById('d-title').textContent").startswith("copy-00000")
        assert text in browser.js("document.getElementById('detail').textContent")  # the text, shown as text
        assert browser.js("window.injected === undefined")
        assert browser.errors() == []


def test_overlays_drawn_by_another_style_are_remade(batch):
    build_gallery(batch)
    assert build_gallery(batch).overlays_made == 0
    (batch / "gallery" / "overlays" / "STYLE").write_text("0\n")  # layers left by an older stim3d
    assert build_gallery(batch).overlays_made == len(items_of(batch))
    assert build_gallery(batch).overlays_made == 0


# -- the command ------------------------------------------------------------------------------------------

def stim3d(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stim3d", *args], cwd=ROOT, capture_output=True, text=True)


def test_cli_gallery_selects_items_and_rejects_bad_arguments(batch):
    result = stim3d("gallery", str(batch), "--family", "shape_count", "--filter", "min_visibility=0.7")
    assert result.returncode == 0, result.stderr
    page = (batch / "gallery" / "shape_count_min_visibility-0.7.html").read_text()  # a filtered page never replaces index.html
    expected = [i for i, item in items_of(batch).items() if item.family == "shape_count" and item.difficulty["min_visibility"] == 0.7]
    assert page.count('<article class="card"') == len(expected) >= 1
    assert all(f'alt="{item_id}"' in page for item_id in expected)
    for args, message in [(["--family", "hexagons"], "--family 'hexagons'"), (["--filter", "min_visibility"], "expected KEY=VALUE")]:
        result = stim3d("gallery", str(batch), *args)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr, result.stderr


@pytest.mark.parametrize("kwargs, message", [
    ({"filters": {"colour": "red"}}, "no item has a difficulty or parameter 'colour'"),
    ({"filters": {"min_visibility": "0.5"}}, "no items match `filters=min_visibility=0.5`"),
    ({"family": "shape_count", "filters": {"band_met": "maybe"}},
     "no items match `family=shape_count` `filters=band_met=maybe`"),
])
def test_selection_mistakes_are_named(batch, kwargs, message):
    with pytest.raises(GalleryError, match=message):
        build_gallery(batch, **kwargs)


def test_a_folder_without_items_is_named(tmp_path):
    with pytest.raises(GalleryError, match="no rendered items"):
        build_gallery(tmp_path)
