"""A batch's item plan: the config expanded into a deterministic list of ItemPlans (what each item will be).

Tasks in config order; within a task, items round-robin over the grid's combinations;
splits planned one after another with item indices running on (disjoint seeds);
answers scheduled over the task by scenes/balance.py when the family schedules them;
variants share their base item's seed and scene_id. The plan is a pure function of
the config: the driver, shards, merge, resume keys and the API all expand the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stim3d.render.batch.config import BatchConfig, TaskConfig, split_look
from stim3d.render.settings import RenderSettings
from stim3d.scenes.balance import ANSWER_KEY, task_answers
from stim3d.scenes.families import get_family
from stim3d.scenes.model import LookName


@dataclass(frozen=True)
class ItemPlan:
    item_id: str
    family: str
    params: dict[str, Any]
    task_index: int
    item_index: int
    split: str
    scene_id: str | None = None  # set for variants: the id their shared scene goes by
    questions: tuple[str, ...] = ("default",)  # the task's question sets (scenes/items.py make_item)
    look: LookName | None = None  # the task's or variant's look; None: the render config's (render.look)
    render: dict[str, Any] | None = None  # the task's own sampling (TaskRender); None: the batch's
    mesh_roots: tuple[str, ...] = ()  # where the family may read mesh files (BatchConfig.mesh_root_paths)

    def settings(self, batch: RenderSettings) -> RenderSettings:
        """The settings this item renders with: the batch's, with the task's own sampling over them."""
        return batch.model_copy(update=self.render) if self.render else batch



def sampling(config: BatchConfig, task: TaskConfig, look: LookName | None) -> dict[str, Any] | None:
    """An item's own sampling over the batch's render: its task's, then its look's on top (`config.looks`, the look
    being the task's or variant's, else render.look), then the task's own in that look (`task.looks`): a task's
    sampling is measured for studio, a look's is what that look needs on most families (docs/looks_cost.md), a
    task's look sampling what its scenes need beyond that. None when none sets any, so such an item keeps the
    settings, and the resume key, it always had."""
    name = look if look is not None else config.render.look
    merged = {**(task.render.overrides() if task.render else {}),
              **(config.looks[name].overrides() if name in config.looks else {}),
              **(task.looks[name].overrides() if name in task.looks else {})}
    return merged or None


def expand(config: BatchConfig) -> list[ItemPlan]:
    """The batch's items in a fixed order: tasks in config order, items round-robin over the grid.

    When the family schedules answers and the task does not fix `answer`, each item's
    params carry the answer scenes/balance.py scheduled for it (balanced over the task).
    """
    plans = []
    roots = config.mesh_root_paths()
    for t, task in enumerate(config.tasks):
        combinations = task.combinations()
        first = 0  # item indices run on across splits: disjoint seeds
        for s, (split, count) in enumerate(task.split_counts()):
            answers = None
            if ANSWER_KEY not in task.grid and ANSWER_KEY not in task.params:
                entropy = [config.seed, t, s] if task.splits else [config.seed, t]
                answers = task_answers(get_family(task.family).params_model, combinations, count, entropy)
            for j in range(count):
                i = first + j
                base_id = f"{task.family}-t{t}-{split}-{j:05d}" if task.splits else f"{task.family}-t{t}-{i:05d}"
                params = combinations[j % len(combinations)]
                if answers is not None:
                    params = {**params, ANSWER_KEY: answers[j]}
                if not task.variants:
                    plans.append(ItemPlan(base_id, task.family, params, t, i, split, questions=tuple(task.questions),
                                          look=task.look, render=sampling(config, task, task.look),
                                          mesh_roots=roots))
                for name, overrides in task.variants.items():
                    changes, look = split_look(overrides)
                    look = look if look is not None else task.look
                    plans.append(ItemPlan(f"{base_id}-{name}", task.family, {**params, **changes}, t, i, split,
                                          scene_id=base_id, questions=tuple(task.questions), look=look,
                                          render=sampling(config, task, look), mesh_roots=roots))
            first += count
    return plans
