"""What a constant responder scores on each ROSE task of the rose3d preset: best constant answer against chance.

Composition only, no rendering: the preset's plan (`render/batch/config.py` expand,
answers scheduled as a batch schedules them) is walked scene by scene, and each
scene's golds are taken from the family's own planning step (rose_plan.plan_tasks
on the item's random stream: the exception cells and the task regions, from which
compose reads every gold). That step is the first thing compose draws, so the golds
equal those of a full compose; `--compose N` checks it on the first N scenes by
composing them whole (ray casting at the preset's size). The exception: a scene no
layout shows is planned again (`difficulty.plan_redraws`, rare: t0-00442 at 640x480);
its T1 and T2 counts are kept, but its cells and the T3-T5 cases are drawn anew.

For each task (T1-T5) it reports the most frequent gold (the best constant answer
under PASS) with its PASS and SOFT, the best constant under SOFT, chance (1 over the
answers the preset's counts allow: T1 min..max exceptions, T2 0..max; none for the
click tasks, whose answers are cell sets) and the shares of the cases.

    python -m bench.rose_balance [--quick] [--compose 5]
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np

from stim3d.render.batch.config import load_config
from stim3d.render.batch.plan import expand
from stim3d.scenes.families.base import Frame
from stim3d.scenes.families.rose.rose_grid import RoseGridParams
from stim3d.scenes.families.rose.rose_plan import plan_tasks
from stim3d.scenes.families.rose.rose_regions import permitted
from stim3d.scenes.items import make_item, seed_entropy
from stim3d.scoring.parsers_actions import Submission
from stim3d.scoring.rules import apply

from .common import Run, parse_args, print_table, progress

PRESET = Path(__file__).resolve().parent.parent / "stim3d" / "scenes" / "presets" / "rose3d.yaml"
SOFT_RULE = {"T1": "count_soft", "T2": "count_soft", "T3": "set_f1", "T4": "set_f1", "T5": "click_submit_soft"}


def scene_golds(params: RoseGridParams, entropy: list[int]) -> dict[str, tuple]:
    """(gold, case) per task of one scene, as compose makes them (gold in the scoring core's canonical form)."""
    exceptions, regions = plan_tasks(params, np.random.default_rng(np.random.SeedSequence(entropy)))
    golds: dict[str, tuple] = {"T1": (len(exceptions), "all")}
    for task, (case, region) in regions.items():
        cells = tuple(sorted(exceptions & permitted(region, params.rows, params.cols, exclude=task == "T5")))
        gold = len(cells) if task == "T2" else Submission(cells, len(cells)) if task == "T5" else cells
        golds[task] = (gold, case)
    return golds


def _key(value) -> str:
    if isinstance(value, Submission):
        return json.dumps({"cells": value.cells, "count": value.count})
    return json.dumps(value)


def constant_scores(golds: list, grids: list[dict], task: str) -> dict:
    """Best constant under PASS (the most frequent gold) and under SOFT (best among every gold seen as a constant)."""
    counts = Counter(_key(g) for g in golds)
    by_key = {_key(g): g for g in golds}
    candidates = list(by_key.values())
    if task in ("T1", "T2"):
        candidates = list(range(max(golds) + 1))

    def mean(rule: str, answer) -> float:
        return float(np.mean([apply(rule, answer, g, p) for g, p in zip(golds, grids)]))

    best_key, hits = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    best = by_key[best_key]
    soft = {_key(c): mean(SOFT_RULE[task], c) for c in candidates}
    soft_key = max(soft, key=lambda k: (soft[k], k))
    return {"best_constant": best_key, "pass": round(hits / len(golds), 4),
            "soft_of_best_constant": round(mean(SOFT_RULE[task], best), 4),
            "best_soft_constant": soft_key, "best_soft": round(soft[soft_key], 4),
            "distinct_golds": len(counts)}


def measure(quick: bool, compose: int) -> dict:
    plans = [p for p in expand(load_config(PRESET)) if p.item_id.endswith("-base")]
    config = load_config(PRESET)
    if quick:
        plans = plans[:100]
    per_task: dict[str, list] = {t: [] for t in ("T1", "T2", "T3", "T4", "T5")}
    grids: list[dict] = []
    lo = hi = None
    for i, plan in enumerate(plans):
        params = RoseGridParams.model_validate(plan.params)
        lo, hi = params.min_exceptions, params.max_exceptions
        entropy = seed_entropy(config.seed, plan.task_index, plan.item_index)
        for task, value in scene_golds(params, entropy).items():
            per_task[task].append(value)
        grids.append({"rows": params.rows, "cols": params.cols})
        if i < compose:
            check_compose(plan, entropy, per_task, config)
    assert lo is not None and hi is not None
    chance = {"T1": 1 / (hi - lo + 1), "T2": 1 / (hi + 1)}
    figures: dict = {"scenes": len(plans), "composed_and_checked": min(compose, len(plans)), "tasks": {}}
    for task, values in per_task.items():
        golds = [g for g, _ in values]
        cases = Counter(c for _, c in values)
        row = constant_scores(golds, grids, task)
        row["chance"] = round(chance[task], 4) if task in chance else None
        row["case_shares"] = {c: round(cases[c] / len(values), 4) for c in ("none", "some", "all")}
        if task in ("T1", "T2"):
            answers = Counter(golds)
            row["gold_shares"] = {str(a): round(answers[a] / len(golds), 4) for a in sorted(answers)}
        figures["tasks"][task] = row
    return figures


def check_compose(plan, entropy: list[int], per_task: dict[str, list], config) -> None:
    """Compose the scene's base and cue items whole and check their golds are the planned ones."""
    render = config.render
    for variant, tasks in (("base", ("T1", "T2", "T3", "T5")), ("cue", ("T4",))):
        item = make_item("rose_grid", {**plan.params, "cue": variant == "cue"}, entropy, f"check-{variant}",
                         Frame(render.width, render.height))
        for question in item.questions:
            task = question.subject["task"]
            planned = per_task[task][-1][0]
            gold = question.gold
            expected = planned if isinstance(planned, int) else (
                [list(c) for c in planned.cells] if isinstance(planned, Submission) else [list(c) for c in planned])
            got = gold["cells"] if isinstance(gold, dict) else gold
            got = [list(c) for c in got] if isinstance(got, (list, tuple)) else got
            assert task in tasks and got == expected, (plan.item_id, task, gold, planned)
    progress(f"{plan.item_id}: composed golds match the plan")


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], lambda p: p.add_argument(
        "--compose", type=int, default=3, help="compose this many scenes whole to check their golds (default 3)"))
    run = Run("rose_balance", args.quick, args.out, settings={"preset": "rose3d", "compose": args.compose})
    figures = measure(args.quick, args.compose)
    rows = []
    for task, row in figures["tasks"].items():
        chance = "-" if row["chance"] is None else f"{100 * row['chance']:.1f} %"
        rows.append([task, row["best_constant"], f"{100 * row['pass']:.1f} %", chance,
                     f"{100 * row['soft_of_best_constant']:.1f} %", row["best_soft_constant"],
                     f"{100 * row['best_soft']:.1f} %", " / ".join(f"{100 * v:.0f}" for v in row["case_shares"].values())])
    print_table(f"rose3d: best constant answer per task over {figures['scenes']} scenes",
                ["task", "best constant", "PASS", "chance", "its SOFT", "best SOFT constant", "SOFT",
                 "none / some / all %"], rows)
    print(run.finish(figures))


if __name__ == "__main__":
    main()
