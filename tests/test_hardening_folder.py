"""The batch folder's second hardening round (issue 25 items 1, 2 and 8): links, names, locks, litter.

The rule (docs/hardening.md): stim3d never writes, deletes or reads through a symbolic
link inside a batch folder. Each test here failed before `render/batch/folder.py` owned
the folder: a planted link made stim3d delete or overwrite what it pointed to, an edited
item id deleted a folder outside `out`, a plain and a shard run shared one folder.

Renders use the raster engine (no Blender): a fraction of a second per item.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from stim3d.api import compose, render_items
from stim3d.render.batch.config import ConfigError
from stim3d.render.batch.lock import FolderLocked, folder_lock
from tests.batch_support import RASTER_CONFIG, stim3d

RASTER = {"engine": "raster", "samples": 1}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    """A three-item raster batch (rendered once; tests copy it)."""
    folder = tmp_path_factory.mktemp("rendered")
    (folder / "batch.yaml").write_text(RASTER_CONFIG.format(count=3))
    result = stim3d("render", str(folder / "batch.yaml"), "--out", str(folder / "out"), "--quiet")
    assert result.returncode == 0, result.stderr
    return folder


def copy_of(rendered: Path, tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(rendered / "out", tmp_path / "out")
    (tmp_path / "small.yaml").write_text(RASTER_CONFIG.format(count=1))
    shutil.copy(rendered / "batch.yaml", tmp_path / "batch.yaml")
    return tmp_path / "batch.yaml", tmp_path / "out"


def precious(tmp_path: Path) -> Path:
    """A folder outside every batch, holding a file nobody may touch."""
    folder = tmp_path / "precious"
    (folder / "keep").mkdir(parents=True)
    (folder / "keep" / "data.txt").write_text("mine")
    (folder / "other.json").write_text("{}")
    return folder


def untouched(folder: Path) -> bool:
    return (folder / "keep" / "data.txt").read_text() == "mine" and (folder / "other.json").read_text() == "{}"


def one_line_refusal(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


# -- 25.1: symbolic links inside a batch folder -------------------------------------------------------------

@pytest.mark.parametrize("name", ["items", "failures"])
def test_force_never_deletes_through_a_linked_items_or_failures_folder(rendered, tmp_path, name):
    config, out = copy_of(rendered, tmp_path)
    target = precious(tmp_path)
    if (out / name).exists():
        shutil.rmtree(out / name)
    (out / name).symlink_to(target, target_is_directory=True)
    result = stim3d("render", str(tmp_path / "small.yaml"), "--out", str(out), "--force", "--quiet")
    one_line_refusal(result, f"{out / name}", "symbolic link")
    assert untouched(target)


def test_a_linked_items_folder_is_not_written_through(rendered, tmp_path):
    config, out = copy_of(rendered, tmp_path)
    target = tmp_path / "elsewhere"
    shutil.move(out / "items", target)
    (out / "items").symlink_to(target, target_is_directory=True)
    shutil.rmtree(target / "shape_count-t0-00001")  # an item to redo: it would be written into `elsewhere`
    result = stim3d("render", str(config), "--out", str(out), "--quiet")
    one_line_refusal(result, "symbolic link")
    assert sorted(p.name for p in target.iterdir()) == ["shape_count-t0-00000", "shape_count-t0-00002"]


@pytest.mark.parametrize("dangling", [False, True])
def test_a_planted_lock_link_is_refused_and_its_target_never_written(rendered, tmp_path, dangling):
    config, out = copy_of(rendered, tmp_path)
    target = tmp_path / "victim.txt"
    if not dangling:
        target.write_text("do not overwrite")
    (out / ".stim3d.lock").symlink_to(target)
    result = stim3d("render", str(config), "--out", str(out), "--quiet")
    one_line_refusal(result, ".stim3d.lock", "symbolic link")
    assert (target.read_text() == "do not overwrite") if not dangling else not target.exists()


def test_export_coco_does_not_follow_a_mask_link_out_of_the_batch(rendered, tmp_path):
    config, out = copy_of(rendered, tmp_path)
    outside = tmp_path / "outside-mask.png"
    mask = out / "items" / "shape_count-t0-00001" / "mask.png"
    shutil.copy(mask, outside)  # a valid mask: following the link would export it without a word
    mask.unlink()
    mask.symlink_to(outside)
    result = stim3d("export", "coco", str(out), "--to", str(tmp_path / "coco"))
    assert result.returncode == 1, result.stderr  # an item was skipped: the export says so and exits 1
    assert "shape_count-t0-00001: mask.png is a symbolic link (not followed)" in result.stderr
    assert "2 images" in result.stdout, result.stdout
    names = [p.name for p in (tmp_path / "coco" / "images").iterdir()]
    assert len(names) == 2 and not any("00001" in n for n in names)


def test_a_resume_redoes_an_item_whose_image_is_a_link(rendered, tmp_path):
    config, out = copy_of(rendered, tmp_path)
    image = out / "items" / "shape_count-t0-00002" / "image.png"
    outside = tmp_path / "outside.png"
    shutil.copy(image, outside)
    image.unlink()
    image.symlink_to(outside)  # same bytes: a checksum that follows the link would call it done
    result = stim3d("render", str(config), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "rendered: 1" in result.stdout and "image.png: a symbolic link" in result.stdout, result.stdout
    assert not image.is_symlink() and outside.read_bytes() == image.read_bytes()


# -- 25.2: render_items writes and deletes only inside `out` --------------------------------------------------

def test_render_items_refuses_an_item_id_edited_after_compose(tmp_path):
    target = precious(tmp_path)
    item = compose("shape_count", {"max_instances": 2}, seed=1, width=64, height=48)
    item.item_id = "../precious"  # pydantic does not validate on assignment
    with pytest.raises(ConfigError, match=r"items\[0\].*item_id"):
        render_items([item], tmp_path / "out", RASTER)
    assert untouched(target) and not (tmp_path / "out").exists()


def test_render_items_refuses_an_absolute_id_set_through_model_copy(tmp_path):
    target = precious(tmp_path)
    item = compose("shape_count", {"max_instances": 2}, seed=1, width=64, height=48)
    with pytest.raises(ConfigError, match="item id|item_id"):
        render_items([item.model_copy(update={"item_id": str(target)})], tmp_path / "out", RASTER)
    assert untouched(target)


def test_render_items_refuses_a_linked_items_folder(tmp_path):
    target = precious(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "items").symlink_to(target, target_is_directory=True)
    item = compose("shape_count", {"max_instances": 2}, seed=1, width=64, height=48)
    with pytest.raises(ConfigError, match="symbolic link"):
        render_items([item], tmp_path / "out", RASTER)
    assert untouched(target) and sorted(p.name for p in target.iterdir()) == ["keep", "other.json"]


def test_render_items_removes_moved_aside_temporaries_of_a_killed_run(tmp_path):
    item = compose("shape_count", {"max_instances": 2}, seed=1, width=64, height=48)
    litter = tmp_path / "out" / "items" / f".{item.item_id}.tmp-old-host-1"
    litter.mkdir(parents=True)
    (litter / "image.png").write_bytes(b"half")
    render_items([item], tmp_path / "out", RASTER)
    assert not litter.exists()
    assert (tmp_path / "out" / "items" / item.item_id / "image.png").is_file()


# -- 25.8: one lock, no empty folders, no litter ---------------------------------------------------------------

def test_a_plain_run_and_a_shard_of_one_folder_exclude_each_other(tmp_path):
    out = tmp_path / "out"
    with folder_lock(out, "1/2"), folder_lock(out, "2/2"):  # shards share a folder
        with pytest.raises(FolderLocked, match="in use by another stim3d run"):
            with folder_lock(out):
                pass
    with folder_lock(out):
        with pytest.raises(FolderLocked, match="in use by another stim3d run"):
            with folder_lock(out, "1/2"):
                pass
    assert not out.exists()  # nothing was written: the folder the lock made is gone again


def test_a_refused_sweep_leaves_no_empty_out_folder(rendered, tmp_path):
    scores = tmp_path / "scores.json"
    scores.write_text("not json")
    out = tmp_path / "sweep"
    result = stim3d("sweep", "occlusion", str(rendered / "out" / "items" / "shape_count-t0-00000"), "--levels", "0.5",
                    "--out", str(out), "--scores", str(scores), "--quiet")
    assert result.returncode == 2, result.stderr
    assert not out.exists()


def test_a_missing_item_folder_given_to_sweep_is_named_as_such(rendered, tmp_path):
    missing = rendered / "out" / "items" / "shape_count-t0-00009"
    result = stim3d("sweep", "occlusion", str(missing), "--levels", "0.5", "--out", str(tmp_path / "sweep"), "--quiet")
    one_line_refusal(result, "no such item folder or config file")
    assert "no such config file" not in result.stderr


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_an_item_json_with_a_number_that_is_not_finite_is_refused_naming_the_field(rendered, tmp_path, number):
    """JSON readers take NaN and Infinity; a camera there would build a broken scene, so every reader refuses it."""
    item = tmp_path / "shape_count-t0-00000"
    shutil.copytree(rendered / "out" / "items" / item.name, item)
    text = (item / "item.json").read_text()
    location = text.index('"location": [', text.index('"camera"')) + len('"location": [')
    (item / "item.json").write_text(text[:location] + number + text[text.index(",", location):])
    for command in (["show", str(item)], ["sweep", "look", str(item), "--out", str(tmp_path / "looks")],
                    ["sweep", "occlusion", str(item), "--levels", "0.5", "--out", str(tmp_path / "sweep")]):
        one_line_refusal(stim3d(*command), "item.json: not a stim3d item: scene.camera.location.0: Input should be a "
                         "finite number")
    assert not (tmp_path / "looks").exists() and not (tmp_path / "sweep").exists()


def test_worker_scratch_left_by_a_killed_run_is_removed_by_the_next(rendered, tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    litter = tmpdir / f"stim3d-workers-{socket.gethostname()}-{int(dead.stdout)}-abc123"
    (litter / "worker-0").mkdir(parents=True)
    live = tmpdir / f"stim3d-workers-{socket.gethostname()}-{os.getpid()}-live"  # a running run's: kept
    live.mkdir()
    (tmp_path / "one.yaml").write_text(RASTER_CONFIG.format(count=1))
    result = stim3d("render", str(tmp_path / "one.yaml"), "--out", str(tmp_path / "out"), "--quiet",
                    env={"TMPDIR": str(tmpdir)})
    assert result.returncode == 0, result.stderr
    assert not litter.exists() and live.is_dir()
    assert tempfile.gettempdir() != str(tmpdir)  # the test process's own TMPDIR was not the one cleaned


def test_merge_names_an_invalid_item_json_instead_of_calling_it_missing(rendered, tmp_path):
    config, out = copy_of(rendered, tmp_path)
    (out / "items" / "shape_count-t0-00001" / "item.json").write_text('{"item_id": 3}')
    (out / "records.jsonl").unlink()
    result = stim3d("merge", str(out), "--out", str(tmp_path / "merged"))
    assert result.returncode == 1, result.stderr
    assert "not usable shape_count-t0-00001: item.json does not match its checksum" in result.stdout, result.stdout
    assert "no shard rendered them" not in result.stdout
