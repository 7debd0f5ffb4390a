"""Nothing corrupt counts as done, one run per folder, and a closed progress stream never ends a batch.

Renders with the raster engine (no Blender; a fraction of a second per item), so
every check runs the real command line end to end.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from stim3d.files import atomic_folder
from stim3d.render.batch.lock import LOCK_NAME, folder_lock
from tests.batch_support import RASTER_CONFIG, ROOT, complete_items, stim3d, wait_until

ITEM = "shape_count-t0-00002"


def config(folder: Path, count: int = 5, name: str = "batch.yaml") -> Path:
    path = folder / name
    path.write_text(RASTER_CONFIG.format(count=count))
    return path


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("reference")
    result = stim3d("render", str(config(folder)), "--out", str(folder / "out"), "--quiet")
    assert result.returncode == 0, result.stderr
    return folder / "batch.yaml", folder / "out"


def item_files(out: Path) -> dict[str, bytes]:
    """Every file of every item but timing.json (wall-clock times), plus records.jsonl."""
    files = {"records.jsonl": (out / "records.jsonl").read_bytes()}
    for folder in sorted((out / "items").iterdir()):
        for path in sorted(folder.iterdir()):
            if path.name != "timing.json":
                files[f"{folder.name}/{path.name}"] = path.read_bytes()
    return files


def copy_of(reference: tuple[Path, Path], tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(reference[1], out)
    return out


DAMAGE = {  # item -> what is done to it; each is found on resume, named, and re-rendered
    "shape_count-t0-00000": "truncated image",
    "shape_count-t0-00001": "truncated mask",
    "shape_count-t0-00002": "edited item.json",
    "shape_count-t0-00003": "no checksums.json",
    "shape_count-t0-00004": "invalid item.json, checksums rewritten to match",
}


def damage(folder: Path, how: str) -> None:
    if how == "truncated image":
        (folder / "image.png").write_bytes((folder / "image.png").read_bytes()[:100])
    elif how == "truncated mask":
        (folder / "mask.png").write_bytes((folder / "mask.png").read_bytes()[:60])
    elif how == "edited item.json":
        (folder / "item.json").write_text((folder / "item.json").read_text().replace('"seed": ', '"seed": 1'))
    elif how == "no checksums.json":
        (folder / "checksums.json").unlink()
    else:
        text = '{"item_id": "x"}'
        (folder / "item.json").write_text(text)
        sums = json.loads((folder / "checksums.json").read_text())
        sums["item.json"] = {"sha256": hashlib.sha256(text.encode()).hexdigest(), "bytes": len(text)}
        (folder / "checksums.json").write_text(json.dumps(sums))


def test_resume_re_renders_every_item_whose_files_do_not_verify(reference, tmp_path):
    out = copy_of(reference, tmp_path)
    for item_id, how in DAMAGE.items():
        damage(out / "items" / item_id, how)
    result = stim3d("render", str(reference[0]), "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    assert f"rendered: {len(DAMAGE)} " in result.stdout, result.stdout
    assert all(f"redone {item_id}" in result.stdout for item_id in DAMAGE), result.stdout
    assert json.loads((out / "summary.json").read_text())["redone"].keys() == DAMAGE.keys()
    # byte-identical to the uninterrupted run, checksums.json included (it holds no wall-clock time)
    assert item_files(out) == item_files(reference[1])


def test_checksums_cover_the_item_files_and_stay_out_of_item_json(reference):
    folder = reference[1] / "items" / ITEM
    sums = json.loads((folder / "checksums.json").read_text())
    assert sorted(sums) == ["image.png", "item.json", "mask.png"]
    assert all(sums[name]["sha256"] == hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in sums)
    assert "checksum" not in (folder / "item.json").read_text()


def test_force_with_a_smaller_config_removes_the_items_it_no_longer_plans(reference, tmp_path):
    out = copy_of(reference, tmp_path)
    (out / "failures").mkdir()
    (out / "failures" / "shape_count-t0-00003.json").write_text('{"item_id": "shape_count-t0-00003"}\n')
    smaller = config(tmp_path, count=2, name="smaller.yaml")
    smaller.write_text(smaller.read_text().replace("seed: 9", "seed: 10"))
    result = stim3d("render", str(smaller), "--out", str(out), "--quiet", "--force")
    assert result.returncode == 0, result.stderr
    assert complete_items(out) == ["shape_count-t0-00000", "shape_count-t0-00001"]
    assert list((out / "failures").iterdir()) == []
    records = {json.loads(line)["item_id"] for line in (out / "records.jsonl").read_text().splitlines()}
    assert records == set(complete_items(out))


# -- one run per folder ----------------------------------------------------------------------------

def test_a_second_run_into_a_locked_folder_is_refused_naming_the_holder(reference, tmp_path):
    out = copy_of(reference, tmp_path)
    before = item_files(out)
    with folder_lock(out):
        for command in (["render", str(reference[0]), "--out", str(out)], ["merge", str(out), "--out", str(out)]):
            result = stim3d(*command)
            lines = result.stderr.strip().splitlines()
            assert result.returncode == 2 and len(lines) == 1, result.stderr
            assert f"in use by another stim3d run: pid {os.getpid()}" in lines[0], lines[0]
    assert item_files(out) == before and not (out / LOCK_NAME).exists()


def test_two_concurrent_runs_on_one_folder_the_second_is_refused(tmp_path):
    cfg = config(tmp_path, count=10)
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-m", "stim3d", "render", str(cfg), "--out", str(out), "--quiet"],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: (out / LOCK_NAME).exists(), timeout=60)
        second = stim3d("render", str(cfg), "--out", str(out), "--quiet")
        assert first.poll() is None, "the first run ended before the second started; make the batch larger"
    finally:
        stdout, stderr = first.communicate(timeout=300)
    assert second.returncode == 2 and "in use by another stim3d run" in second.stderr, second.stderr
    assert first.returncode == 0, stderr
    assert "rendered: 10 " in stdout  # every item rendered once, by the first run
    assert not (out / LOCK_NAME).exists()


def test_a_lock_left_by_a_dead_process_is_taken_over(reference, tmp_path):
    out = copy_of(reference, tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (out / LOCK_NAME).write_text(json.dumps({"pid": int(dead.stdout), "host": os.uname().nodename,
                                             "command": "stim3d render"}) + "\n")
    result = stim3d("render", str(reference[0]), "--out", str(out), "--quiet")
    assert result.returncode == 0 and "rendered: 0 " in result.stdout, result.stderr
    assert not (out / LOCK_NAME).exists()


def test_without_flock_the_pid_and_host_decide(tmp_path, monkeypatch):
    """A network mount without flock: a dead local holder is stale, a live one or another host's is honoured."""
    import errno
    import socket

    import stim3d.render.batch.lock as lock

    def no_flock(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(lock.fcntl, "flock", no_flock)
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)
    here = socket.gethostname()
    for pid, host, taken in ((dead, here, True), (1, here, False), (dead, "elsewhere", False)):
        (tmp_path / LOCK_NAME).write_text(json.dumps({"pid": pid, "host": host, "command": "stim3d render a"}))
        if taken:
            with folder_lock(tmp_path):
                assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()
        else:
            with pytest.raises(lock.FolderLocked, match=f"pid {pid} on {host}"), folder_lock(tmp_path):
                pass


