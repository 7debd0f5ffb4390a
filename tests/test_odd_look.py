"""OddGrid's colour oddity under a look (docs/oddgrid.md): its measured dE is recorded in item.json after the
render, and an odd colour that no longer stands out is redrawn, then flagged, like any colour failure."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from stim3d.render.backends.output import RenderOutput
from stim3d.render.batch import produce
from stim3d.render.settings import RenderSettings
from stim3d.scenes.colors import delta_e_srgb
from stim3d.scenes.families.base import Frame
from stim3d.scenes.families.oddgrid.odd_measure import MIN_MEASURED_DE
from stim3d.scenes.items import make_item
from stim3d.scenes.visibility import measure

PARAMS = {"rows": 5, "cols": 5, "odd_types": "color", "p_none": 0.0, "min_object_px": 4, "delta_e_range": [12.0, 12.01]}


def _odd_item(look: str, size=(96, 72)):
    return make_item("odd_grid", PARAMS, [9, 0, 1], "odd", Frame(*size), look=look)


@pytest.mark.bpy
def test_measured_delta_e_under_photoreal_is_read_back_from_the_image(tmp_path):
    """A 96x72 Cycles render at 4 samples: look.measured's dE equals CIEDE2000 between the median of the odd
    cell's pixels in image.png (where mask.png has its id) and the per-channel median of its 8 neighbours'
    pixel medians, and the margin is max(2, 2 x the neighbours' own spread)."""
    pytest.importorskip("bpy")
    item = _odd_item("photoreal")
    settings = RenderSettings(width=96, height=72, samples=4, denoise=False, look="photoreal")
    folder = produce.render_item(item, settings, tmp_path / "out", tmp_path / "work", key=None)
    recorded = json.loads((folder / "item.json").read_text())
    measured = recorded["scene"]["look"]["measured"]
    image = np.asarray(Image.open(folder / "image.png").convert("RGB"), dtype=float) / 255.0
    mask = np.asarray(Image.open(folder / "mask.png"))
    objects = recorded["scene"]["objects"]
    odd = next(o for o in objects if o["attributes"].get("odd"))
    row, col = odd["attributes"]["row"], odd["attributes"]["col"]
    around = [o["id"] for o in objects if "row" in o["attributes"]
              and max(abs(o["attributes"]["row"] - row), abs(o["attributes"]["col"] - col)) == 1]
    medians = {i: np.median(image[mask == i], axis=0) for i in [odd["id"], *around] if (mask == i).any()}
    reference = np.median(np.array([medians[i] for i in around if i in medians]), axis=0)
    by_hand = float(delta_e_srgb(medians[odd["id"]], reference))
    assert measured["measured_delta_e"] == pytest.approx(by_hand, abs=0.05)
    spread = float(np.median(delta_e_srgb(np.array([medians[i] for i in around if i in medians]), reference[None, :])))
    assert measured["delta_e_margin"] == pytest.approx(max(2.0, 2.0 * spread), abs=0.05)
    failing = odd["id"] in recorded["scene"]["look"]["colour_failures"]
    assert failing == (measured["measured_delta_e"] < measured["delta_e_margin"])


def test_studio_items_record_no_look_measures(tmp_path, monkeypatch):
    """Studio draws no look, so the family's measures are not recorded: a board whose colours hold keeps item.json's
    bytes (no look key), and a board rendered all black records its redraws and failures, never `measured`."""
    item = _odd_item("studio")
    instance_map = measure(item.scene, 1).instance_map

    def painted(black: bool):
        def render(settings, rendered, workdir):
            image = np.full((*instance_map.shape, 3), 0 if black else 255, np.uint8)
            if not black:
                for obj in rendered.scene.objects:
                    image[instance_map == obj.id] = np.round(np.asarray(obj.color.srgb) * 255)
            return RenderOutput(image=image, instance_map=instance_map, depth=None, blender_version="stand-in",
                                render_seconds=0.0)
        return render

    for black in (False, True):
        monkeypatch.setattr(produce, "render_with", painted(black))
        folder = produce.render_item(item, RenderSettings(width=96, height=72, samples=1), tmp_path / f"o{black}",
                                     tmp_path / "w", key="k")
        scene = json.loads((folder / "item.json").read_text())["scene"]
        if black:
            assert scene["look"]["name"] == "studio" and scene["look"]["redraws"] >= 1 and "measured" not in scene["look"]
        else:
            assert "look" not in scene


@pytest.mark.parametrize("flat_renders, redraws, still_failing", [(1, 1, False), (9, 3, True)])
def test_an_odd_colour_that_renders_like_its_neighbours_is_redrawn_then_flagged(tmp_path, monkeypatch, flat_renders,
                                                                                 redraws, still_failing):
    """A stand-in renderer paints every object its own colour, except that in the first `flat_renders` renders
    the odd cell gets its neighbours' colour (measured dE 0, below the 2.0 floor): the look is redrawn until
    the odd cell stands out, at most 3 times, and an odd cell still flat after that is in colour_failures."""
    item = _odd_item("photoreal")
    instance_map = measure(item.scene, 1).instance_map
    odd = next(o for o in item.scene.objects if o.attributes.get("odd"))
    majority = next(o for o in item.scene.objects if "row" in o.attributes and not o.attributes.get("odd"))
    calls = []

    def fake_render(settings, rendered, workdir):
        calls.append(rendered.scene.look.name)
        image = np.full((*instance_map.shape, 3), 255, np.uint8)  # white: no object under the contrast floor
        for obj in rendered.scene.objects:
            flat = obj.id == odd.id and len(calls) <= flat_renders
            image[instance_map == obj.id] = np.round(np.asarray(majority.color.srgb if flat else obj.color.srgb) * 255)
        return RenderOutput(image=image, instance_map=instance_map, depth=None, blender_version="stand-in",
                            render_seconds=0.0)

    monkeypatch.setattr(produce, "render_with", fake_render)
    settings = RenderSettings(width=96, height=72, samples=1, look="photoreal")
    folder = produce.render_item(item, settings, tmp_path / "out", tmp_path / "work", key="k")
    look = json.loads((folder / "item.json").read_text())["scene"]["look"]
    assert len(calls) == redraws + 1 and look["redraws"] == redraws
    assert look["colour_failures"] == ([odd.id] if still_failing else [])
    nominal = float(delta_e_srgb(np.round(np.asarray(odd.color.srgb) * 255) / 255,
                                 np.round(np.asarray(majority.color.srgb) * 255) / 255))
    expected = 0.0 if still_failing else nominal  # uniform cells: the neighbours' spread is 0, the margin the floor
    assert look["measured"]["measured_delta_e"] == pytest.approx(expected, abs=0.01)
    assert look["measured"]["delta_e_margin"] == MIN_MEASURED_DE
