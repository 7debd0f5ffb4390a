"""What docs/plugins.md promises a plug-in author, checked on the template plug-in (examples/plugin-template).

Issue 28 listed these as missing from the docs: `InfeasibleError(constraint, detail)` takes two arguments
(one raises TypeError) and a task that can never be met fails `stim3d validate` in one line naming the
constraint; `answer_space()` makes a batch schedule the answers evenly before composing, and each item's
gold is its scheduled answer. The template is imported from its folder and registered the way an installed
plug-in's entry point registers it (no pip install: no build, no index).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from stim3d.render.batch.config import load_config
from stim3d.render.batch.plan import expand
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.placement import InfeasibleError
from tests.helpers import run_cli as run

TEMPLATE = Path(__file__).resolve().parents[1] / "examples" / "plugin-template"


@pytest.fixture
def tiny_row(monkeypatch):
    monkeypatch.syspath_prepend(str(TEMPLATE))
    from stim3d_plugin_template.family import FAMILY

    FAMILIES._loaded()
    monkeypatch.setitem(FAMILIES._families, FAMILY.name, dataclasses.replace(FAMILY))
    return FAMILY


def test_infeasible_error_takes_the_constraint_and_the_detail():
    error = InfeasibleError("max_n", "answer 4 is more than max_n 2")
    assert (error.constraint, error.detail) == ("max_n", "answer 4 is more than max_n 2")
    with pytest.raises(TypeError):
        InfeasibleError("no layout left every object 70 % visible")  # type: ignore[call-arg]


def test_a_task_that_can_never_be_met_fails_validate_in_one_line_naming_the_constraint(tiny_row, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [{family: tiny_row, count: 1, params: {max_n: 2, answer: 4}}]\n")
    code, out, err = run("validate", str(config))
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "max_n" in err and "answer 4 is more than max_n 2" in err


def test_answer_space_balances_a_tasks_answers_and_each_gold_is_its_scheduled_answer(tiny_row, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("seed: 4\nrender: {width: 64, height: 48}\ntasks:\n  - family: tiny_row\n    count: 8\n"
                      "    grid: {max_n: [2, 4]}\n")
    plans = expand(load_config(config))
    assert len(plans) == 8
    scheduled = [plan.params["answer"] for plan in plans]
    # Cells max_n 2 (answers 1-2) and max_n 4 (answers 1-4), four items each. Drawn per item, 1 and 2 would get
    # 3/4 of the task; scheduled, the task is uniform over 1-4, two each, which forces the max_n 2 cell to
    # take 1, 1, 2, 2 and leaves 3, 3, 4, 4 to the max_n 4 cell.
    assert Counter(scheduled) == {1: 2, 2: 2, 3: 2, 4: 2}
    by_cell = {n: sorted(p.params["answer"] for p in plans if p.params["max_n"] == n) for n in (2, 4)}
    assert by_cell == {2: [1, 1, 2, 2], 4: [3, 3, 4, 4]}
    for plan in plans:
        assert plan.params["answer"] in range(1, plan.params["max_n"] + 1)
        item = make_item("tiny_row", plan.params, [4, plan.task_index, plan.item_index], plan.item_id, Frame(64, 48))
        assert item.questions[0].gold == plan.params["answer"] == len(item.scene.objects)
