"""ROSE's answer balance: over a scheduled task no constant count beats chance on T1 or T2, and one scene's tasks agree.

The golds are read from the family's planning step on each item's own random stream
(what compose draws first; bench/rose_balance.py checks a full compose gives the same)
and, for one scene, from a composed item.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from pydantic import ValidationError

from stim3d.render.batch.config import parse_config
from stim3d.render.batch.plan import expand
from stim3d.scenes.families.base import Frame
from stim3d.scenes.families.rose.rose_grid import RoseGridParams
from stim3d.scenes.families.rose.rose_plan import answer_plan, plan_tasks
from stim3d.scenes.families.rose.rose_regions import permitted
from stim3d.scenes.items import make_item, seed_entropy

SEED = 11


def planned_golds(count: int, low: int = 1, high: int = 4) -> list[dict[str, object]]:
    """T1..T5 golds (counts for T1, T2 and T5; cell sets for T3, T4) of a scheduled task of `count` scenes."""
    config = parse_config({"seed": SEED, "tasks": [{
        "family": "rose_grid", "count": count, "grid": {"rows": [4, 5], "cols": [4, 6]},
        "params": {"min_exceptions": low, "max_exceptions": high}}]}, "test")
    golds = []
    for plan in expand(config):
        params = RoseGridParams.model_validate(plan.params)
        rng = np.random.default_rng(np.random.SeedSequence(seed_entropy(SEED, plan.task_index, plan.item_index)))
        exceptions, regions = plan_tasks(params, rng)
        scene: dict[str, object] = {"T1": len(exceptions), "exceptions": exceptions}
        for task, (case, region) in regions.items():
            cells = exceptions & permitted(region, params.rows, params.cols, exclude=task == "T5")
            scene[task] = len(cells) if task in ("T2", "T5") else cells
            scene[f"{task}_case"] = case
        golds.append(scene)
    return golds


def best_constant_share(values: list) -> float:
    return max(Counter(values).values()) / len(values)


def test_no_constant_count_beats_chance_on_t1_or_t2():
    """40 scenes, 1..4 exceptions: COUNT(n) is right on 1/4 of T1 and COUNT(g) on 1/5 of T2, for every n and g."""
    golds = planned_golds(40)
    assert Counter(g["T1"] for g in golds) == {1: 10, 2: 10, 3: 10, 4: 10}
    assert Counter(g["T2"] for g in golds) == {0: 8, 1: 8, 2: 8, 3: 8, 4: 8}
    assert best_constant_share([g["T1"] for g in golds]) == 0.25
    assert best_constant_share([g["T2"] for g in golds]) == 0.2


def test_one_scenes_tasks_agree_with_its_exceptions():
    """T2 never counts more than T1; a case names what the permitted cells hold; clicks are exceptions only."""
    for g in planned_golds(40):
        n, exceptions = g["T1"], g["exceptions"]
        assert 0 <= g["T2"] <= n  # type: ignore[operator]
        assert g["T2_case"] == ("none" if g["T2"] == 0 else "all" if g["T2"] == n else "some")
        for task in ("T3", "T4"):
            assert g[task] <= exceptions  # type: ignore[operator]
            held = len(g[task])  # type: ignore[arg-type]
            assert g[f"{task}_case"] == ("none" if held == 0 else "all" if held == n else "some")
        if n == 1:  # one exception: no region holds "some" of it
            assert "some" not in (g["T3_case"], g["T4_case"], g["T5_case"])


def test_a_click_tasks_empty_answer_stays_at_a_third():
    """T3-T5 keep ROSE's uniform case draw: DONE (none) is right on about a third, not more, with one-exception scenes."""
    golds = planned_golds(120)
    for task in ("T3", "T4", "T5"):
        empty = sum(1 for g in golds if not g[task]) / len(golds)
        assert 0.2 < empty < 0.45, (task, empty)


def test_the_plan_pairs_only_realisable_counts_and_is_uniform_in_both():
    plan = answer_plan(1, 4)
    assert all(0 <= g <= n for n, g in plan)
    assert set(Counter(n for n, _ in plan).values()) == {5}
    assert set(Counter(g for _, g in plan).values()) == {4}
    assert {n for n, _ in answer_plan(2, 3)} == {2, 3} and {g for _, g in answer_plan(2, 3)} == {0, 1, 2, 3}


@pytest.mark.parametrize("row", [0, 19])
def test_a_scheduled_plan_row_is_what_the_composed_scene_asks(row):
    """Row 0 of 1..4 is (1 exception, T2 count 0); row 19 is (4, 4): the composed T1 and T2 golds say so."""
    n, held = answer_plan(1, 4)[row]
    item = make_item("rose_grid", {"rows": 4, "cols": 4, "answer": row}, [SEED, 0, row], f"plan-{row}",
                     Frame(160, 120))
    gold = {q.subject["task"]: q.gold for q in item.questions}
    assert (gold["T1"], gold["T2"]) == (n, held)
    assert sum(1 for o in item.scene.objects if o.attributes.get("exception")) == n


def test_an_answer_outside_the_plan_is_one_clear_error():
    with pytest.raises(ValidationError, match="answer 20 is not a row of the answer plan"):
        RoseGridParams(answer=20)


def test_the_batch_summary_reports_t1_and_t2_apart():
    """T1 golds 1, 2, 3, 4 and T2 golds 0, 0, 0, 1 share an answer type: merged, COUNT(0) would read 3/8."""
    from types import SimpleNamespace

    from stim3d.render.batch.summary import constant_baselines

    def record(task: str, gold: int):
        return SimpleNamespace(family="rose_grid", subject={"task": task},
                               answer=SimpleNamespace(type="strict_count", gold=gold))

    records = [record("T1", g) for g in (1, 2, 3, 4)] + [record("T2", g) for g in (0, 0, 0, 1)]
    baselines = {b.question_type: b for b in constant_baselines(records)}
    assert set(baselines) == {"rose_grid T1 (strict_count)", "rose_grid T2 (strict_count)"}
    assert baselines["rose_grid T1 (strict_count)"].accuracy == 0.25
    assert (baselines["rose_grid T2 (strict_count)"].best_answer, baselines["rose_grid T2 (strict_count)"].accuracy) == (
        "0", 0.75)
