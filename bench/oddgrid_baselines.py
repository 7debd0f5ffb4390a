"""Constant baselines of the OddGrid-3D preset, per odd type, from its gold answers alone.

A model that ignores the image can answer one fixed cell. For each odd type of
scenes/presets/oddgrid3d.yaml this prints the best such constant (the most
frequent gold, which is Row 0, Column 0 because about 10 % of the items have no
odd cell) with its accuracy, and what always answering the grid's centre cell
scores under the three OddGridBench metrics (exact, tolerance, distance reward;
scoring/rules.py). The golds are drawn before any layout (`odd_grid.draw_plan`),
so nothing is composed or rendered: this runs in a second.

    python -m bench.oddgrid_baselines [CONFIG]
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict

import numpy as np

from stim3d.render.batch.config import load_config
from stim3d.render.batch.plan import expand
from stim3d.scenes.families import get_family
from stim3d.scenes.families.oddgrid.odd_grid import draw_plan
from stim3d.scenes.presets import preset_path
from stim3d.scoring.rules import cell_distance, cell_tolerance

PRESET = str(preset_path("oddgrid3d"))
TYPES = ("color", "size", "rotation", "position", "2-type", "3-type", "4-type")


def golds(config_path: str = PRESET) -> dict[str, list[tuple[tuple[int, int], int, int]]]:
    """{odd type: [(gold cell, rows, cols)]} of every question (labelled twins left out: same golds)."""
    config = load_config(config_path)
    params_model = get_family("odd_grid").params_model
    found: dict[str, list] = defaultdict(list)
    for plan in expand(config):
        if plan.family != "odd_grid" or plan.item_id.endswith("-labelled"):
            continue
        params = params_model.model_validate(plan.params)
        rng = np.random.default_rng(np.random.SeedSequence([config.seed, plan.task_index, plan.item_index]))
        rows, cols, _, _, spec = draw_plan(params, rng)
        found[params.odd_types].append(((spec.row, spec.col) if spec.present else (0, 0), rows, cols))
    return found


def table(config_path: str = PRESET) -> str:
    """The Markdown table of docs/oddgrid.md (its `oddgrid-baselines` block)."""
    by_type = golds(config_path)
    lines = ["| odd type | items | no odd cell | best constant | its accuracy | centre cell: exact / TolAcc / reward |",
             "|---|---|---|---|---|---|"]
    for name in [t for t in TYPES if t in by_type] + ["all"]:
        rows = [g for t in by_type for g in by_type[t]] if name == "all" else by_type[name]
        counts = Counter(cell for cell, _, _ in rows)
        best, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        centre = [((r + 1) // 2, (c + 1) // 2) for _, r, c in rows]
        exact = np.mean([p == cell for p, (cell, _, _) in zip(centre, rows)])
        tolerance = np.mean([cell_tolerance(p, cell, {"tolerance": 1}) for p, (cell, _, _) in zip(centre, rows)])
        reward = np.mean([cell_distance(p, cell, {"rows": r, "cols": c}) for p, (cell, r, c) in zip(centre, rows)])
        lines.append(f"| {name} | {len(rows)} | {counts[(0, 0)]} | Row {best[0]}, Column {best[1]} | {n / len(rows):.3f} "
                     f"| {exact:.3f} / {tolerance:.3f} / {reward:.3f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(table(*sys.argv[1:2]), end="")
