"""Dataset exports: the imagefolder loads with `datasets`, the COCO file loads with pycocotools and its masks
equal mask.png (Blender's object-index pass); several batches merge without id clashes.

Two tiny Cycles batches (3 items each, 64x48, 4 samples) with the same item ids are
rendered in a subprocess; everything else reads their folders.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from stim3d.export.common import batch_namespace
from stim3d.scoring.records import read_records
from tests.helpers import run_cli as run

ROOT = Path(__file__).resolve().parents[1]
CONFIG = """\
seed: {seed}
render: {{engine: cycles, width: 64, height: 48, samples: 4, denoise: false}}
tasks:
  - family: shape_count
    count: 2
    grid: {{min_visibility: [0.7, 0.9]}}
    params: {{n_shape_types: 3, max_instances: 2}}
  - family: shape_color_count
    count: 1
    split: {split}
    params: {{n_shape_types: 2, max_instances: 2}}
"""

pytestmark = pytest.mark.bpy


@pytest.fixture(scope="module")
def batches(tmp_path_factory) -> list[Path]:
    if importlib.util.find_spec("bpy") is None:
        pytest.skip("the Blender Python module (bpy==5.0.1) is not installed")
    root = tmp_path_factory.mktemp("exports")
    folders = []
    for seed, split in ((5, "test"), (6, "train")):
        config = root / f"batch{seed}.yaml"
        config.write_text(CONFIG.format(seed=seed, split=split))
        out = root / f"batch{seed}"
        result = subprocess.run([sys.executable, "-m", "stim3d", "render", str(config), "--out", str(out), "--quiet"],
                                cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        folders.append(out)
    return folders


def folder_of(batches: list[Path], namespace: str, item_id: str) -> Path:
    (batch,) = [b for b in batches if batch_namespace(b) == namespace]
    return batch / "items" / item_id


def test_batches_share_item_ids_so_the_merge_must_rename(batches):
    ids = [{r.item_id for r in read_records(b / "records.jsonl")} for b in batches]
    assert ids[0] == ids[1]
    assert batch_namespace(batches[0]) != batch_namespace(batches[1])


def test_imagefolder_export_loads_with_datasets(batches, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    datasets = pytest.importorskip("datasets")
    dest = tmp_path / "hf"
    code, stdout, stderr = run("export", "imagefolder", *map(str, batches), "--to", str(dest))
    assert code == 0, stderr
    assert "6 images from 2 batch folder(s), 6 questions" in stdout

    loaded = datasets.load_dataset(str(dest), cache_dir=str(tmp_path / "cache"))  # the card declares the features
    records = {(batch_namespace(b), r.question_id): r for b in batches for r in read_records(b / "records.jsonl")}
    assert sorted(loaded) == ["test", "train"]
    rows = [(split, row) for split in loaded for row in loaded[split]]
    assert len(rows) == len(records) == 6
    assert len({row["id"] for _, row in rows}) == len({row["question_id"] for _, row in rows}) == 6  # unique merged
    assert len({row["item_id"] for _, row in rows}) == 6
    assert loaded["test"].features["mask"].__class__.__name__ == "Image"
    assert loaded["test"].features["answer_number"].dtype == "int64"
    for split, row in rows:
        record = records[(row["batch"], row["source_question_id"])]
        assert row["item_id"] == f"{row['batch']}-{record.item_id}" and row["source_item_id"] == record.item_id
        assert split == record.split
        assert (row["question"], row["prompt"], row["answer_type"]) == (record.question, record.prompt, record.answer.type)
        assert row["answer"] == str(record.answer.gold) and json.loads(row["answer_json"]) == record.answer.gold
        assert json.loads(row["difficulty_json"]) == record.difficulty
        assert {k: v for k, v in row["difficulty"].items() if v is not None} == {
            k: v for k, v in record.difficulty.items() if v is not None}  # typed, null where another family's key
        assert row["answer_number"] == record.answer.gold
        source = folder_of(batches, row["batch"], row["source_item_id"]) / "image.png"
        mask = np.asarray(Image.open(source.parent / "mask.png"))
        assert np.array_equal(np.asarray(row["mask"]), mask)
        item = json.loads((source.parent / "item.json").read_text())
        assert [o["object_id"] for o in row["objects"]] == [o["id"] for o in item["scene"]["objects"]]
        assert np.array_equal(np.asarray(row["image"].convert("RGB")), np.asarray(Image.open(source).convert("RGB")))


def test_imagefolder_export_has_a_dataset_card(batches, tmp_path):
    import yaml

    dest = tmp_path / "hf"
    assert run("export", "imagefolder", *map(str, batches), "--to", str(dest))[0] == 0
    card = (dest / "README.md").read_text()
    header = yaml.safe_load(card.split("---")[1])
    assert header["license"] == "cc-by-4.0"
    assert {s["name"]: s["num_examples"] for s in header["dataset_info"]["splits"]} == {"test": 5, "train": 1}
    assert "| test | shape_count | 4 | 4 |" in card and "| train | shape_color_count | 1 | 1 |" in card
    assert "## Constant baselines" in card and "shape_count (integer)" in card
    assert card.count("```yaml") == 2 and "family: shape_count" in card  # each batch's config
    assert "GPL-3.0-or-later" in card


def test_coco_export_loads_with_pycocotools_and_its_masks_equal_mask_png(batches, tmp_path):
    coco_api = pytest.importorskip("pycocotools.coco")
    dest = tmp_path / "coco"
    code, stdout, stderr = run("export", "coco", *map(str, batches), "--to", str(dest))
    assert code == 0, stderr
    with contextlib.redirect_stdout(io.StringIO()):
        coco = coco_api.COCO(str(dest / "annotations.json"))
    images = coco.loadImgs(coco.getImgIds())
    assert len(images) == 6 and len({img["file_name"] for img in images}) == 6
    licenses = {entry["id"]: entry for entry in coco.dataset["licenses"]}  # CC BY 4.0, as the dataset card says
    assert [entry["name"] for entry in licenses.values()] == ["Creative Commons Attribution 4.0 International (CC BY 4.0)"]
    assert all(img["license"] in licenses for img in images)
    assert sorted(img["split"] for img in images) == ["test"] * 5 + ["train"]  # images carry their split
    annotations = coco.loadAnns(coco.getAnnIds())
    assert len({a["id"] for a in annotations}) == len(annotations) > 0
    names = {c["id"]: c["name"] for c in coco.loadCats(coco.getCatIds())}
    for image in images:
        folder = folder_of(batches, image["batch"], image["item_id"])
        assert (dest / "images" / image["file_name"]).read_bytes() == (folder / "image.png").read_bytes()
        mask = np.asarray(Image.open(folder / "mask.png")).astype(np.int64)
        item = json.loads((folder / "item.json").read_text())
        shapes = {o["id"]: o["shape"] for o in item["scene"]["objects"]}
        present = set(np.unique(mask).tolist()) - {0}
        anns = coco.loadAnns(coco.getAnnIds(imgIds=[image["id"]]))
        assert sorted(a["object_id"] for a in anns) == sorted(present)
        for ann in anns:
            binary = mask == ann["object_id"]
            assert np.array_equal(coco.annToMask(ann).astype(bool), binary)
            rows, cols = np.nonzero(binary)
            assert ann["bbox"] == [cols.min(), rows.min(), cols.max() + 1 - cols.min(), rows.max() + 1 - rows.min()]
            assert ann["area"] == binary.sum()
            assert names[ann["category_id"]] == shapes[ann["object_id"]]
        assert (image["width"], image["height"]) == (mask.shape[1], mask.shape[0]) == (64, 48)


def test_the_same_batch_twice_is_exported_once(batches, tmp_path):
    code, stdout, stderr = run("export", "coco", str(batches[0]), str(batches[0]), "--to", str(tmp_path / "coco"))
    assert code == 0, stderr
    assert "3 images from 2 batch folder(s)" in stdout and "3 duplicate items skipped" in stdout
    coco = json.loads((tmp_path / "coco" / "annotations.json").read_text())
    assert len(coco["images"]) == 3


def test_clashing_stale_and_misdirected_exports_are_refused(batches, tmp_path):
    # the same item of the same batch with a different image: refused, not silently merged
    copy = tmp_path / "copy"
    shutil.copytree(batches[0], copy)
    record = read_records(copy / "records.jsonl")[0]
    image = copy / record.image.path
    pixels = np.asarray(Image.open(image)).copy()
    pixels[0, 0] = 255 - pixels[0, 0]
    Image.fromarray(pixels).save(image)
    code, _, stderr = run("export", "coco", str(batches[0]), str(copy), "--to", str(tmp_path / "out1"))
    assert code == 2 and "no longer has the recorded sha256" in stderr  # the copy's records are stale

    lines = (copy / "records.jsonl").read_text().splitlines()
    fresh = hashlib.sha256(image.read_bytes()).hexdigest()
    (copy / "records.jsonl").write_text("\n".join(line.replace(record.image.sha256, fresh) for line in lines) + "\n")
    code, _, stderr = run("export", "imagefolder", str(batches[0]), str(copy), "--to", str(tmp_path / "out2"))
    assert code == 2 and f"item {record.item_id}" in stderr and "with different images" in stderr
    assert not (tmp_path / "out2").exists()

    code, _, stderr = run("export", "coco", str(batches[0]), str(batches[1]))
    assert code == 2 and "--to DIR" in stderr
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    code, _, stderr = run("export", "coco", str(batches[0]), "--to", str(tmp_path / "full"))
    assert code == 2 and "not empty" in stderr
    code, _, stderr = run("export", "coco", str(tmp_path), "--to", str(tmp_path / "out3"))
    assert code == 2 and "not a batch folder" in stderr
