"""Does a setting change photoreal's colour and contrast checks? The same items' first draw rendered with their
setting and without it (photoreal's endless floor, as before settings), counted by the checks render/batch/produce.py
runs (scenes/look_colours.py colour_failures, scenes/look_contrast.py contrast_failures), before any redraw.

Items: entropy [2026, 13, i], i < --items per family (default 4), the families' defaults, 160x120, Cycles 8 samples
+ OpenImageDenoise. `python -m bench.settings_colour` prints the counts per family and setting kind and writes
bench/results/settings_colour.json.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from stim3d.render.batch.produce import finish_item, render_with
from stim3d.render.settings import RenderSettings
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.look_colours import colour_failures, measured_colours
from stim3d.scenes.look_contrast import contrast_failures

from .common import Run, parse_args

FAMILIES = ("shape_color_count", "ava_color", "ava_orientation", "rose_grid", "shape_count")


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    per_family = 2 if args.quick else 4
    run = Run("settings_colour", args.quick, args.out, {"size": "160x120", "samples": 8, "per_family": per_family})
    settings = RenderSettings(width=160, height=120, samples=8, look="photoreal")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for family in FAMILIES:
            for index in range(per_family):
                item = make_item(family, {}, [2026, 13, index], f"{family}-{index}", Frame(160, 120),
                                 look="photoreal")
                look = item.scene.look
                row = {"family": family, "index": index, "kind": look.setting.kind}
                for name, variant in (("with", look), ("without", look.model_copy(update={"setting": None}))):
                    drawn = item.model_copy(update={"scene": item.scene.model_copy(update={"look": variant})})
                    output = render_with(settings, drawn, Path(folder) / f"{family}_{index}_{name}")
                    finished, _mask = finish_item(drawn, output, settings, None)
                    row[f"colour_{name}"] = len(colour_failures(finished, measured_colours(finished)))
                    row[f"contrast_{name}"] = len(contrast_failures(finished))
                    row[f"objects_{name}"] = len(finished.scene.objects)
                print(row, flush=True)
                rows.append(row)
    totals = {key: sum(r[key] for r in rows) for key in ("colour_with", "colour_without", "contrast_with",
                                                         "contrast_without")}
    print(totals)
    run.finish({"items": rows, "totals": totals})


if __name__ == "__main__":
    main()
