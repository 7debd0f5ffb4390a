"""Object-to-surroundings contrast per look: how far each object stands out from a 2-pixel ring around it.

Renders a small batch of counting scenes (shape_count, shape_color_count, ava_count)
with variants over the three looks (one scene, three renders), through `stim3d
render`, so the contrast measure of render/batch/produce.py (scenes/look_contrast.py)
and the look's redraws run as in a user's batch. Per look it prints the objects
judged (at least look_colours.MIN_VISIBLE_PX visible pixels), the least, 5th
percentile and median contrast (CIEDE2000), the share of objects under the floor and
under a few candidate floors (and the items holding such an object), the items whose look was redrawn and the items still
holding an object under the floor; and the least contrasted objects with their colour.
Studio draws no look: its redraws are its ground's grey and its re-exposures for colour
(scenes/look_redraws.py `StudioRedraw`), counted in its look's `redraws` like the drawn looks'.

    python -m bench.look_contrast [--quick] [--count 4] [--size 160x120] [--samples 4]
        [--looks studio,clevr,photoreal] [--families shape_count,shape_color_count,ava_count]

docs/looks_colour.md ("Contrast floor") quotes two runs: `--out bench/results/look_contrast_before.json` at the
commit that measured contrast without redrawing for it, and the default results file after.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from stim3d.scenes.look_contrast import FLOOR_DE, min_contrast
from stim3d.scenes.model import LOOK_NAMES, Item

from .common import Run, name_list, parse_args, print_table

FAMILIES = ("shape_count", "shape_color_count", "ava_count")
CANDIDATE_FLOORS = (2.3, 5.0, 8.0, 10.0, 15.0)  # 2.3: a just-noticeable difference


def _args(parser) -> None:
    parser.add_argument("--count", type=int, default=4, help="scenes per family")
    parser.add_argument("--size", default="160x120")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--looks", default=",".join(LOOK_NAMES), help="comma-separated looks (default: all)")
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated families")


def _render(config: dict[str, Any], scratch: Path) -> list[Item]:
    path = scratch / "config.json"
    path.write_text(json.dumps(config))
    subprocess.run([sys.executable, "-m", "stim3d", "render", str(path), "--out", str(scratch / "out"), "--quiet"],
                   check=True)
    return [Item.model_validate_json(p.read_text()) for p in sorted((scratch / "out" / "items").glob("*/item.json"))]


def _look_figures(items: list[Item]) -> dict[str, Any]:
    """One look's figures over its items (see the module docstring)."""
    objects = [(item, t) for item in items for t in item.ground_truth.objects if t.contrast_de is not None]
    values = np.array([t.contrast_de for _, t in objects], dtype=float)
    minima = [m for m in (min_contrast(item) for item in items) if m is not None]
    lowest = sorted(objects, key=lambda pair: pair[1].contrast_de or 0.0)[:5]
    stat = (lambda f: round(float(f(values)), 2)) if len(values) else (lambda f: None)
    return {
        "items": len(items),
        "objects": sum(len(item.ground_truth.objects) for item in items),
        "judged": len(values),
        "min": stat(np.min), "p5": stat(lambda v: np.percentile(v, 5)), "median": stat(np.median),
        "under_floor": int(np.sum(values < FLOOR_DE)),
        "share_under_floor": round(float(np.mean(values < FLOOR_DE)), 4) if len(values) else None,
        "share_under": {str(f): round(float(np.mean(values < f)), 4) if len(values) else None
                        for f in CANDIDATE_FLOORS},
        "items_redrawn": sum(1 for item in items if item.scene.look.redraws > 0),
        "redraws": sum(item.scene.look.redraws for item in items),
        "items_under_floor": sum(1 for m in minima if m < FLOOR_DE),
        "items_under": {str(f): sum(1 for m in minima if m < f) for f in CANDIDATE_FLOORS},
        "lowest": [{"item": item.item_id, "object": t.id, "color": item.scene.object(t.id).color.name,
                    "shape": item.scene.object(t.id).shape, "visible_px": t.visible_px, "contrast_de": t.contrast_de}
                   for item, t in lowest],
    }


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _args)
    count = 1 if args.quick else args.count
    width, height = (int(v) for v in args.size.split("x"))
    from stim3d.scenes.families import FAMILIES as REGISTRY

    looks = name_list(args.looks, LOOK_NAMES, "looks", "look_contrast")
    families = name_list(args.families, tuple(REGISTRY), "families", "look_contrast")
    config = {"seed": 26, "render": {"engine": "cycles", "width": width, "height": height, "samples": args.samples},
              "tasks": [{"family": family, "count": count, "variants": {look: {"look": look} for look in looks}}
                        for family in families]}
    run = Run("look_contrast", args.quick, args.out, {**config["render"], "count_per_family": count,
                                                       "families": families, "looks": looks, "floor_de": FLOOR_DE})
    with tempfile.TemporaryDirectory() as scratch:
        items = _render(config, Path(scratch))
    per_look = {look: _look_figures([i for i in items if i.scene.look.name == look])
                for look in looks}
    print_table(f"object-to-ring contrast (CIEDE2000) per look, floor {FLOOR_DE:g}",
                ["look", "items", "objects", "judged", "min", "p5", "median", "under floor", "share",
                 "items redrawn", "redraws", "items under floor"],
                [[look, f["items"], f["objects"], f["judged"], f["min"], f["p5"], f["median"], f["under_floor"],
                  f["share_under_floor"], f["items_redrawn"], f["redraws"], f["items_under_floor"]]
                 for look, f in per_look.items()])
    print_table("share of judged objects (items) under a candidate floor",
                ["look", *(f"< {f:g}" for f in CANDIDATE_FLOORS)],
                [[look, *(f"{f['share_under'][k]:.3f} ({f['items_under'][k]})" for k in f["share_under"])]
                 for look, f in per_look.items()])
    print_table("least contrasted objects", ["look", "item", "object", "colour", "shape", "visible px", "dE"],
                [[look, o["item"], o["object"], o["color"], o["shape"], o["visible_px"], o["contrast_de"]]
                 for look, f in per_look.items() for o in f["lowest"]])
    run.finish(per_look)


if __name__ == "__main__":
    main()
