"""ROSE's answer plan: which T1 and T2 counts a scene realises, scheduled over a task so no constant answer pays.

Why a plan: drawing each region task's case uniformly (none / some / all) makes
`COUNT(0)` right on a third of T2 (answers 0..k, chance 1/(k+1)), and a `some`
case needs two exceptions, so a composed sample holds few one-exception scenes
and `COUNT(3)` beat chance on T1 too. Instead the batch schedules (scenes/balance.py)
one row of a fixed table per scene: the table's rows are (T1 count n, T2 count g)
pairs such that, over its rows, n is uniform over min..max exceptions and g
uniform over 0..max. Both marginals are then exactly uniform over a task whose
size is a multiple of the table's, and within one row of a task's count otherwise.

The table is the quantile (comonotone) pairing of the two uniform lists, both sorted:
row i has n = min + i // (max + 1) and g = i // (max - min + 1). It never asks for
g > n (a region cannot hold more exceptions than the grid), and it is also the pairing
with the fewest `all` cases that exact uniform marginals allow for 1..4 exceptions:
g = max can only be a region holding every one of max exceptions, and so on down
(docs/rose.md gives the shares). T2's case follows from its count (0: none, n: all,
else some). T3, T4 and T5 keep ROSE's uniform case draw; on a one-exception scene,
where no region holds "some" of one exception, a drawn `some` becomes `all`, so
`none` (the answer DONE / SUBMIT(0)) stays at a third of every click task.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ...placement import InfeasibleError
from .rose_regions import CASES, EXCLUSION_KINDS, NUMERIC_KINDS, Cell, Region, sample_region


class PlanParams(Protocol):
    """What planning reads of rose_grid's parameters (RoseGridParams), named here so the plan needs no import back."""

    rows: int
    cols: int
    min_exceptions: int
    max_exceptions: int
    answer: int | None

POSITION_ATTEMPTS = 64


def answer_plan(min_exceptions: int, max_exceptions: int) -> list[tuple[int, int]]:
    """The (T1 count, T2 count) rows a scene can be scheduled to realise (module docstring)."""
    lo, hi = min_exceptions, max_exceptions
    return [(lo + i // (hi + 1), i // (hi - lo + 1)) for i in range((hi - lo + 1) * (hi + 1))]


def t2_case(n: int, held: int) -> str:
    return "none" if held == 0 else "all" if held == n else "some"


def plan_tasks(params: PlanParams, rng: np.random.Generator) -> tuple[set[Cell], dict[str, tuple[str, Region]]]:
    """The scene's plan row (the scheduled `answer`, else drawn), the cases of T3-T5, then exception cells and regions."""
    plan = answer_plan(params.min_exceptions, params.max_exceptions)
    row = params.answer if params.answer is not None else int(rng.integers(len(plan)))
    n, held = plan[row]
    cases = {"T2": t2_case(n, held)}
    for task in ("T3", "T4", "T5"):
        case = CASES[int(rng.integers(len(CASES)))]
        cases[task] = "all" if case == "some" and n < 2 else case
    all_cells = [(r, c) for r in range(1, params.rows + 1) for c in range(1, params.cols + 1)]
    for _ in range(POSITION_ATTEMPTS):
        exceptions = {all_cells[int(i)] for i in rng.choice(len(all_cells), n, replace=False)}
        regions = {}
        for task, case in cases.items():
            exclude = task == "T5"
            kinds = EXCLUSION_KINDS if exclude else NUMERIC_KINDS
            region = sample_region(rng, case, kinds, params.rows, params.cols, exceptions, exclude,
                                   held if task == "T2" else None)
            if region is None:
                break
            regions[task] = (case, region)
        else:
            return exceptions, regions
    raise InfeasibleError("region_case", f"no {n} exception cells of a {params.rows}x{params.cols} grid allow "
                          f"{held} in the T2 region and the cases {cases} (try a larger grid)")
