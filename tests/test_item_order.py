"""An item's bytes do not depend on what its worker rendered before: a tiny batch in two orders, byte for byte.

render/backends/blender.py resets Blender to factory settings before each item; this
is the test any datablock reuse between items must keep passing (bench/item_overhead.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stim3d.render.batch.config import parse_config
from stim3d.render.batch.keys import expected_keys
from stim3d.render.batch.plan import expand
from stim3d.render.batch.produce import compose_item, render_item

pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")

# Studio, clevr and photoreal looks (worlds, HDRI images, materials), glossy and matte, 1-5 object scenes.
CONFIG = {"seed": 11, "render": {"engine": "cycles", "width": 64, "height": 48, "samples": 2, "denoise": False},
          "tasks": [{"family": "shape_count", "count": 2, "params": {"n_shape_types": 2}},
                    {"family": "shape_color_count", "count": 1, "look": "clevr"},
                    {"family": "shape_count", "count": 1, "look": "photoreal", "params": {"n_shape_types": 3}}]}


def files(folder: Path) -> dict[str, bytes]:
    """Every file of an item folder but timing.json (wall-clock seconds)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "timing.json"}


@pytest.mark.bpy
def test_a_batch_rendered_in_reverse_order_is_byte_identical(tmp_path):
    config = parse_config(CONFIG)
    plans = expand(config)
    keys = expected_keys(config, plans)
    composed = [compose_item(plan, config.seed, config.render) for plan in plans]
    for name, order in (("forward", composed), ("reversed", composed[::-1])):
        for n, c in enumerate(order):  # one process: each item follows a different predecessor in the two runs
            render_item(c.item, config.render, tmp_path / name, tmp_path / f"work-{name}-{n}", keys[c.item.item_id],
                        raycast_map=c.raycast_map)
    for c in composed:
        forward = files(tmp_path / "forward" / "items" / c.item.item_id)
        backward = files(tmp_path / "reversed" / "items" / c.item.item_id)
        assert {"image.png", "mask.png", "item.json", "checksums.json"} <= set(forward)
        assert forward.keys() == backward.keys()
        assert [name for name in forward if forward[name] != backward[name]] == [], c.item.item_id
