"""Answer balance across a task: which gold answer each item of a task must realise.

Why: drawing each item's answer uniformly within its own range (0..max_instances,
with max_instances in 1..3) makes small answers dominate a batch, so a model that
always says "1" beats chance by 20 points. Instead the answers of a whole task are
scheduled before any scene is composed: every item gets one answer from the set
its grid cell can realise, so that the task's marginal answer distribution is as
uniform as the cells allow, and inside each cell the answers are spread as evenly
as that allows too. The family then draws the rest of the scene around the
scheduled answer (the answer is fixed first, the scene realises it, so the ground
truth stays exact).

A family takes part by giving its params model an `answer_space()` method that
returns the answers a cell can realise (or None when the answer is not scheduled,
e.g. a free-text string) and an `answer` parameter that fixes it. A task that sets
`answer` itself (in `grid` or `params`) is left alone.

Determinism: the schedule depends only on the task's cells, its count and
(batch seed, task index); ties are broken by a Generator seeded from those.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

BALANCE_STREAM = 0xBA1A  # third entropy word: the schedule's random stream never equals an item's
ANSWER_KEY = "answer"


def answer_space(params_model: Any, params: dict[str, Any]) -> list[Hashable] | None:
    """The answers the cell `params` can realise, or None when this family's answers are not scheduled."""
    method = getattr(params_model, "answer_space", None)
    if method is None:
        return None
    return method(params_model.model_validate(params))


def schedule(spaces: Sequence[Sequence[Hashable]], cells: Sequence[int], rng: np.random.Generator) -> list[Hashable]:
    """One answer per item, item i drawn from spaces[i]; items of one cell share cells[i] and its space.

    Greedy, most constrained items first: each item takes the answer of its space
    that is rarest so far in the task, then rarest in its cell, then by a random
    rank. A repair pass then moves items from the most to the least frequent answer
    while their space allows and the gap is at least two. Finally the answers of
    each cell are shuffled over its items, so which item of a cell gets which answer
    is random too.
    """
    n = len(spaces)
    values = _values(spaces)
    rank = {value: float(r) for value, r in zip(values, rng.permutation(len(values)))}
    tiebreak = rng.permutation(n)
    totals: Counter = Counter()
    per_cell: dict[int, Counter] = defaultdict(Counter)
    chosen: list[Hashable] = [None] * n
    for i in sorted(range(n), key=lambda i: (len(spaces[i]), tiebreak[i])):
        best = min(spaces[i], key=lambda a: (totals[a], per_cell[cells[i]][a], rank[a]))
        chosen[i] = best
        totals[best] += 1
        per_cell[cells[i]][best] += 1
    _repair(spaces, cells, chosen, totals, per_cell, rank)
    for cell in sorted(set(cells)):
        members = [i for i in range(n) if cells[i] == cell]
        answers = [chosen[i] for i in members]
        for i, j in zip(members, rng.permutation(len(members))):
            chosen[i] = answers[int(j)]
    return chosen


def _values(spaces: Sequence[Sequence[Hashable]]) -> list[Hashable]:
    """Every answer any item can take, in first-seen order (deterministic)."""
    return list(dict.fromkeys(value for space in spaces for value in space))


def _repair(spaces, cells, chosen, totals: Counter, per_cell: dict[int, Counter], rank: dict) -> None:
    """Move single items from frequent to rare answers until no move narrows a gap of two or more."""
    values = list(rank)
    for _ in range(len(chosen) * max(1, len(values))):
        moved = False
        for high in sorted(values, key=lambda a: (-totals[a], rank[a])):
            for low in sorted(values, key=lambda a: (totals[a], rank[a])):
                if totals[high] - totals[low] < 2:
                    break
                movable = [i for i, a in enumerate(chosen) if a == high and low in spaces[i]]
                if not movable:
                    continue
                i = min(movable, key=lambda i: (per_cell[cells[i]][low] - per_cell[cells[i]][high], i))
                chosen[i] = low
                totals[high] -= 1
                totals[low] += 1
                per_cell[cells[i]][high] -= 1
                per_cell[cells[i]][low] += 1
                moved = True
                break
            if moved:
                break
        if not moved:
            return


def task_answers(params_model: type, cell_params: Sequence[dict[str, Any]], count: int, entropy: Sequence[int]) -> list[Hashable] | None:
    """Scheduled answers for `count` items spread round-robin over `cell_params` (None: not scheduled)."""
    spaces_by_cell = [answer_space(params_model, params) for params in cell_params]
    if any(space is None or not space for space in spaces_by_cell):
        return None
    cells = [i % len(cell_params) for i in range(count)]
    rng = np.random.default_rng(np.random.SeedSequence([*map(int, entropy), BALANCE_STREAM]))
    return schedule([spaces_by_cell[c] for c in cells], cells, rng)  # type: ignore[misc]
