"""Rendered occlusion sweeps (bpy): Blender's object-index pass confirms each level's recorded visibility.

One hand-made 160x120 item, three reachable levels and one that is not, Cycles at
4 samples: about ten seconds on 2 cores. The same folder is then reused by the
command line (every level already done, so nothing renders again).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")

from stim3d.files import file_sha256
from stim3d.render.batch.folder import BatchFolder
from stim3d.render.batch.item_folder import load_item, load_mask
from stim3d.render.sweep import run_occlusion_sweep  # noqa: E402
from stim3d.scoring.records import read_records
from tests.helpers import counting_item, three_objects  # noqa: E402

pytestmark = pytest.mark.bpy

ROOT = Path(__file__).resolve().parents[1]
LEVELS = [0.0, 0.3, 0.6, 1.0]  # 0.0 is out of reach: the cylinder cannot hide the whole cone


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    base = tmp_path_factory.mktemp("sweep")
    source = base / "source"
    source.mkdir()
    (source / "item.json").write_text(counting_item(three_objects(), "cone").to_json())
    out = base / "out"
    report = run_occlusion_sweep(source, LEVELS, out, target_id=1, occluder_id=2, samples=4, plot=True)
    return source, out, report


def test_object_index_pass_gives_the_recorded_visibility_of_every_level(swept):
    _, out, report = swept
    assert report.rendered == 3
    (sweep,) = report.sweeps
    for level in sweep["levels"][1:]:
        item = load_item(BatchFolder(out).item_dir(level["item_id"]))
        assert item.provenance.mask_source == "renderer"  # mask.png is Blender's own pass, not the ray cast
        truth = item.ground_truth.of(1)
        visible_in_mask = int((load_mask(BatchFolder(out).item_dir(level["item_id"])) == 1).sum())
        assert abs(visible_in_mask / truth.amodal_px - truth.visibility) <= 0.01, (level, visible_in_mask, truth)
        assert abs(truth.visibility - level["requested"]) <= 0.01


def test_unreachable_level_is_reported_and_the_others_rendered(swept):
    _, out, report = swept
    assert report.failed and report.unreachable == 1
    summary = json.loads((out / "sweeps.json").read_text())
    first = summary["sweeps"][0]["levels"][0]
    assert first["status"] == "unreachable" and first["reason"] == "occluder_too_small"
    rendered = sorted(p.name for p in (out / "items").iterdir())
    assert rendered == ["hand-vis0300", "hand-vis0600", "hand-vis1000"]


def test_records_link_the_levels_and_keep_the_gold(swept):
    _, out, _ = swept
    records = read_records(out / "records.jsonl")
    assert [r.difficulty["sweep_level"] for r in records] == [0.3, 0.6, 1.0]
    assert len({r.difficulty["sweep_id"] for r in records}) == 1
    assert len({r.question_id for r in records}) == 3
    assert {r.question for r in records} == {"How many cones are in the scene?"}
    assert {r.answer.gold for r in records} == {1}
    for record in records:
        assert record.difficulty["answer_depends_on_visibility"] is False
        assert abs(record.difficulty["target_visibility"] - record.difficulty["sweep_level"]) <= 0.01
        assert record.image.sha256 == file_sha256(out / record.image.path)
    images = [np.asarray(Image.open(out / r.image.path)) for r in records]
    assert not np.array_equal(images[0], images[-1])  # the occluder really moved in the pictures


def test_plot_and_strip_are_written(swept):
    _, out, report = swept
    for name in ("sweep_plot.png", "strip-hand.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out / "sweep_plot.png" in report.outputs


def test_cli_rerun_skips_done_levels_and_exits_1_for_the_unreachable_one(swept):
    source, out, _ = swept
    result = subprocess.run(
        [sys.executable, "-m", "stim3d", "sweep", "occlusion", str(source), "--levels", "0:0.6:0.3,",
         "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert result.returncode == 2 and "not a number" in result.stderr  # a range takes no trailing comma
    result = subprocess.run(
        [sys.executable, "-m", "stim3d", "sweep", "occlusion", str(source), "--levels", "0,0.3,0.6,1",
         "--out", str(out), "--target", "1", "--occluder", "2", "--samples", "4", "--quiet"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert result.returncode == 1, result.stderr
    assert "level 0.000: unreachable (occluder_too_small)" in result.stdout
    assert "levels rendered: 0  skipped (already done): 3  unreachable: 1" in result.stdout
