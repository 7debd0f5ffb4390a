"""AVA-3D through the renderer: one tiny Cycles batch with the depth pass, checked against the ray cast.

- Blender's depth pass agrees with the ray-cast depth to 1 mm at every object's centre pixel,
  and the absolute-depth gold is the nearest depth the renderer sees on the object;
- the renderer's own object-index mask gives the localisation gold box;
- marked items keep the unmarked render as image_raw.png, and image.png is exactly it with
  the markers the ground truth describes drawn on;
- colour items record the measured colour's CIEDE2000 distances after rendering;
- the records carry what scoring needs (options, image size), and gold answers score 1.0
  under `stim3d score --by ability`.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from PIL import Image

from stim3d.cli import main
from stim3d.render.batch.item_folder import load_item, load_mask
from stim3d.render.markers import RAW_IMAGE, draw_markers, markers_of
from stim3d.scenes.visibility import measure
from stim3d.scoring.records import SCHEMA_PATH, answer_text, read_records

pytestmark = pytest.mark.bpy

CONFIG = """\
seed: 21
render: {engine: cycles, width: 96, height: 72, samples: 4, denoise: false, depth: true}
tasks:
  - {family: ava_count, count: 1, params: {max_count: 6, max_distractors: 2}}
  - {family: ava_localize, count: 2}
  - {family: ava_depth_absolute, count: 2}
  - {family: ava_depth_relative, count: 2}
  - {family: ava_color, count: 2}
  - {family: ava_spatial, count: 3, grid: {answer: [left, below, behind]}}
  - {family: ava_orientation, count: 1}
