"""Every export format treats a torn item folder and a linked default destination the same way.

Torn items (an item.json that does not parse, a missing mask.png) are left out and
named on stderr, one line each, the same lines whatever the format, and the export
holds every other item; the command exits 1. A `BATCH/exports` (or
`BATCH/exports/FORMAT`) that is a symbolic link is refused in one line with exit 2,
and nothing is written where it points. One shared rule makes this so
(stim3d/export/common.py: exportable_items, default_destination).
"""

from __future__ import annotations

import csv
import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from stim3d.scoring.records import read_records
from tests.helpers import run_cli as run

FORMATS = ("imagefolder", "coco", "clevr", "bop", "vlmevalkit", "lmms-eval")
pytestmark = pytest.mark.bpy


@pytest.fixture(scope="module")
def source(tiny_batch) -> Path:
    if importlib.util.find_spec("bpy") is None:
        pytest.skip("the Blender Python module (bpy==5.0.1) is not installed")
    return tiny_batch


def exported_item_ids(fmt: str, dest: Path) -> list[str]:
    """The stim3d item ids an export holds, read from the format's own index."""
    if fmt in ("imagefolder", "lmms-eval"):
        pq = pytest.importorskip("pyarrow.parquet")
        root = dest / "dataset" if fmt == "lmms-eval" else dest
        rows = [row for path in sorted(root.glob("*/metadata.parquet")) for row in pq.read_table(path).to_pylist()]
        return sorted({row["source_item_id"] for row in rows})
    if fmt == "coco":
        return sorted(image["item_id"] for image in json.loads((dest / "annotations.json").read_text())["images"])
    if fmt == "clevr":
        return sorted(scene["item_id"] for path in dest.glob("CLEVR_*_scenes.json")
                      for scene in json.loads(path.read_text())["scenes"])
    if fmt == "bop":
        return sorted(entry["item_id"] for entry in json.loads((dest / "scene_items.json").read_text()).values())
    csv.field_size_limit(1 << 30)
    with (dest / "stim3d.tsv").open(encoding="utf-8") as f:
        return sorted({json.loads(row["stim3d_record"])["item_id"] for row in csv.DictReader(f, delimiter="\t")})


def test_every_format_skips_the_same_torn_items_with_the_same_lines(source, tmp_path):
    batch = tmp_path / "batch"
    shutil.copytree(source, batch)
    ids = sorted({r.item_id for r in read_records(batch / "records.jsonl")})
    (batch / "items" / ids[0] / "item.json").write_text("{ not json")
    (batch / "items" / ids[1] / "mask.png").unlink()
    messages = {}
    for fmt in FORMATS:
        code, out, err = run("export", fmt, str(batch), "--to", str(tmp_path / fmt))
        assert code == 1, (fmt, err)
        messages[fmt] = err.splitlines()
        assert exported_item_ids(fmt, tmp_path / fmt) == ids[2:], fmt
        assert f"{len(ids) - 2} images" in out and "2 items skipped" in out, (fmt, out)
    first = messages["imagefolder"]
    assert len(first) == 2 and first[0].startswith(f"skipped {batch}/{ids[0]}: item.json does not parse")
    assert first[1] == f"skipped {batch}/{ids[1]}: mask.png missing"
    assert all(lines == first for lines in messages.values()), messages


@pytest.mark.parametrize("linked", ["exports", "exports/FORMAT"])
def test_every_format_refuses_a_linked_default_destination(source, tmp_path, linked):
    batch = tmp_path / "batch"
    shutil.copytree(source, batch)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for fmt in FORMATS:
        link = batch / linked.replace("FORMAT", fmt)
        link.parent.mkdir(exist_ok=True)
        link.symlink_to(elsewhere, target_is_directory=True)
        code, out, err = run("export", fmt, str(batch))
        assert code == 2 and out == "" and len(err.splitlines()) == 1, (fmt, err)
        assert f"{link}: a symbolic link inside the batch folder" in err and "--to DIR" in err
        assert list(elsewhere.iterdir()) == [], fmt
        link.unlink()
    code, _, err = run("export", "coco", str(batch))  # no link: the default destination works
    assert code == 0, err
    assert (batch / "exports" / "coco" / "annotations.json").is_file()
