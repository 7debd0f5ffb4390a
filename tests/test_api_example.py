"""The README's Python API example runs as printed, and its calls do what it says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.bpy


def readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    match = re.search(r"<!-- api-example -->\n```python\n(.*?)```", text, re.S)
    assert match, "README.md lost its <!-- api-example --> python block"
    return match.group(1)


def test_readme_api_example_runs_and_writes_what_it_says(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(readme_example())
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert "'shape_count'" in lines[0] and "'letters'" in lines[0]
    assert "2 rendered" in done.stdout

    import stim3d

    single = stim3d.load_batch(tmp_path / "out-api" / "items-demo")
    (item,) = single.items
    assert item.item_id == "shape_count-seed7" and item.provenance is not None
    assert single.records[0].answer.gold == item.questions[0].gold
    letters = stim3d.load_batch(tmp_path / "out-api" / "letters")
    assert [i.family for i in letters.items] == ["letters", "letters"]
    assert all(stim3d.load_batch(tmp_path / "out-api" / "letters").image_path(i.item_id).is_file() for i in letters.items)
    # a rerun renders nothing new (resume), and compose is deterministic
    again = stim3d.compose("shape_count", {"n_shape_types": 3, "min_visibility": 0.8}, seed=7, width=320, height=240)
    assert again.to_json() == stim3d.compose("shape_count", {"n_shape_types": 3, "min_visibility": 0.8}, seed=7,
                                             width=320, height=240).to_json()


def test_render_items_resumes_and_rerenders_an_edited_item(tmp_path):
    import stim3d

    item = stim3d.compose("shape_count", {"n_shape_types": 2}, seed=3, width=64, height=48)
    (folder,) = stim3d.render_items([item], tmp_path, {"engine": "workbench"})
    first = (folder / "item.json").stat().st_mtime_ns
    stim3d.render_items([item], tmp_path, {"engine": "workbench"})
    assert (folder / "item.json").stat().st_mtime_ns == first  # unchanged item: skipped
    moved = item.model_copy(deep=True)
    moved.scene.objects[0].location = (moved.scene.objects[0].location[0] + 0.01, *moved.scene.objects[0].location[1:])
    stim3d.render_items([moved], tmp_path, {"engine": "workbench"})
    assert (folder / "item.json").stat().st_mtime_ns != first  # edited item: rendered again


def test_load_batch_of_a_folder_that_is_not_a_batch_is_one_clear_error(tmp_path):
    import stim3d
    from stim3d.render.batch.config import ConfigError

    with pytest.raises(ConfigError, match="not a stim3d batch folder"):
        stim3d.load_batch(tmp_path)
