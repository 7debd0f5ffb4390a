"""`stim3d sweep look` (docs/sweeps.md): one scene in every look, one item folder per look and a strip.

One shape_color_count item from a config at 64x48, Cycles at 4 samples, on every rung of the realism
ladder (clevr, studio, photoreal_raw, photoreal): a few seconds on 2 cores. The same output folder is then reused by a rerun (nothing renders again).
"""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest
from PIL import Image

from stim3d.cli import main

CONFIG = """\
seed: 11
render: {engine: cycles, width: 64, height: 48, samples: 4, denoise: false}
tasks:
  - family: shape_color_count
    count: 1
"""
LOOKS = ("clevr", "studio", "photoreal_raw", "photoreal")  # the default --looks: the ladder, in strip order


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    pytest.importorskip("bpy")
    base = tmp_path_factory.mktemp("sweep_look")
    (base / "c.yaml").write_text(CONFIG)
    code, printed, errors = _cli("sweep", "look", str(base / "c.yaml"), "--out", str(base / "out"), "--quiet")
    assert code == 0, errors
    return base, printed


@pytest.mark.bpy
def test_every_look_is_an_item_folder_with_the_same_mask_and_golds(swept):
    base, _ = swept
    items = base / "out" / "items"
    source = "shape_color_count-t0-00000"
    folders = {look: items / f"{source}-{look}" for look in LOOKS}
    recorded = {look: json.loads((folder / "item.json").read_text()) for look, folder in folders.items()}
    assert "look" not in recorded["studio"]["scene"]
    drawn = [look for look in LOOKS if look != "studio"]
    assert {look: recorded[look]["scene"]["look"]["name"] for look in drawn} == {look: look for look in drawn}
    assert "pipeline" in recorded["photoreal"]["scene"]["look"] and "pipeline" not in recorded["photoreal_raw"]["scene"]["look"]
    masks = {look: np.asarray(Image.open(folder / "mask.png")) for look, folder in folders.items()}
    assert all(np.array_equal(masks["studio"], masks[look]) for look in LOOKS)
    assert len({json.dumps([q["gold"] for q in item["questions"]]) for item in recorded.values()}) == 1
    records = [json.loads(line) for line in (base / "out" / "records.jsonl").read_text().splitlines()]
    assert {r["scene_id"] for r in records} == {source}  # paired in a score report
    assert sorted(r["difficulty"].get("look", "studio") for r in records) == sorted(LOOKS)


@pytest.mark.bpy
def test_the_strip_shows_each_look_left_to_right(swept):
    """The strip is the four 64x48 renders side by side under an 18-pixel label band, in --looks order."""
    base, printed = swept
    strip = np.asarray(Image.open(base / "out" / "strip-shape_color_count-t0-00000.png").convert("RGB"))
    assert strip.shape == (48 + 18, len(LOOKS) * 64, 3)
    for i, look in enumerate(LOOKS):
        image = np.asarray(Image.open(base / "out" / "items" / f"shape_color_count-t0-00000-{look}" / "image.png")
                           .convert("RGB"))
        assert np.array_equal(strip[18:, i * 64:(i + 1) * 64], image)
    summary = json.loads((base / "out" / "looks.json").read_text())
    assert [e["look"] for e in summary["sweeps"][0]["looks"]] == list(LOOKS)
    assert "look items rendered: 4  skipped (already done): 0  records: 4" in printed


@pytest.mark.bpy
def test_a_rerun_skips_every_look_already_rendered(swept):
    base, _ = swept
    code, printed, _ = _cli("sweep", "look", str(base / "c.yaml"), "--out", str(base / "out"), "--quiet")
    assert code == 0 and "look items rendered: 0  skipped (already done): 4  records: 4" in printed


@pytest.mark.parametrize("argv, message", [
    (["nowhere"], "nowhere: no such item folder or config file"),
    (["{config}", "--looks", "studio,shiny"], "--looks 'studio,shiny': 'shiny' is not a look; allowed: studio, clevr, "
                                               "photoreal"),
    (["{config}", "--looks", "clevr,clevr"], "--looks 'clevr,clevr': give each look once"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, argv, message):
    pytest.importorskip("bpy")
    (tmp_path / "c.yaml").write_text(CONFIG)
    argv = [a.replace("{config}", str(tmp_path / "c.yaml")) for a in argv]
    code, printed, errors = _cli("sweep", "look", *argv, "--out", str(tmp_path / "out"))
    assert code == 2 and printed == ""
    assert len(errors.splitlines()) == 1 and message in errors, errors
    assert not (tmp_path / "out" / "items").exists()
