"""Colour and finish golds against the rendered pixels, at the presets' render settings (issue 30.4).

Each family at its shipped preset's own render settings, read from the preset file
(scenes/presets/dysm3d.yaml for shape_color_count, rose3d.yaml, oddgrid3d.yaml and
ava3d.yaml, and rubrics3d.yaml for shape_color_count at its smaller size), so a change of a
preset's samples or denoiser, or of a task's own, is checked here. For
each object the visible pixels are those of its id in the object-index pass
(mask.png) in the unmarked image (image_raw.png where AVA drew its box markers);
their per-channel median sRGB is the colour a viewer sees.

- shape_color_count, ROSE colour exceptions and the AVA families that name a colour
  (ava_color's answer, ava_count's and ava_localize's target): every object's named
  colour is the palette colour nearest (CIEDE2000, scenes/colors.py) to its rendered
  pixels, and the colour the question names is one an object shows.
- OddGrid colour: the base colour named in the scene is the nearest palette colour of
  the majority's pixels, and the odd cell's rendered colour lies farther (CIEDE2000)
  from its neighbours' median than any neighbour does.
- ROSE finish exceptions: a glossy object shows a specular highlight a matte one
  does not. Highlights are small (a few pixels), so the measure is the peak
  contrast: an object's brightest pixel luminance (Rec. 709 weights on sRGB values)
  minus its median luminance. Objects in one row stand at one distance and see the
  lights alike, so every glossy exception's peak contrast must be at least
  GLOSS_MARGIN times the largest of the matte objects in its row (bench/rose_finish.py
  `highlight_ratios`; over 36 sphere and cone exceptions at rose3d's settings: 1.42x
  and more, median 2.7-3.0x; a glossy cube or cylinder measured about 1.0x, which is
  why finish scenes no longer use them).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from bench.rose_finish import MARGIN as GLOSS_MARGIN
from bench.rose_finish import highlight_ratios
from stim3d.cli import main
from stim3d.render.batch.config import load_config
from stim3d.render.batch.item_folder import load_item, load_mask
from stim3d.render.batch.plan import expand
from stim3d.render.markers import RAW_IMAGE
from stim3d.scenes.colors import delta_e_srgb, nearest_palette_color
from stim3d.scenes.presets import preset_path

pytestmark = pytest.mark.bpy

# A highlight covers a few pixels: at 200x150 denoising smooths a glossy torus's away (peak contrast 0.139
# against 0.146 for a matte neighbour), at the preset's own 640x480 it stands out of its row's matte peaks.
ROSE_TASKS = """\
  - {family: rose_grid, count: 1, params: {rows: 4, cols: 4, exception: color, min_exceptions: 2, cue: false}}
"""
FINISH_TASKS = """\
  - {family: rose_grid, count: 1, params: {rows: 4, cols: 4, exception: finish, min_exceptions: 2, cue: false}}
"""
ODD_TASKS = """\
  - {family: odd_grid, count: 1, params: {rows: 4, cols: 4, odd_types: color, p_none: 0.0, delta_e_range: [12, 20]}}
"""
AVA_TASKS = """\
  - {family: ava_color, count: 1}
  - {family: ava_count, count: 1, params: {answer: 4, max_distractors: 4}}
  - {family: ava_localize, count: 1}
"""
DYSM_TASKS = """\
  - {family: shape_color_count, count: 1}
