"""How visible the OddGrid-3D preset's size and position oddities are in the image, and how many were redrawn.

Composes every item of scenes/presets/oddgrid3d.yaml at its own size (composition
and ray casting, no image) and tallies, per odd type and layout, the items whose
odd cell differs in size or position, the layouts redrawn because the oddity did
not clear its margin against its neighbours (`difficulty.contrast_redraws`,
scenes/families/oddgrid/odd_contrast.py), the least margin left (area ratio against the
its row, shift over the local spacing) and how many size oddities still sit
inside the majority's area range across the whole grid (`area_ratio_grid` on the
wrong side of 1: recorded, not required). Labelled twins are left out (same scene).
An item that does not compose is counted under `infeasible` with its error (so a
full run is also the preset's feasibility at its own size).

    python -m bench.oddgrid_contrast [--quick]
"""

from __future__ import annotations

from collections import defaultdict

from bench.common import Run, parse_args, print_table, progress
from stim3d.scenes.presets import preset_path

PRESET = preset_path("oddgrid3d")


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    from stim3d.render.batch.config import load_config
    from stim3d.render.batch.plan import expand
    from stim3d.scenes.families.base import Frame
    from stim3d.scenes.items import make_item, seed_entropy
    from stim3d.scenes.placement import InfeasibleError

    config = load_config(PRESET)
    frame = Frame(config.render.width, config.render.height, config.render.rays_per_pixel)
    plans = [p for p in expand(config) if not p.item_id.endswith("-labelled")]
    plans = plans[::40] if args.quick else plans
    run = Run("oddgrid_contrast", args.quick, args.out, settings={"size": f"{frame.width}x{frame.height}"})
    infeasible: dict[str, str] = {}
    groups: dict[str, dict] = defaultdict(lambda: {"items": 0, "size_items": 0, "position_items": 0,
                                                   "redrawn_items": 0, "redraws": 0, "least_size_margin": None,
                                                   "least_shift_spacing": None, "size_inside_grid_range": 0})
    for n, plan in enumerate(plans):
        try:
            item = make_item(plan.family, plan.params, seed_entropy(config.seed, plan.task_index, plan.item_index),
                             plan.item_id, frame, plan.split, plan.scene_id)
        except InfeasibleError as exc:
            infeasible[plan.item_id] = str(exc)
            continue
        d = item.difficulty
        for key in (f"{plan.params['odd_types']}/{plan.params['layout']}", "all"):
            g = groups[key]
            g["items"] += 1
            g["redraws"] += d["contrast_redraws"]
            g["redrawn_items"] += int(d["contrast_redraws"] > 0)
            if "area_ratio_row" in d:
                g["size_items"] += 1
                grown = d["size_ratio"] > 1.0
                margin = d["area_ratio_row"] if grown else 1.0 / d["area_ratio_row"]
                g["least_size_margin"] = min(margin, g["least_size_margin"] or margin)
                g["size_inside_grid_range"] += int((d["area_ratio_grid"] <= 1.0) if grown else (d["area_ratio_grid"] >= 1.0))
            if "shift_spacing_u" in d:
                g["position_items"] += 1
                shift = max(abs(d["shift_spacing_u"]), abs(d["shift_spacing_v"]))
                g["least_shift_spacing"] = min(shift, g["least_shift_spacing"] or shift)
        if n % 100 == 0:
            progress(f"{n}/{len(plans)}: {dict(groups['all'])}")
            run.sample_load()
    rows = [(k, g["items"], g["size_items"], g["position_items"], g["redrawn_items"], g["redraws"],
             g["least_size_margin"], g["least_shift_spacing"], g["size_inside_grid_range"]) for k, g in sorted(groups.items())]
    print_table("OddGrid-3D size and position oddities against their neighbours",
                ("type/layout", "items", "size", "position", "redrawn", "redraws", "least area margin (row)",
                 "least shift/spacing", "size inside grid range"), rows)
    print(f"infeasible: {len(infeasible)} of {len(plans)}")
    run.finish({"infeasible": infeasible, **groups})


if __name__ == "__main__":
    main()
