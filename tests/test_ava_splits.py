"""Distribution-matched splits (`splits: {train: n, val: m, test: k}` on a task, render/batch/config.py).

Each split is planned over the same grid with its own answer schedule, and item
indices run on across splits, so no scene can repeat between splits.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from stim3d.render.batch.config import ConfigError, parse_config
from stim3d.render.batch.plan import expand
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item

FRAME = Frame(96, 72)
SPLITS = {"train": 12, "val": 4, "test": 8}


def config(**task):
    return parse_config({"seed": 3, "tasks": [{"family": "ava_depth_relative", **task}]})


def test_splits_are_matched_in_distribution_and_disjoint_in_scenes():
    cfg = config(splits=SPLITS, grid={"max_distractors": [0, 2]})
    plans = expand(cfg)
    assert Counter(p.split for p in plans) == SPLITS
    assert len({p.item_index for p in plans}) == len(plans)  # the seed's third word: never shared
    assert all(p.item_id.startswith(f"ava_depth_relative-t0-{p.split}-") for p in plans)
    scenes: dict[str, set[str]] = {}
    for plan in plans:
        item = make_item(plan.family, plan.params, [cfg.seed, plan.task_index, plan.item_index], plan.item_id, FRAME,
                         plan.split)
        assert item.split == plan.split
        scenes.setdefault(plan.split, set()).add(hashlib.sha256(item.scene.model_dump_json().encode()).hexdigest())
    assert sum(len(s) for s in scenes.values()) == len(plans)  # no scene twice, within or across splits
    for split, n in SPLITS.items():
        mine = [p for p in plans if p.split == split]
        assert Counter(p.params["max_distractors"] for p in mine) == {0: n // 2, 2: n // 2}  # same grid per split
        assert Counter(p.params["answer"] for p in mine) == {"red": n // 2, "blue": n // 2}  # balanced per split


def test_a_task_without_splits_plans_and_hashes_as_before():
    plain = config(count=4)
    assert [p.item_id for p in expand(plain)] == [f"ava_depth_relative-t0-{i:05d}" for i in range(4)]
    assert "splits" not in plain.model_dump(mode="json")["tasks"][0]
    assert config(splits={"test": 4}).content_hash() != plain.content_hash()


@pytest.mark.parametrize("task,message", [
    ({"splits": {"train": 4, "test": 2}, "count": 5}, "count 5 is not the splits' total 6"),
    ({}, "give count"),
    ({"splits": {"train": 4}, "split": "val"}, "not both"),
    ({"splits": {"train": 0}}, "split 'train'"),
    ({"splits": {"../x": 2}}, "split"),
])
def test_bad_splits_are_one_line_errors(task, message):
    with pytest.raises(ConfigError) as error:
        config(**task)
    assert message in str(error.value) and "\n" not in str(error.value)