def test_shards_sharing_a_folder_lock_only_their_own_slice(reference, tmp_path):
    out = tmp_path / "out"
    with folder_lock(out, "1/2"):
        other = stim3d("render", str(reference[0]), "--out", str(out), "--quiet", "--shard", "2/2")
        same = stim3d("render", str(reference[0]), "--out", str(out), "--quiet", "--shard", "1/2")
    assert other.returncode == 0, other.stderr
    assert same.returncode == 2 and "in use" in same.stderr


def test_a_concurrent_reader_never_misses_a_replaced_item_folder(tmp_path):
    final = tmp_path / "items" / "x"
    with atomic_folder(final) as tmp:
        (tmp / "item.json").write_text("0")
    misses, done = [], threading.Event()

    def read() -> None:
        while not done.is_set():
            if not (final / "item.json").is_file():
                misses.append(1)

    reader = threading.Thread(target=read)
    reader.start()
    for i in range(100):
        with atomic_folder(final) as tmp:
            (tmp / "item.json").write_text(str(i))
    done.set()
    reader.join()
    assert misses == [] and (final / "item.json").read_text() == "99"
    assert [p.name for p in final.parent.iterdir()] == ["x"]  # no old copy left behind


def test_a_rerun_of_a_killed_merge_removes_its_temporaries(reference, tmp_path):
    out = copy_of(reference, tmp_path)
    left = [out / "items" / f".{ITEM}.tmp-otherhost-4242", out / ".records.jsonl.tmp-otherhost-4242"]
    left[0].mkdir()
    (left[0] / "image.png").write_bytes(b"half")
    left[1].write_text("half")
    result = stim3d("merge", str(out), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert not any(p.exists() for p in left)


# -- progress on a closed stream -----------------------------------------------------------------

def test_a_closed_progress_pipe_does_not_end_the_batch(tmp_path):
    """`stim3d render ... 2>&1 | head -2`: the reader leaves after two lines; the batch still finishes."""
    cfg = config(tmp_path, count=8)
    out = tmp_path / "out"
    command = (f"{sys.executable} -m stim3d render {cfg} --out {out} --workers 2 2>&1 | head -2; "
               "exit ${PIPESTATUS[0]}")
    result = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert len(result.stdout.splitlines()) == 2
    assert result.returncode == 0, result.stdout
    assert len(complete_items(out)) == 8
    assert len((out / "records.jsonl").read_text().splitlines()) == 8
    assert json.loads((out / "summary.json").read_text())["rendered"] == 8
