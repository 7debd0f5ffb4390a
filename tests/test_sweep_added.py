"""`stim3d sweep occlusion --occluder add` (issue 15.6): a panel the sweep adds reaches levels the scene's own
objects cannot, is recorded in the ground truth and is not counted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.sweep import sweep_item
from stim3d.scenes.sweep.added import ROLE
from stim3d.scenes.visibility import measure
from tests.helpers import counting_item, three_objects

ROOT = Path(__file__).resolve().parents[1]
LEVELS = [0.0, 0.1, 0.3, 0.6, 1.0]


def test_an_added_panel_reaches_every_level_the_scene_cannot():
    item = counting_item(three_objects(), "cone")
    own = sweep_item(item, LEVELS, target_id=1, occluder_id=2)
    assert own.sweep.levels[0].unreachable.code == "occluder_too_small"  # the cylinder cannot hide the whole cone
    added = sweep_item(item, LEVELS, target_id=1, occluder_id="add")
    assert added.sweep.reached == len(LEVELS), [(lv.requested, lv.unreachable) for lv in added.sweep.levels]
    for level, built in zip(LEVELS, added.items):
        panel = built.scene.object(added.sweep.occluder_id)
        assert panel.shape == "tile" and panel.countable is False and panel.attributes["role"] == ROLE
        assert {o.id for o in built.scene.objects} == {o.id for o in item.scene.objects} | {panel.id}
        measured = measure(built.scene).visibility()
        assert abs(measured[1] - level) <= 0.01  # the target's visibility, re-measured from the level's scene
        assert panel.id in {t.id for t in built.ground_truth.objects}  # in the ground truth like any object
        cones = sum(o.countable and o.shape == "cone" for o in built.scene.objects)  # the panel is not countable
        assert built.questions[0].gold == cones == item.questions[0].gold
        assert built.difficulty["sweep_occluder_added"] is True


def test_a_typical_counting_item_reaches_02_only_with_an_added_panel():
    item = make_item("shape_count", {"n_shape_types": 2, "max_instances": 1}, [3, 0, 0], "sc", Frame(320, 240))
    assert sweep_item(item, [0.2]).sweep.levels[0].unreachable.code == "occluder_too_small"
    added = sweep_item(item, [0.2], occluder_id="add")
    assert added.sweep.reached == 1 and abs(added.sweep.levels[0].achieved - 0.2) <= 0.01


@pytest.mark.bpy
def test_cli_occluder_add_scene_and_ids(tmp_path):
    pytest.importorskip("bpy")
    source = tmp_path / "source"
    source.mkdir()
    (source / "item.json").write_text(counting_item(three_objects(), "cone").to_json())

    def sweep(occluder: str, out: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "stim3d", "sweep", "occlusion", str(source), "--levels", "0,0.5",
                               "--target", "1", "--occluder", occluder, "--out", str(tmp_path / out),
                               "--engine", "cycles", "--samples", "2", "--quiet"],
                              cwd=ROOT, capture_output=True, text=True, timeout=600)

    result = sweep("add", "added")
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((tmp_path / "added" / "sweeps.json").read_text())["sweeps"][0]
    assert summary["occluder_shape"] == "tile" and summary["occluder_added"] is True
    level = tmp_path / "added" / "items" / "hand-vis0000"
    item = json.loads((level / "item.json").read_text())
    panel = next(o for o in item["scene"]["objects"] if o["id"] == summary["occluder_id"])
    assert panel["countable"] is False
    from PIL import Image
    mask = np.asarray(Image.open(level / "mask.png"))
    assert (mask == panel["id"]).any() and not (mask == 1).any()  # Blender sees the panel, the target is hidden
    assert sweep("scene", "own").returncode == 1  # the scene's own objects: 0.0 unreachable, as before
    assert sweep("2", "by-id").returncode == 1
    bad = sweep("wall", "bad")
    assert bad.returncode == 2 and "--occluder" in bad.stderr and "Traceback" not in bad.stderr
