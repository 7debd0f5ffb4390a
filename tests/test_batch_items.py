"""One notion of "the items of a batch" (BatchFolder.item_folders: the items records.jsonl lists) for records,
gallery, contact sheet and exports; named gallery pages; contact-sheet keys that vary (issue 15.9)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stim3d.render.batch.folder import BatchFolder
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scoring.records import read_records
from stim3d.views.contact_sheet import varying_keys
from tests.helpers import run_cli as run

ROOT = Path(__file__).resolve().parents[1]
CONFIG = """\
seed: 3
render: {engine: workbench, width: 64, height: 48}
tasks:
  - {family: shape_count, count: 2, params: {n_shape_types: 2, max_instances: 2}}
  - {family: spatial_grid, count: 1, params: {rows: 2, cols: 2}}
"""


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    pytest.importorskip("bpy")
    root = tmp_path_factory.mktemp("items")
    (root / "config.yaml").write_text(CONFIG)
    out = root / "out"
    result = subprocess.run([sys.executable, "-m", "stim3d", "render", str(root / "config.yaml"), "--out", str(out),
                             "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    # What the add-on's Render and Save into a batch folder leaves: a complete item the config never planned.
    shutil.copytree(out / "items" / "shape_count-t0-00000", out / "items" / "addon-item-00000")
    return out


@pytest.mark.bpy
def test_gallery_exports_and_records_count_the_same_items(batch, tmp_path):
    skipped: dict[str, str] = {}
    folders = BatchFolder(batch).item_folders(skipped)
    planned = sorted(f.name for f in folders)
    assert planned == ["shape_count-t0-00000", "shape_count-t0-00001", "spatial_grid-t1-00000"]
    assert "addon-item-00000" in skipped and "not in records.jsonl" in skipped["addon-item-00000"]
    assert sorted({r.item_id for r in read_records(batch / "records.jsonl")}) == planned
    code, stdout, stderr = run("gallery", str(batch))
    assert code == 0 and "gallery: 3 items" in stdout and "skipped addon-item-00000" in stderr, stdout + stderr
    code, stdout, _ = run("export", "coco", str(batch), "--to", str(tmp_path / "coco"))
    assert code == 0 and "3 images" in stdout
    code, stdout, _ = run("contact-sheet", str(batch), "-o", str(tmp_path / "sheet.png"), "--n", "10")
    assert code == 0 and "contact sheet: 3 items" in stdout


@pytest.mark.bpy
def test_a_filtered_gallery_is_its_own_page(batch):
    assert run("gallery", str(batch))[0] == 0
    index = (batch / "gallery" / "index.html").read_text()
    code, stdout, _ = run("gallery", str(batch), "--family", "shape_count", "--name", "counting")
    assert code == 0 and "gallery/counting.html" in stdout
    assert (batch / "gallery" / "index.html").read_text() == index  # the full page is untouched
    assert (batch / "gallery" / "counting.html").read_text().count('<article class="card"') == 2
    code, stdout, _ = run("gallery", str(batch), "--family", "spatial_grid")
    assert code == 0 and (batch / "gallery" / "spatial_grid.html").is_file()
    code, _, stderr = run("gallery", str(batch), "--name", "../escape")
    assert code == 2 and "--name '../escape'" in stderr


def test_keys_one_family_lacks_are_not_varying():
    frame = Frame(96, 72)
    count = [make_item("shape_count", {"min_visibility": v, "n_shape_types": 2}, [1, 0, i], f"c{i}", frame)
             for i, v in enumerate((0.7, 0.9))]
    grid = [make_item("spatial_grid", {"rows": 2, "cols": 2}, [1, 1, i], f"g{i}", frame) for i in range(2)]
    keys = varying_keys(count + grid)
    assert "min_visibility" in keys  # differs between the counting items
    assert "rows" not in keys and "n_shape_types" not in keys  # constant wherever present
