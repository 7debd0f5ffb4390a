"""Studio's items still failing a colour check, rendered again over a range of exposures.

Studio takes up to two brackets for colour (scenes/look_redraws.py `StudioRedraw`); an item
that still fails after them is recorded in its look's `colour_failures`. This bench asks
whether another exposure would have served: for every such item of a studio batch folder
(or the `--items` named), it undoes the kept bracket, renders the item's own rig scaled by
2**ev for each `--evs` step at the batch's settings (the item's own samples and denoiser),
and runs every colour check on each render (scenes/look_redraws.py `check`): named colours that
read off their names, the family's own check (OddGrid's odd cell against its neighbours),
and the contrast floor.

    python -m bench.studio_brackets --folder DIR/oddgrid3d/studio [--folder DIR/rose3d/studio] [--items ID,ID]
        [--evs 0,-0.5,-1,-2]
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from stim3d.render.batch.produce import finish_item, render_with
from stim3d.render.settings import RenderSettings
from stim3d.scenes.look_colours import colour_margins, judged, measured_colours
from stim3d.scenes.look_redraws import check
from stim3d.scenes.looks import with_studio_exposure
from stim3d.scenes.model import Item, StudioLook

from .common import Run, parse_args, print_table


def _args(parser) -> None:
    parser.add_argument("--folder", type=Path, action="append", required=True,
                        help="a studio batch folder (holds batch.json, items/); repeat for several")
    parser.add_argument("--items", type=lambda text: [t for t in text.split(",") if t], default=None,
                        help="comma-separated item ids (default: every studio item whose look records colour failures)")
    parser.add_argument("--evs", default="0,-0.5,-1,-2", help="comma-separated stops from the drawn rig")


def drawn(item: Item) -> Item:
    """The item as composed: its kept bracket undone, what its redraws recorded removed (the ground's grey kept)."""
    look = item.scene.look
    undone = with_studio_exposure(item, -look.exposure_correction_ev) if look.exposure_correction_ev else item
    fresh = StudioLook(ground_redraws=look.ground_redraws) if isinstance(look, StudioLook) else look
    return undone.model_copy(update={"scene": undone.scene.model_copy(update={"look": fresh})})


def _settings(render: dict[str, Any], item: Item) -> RenderSettings:
    """The batch's render settings with the item's own samples and denoiser (a task may set its own)."""
    settings = RenderSettings(**render)
    provenance = item.provenance
    if provenance is None:
        return settings
    return settings.model_copy(update={"samples": provenance.samples, "denoise": provenance.denoise,
                                       "denoise_quality": provenance.denoise_quality})


def checked(item: Item, settings: RenderSettings) -> dict[str, Any]:
    """Render `item` once and report every colour check on it."""
    with tempfile.TemporaryDirectory() as scratch:
        finished, _mask = finish_item(item, render_with(settings, item, Path(scratch)), settings, None, None)
    checks = check(finished)
    measured, failures, low = checks.measured, checks.colour_failures, checks.contrast_failures
    named = judged(finished, measured_colours(finished))
    margins = colour_margins(np.array([c for _n, c in named.values()]), [n for n, _c in named.values()]) \
        if named else np.array([])
    return {"named_failing": sum(object_id in named for object_id in failures),
            "family_failing": sum(object_id not in named for object_id in failures),
            "least_named_margin_de": round(float(margins.min()), 2) if len(margins) else None,
            "under_contrast_floor": len(low), **{k: round(v, 2) for k, v in measured.items()}}


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _args)
    evs = [float(v) for v in args.evs.split(",")]
    chosen = []  # (item, its batch's render settings)
    for folder in args.folder:
        render = json.loads((folder / "batch.json").read_text())["config"]["render"]
        for path in sorted((folder / "items").glob("*/item.json")):
            item = Item.model_validate_json(path.read_text())
            if item.item_id in args.items if args.items else item.scene.look.colour_failures:
                chosen.append((item, _settings(render, item)))
    if not chosen:
        raise SystemExit(f"bench.studio_brackets: no item to measure in {', '.join(map(str, args.folder))}")
    if args.quick:
        chosen, evs = chosen[:1], evs[:2]
    run = Run("studio_brackets", args.quick, args.out, {"evs": evs, "items": [i.item_id for i, _ in chosen]})
    rows = []
    for item, settings in chosen:
        for ev in evs:
            rows.append({"item": item.item_id, "kept_ev": item.scene.look.exposure_correction_ev,
                         "ev": ev, **checked(with_studio_exposure(drawn(item), ev) if ev else drawn(item), settings)})
    print_table("studio items still failing colour, re-rendered at each exposure (stops from the drawn rig)",
                ["item", "kept ev", "ev", "named failing", "family failing", "least named margin",
                 "measured dE", "margin", "under floor"],
                [[r["item"], r["kept_ev"], r["ev"], r["named_failing"], r["family_failing"], r["least_named_margin_de"],
                  r.get("measured_delta_e"), r.get("delta_e_margin"), r["under_contrast_floor"]] for r in rows])
    run.finish({"renders": rows})


if __name__ == "__main__":
    main()
