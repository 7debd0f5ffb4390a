"""`BatchFolder.state`: the one done-or-redo rule, on the folder rendered by 70581f6 (tests/fixtures).

The keys the fixture's items must match are computed by `keys.item_key` from the fixture's
own config, and are the ones recorded in their item.json when 70581f6 rendered them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stim3d.render.batch.config import ConfigError, load_config
from stim3d.render.batch.folder import BatchFolder, write_checksums
from stim3d.render.batch.keys import expected_keys

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "batch_70581f6"
FIRST, SECOND = "shape_count-t0-00000", "shape_count-t0-00001"


@pytest.fixture
def batch(tmp_path) -> tuple[BatchFolder, dict[str, str]]:
    shutil.copytree(FIXTURE / "batch", tmp_path / "batch")
    return BatchFolder(tmp_path / "batch"), expected_keys(load_config(FIXTURE / "config.yaml"))


def test_the_fixture_items_are_done_for_the_keys_of_their_config(batch):
    folder, keys = batch
    recorded = {i: json.loads((folder.item_dir(i) / "item.json").read_text())["provenance"]["item_key"] for i in keys}
    assert recorded == keys  # keys.item_key still hashes the same bytes as 70581f6 did
    assert [folder.state(i, k).done for i, k in sorted(keys.items())] == [True, True]


def test_a_stored_key_that_differs_means_redo_even_with_matching_checksums(batch):
    folder, keys = batch
    path = folder.item_dir(SECOND) / "item.json"
    item = json.loads(path.read_text())
    item["provenance"]["item_key"] = "0" * 16
    path.write_text(json.dumps(item))
    write_checksums(folder.item_dir(SECOND))  # intact by its checksums: only the key is wrong
    state = folder.state(SECOND, keys[SECOND])
    assert not state.done and "item key differs" in state.reason


@pytest.mark.parametrize(("damage", "reason"), [
    (lambda d: (d / "checksums.json").unlink(), "no checksums.json"),
    (lambda d: (d / "mask.png").write_bytes(b"x"), "mask.png does not match its checksum (truncated or changed)"),
    (lambda d: shutil.rmtree(d), "not rendered"),
])
def test_checksums_are_required_and_each_problem_is_named(batch, damage, reason):
    folder, keys = batch
    damage(folder.item_dir(FIRST))
    state = folder.state(FIRST, keys[FIRST])
    assert (state.done, state.reason) == (False, reason)
    assert folder.state(SECOND, keys[SECOND]).done


def test_the_listing_follows_records_and_names_what_it_leaves_out(batch):
    folder, _ = batch
    shutil.copytree(folder.item_dir(FIRST), folder.items / "dropped-in")
    skipped: dict[str, str] = {}
    assert [p.name for p in folder.item_folders(skipped)] == [FIRST, SECOND]
    assert skipped == {"dropped-in": "not in records.jsonl (not an item of this batch)"}


@pytest.mark.parametrize("item_id", ["../x", "/abs", ".hidden", ""])
def test_an_item_id_that_is_not_one_path_component_never_becomes_a_path(batch, item_id):
    folder, _ = batch
    with pytest.raises(ConfigError, match="item id"):
        folder.item_dir(item_id)
