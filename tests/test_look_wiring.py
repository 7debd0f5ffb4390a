"""Looks carried through the batch (docs/looks.md): per-look redraw counts in summary.json and the render
summary, `stim3d score --by look` and `--by material`.

The batch is rendered with the raster backend (it ignores the look's appearance but records it,
docs/looks.md), which keeps it under a few seconds; redraw counts come from a stand-in renderer
whose colours are wrong a known number of times.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

from stim3d.cli import main
from stim3d.render.batch.records import records_for
from stim3d.render.batch.summary import look_counts
from stim3d.render.settings import RenderSettings
from stim3d.scenes.colors import PALETTE
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.look_contrast import FLOOR_DE

# Two ava_spatial items each in studio and photoreal (variants share the scene), one shape_count item in clevr.
CONFIG = """\
seed: 3
render: {engine: raster, width: 64, height: 48}
tasks:
  - family: ava_spatial
    count: 2
    variants: {studio: {look: studio}, photo: {look: photoreal}}
  - family: shape_count
    count: 1
    look: clevr
"""


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> tuple[Path, str]:
    pytest.importorskip("pyrender")
    root = tmp_path_factory.mktemp("looks_batch")
    (root / "c.yaml").write_text(CONFIG)
    code, printed = _cli("render", str(root / "c.yaml"), "--out", str(root / "out"), "--quiet")
    assert code == 0, printed
    return root / "out", printed


@pytest.mark.raster
def test_render_summary_counts_items_per_look_and_prints_them(batch):
    """Raster renders are never redrawn, but their contrast is measured: items under the floor are counted from
    each record's min_contrast_de (absent when no object is large enough to judge), studio's too."""
    out, printed = batch
    looks = json.loads((out / "summary.json").read_text())["looks"]
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    under: dict[str, set[str]] = {"clevr": set(), "photoreal": set(), "studio": set()}
    assert any("min_contrast_de" in r["difficulty"] for r in records)
    for r in records:
        if r["difficulty"].get("min_contrast_de", FLOOR_DE) < FLOOR_DE:
            under[r["difficulty"].get("look", "studio")].add(r["item_id"])
    zero = {"redrawn": 0, "redraws": 0, "still_failing": 0}  # raster renders are never colour-checked
    assert looks == {name: {"items": n, **zero, "under_contrast_floor": len(under[name])}
                     for name, n in (("clevr", 1), ("photoreal", 2), ("studio", 2))}
    for name, n in (("photoreal", 2), ("clevr", 1)):
        assert (f"look {name}: {n} items, 0 redrawn for colour or contrast (0 redraws), 0 still failing colour, "
                f"{len(under[name])} under the contrast floor ({FLOOR_DE:g} dE)") in printed.splitlines()


@pytest.mark.raster
def test_score_by_look_gives_one_row_per_look(batch, tmp_path):
    """Predictions right for every photoreal question and wrong for every other: the look rows read 1.0 and 0.0."""
    out, _ = batch
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    wrong = {"above": "below", "below": "above", "left": "right", "right": "left", "in front of": "behind",
             "behind": "in front of"}
    with (tmp_path / "pred.jsonl").open("w") as f:
        for r in records:
            gold = r["answer"]["gold"]
            right = r["item_id"].endswith("-photo")
            answer = gold if right else (wrong.get(gold, "x") if isinstance(gold, str) else gold + 1)
            f.write(json.dumps({"question_id": r["question_id"], "response": str(answer)}) + "\n")
    code, _ = _cli("score", str(out), str(tmp_path / "pred.jsonl"), "--by", "look", "--out", str(tmp_path / "s.json"))
    assert code == 0
    rows = {row["value"]: (row["n"], row["accuracy"]) for row in json.loads((tmp_path / "s.json").read_text())["rows"]
            if row["key"] == "look"}
    assert rows == {"photoreal": (2, 1.0), "studio": (2, 0.0), "clevr": (1, 0.0)}


@pytest.mark.raster
def test_score_by_material_groups_questions_by_the_material_of_their_objects(batch, tmp_path):
    """ava_spatial asks about a red- and a blue-boxed object: its material is theirs ("mixed" when they differ);
    shape_count asks about the whole scene; studio records read "studio"."""
    out, _ = batch
    expected: dict[str, int] = {}
    for item_json in sorted((out / "items").glob("*/item.json")):
        item = json.loads(item_json.read_text())
        look = item["scene"].get("look")
        if look is None:
            label = "studio"
        else:
            subject = item["questions"][0]["subject"]
            ids = [subject[k] for k in ("red_object_id", "blue_object_id") if k in subject] or \
                [m["id"] for m in look["objects"]]
            materials = {m["material"] for m in look["objects"] if m["id"] in ids}
            label = materials.pop() if len(materials) == 1 else "mixed"
        expected[label] = expected.get(label, 0) + 1
    (tmp_path / "pred.jsonl").write_text("")
    code, _ = _cli("score", str(out), str(tmp_path / "pred.jsonl"), "--by", "material", "--out",
                   str(tmp_path / "s.json"))
    assert code == 0
    rows = {row["value"]: row["n"] for row in json.loads((tmp_path / "s.json").read_text())["rows"]
            if row["key"] == "material"}
    assert rows == expected and sum(rows.values()) == 5


def test_look_counts_count_items_redrawn_and_still_failing(tmp_path, monkeypatch):
    """Two photoreal items: one whose object reads as another colour in its first render only (1 redraw, then
    right), one that reads wrong in every render (3 redraws, the most allowed, then still failing)."""
    from stim3d.render.backends.output import RenderOutput
    from stim3d.render.batch import produce
    from stim3d.render.batch.item_folder import load_item
    from stim3d.scenes.visibility import measure

    records = []
    for index, wrong_renders in enumerate((1, 9)):
        item = make_item("shape_color_count", {}, [2026, 0, index], f"scc-{index}", Frame(64, 48), look="photoreal")
        instance_map = measure(item.scene, 1).instance_map
        target = next(o for o in item.scene.objects if item.ground_truth.of(o.id).visible_px >= 30)
        wrong = "gray" if target.color.name != "gray" else "red"
        calls = []

        def fake_render(settings, rendered, workdir, target=target, wrong=wrong, calls=calls, wrong_renders=wrong_renders,
                        instance_map=instance_map):
            calls.append(1)
            image = np.full((*instance_map.shape, 3), 255, np.uint8)  # white: no object under the contrast floor
            for obj in rendered.scene.objects:
                srgb = PALETTE[wrong] if obj.id == target.id and len(calls) <= wrong_renders else obj.color.srgb
                image[instance_map == obj.id] = np.round(np.asarray(srgb) * 255)
            return RenderOutput(image=image, instance_map=instance_map, depth=None, blender_version="stand-in",
                                render_seconds=0.0)

        monkeypatch.setattr(produce, "render_with", fake_render)
        settings = RenderSettings(width=64, height=48, samples=1, look="photoreal")
        folder = produce.render_item(item, settings, tmp_path / "out", tmp_path / f"work{index}", key="k")
        records += records_for(load_item(folder), "image.png", "0" * 64)
    assert look_counts(records) == {"photoreal": {"items": 2, "redrawn": 2, "redraws": 4, "still_failing": 1,
                                                  "under_contrast_floor": 0}}


def _looks_of(out: Path) -> dict[str, dict]:
    """item id -> {"look": name, "materials": {object id: material}} read from each item.json."""
    found = {}
    for item_json in (out / "items").glob("*/item.json"):
        item = json.loads(item_json.read_text())
        look = item["scene"].get("look")
        found[item["item_id"]] = {"look": look["name"] if look else "studio",
                                  "materials": {m["id"]: m["material"] for m in look["objects"]} if look else {}}
    return found


@pytest.mark.raster
def test_every_export_records_each_items_look_and_its_objects_materials(batch, tmp_path):
    """CLEVR's `material` is the look's (clevr: rubber/metal; photoreal: the library's) and the finish's CLEVR
    name in studio; COCO and imagefolder carry the look per image or row and the material per object; the
    VLMEvalKit TSV and the lmms-eval dataset have a look column; BOP, which has no material field, names both
    in scene_items.json."""
    import csv

    out, _ = batch
    truth = _looks_of(out)
    assert {t["look"] for t in truth.values()} == {"studio", "clevr", "photoreal"}
    for fmt in ("clevr", "coco", "bop", "vlmevalkit", "imagefolder", "lmms-eval"):
        code, _ = _cli("export", fmt, str(out), "--to", str(tmp_path / fmt))
        assert code == 0, fmt

    scenes = [scene for path in sorted((tmp_path / "clevr").glob("CLEVR_*_scenes.json"))  # one file per split
              for scene in json.loads(path.read_text())["scenes"]]
    assert len(scenes) == 5
    for scene in scenes:
        expected = truth[scene["item_id"]]
        assert scene["look"] == expected["look"]
        for obj in scene["objects"]:
            studio_name = "rubber"  # every object of these families is matte
            assert obj["material"] == expected["materials"].get(obj["id"], studio_name)

    coco = json.loads((tmp_path / "coco" / "annotations.json").read_text())
    image_looks = {image["id"]: truth[image["item_id"]] for image in coco["images"]}
    assert {image["item_id"]: image["look"] for image in coco["images"]} == {k: v["look"] for k, v in truth.items()}
    for annotation in coco["annotations"]:
        assert annotation["material"] == image_looks[annotation["image_id"]]["materials"].get(annotation["object_id"])

    scene_items = json.loads((tmp_path / "bop" / "scene_items.json").read_text())
    for entry in scene_items.values():
        assert entry["look"] == truth[entry["item_id"]]["look"]
        assert entry["materials"] == {str(k): v for k, v in truth[entry["item_id"]]["materials"].items()}

    (tsv,) = (tmp_path / "vlmevalkit").glob("*.tsv")
    csv.field_size_limit(1 << 30)
    with tsv.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert {json.loads(r["stim3d_record"])["item_id"]: r["look"] for r in rows} == \
        {k: v["look"] for k, v in truth.items()}

    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(tmp_path / "imagefolder" / "test" / "metadata.parquet").to_pylist()
    assert {row["source_item_id"]: row["look"] for row in table} == {k: v["look"] for k, v in truth.items()}
    lmms = pq.read_table(tmp_path / "lmms-eval" / "dataset" / "test" / "metadata.parquet").to_pylist()
    assert {row["source_item_id"]: row["look"] for row in lmms} == {k: v["look"] for k, v in truth.items()}
    for row in table:
        materials = truth[row["source_item_id"]]["materials"]
        assert {o["object_id"]: o["material"] for o in row["objects"]} == \
            {o["object_id"]: materials.get(o["object_id"]) for o in row["objects"]}


@pytest.mark.raster
def test_gallery_filters_by_look_studio_items_included(batch):
    """The page of a batch with three looks has a look filter listing all three, every card carries its look
    (studio cards too, though their items record none), and --filter look=studio keeps the 2 studio items."""
    import re

    from stim3d.views.gallery import build_gallery

    out, _ = batch
    page = build_gallery(out, workers=1).index.read_text()
    labels = re.findall(r'<label class="axis"[^>]*>([a-z_.0-9]+) <select class="f-axis" data-k="(\d+)">(.*?)</select>',
                        page)
    (k, options), = [(k, options) for key, k, options in labels if key == "look"]
    assert re.findall(r'<option value="([a-z]+)">', options) == ["clevr", "photoreal", "studio"]
    looks = {item_id: look for look, item_id in re.findall(
        rf'<article class="card"[^>]*data-k{k}="([a-z]+)"[^>]*><img[^>]*alt="([^"]+)"', page)}
    assert looks == {item_id: t["look"] for item_id, t in _looks_of(out).items()}
    filtered = build_gallery(out, filters={"look": "studio"}, workers=1)
    assert filtered.items == 2


@pytest.mark.raster
def test_score_by_min_contrast_bins_the_records_least_contrast(batch, tmp_path):
    """`--by min_contrast_de:5` groups records by their item's least object contrast in bins 5 dE wide."""
    out, _ = batch
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    (tmp_path / "pred.jsonl").write_text("")
    code, _ = _cli("score", str(out), str(tmp_path / "pred.jsonl"), "--by", "min_contrast_de:5", "--out",
                   str(tmp_path / "s.json"))
    assert code == 0
    rows = [row for row in json.loads((tmp_path / "s.json").read_text())["rows"] if row["key"] == "min_contrast_de:5"]
    judged = [r["difficulty"]["min_contrast_de"] for r in records if "min_contrast_de" in r["difficulty"]]
    assert sum(row["n"] for row in rows) >= len(judged) > 0
    assert {row["value"] for row in rows} >= {f"[{5 * int(v // 5):g}, {5 * int(v // 5) + 5:g})" for v in judged}