"""


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ava")
    (folder / "ava.yaml").write_text(CONFIG)
    assert main(["render", str(folder / "ava.yaml"), "--out", str(folder / "out"), "--quiet"]) == 0
    return folder / "out"


def folders(batch: Path) -> list[Path]:
    return sorted(p for p in (batch / "items").iterdir() if p.is_dir())


def test_depth_pass_agrees_with_the_ray_cast_at_object_centres(batch):
    checked = 0
    for folder in folders(batch):
        item, mask = load_item(folder), load_mask(folder)
        rendered = np.load(folder / "depth.npy")
        cast = measure(item.scene)
        for truth in item.ground_truth.objects:
            if truth.centroid_px is None:
                continue
            ys, xs = np.nonzero((mask == truth.id) & (cast.instance_map == truth.id))
            nearest = int(np.argmin((xs + 0.5 - truth.centroid_px[0]) ** 2 + (ys + 0.5 - truth.centroid_px[1]) ** 2))
            y, x = ys[nearest], xs[nearest]
            assert abs(float(rendered[y, x]) - float(cast.depth[y, x])) < 1e-3, (folder.name, truth.id)
            checked += 1
    assert checked >= 20


def test_absolute_depth_gold_is_the_nearest_rendered_depth_on_the_object(batch):
    for folder in (f for f in folders(batch) if f.name.startswith("ava_depth_absolute")):
        item, mask = load_item(folder), load_mask(folder)
        target = item.questions[0].subject["object_id"]
        nearest = float(np.load(folder / "depth.npy")[mask == target].min())
        assert item.questions[0].gold == pytest.approx(nearest, abs=2e-3)


def test_localize_gold_box_matches_the_renderers_mask(batch):
    for folder in (f for f in folders(batch) if f.name.startswith("ava_localize")):
        item, mask = load_item(folder), load_mask(folder)
        ys, xs = np.nonzero(mask == item.questions[0].subject["object_id"])
        rendered = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
        assert np.abs(np.subtract(rendered, item.questions[0].gold)).max() <= 1, folder.name


def test_marked_image_is_the_raw_render_with_the_recorded_markers(batch):
    marked_items = 0
    for folder in folders(batch):
        item = load_item(folder)
        markers = markers_of(item)
        image = np.asarray(Image.open(folder / "image.png").convert("RGB"))
        if not markers:
            assert not (folder / RAW_IMAGE).exists()
            continue
        raw = np.asarray(Image.open(folder / RAW_IMAGE).convert("RGB"))
        assert np.array_equal(draw_markers(raw, markers), image)
        assert not np.array_equal(raw, image)
        marked_items += 1
    assert marked_items == 2 + 2 + 2 + 3  # depth absolute, depth relative, colour, spatial


def test_colour_items_record_measured_distances_to_the_palette(batch):
    for folder in (f for f in folders(batch) if f.name.startswith("ava_color")):
        item = load_item(folder)
        d = item.difficulty
        distances = {k.removeprefix("measured_de_"): v for k, v in d.items() if k.startswith("measured_de_")}
        assert len(distances) == 8 and d["measured_nearest"] == min(distances, key=distances.get)
        ranked = sorted(distances.values())
        assert d["measured_margin_de"] == pytest.approx(ranked[1] - ranked[0], abs=1e-5)
        assert d["measured_nearest"] == item.questions[0].gold, (folder.name, d["measured_nearest"])


def test_records_validate_and_gold_answers_score_full_marks(batch, tmp_path, capsys):
    schema = json.loads(SCHEMA_PATH.read_text())
    lines = (batch / "records.jsonl").read_text().splitlines()
    for line in lines:
        jsonschema.validate(json.loads(line), schema)
    records = read_records(batch / "records.jsonl")
    for record in records:
        if record.answer.type == "box":
            assert record.scoring.params == {"width": 96, "height": 72}
        assert (record.answer.options is not None) == (record.answer.type == "choice")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(
        json.dumps({"question_id": r.question_id, "response": answer_text(r.answer.type, r.answer.gold)}) + "\n"
        for r in records))
    assert main(["score", str(batch), str(predictions), "--by", "ability"]) == 0
    report = json.loads(predictions.with_suffix(".scores.json").read_text())
    rows = {(row["key"], row["value"]): row for row in report["rows"]}
    assert rows[("all", None)]["accuracy"] == 1.0
    abilities = {value for key, value in rows if key == "ability"}
    assert abilities == {"count", "localize", "depth_absolute", "depth_relative", "color", "spatial", "orientation"}
    assert rows[("ability", "localize")]["rules"]["iou"] == 1.0
    assert rows[("ability", "depth_absolute")]["rules"]["abs_rel"] == 0.0


def _marked_id(item, color: str) -> int:
    (object_id,) = [o.id for o in item.scene.objects if o.attributes.get("marker") == color]
    return object_id


def test_relative_depth_and_spatial_golds_follow_from_the_rendered_mask_and_depth(batch):
    checked = 0
    for folder in folders(batch):
        item = load_item(folder)
        if item.family not in ("ava_depth_relative", "ava_spatial"):
            continue
        mask, depth = load_mask(folder), np.load(folder / "depth.npy")
        red, blue = (_marked_id(item, c) for c in ("red", "blue"))
        nearest = {c: float(depth[mask == i].min()) for c, i in (("red", red), ("blue", blue))}
        gold = item.questions[0].gold
        if item.family == "ava_depth_relative":
            other = "blue" if gold == "red" else "red"
            assert nearest[gold] + 0.5 <= nearest[other] + 2e-3, folder.name
        else:
            relation = item.questions[0].subject["relation"]
            if relation == "depth":
                assert (nearest["red"] < nearest["blue"]) == (gold == "in front"), folder.name
            else:
                axis = 1 if relation == "horizontal" else 0  # columns for left/right, rows for above/below
                red_px, blue_px = (np.nonzero(mask == i)[axis] for i in (red, blue))
                first = gold in ("left", "above")
                assert (red_px.max() < blue_px.min()) if first else (blue_px.max() < red_px.min()), folder.name
        checked += 1
    assert checked == 2 + 3


def test_every_counted_object_shows_in_the_renderers_mask(batch):
    (folder,) = [f for f in folders(batch) if f.name.startswith("ava_count")]
    item, mask = load_item(folder), load_mask(folder)
    subject = item.questions[0].subject
    targets = [o.id for o in item.scene.objects if (o.shape, o.color.name) == (subject["shape"], subject["color"])]
    assert len(targets) == item.questions[0].gold
    for object_id in targets:  # the renderer sees at least the floor's share of what the ray cast calls amodal
        assert (mask == object_id).sum() >= 0.6 * item.ground_truth.of(object_id).amodal_px - 2, object_id
