"""Config expansion: what a user writes decides exactly which items exist."""

from __future__ import annotations

from collections import Counter

from stim3d.render.batch.config import parse_config
from stim3d.render.batch.plan import expand


def config(grid: dict) -> dict:
    return {"seed": 1, "tasks": [{"family": "shape_count", "count": 12, "grid": grid}]}


def test_items_spread_evenly_over_the_grid():
    plans = expand(parse_config(config({"n_shape_types": [1, 2, 3], "min_visibility": [0.7, 0.9]})))
    combos = Counter((p.params["n_shape_types"], p.params["min_visibility"]) for p in plans)
    assert len(combos) == 6 and set(combos.values()) == {2}
    assert [p.item_index for p in plans] == list(range(12))


def test_reordering_grid_axes_changes_the_config_hash():
    """Axis order decides which item gets which combination, so it must count as a different config."""
    a = parse_config(config({"n_shape_types": [1, 2], "min_visibility": [0.7, 0.9]}))
    b = parse_config(config({"min_visibility": [0.7, 0.9], "n_shape_types": [1, 2]}))
    assert [p.params for p in expand(a)] != [p.params for p in expand(b)]
    assert a.content_hash() != b.content_hash()
