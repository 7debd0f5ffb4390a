"""Every shipped preset composes its items: a deterministic sample (the whole set is bench/preset_feasibility.py).

Composing all ~5,400 preset items at three sizes takes over an hour on one core,
so the suite composes, per preset, the fewest plan items that together cover
every task and every value of every grid parameter of that task, plus the items
an independent render of the ROSE preset found infeasible (issue 30: scenes
t0-00067 7x6, t0-00178 4x7, t0-00311 6x5, all size exceptions, base and cue
alike; and t0-00693, 7x7 cones, the last to need a back-off with a longer lens)
at the preset's size and at 640x480 and 800x600. Each item's plan is
fixed by its seed, so the sample is the same on every run.
"""

from __future__ import annotations

import functools

import pytest

from bench.preset_feasibility import SIZES, compose_one, preset_paths
from stim3d.render.batch.config import BatchConfig, load_config
from stim3d.render.batch.plan import ItemPlan, expand
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.placement import InfeasibleError

KNOWN_BAD = {"rose3d": ("rose_grid-t0-00067", "rose_grid-t0-00178", "rose_grid-t0-00311", "rose_grid-t0-00693"),
             "oddgrid3d": ("odd_grid-t0-00516",)}  # 00516: its position shift measured under 0.04 of the spacing in every view


@functools.cache
def planned(path) -> tuple[BatchConfig, list[ItemPlan]]:
    """A preset's config and plan, read once per session (collection expands every preset only once)."""
    config = load_config(path)
    return config, expand(config)


def covering_sample(path) -> list[int]:
    """Plan indices: greedily, items adding the most uncovered (task, grid key, value) triples, until no item adds one.

    A task with fewer items than grid values plans only some of them (rubrics3d's 74-item tasks over the
    seed presets' grids): the values no planned item takes are not in the preset, so the loop stops there.
    """
    config, plans = planned(path)
    wanted = {(t, key, repr(value)) for t, task in enumerate(config.tasks) for key, values in task.grid.items()
              for value in values} | {(t, "task", "") for t in range(len(config.tasks))}
    covers = [{(plan.task_index, key, repr(plan.params[key])) for key in config.tasks[plan.task_index].grid}
              | {(plan.task_index, "task", "")} for plan in plans]
    chosen: list[int] = []
    while wanted:
        best = max(range(len(plans)), key=lambda i: len(covers[i] & wanted))
        if not covers[best] & wanted:
            break
        chosen.append(best)
        wanted -= covers[best]
    return chosen


def own_size(path) -> tuple[int, int]:
    render = planned(path)[0].render
    return render.width, render.height


CASES = [(path, i, *own_size(path)) for path in preset_paths() for i in covering_sample(path)]
CASES += [(path, i, *size) for path in preset_paths() for i, plan in enumerate(planned(path)[1])
          if plan.item_id.startswith(KNOWN_BAD.get(path.stem, ("-",))) for size in dict.fromkeys([own_size(path), *SIZES])]


def test_a_grid_no_35mm_view_shows_composes_with_a_longer_lens(monkeypatch):
    """The last back-off: farther away with a 70 or 100 mm lens (rose_grid-t0-00693 needed it at revision 3).

    Its 35 mm views steep enough for the size contrast let the cue tiles hide more than
    3 points of a cone's rim; since revision 4 (the answer plan) that scene draws other
    cells, and no scene of the preset's 6..8-row size grids needs the lens at 640x480. So
    the cue check is made to refuse every 35 mm view here: compose must back off to the
    longer lens. A 35 mm-equivalent lens on the 36 mm sensor width gives fx = focal / 36 * width.
    """
    from stim3d.scenes.families.rose import rose_grid

    frame = Frame(320, 240)
    real = rose_grid._cue_canvas
    monkeypatch.setattr(rose_grid, "_cue_canvas", lambda layout, tiles: real(layout, tiles)
                        if layout.camera.fx > 1.5 * rose_grid.FOCAL_35MM / 36.0 * frame.width else None)
    item = make_item("rose_grid", {"rows": 4, "cols": 4, "answer": 8}, [2026, 0, 693], "lens", frame)
    assert item.difficulty["layout_attempt"] >= 12 + 9  # past the 12 drawn and 9 steeper/shrunk cameras
    assert min(abs(item.scene.camera.fx - f / 36.0 * 320) for f in (70.0, 100.0)) < 0.01
    assert item.difficulty["object_scale"] == 1.0 and item.difficulty["plan_redraws"] == 0


def test_a_grid_no_layout_shows_is_planned_again_with_the_same_counts(monkeypatch):
    """rose_grid-t0-00442 (7x6, size) at revision 4: no layout showed its size exceptions; the plan is drawn again.

    Here the first plan's layouts are all refused; the second plan keeps the scheduled row (T1, T2 counts)."""
    from stim3d.scenes.families.rose import rose_grid
    from stim3d.scenes.families.rose.rose_plan import answer_plan

    calls = []
    real = rose_grid._first_layout

    def refuse_first(*args):
        calls.append(1)
        if len(calls) == 1:
            raise InfeasibleError("size_contrast", "refused by the test")
        return real(*args)

    monkeypatch.setattr(rose_grid, "_first_layout", refuse_first)
    item = make_item("rose_grid", {"rows": 4, "cols": 4, "answer": 13}, [2026, 0, 442], "again", Frame(160, 120))
    gold = {q.subject["task"]: q.gold for q in item.questions}
    assert item.difficulty["plan_redraws"] == 1 and len(calls) == 2
    assert (gold["T1"], gold["T2"]) == answer_plan(1, 4)[13]


def test_the_sample_covers_every_preset_and_the_known_bad_items():
    assert {path.stem for path, *_ in CASES} >= {"ava3d", "dysm3d", "oddgrid3d", "rose3d"}
    bad = {planned(path)[1][i].item_id for path, i, *_ in CASES if path.stem == "rose3d"}
    assert {f"{seed}-{variant}" for seed in KNOWN_BAD["rose3d"] for variant in ("base", "cue")} <= bad


@pytest.mark.parametrize(("path", "index", "width", "height"), CASES,
                         ids=[f"{p.stem}-{i}-{w}x{h}" for p, i, w, h in CASES])
def test_preset_item_composes(path, index, width, height):
    item_id, error = compose_one((str(path), index, width, height))
    assert error is None, f"{item_id} at {width}x{height}: {error}"