"""
MIN_PIXELS = 12  # fewer visible pixels carry too little colour to judge


def at_preset_settings(preset: str, tasks: str, family: str) -> str:
    """A config of `tasks` rendered with the settings the shipped preset gives `family` (Cycles, size, samples,
    OIDN): its `render:`, with the family's task's own sampling over it (rubrics3d sets some per task)."""
    config = load_config(preset_path(preset))
    plan = next(plan for plan in expand(config) if plan.family.startswith(family))
    render = plan.settings(config.render).model_dump(mode="json", exclude_defaults=True)
    return f"seed: 30\nrender: {json.dumps(render)}\ntasks:\n{tasks}"


def render_items(folder: Path, config: str) -> Path:
    """Render `config` with `stim3d render` into `folder`; its items folder."""
    (folder / "config.yaml").write_text(config)
    assert main(["render", str(folder / "config.yaml"), "--out", str(folder / "out"), "--quiet"]) == 0
    return folder / "out" / "items"


@pytest.fixture(scope="module")
def batches(tmp_path_factory) -> dict[str, Path]:
    """Each family's items at its preset's settings: family-name prefix -> items folder."""
    rendered = {}
    for name, preset, tasks, family in (
            ("rose3d", "rose3d", ROSE_TASKS, "rose_grid"), ("finish", "rose3d", FINISH_TASKS, "rose_grid"),
            ("oddgrid3d", "oddgrid3d", ODD_TASKS, "odd_grid"), ("ava3d", "ava3d", AVA_TASKS, "ava"),
            ("dysm3d", "dysm3d", DYSM_TASKS, "shape_color_count"),
            # rubrics3d gives the other families their own presets' settings at their size; the DYSM ones
            # render at 640x480 there, smaller than dysm3d's 800x600
            ("rubrics3d", "rubrics3d", DYSM_TASKS, "shape_color_count")):
        rendered[name] = render_items(tmp_path_factory.mktemp(name), at_preset_settings(preset, tasks, family))
    return rendered


def pixels(folder: Path) -> dict[int, np.ndarray]:
    """Object id -> (n, 3) sRGB values in [0, 1] of its visible pixels (object-index pass)."""
    name = RAW_IMAGE if (folder / RAW_IMAGE).is_file() else "image.png"  # AVA's markers are drawn on image.png
    image = np.asarray(Image.open(folder / name).convert("RGB")).astype(float) / 255.0
    mask = load_mask(folder)
    return {int(i): image[mask == i] for i in np.unique(mask) if i and (mask == i).sum() >= MIN_PIXELS}


PRESET_OF = {"shape_color_count": "dysm3d", "rose_grid": "rose3d", "odd_grid": "oddgrid3d", "ava": "ava3d"}


def one(batches: dict[str, Path], prefix: str, batch: str | None = None) -> Path:
    """The item folder whose name starts with `prefix`, from `batch` (default: the batch of its family's preset)."""
    batch = batch or next(p for family, p in PRESET_OF.items() if prefix.startswith(family))
    return next(p for p in sorted(batches[batch].iterdir()) if p.name.startswith(prefix))


@pytest.mark.parametrize(("prefix", "batch"), [("shape_color_count-t0", None), ("shape_color_count-t0", "rubrics3d"),
                                               ("rose_grid-t0", None), ("ava_color", None), ("ava_count", None),
                                               ("ava_localize", None)])
def test_every_named_colour_is_the_nearest_palette_colour_of_its_pixels(batches, prefix, batch):
    folder = one(batches, prefix, batch)
    item, seen = load_item(folder), pixels(folder)
    judged = 0
    for obj in item.scene.objects:
        if not obj.countable or obj.id not in seen:
            continue
        judged += 1
        assert nearest_palette_color(np.median(seen[obj.id], axis=0)) == obj.color.name, (folder.name, obj.id)
    assert judged >= (1 if prefix.startswith("ava") else 4)  # AVA's colour and localise scenes may hold one object
    named = item.questions[0].subject.get("color")  # AVA: the colour the question names, shown at least once
    if prefix.startswith("ava"):
        assert named in {nearest_palette_color(np.median(seen[o.id], axis=0)) for o in item.scene.objects
                         if o.countable and o.id in seen}
    if prefix == "ava_color":  # the boxed object's own pixels read as the gold
        target = int(item.questions[0].subject["object_id"])
        assert nearest_palette_color(np.median(seen[target], axis=0)) == item.questions[0].gold
    if prefix.startswith("rose"):  # the exceptions are judged too, and differ from the majority
        names = {o.color.name for o in item.scene.objects if o.attributes.get("exception") and o.id in seen}
        majority = {o.color.name for o in item.scene.objects if o.attributes.get("exception") is False}
        assert names and len(majority) == 1 and not names & majority


def test_odd_grid_base_colour_and_odd_colour_under_the_renderer(batches):
    folder = one(batches, "odd_grid-t0")
    item, seen = load_item(folder), pixels(folder)
    odd = next(o for o in item.scene.objects if o.attributes.get("odd"))
    grid = [o for o in item.scene.objects if "row" in o.attributes and not o.attributes.get("odd") and o.id in seen]
    base = grid[0].color.name
    assert all(nearest_palette_color(np.median(seen[o.id], axis=0)) == base for o in grid)
    around = [o for o in grid if max(abs(o.attributes["row"] - odd.attributes["row"]),
                                     abs(o.attributes["col"] - odd.attributes["col"])) == 1]
    colours = np.array([np.median(seen[o.id], axis=0) for o in around])
    reference = np.median(colours, axis=0)
    odd_distance = float(delta_e_srgb(np.median(seen[odd.id], axis=0), reference))
    spread = float(delta_e_srgb(colours, reference[None, :]).max())
    assert odd_distance > spread, (odd_distance, spread)


def test_a_glossy_exception_shows_a_highlight_no_matte_object_in_its_row_shows(batches):
    folder = one(batches, "rose_grid-t0", "finish")
    item = load_item(folder)
    image = np.asarray(Image.open(folder / "image.png").convert("RGB"))
    glossy = [o for o in item.scene.objects if o.countable and o.finish == "glossy"]
    assert glossy and all(o.attributes["exception"] for o in glossy)
    ratios = highlight_ratios(item, image, load_mask(folder))  # each over the largest matte peak of its row
    assert len(ratios) == len(glossy), "a glossy exception without matte objects in its row to compare with"
    assert min(ratios) >= GLOSS_MARGIN, ratios
