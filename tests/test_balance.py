"""Answer balance: scheduled answers over a task's cells, realised exactly, and the dysm3d preset near chance."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from stim3d.render.batch.config import ConfigError, load_config, parse_config
from stim3d.render.batch.plan import expand
from stim3d.render.batch.records import records_for
from stim3d.render.batch.summary import constant_baselines
from stim3d.scenes.balance import schedule
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import Item, Provenance

FAMILY_FRAMES = {"letters": Frame(320, 240)}  # letters need pixels per dot; the rest compose fine small
SMALL = Frame(128, 96)
PRESET = Path(__file__).resolve().parents[1] / "stim3d" / "scenes" / "presets" / "dysm3d.yaml"


def rendered(item: Item) -> Item:
    provenance = Provenance(stim3d_version="test", blender_version=None, engine="raster", samples=1, device="cpu",
                            denoise=False)
    return item.model_copy(update={"provenance": provenance})


def test_schedule_respects_each_items_space_and_balances_what_it_can():
    spaces = [[0, 1]] * 10 + [[0, 1, 2, 3]] * 10
    cells = [0] * 10 + [1] * 10
    chosen = schedule(spaces, cells, np.random.default_rng(1))
    assert all(a in s for a, s in zip(chosen, spaces))
    assert sorted(Counter(chosen).values()) == [5, 5, 5, 5]
    # Inside the wide cell only 2 and 3 are left to even the marginal out, but each cell is spread, not constant.
    assert len(set(chosen[10:])) >= 2 and len(set(chosen[:10])) == 2


def test_schedule_is_deterministic_and_seeded():
    spaces, cells = [[0, 1, 2]] * 30, [i % 3 for i in range(30)]
    a = schedule(spaces, cells, np.random.default_rng(5))
    assert a == schedule(spaces, cells, np.random.default_rng(5))
    assert a != schedule(spaces, cells, np.random.default_rng(6))
    assert Counter(a) == Counter({0: 10, 1: 10, 2: 10})


def test_an_explicit_answer_is_left_alone_and_an_unrealisable_one_is_one_line():
    task = {"family": "shape_count", "count": 4, "grid": {"max_instances": [2]}, "params": {"answer": 1}}
    assert {p.params["answer"] for p in expand(parse_config({"tasks": [task]}))} == {1}
    bad = {"family": "shape_count", "count": 4, "params": {"max_instances": 2, "answer": 3}}
    with pytest.raises(ConfigError, match="answer 3 cannot be realised"):
        parse_config({"tasks": [bad]})
    with pytest.raises(ConfigError, match="answer 0 cannot be realised"):
        parse_config({"tasks": [{"family": "shape_count", "count": 1, "params": {"n_shape_types": 5, "answer": 0}}]})


def test_dysm3d_preset_is_balanced_and_every_scheduled_answer_is_realised_exactly():
    """Compose every item of the preset (no render): gold == scheduled answer, best constant near 1/distinct."""
    config = load_config(PRESET)
    records = []
    golds: dict[str, Counter] = defaultdict(Counter)
    for plan in expand(config):
        frame = FAMILY_FRAMES.get(plan.family, SMALL)
        item = make_item(plan.family, plan.params, [config.seed, plan.task_index, plan.item_index], plan.item_id,
                         frame, plan.split)
        (question,) = item.questions
        if "answer" in plan.params:
            assert question.gold == plan.params["answer"], plan.item_id
        golds[plan.family][question.gold] += 1
        records += records_for(rendered(item), f"items/{plan.item_id}/image.png", "ab" * 32)
    for family, counts in golds.items():
        best = max(counts.values()) / sum(counts.values())
        assert best <= 1 / len(counts) + 0.05, (family, counts)
    baselines = {b.question_type: b for b in constant_baselines(records)}
    assert baselines["shape_count (integer)"].accuracy == 0.25
    assert baselines["shape_color_count (integer)"].accuracy == 0.25
    assert baselines["spatial_grid (integer)"].accuracy == 0.2
    assert baselines["form_constancy (yes_no)"].accuracy == 0.5
    letters = baselines["letters (letters)"]
    assert letters.accuracy <= 1 / letters.distinct_answers + 0.05
    # Per cell: 60 counting cells of 2 items (a constant gets at most both), 16 grid cells of 5 items.
    assert baselines["shape_count (integer)"].cells == 60
    assert baselines["spatial_grid (integer)"].cells == 16
    assert baselines["spatial_grid (integer)"].per_cell_accuracy < 0.5


def test_score_reports_the_per_cell_constant_baseline():
    """`stim3d score` rows carry both constants: marginal, and the best constant within each grid cell."""
    from stim3d.render.batch.summary import cell_key
    from stim3d.scoring.report import format_report, score

    plans = expand(parse_config({"seed": 3, "tasks": [
        {"family": "shape_count", "count": 8, "grid": {"max_instances": [1, 3]}, "params": {"n_shape_types": 2}}]}))
    records = []
    for plan in plans:
        item = make_item(plan.family, plan.params, [3, plan.task_index, plan.item_index], plan.item_id, SMALL)
        records += records_for(rendered(item), f"items/{plan.item_id}/image.png", "ab" * 32)
    golds = [r.answer.gold for r in records]
    assert Counter(golds) == Counter({0: 2, 1: 2, 2: 2, 3: 2})  # the marginal is flat ...
    row = score(records, {}, cell_of=cell_key).rows[0].to_dict()
    assert row["constant_baseline"] == 0.25
    # ... while the max_instances=1 cell can only hold 0 and 1: a constant per cell gets 2 + 2 of 8.
    assert row["constant_baseline_per_cell"] == 0.5
    assert "per cell" in format_report(score(records, {}, cell_of=cell_key))[1]


def test_dysm3d_preset_renders_at_the_published_resolution():
    render = load_config(PRESET).render
    assert (render.width, render.height, render.engine) == (800, 600, "cycles")
    text = PRESET.read_text()
    assert "--width 640 --height 480" in text  # the cheaper size stays a documented option
