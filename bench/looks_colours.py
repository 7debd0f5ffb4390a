"""Colour golds under each look: how many items needed their look redrawn, and how many still fail.

Renders a small batch of colour-naming scenes (shape_color_count and ava_color) with
variants over the three looks (one scene, three renders), through `stim3d render`,
so the post-render colour check of render/batch/produce.py runs as in a user's batch.
For each look it counts items whose look was redrawn (`scene.look.redraws > 0`) and
items with objects still failing after the last draw (`scene.look.colour_failures`).
Studio is never redrawn (it draws nothing); the same check (scenes/look_colours.py)
is applied to its measured colours to show the baseline.

    python -m bench.looks_colours [--quick] [--count 6] [--size 160x120] [--samples 8]
        [--looks studio,clevr,photoreal] [--families shape_color_count,ava_color]

`--looks photoreal --families shape_color_count,ava_color,ava_count --count 6 --samples 4`
is the before/after sample of docs/looks.md ("Colour golds per look"): run once at the
older commit and once at the newer, each with its own `--out`.
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
    parser.add_argument("--looks", default=",".join(LOOK_NAMES), help="comma-separated looks (default: all)")
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated families with colour names")


def _names(text: str, allowed: tuple[str, ...] | None, what: str) -> tuple[str, ...]:
    """A comma-separated list, each name checked (allowed=None: any family the registry knows)."""
    from stim3d.scenes.families import FAMILIES as REGISTRY

    names = tuple(n.strip() for n in text.split(",") if n.strip())
    known = allowed if allowed is not None else tuple(REGISTRY)
    unknown = [n for n in names if n not in known]
    if not names or unknown:
        raise SystemExit(f"bench.looks_colours: --{what} {text!r}: unknown {', '.join(unknown) or 'empty'}; "
                         f"known: {', '.join(known)}")
    return names


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _args)
    count = 1 if args.quick else args.count
    width, height = (int(v) for v in args.size.split("x"))
    looks, families = _names(args.looks, LOOK_NAMES, "looks"), _names(args.families, None, "families")
    variants = {look: {"look": look} for look in looks}
    config = {"seed": 26, "render": {"engine": "cycles", "width": width, "height": height, "samples": args.samples},
              "tasks": [{"family": family, "count": count, "variants": variants} for family in families]}
    run = Run("looks_colours", args.quick, args.out, {**config["render"], "count_per_family": count,
                                                       "families": families, "looks": looks})
    counts = {look: {"items": 0, "redrawn": 0, "redraws": 0, "still_failing": 0} for look in looks}
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
