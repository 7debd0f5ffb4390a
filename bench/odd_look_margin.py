"""OddGrid's colour oddity under each look: measured dE, its margin, and how many items needed a redraw.

Renders odd_grid colour items (5x5, one odd colour at the low end of OddGridBench's range,
nominal dE 5) with variants over the three looks through `stim3d render`, so the post-render
check of render/batch/produce.py (`Family.look_colour_check`, scenes/families/oddgrid/odd_measure.py)
runs as in a user's batch. Studio items are not checked; their measured dE (from the
records' `measured_delta_e`) shows how far shading alone moves the rendered difference from
the nominal one, which is why the margin under a look is not the nominal range.

    python -m bench.odd_look_margin [--quick] [--count 4] [--size 160x120] [--samples 8]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from stim3d.scenes.families.oddgrid.odd_measure import measured_color_difference
from stim3d.scenes.model import LOOK_NAMES, DrawnLook, Item

from .common import Run, parse_args, print_table


def _args(parser) -> None:
    parser.add_argument("--count", type=int, default=4, help="scenes")
    parser.add_argument("--size", default="160x120")
    parser.add_argument("--samples", type=int, default=8)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _args)
    count = 1 if args.quick else args.count
    width, height = (int(v) for v in args.size.split("x"))
    params = {"rows": 5, "cols": 5, "odd_types": "color", "p_none": 0.0, "min_object_px": 4,
              "delta_e_range": [5.0, 5.01]}
    config = {"seed": 9, "render": {"engine": "cycles", "width": width, "height": height, "samples": args.samples},
              "tasks": [{"family": "odd_grid", "count": count, "params": params,
                         "variants": {look: {"look": look} for look in LOOK_NAMES}}]}
    run = Run("odd_look_margin", args.quick, args.out, {**config["render"], "count": count, "params": params})
    rows: dict[str, list[dict]] = {look: [] for look in LOOK_NAMES}
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "odd.json"
        path.write_text(json.dumps(config))
        subprocess.run([sys.executable, "-m", "stim3d", "render", str(path), "--out", str(Path(scratch) / "out"),
                        "--quiet"], check=True)
        for item_json in sorted((Path(scratch) / "out" / "items").glob("*/item.json")):
            item = Item.model_validate_json(item_json.read_text())
            look = item.scene.look
            measured = look.measured if isinstance(look, DrawnLook) else measured_color_difference(item)
            rows[look.name].append({
                "item_id": item.item_id, "measured_delta_e": measured.get("measured_delta_e"),
                "neighbour_delta_e": measured.get("neighbour_delta_e"), "margin": measured.get("delta_e_margin"),
                "redraws": look.redraws, "still_failing": bool(look.colour_failures)})
    table = []
    for look, entries in rows.items():
        for e in entries:
            table.append([look, e["item_id"], e["measured_delta_e"], e["neighbour_delta_e"], e["margin"], e["redraws"],
                          e["still_failing"]])
    print_table("odd colour (nominal dE 5) as rendered, per look",
                ["look", "item", "measured dE", "neighbour dE", "margin", "redraws", "still failing"], table)
    run.finish(rows)


if __name__ == "__main__":
    main()
