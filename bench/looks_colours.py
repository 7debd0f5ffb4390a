"""Colour golds under each look: how many items needed their look redrawn, and how many still fail.

Renders a small batch of colour-naming scenes (shape_color_count and ava_color) with
variants over the three looks (one scene, three renders), through `stim3d render`,
so the post-render colour check of render/batch/produce.py runs as in a user's batch.
For each look it counts items whose look was redrawn (`scene.look.redraws > 0`) and
items with objects still failing after the last draw (`scene.look.colour_failures`).
Studio is never redrawn (it draws nothing); the same check (scenes/look_colours.py)
is applied to its measured colours to show the baseline.

    python -m bench.looks_colours [--quick] [--count 6] [--size 160x120] [--samples 8]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from stim3d.scenes.look_colours import colour_failures
from stim3d.scenes.model import LOOK_NAMES, Item

from .common import Run, parse_args, print_table

FAMILIES = ("shape_color_count", "ava_color")


def _args(parser) -> None:
    parser.add_argument("--count", type=int, default=6, help="scenes per family")
    parser.add_argument("--size", default="160x120")
    parser.add_argument("--samples", type=int, default=8)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _args)
    count = 1 if args.quick else args.count
    width, height = (int(v) for v in args.size.split("x"))
    variants = {look: {"look": look} for look in LOOK_NAMES}
    config = {"seed": 26, "render": {"engine": "cycles", "width": width, "height": height, "samples": args.samples},
              "tasks": [{"family": family, "count": count, "variants": variants} for family in FAMILIES]}
    run = Run("looks_colours", args.quick, args.out, {**config["render"], "count_per_family": count,
                                                       "families": FAMILIES})
    counts = {look: {"items": 0, "redrawn": 0, "redraws": 0, "still_failing": 0} for look in LOOK_NAMES}
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "looks.json"
        path.write_text(json.dumps(config))
        subprocess.run([sys.executable, "-m", "stim3d", "render", str(path), "--out", str(Path(scratch) / "out"),
                        "--quiet"], check=True)
        for item_json in sorted((Path(scratch) / "out" / "items").glob("*/item.json")):
            item = Item.model_validate_json(item_json.read_text())
            look = item.scene.look
            name = look.name if look is not None else "studio"
            row = counts[name]
            row["items"] += 1
            if look is None:
                measured = {t.id: t.measured_srgb for t in item.ground_truth.objects}
                row["still_failing"] += bool(colour_failures(item, measured))
                continue
            row["redrawn"] += look.redraws > 0
            row["redraws"] += look.redraws
            row["still_failing"] += bool(look.colour_failures)
    print_table("colour check per look", ["look", "items", "redrawn", "redraws", "still failing"],
                [[look, c["items"], c["redrawn"], c["redraws"], c["still_failing"]] for look, c in counts.items()])
    run.finish(counts)


if __name__ == "__main__":
    main()
