"""Integrity checks of a batch folder, through their public functions (issue 30.3).

Checksums of files longer than one read chunk, a same-size corruption (the check
must compare the hash, not only the size), the lock's file descriptor released
on every way out of the `with` block, and a resume that re-renders an item whose
stored key differs from the plan's instead of skipping it.
"""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from stim3d.files import file_sha256
from stim3d.render.batch.folder import verify_item, write_checksums
from stim3d.render.batch.lock import FolderLocked, folder_lock
from tests.batch_support import stim3d, write_config

CHUNK = 1 << 20  # stim3d/files.py reads 1 MiB at a time


def test_checksum_of_a_file_longer_than_one_read_chunk(tmp_path):
    """2.5 chunks of bytes: the digest equals hashlib's over the whole content; a change in chunk 3 changes it."""
    data = bytes(range(256)) * (CHUNK * 5 // 2 // 256)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()
    changed = bytearray(data)
    changed[-1] ^= 0xFF  # last byte, in the third chunk
    path.write_bytes(bytes(changed))
    assert file_sha256(path) == hashlib.sha256(bytes(changed)).hexdigest() != hashlib.sha256(data).hexdigest()


def _item_folder(tmp_path):
    folder = tmp_path / "item"
    folder.mkdir()
    for name, size in (("item.json", 40), ("image.png", 3 * CHUNK // 2), ("mask.png", 100)):
        (folder / name).write_bytes(bytes((i * 7 + len(name)) % 251 for i in range(size)))
    write_checksums(folder)
    return folder


def test_a_same_size_corruption_is_found(tmp_path):
    folder = _item_folder(tmp_path)
    assert verify_item(folder) is None
    image = folder / "image.png"
    data = bytearray(image.read_bytes())
    data[CHUNK + 10] ^= 0x01  # one bit, past the first chunk, the size unchanged
    image.write_bytes(bytes(data))
    problem = verify_item(folder)
    assert problem is not None and "image.png" in problem


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to count descriptors")
def test_the_lock_descriptor_is_released_on_every_way_out(tmp_path):
    before = _open_fds()
    with folder_lock(tmp_path / "a"):  # normal exit
        pass
    assert _open_fds() == before
    with pytest.raises(RuntimeError, match="boom"), folder_lock(tmp_path / "b"):  # an exception inside the block
        raise RuntimeError("boom")
    assert _open_fds() == before
    with folder_lock(tmp_path / "c"):  # refused: the folder is held (by this process, through another descriptor)
        with pytest.raises(FolderLocked), folder_lock(tmp_path / "c"):
            pass
        assert _open_fds() == before + 1  # only the holder's descriptor is open
    assert _open_fds() == before
    with folder_lock(tmp_path / "c"):  # and the lock can be taken again afterwards
        pass
    assert _open_fds() == before
    with folder_lock(tmp_path / "d", shard="1/2"):  # two shards hold the folder's lock shared: the first to
        with folder_lock(tmp_path / "d", shard="2/2"):  # leave is not the sole holder, and closes its descriptors too
            pass
        assert _open_fds() == before + 2  # shard 1/2's shared lock and its own shard lock
    assert _open_fds() == before


@pytest.mark.bpy
def test_a_stored_item_key_that_differs_from_the_plan_is_rendered_again(tmp_path):
    """An intact folder (checksums match) whose provenance key is not the plan's is redone, not skipped."""
    config = write_config(tmp_path, count=1)
    out = tmp_path / "out"
    first = stim3d("render", str(config), "--out", str(out), "--quiet")
    assert first.returncode == 0, first.stderr
    folder = out / "items" / "shape_count-t0-00000"
    item = json.loads((folder / "item.json").read_text())
    planned = item["provenance"]["item_key"]
    item["provenance"]["item_key"] = "0" * 16
    (folder / "item.json").write_text(json.dumps(item))
    write_checksums(folder)  # intact by its own checksums: only the key tells it apart
    assert verify_item(folder) is None
    again = stim3d("render", str(config), "--out", str(out), "--quiet")
    assert again.returncode == 0, again.stderr
    assert "rendered: 1" in again.stdout, again.stdout
    assert json.loads((folder / "item.json").read_text())["provenance"]["item_key"] == planned
