"""Shards: k/n slices rendered anywhere, merged into the same batch as an unsharded run."""

from __future__ import annotations

import json
import shutil

import pytest

from stim3d.render.batch.config import ConfigError, load_config
from stim3d.render.batch.driver import Shard
from stim3d.render.batch.plan import expand
from tests.batch_support import (
    assert_same_batch,
    complete_items,
    start_stim3d,
    stim3d,
    temporaries,
    write_config,
)

ITEMS = 9


@pytest.fixture(scope="module")
def reference(reference_batch):
    return reference_batch


def test_shards_are_disjoint_slices_covering_the_plan(tmp_path):
    plans = expand(load_config(write_config(tmp_path)))
    slices = [Shard(k, 3).select(plans) for k in (1, 2, 3)]
    ids = [plan.item_id for part in slices for plan in part]
    assert sorted(ids) == sorted(plan.item_id for plan in plans) and len(set(ids)) == len(plans)
    assert [plan.item_id for plan in slices[1]] == [plans[i].item_id for i in range(1, len(plans), 3)]
    assert Shard(12, 12).select(plans) == []  # more shards than items: the extra shards are empty, not an error


def test_bad_shard_is_one_clear_line(tmp_path):
    for text in ["0/3", "4/3", "3", "a/b", "2/0"]:
        with pytest.raises(ConfigError, match="k/n"):
            Shard.parse(text)
    result = stim3d("render", str(write_config(tmp_path)), "--out", str(tmp_path / "out"), "--shard", "4/3")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "shard 4/3" in result.stderr and not (tmp_path / "out" / "items").exists()


@pytest.mark.bpy
def test_merged_shards_equal_the_unsharded_batch(reference, tmp_path):
    """Shards 1/3 and 2/3 run at the same time into one shared folder, 3/3 into its own; the merge equals the
    unsharded batch byte for byte, whatever order the folders are named in."""
    config, expected = reference
    shared, alone = tmp_path / "shared", tmp_path / "shard3"
    runs = [start_stim3d("render", str(config), "--out", str(out), "--shard", shard, "--quiet")
            for out, shard in ((shared, "1/3"), (shared, "2/3"), (alone, "3/3"))]
    for run in runs:
        stdout, stderr = run.communicate(timeout=300)
        assert run.returncode == 0, stderr
        assert "run `stim3d merge`" in stdout
    assert len(complete_items(shared)) == 6 and len(complete_items(alone)) == 3
    assert not (shared / "records.jsonl").exists()  # batch-level files are the merge's job

    merged = tmp_path / "merged"
    result = stim3d("merge", str(alone), str(shared), "--out", str(merged))
    assert result.returncode == 0, result.stderr
    assert f"present: {ITEMS}" in result.stdout
    assert_same_batch(merged, expected)
    assert temporaries(shared) == [] and temporaries(merged) == []
    summary = json.loads((merged / "summary.json").read_text())
    assert summary["present"] == ITEMS and summary["failed"] == {} and summary["missing"] == []

    in_place = stim3d("merge", str(shared), str(alone), "--out", str(shared))  # merging into a shard folder works too
    assert in_place.returncode == 0, in_place.stderr
    assert_same_batch(shared, expected)


def _copy_shard(reference_out, folder, shard: Shard, plans) -> None:
    """A shard folder as `render --shard` leaves it: the manifest and the slice's item folders."""
    (folder / "items").mkdir(parents=True)
    shutil.copy(reference_out / "batch.json", folder / "batch.json")
    for plan in shard.select(plans):
        shutil.copytree(reference_out / "items" / plan.item_id, folder / "items" / plan.item_id)


@pytest.mark.bpy
def test_merge_names_missing_items_and_carries_failures(reference, tmp_path):
    config, expected = reference
    plans = expand(load_config(config))
    first, second = tmp_path / "s1", tmp_path / "s2"
    _copy_shard(expected, first, Shard(1, 3), plans)
    _copy_shard(expected, second, Shard(2, 3), plans)
    failed_id = Shard(2, 3).select(plans)[0].item_id
    shutil.rmtree(second / "items" / failed_id)
    (second / "failures").mkdir()
    (second / "failures" / f"{failed_id}.json").write_text(
        json.dumps({"item_id": failed_id, "reason": "constraint 'min_visibility' could not be met", "attempts": 1}))

    result = stim3d("merge", str(first), str(second), "--out", str(tmp_path / "merged"))
    assert result.returncode == 1
    assert "present: 5" in result.stdout and "failed: 1" in result.stdout and "missing: 3" in result.stdout
    assert f"failed {failed_id}: constraint 'min_visibility'" in result.stdout
    assert "rerun their shard" in result.stdout
    merged = tmp_path / "merged"
    assert (merged / "failures" / f"{failed_id}.json").is_file()
    records = [json.loads(line) for line in (merged / "records.jsonl").read_text().splitlines()]
    assert [r["item_id"] for r in records] == sorted(complete_items(first) + complete_items(second))
    reference_lines = {json.loads(line)["item_id"]: line for line in (expected / "records.jsonl").read_text().splitlines()}
    assert (merged / "records.jsonl").read_text().splitlines() == [reference_lines[r["item_id"]] for r in records]


def _manifest_only(folder, config_path) -> None:
    folder.mkdir()
    config = load_config(config_path)
    (folder / "batch.json").write_text(json.dumps({"config_hash": config.content_hash(),
                                                  "config": config.model_dump(mode="json")}))


def test_merge_refuses_folders_of_other_configs(tmp_path):
    _manifest_only(tmp_path / "a", write_config(tmp_path, "a.yaml", seed=11))
    _manifest_only(tmp_path / "b", write_config(tmp_path, "b.yaml", seed=99))
    refused = stim3d("merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "mixed"))
    assert refused.returncode == 2 and "different config" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "mixed").exists()
    not_a_batch = stim3d("merge", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x"))
    assert not_a_batch.returncode == 2 and "not a batch folder" in not_a_batch.stderr
