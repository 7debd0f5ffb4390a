"""Pipeline overhead: how much of an item's wall time is spent outside Cycles' render call?

Items of the demo preset (scenes/presets/demo.yaml: its render settings and task
grids, with each task's count multiplied) go through `render.produce.produce_item`,
the same function batch workers call, after one warm-up item (bpy import, first
scene). Stages come from the timing.json each item folder gets:
compose_and_visibility (placement ray-casts every candidate, so the two are one
stage), scene_build_and_passes (Blender reset, datablocks, pass files read back),
render_call (Cycles), write; `other` is the item's wall time minus those stages
(re-measuring the final scene for the mask check, measured colours). Share outside
the render call = 1 - render_call / item wall time (goal: under 5 %).

A second figure times the whole demo batch through the command line
(`stim3d render demo.yaml --workers 1`: process start, bpy import, worker, records)
against the sum of its items' render calls.

    python -m bench.pipeline_overhead [--quick] [--items-per-cell N] [--no-batch]
    python -m bench.pipeline_overhead --preset dysm3d --items-per-cell 1 --max-items 20 --out bench/results/pipeline_overhead_dysm3d.json
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stim3d.render.batch.config import expand, load_config
from stim3d.render.batch.produce import produce_item

from .common import Run, median, parse_args, print_table, progress

DEMO = Path(__file__).resolve().parents[1] / "scenes" / "presets" / "demo.yaml"
STAGES = ("compose_and_visibility", "scene_build_and_passes", "render_call", "write")


def time_items(config, plans, out: Path, workdir: Path) -> list[dict]:
    rows = []
    for n, plan in enumerate(plans, 1):
        start = time.perf_counter()
        folder = produce_item(plan, config.seed, config.render, out, workdir, "bench")
        wall = time.perf_counter() - start
        timing = json.loads((folder / "timing.json").read_text())
        row = {"item": plan.item_id, "wall_s": wall, **{stage: timing.get(stage, 0.0) for stage in STAGES}}
        row["other"] = wall - sum(timing.values())
        row["outside_render_share"] = 1.0 - row["render_call"] / wall
        rows.append(row)
        progress(f"item {n}/{len(plans)} {plan.item_id}: {wall:.1f} s, {row['outside_render_share']:.1%} outside the render call")
    return rows


def time_batch(config_path: Path, out: Path) -> dict:
    """The demo batch through the CLI, one worker; compared with the sum of its items' render calls."""
    stim3d = Path(sys.executable).with_name("stim3d")
    start = time.perf_counter()
    subprocess.run([str(stim3d), "render", str(config_path), "--out", str(out), "--workers", "1", "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    timings = [json.loads(p.read_text()) for p in sorted((out / "items").glob("*/timing.json"))]
    render_calls = sum(t["render_call"] for t in timings)
    return {"items": len(timings), "wall_s": wall, "render_calls_s": render_calls, "outside_render_share": 1.0 - render_calls / wall}


def main() -> None:
    def add(parser):
        parser.add_argument("--items-per-cell", type=int, help="multiply each demo task's count by this (default 3; --quick 1)")
        parser.add_argument("--no-batch", action="store_true", help="skip the whole-batch figure")
        parser.add_argument("--preset", default=DEMO.stem, help="a preset of scenes/presets (default demo)")
        parser.add_argument("--max-items", type=int, help="at most this many items, spread evenly over the plan")

    args = parse_args(__doc__.splitlines()[0], add)
    preset = DEMO.with_name(f"{args.preset}.yaml")
    if not preset.is_file():
        raise SystemExit(f"no preset {preset}")
    config = load_config(preset)
    multiplier = args.items_per_cell or (1 if args.quick else 3)
    config = config.model_copy(update={"tasks": [t.model_copy(update={"count": t.count * multiplier}) for t in config.tasks]})
    plans = expand(config)
    if args.max_items and len(plans) > args.max_items:
        plans = plans[:: -(-len(plans) // args.max_items)]
    if args.quick:  # checks the script works: two tiny renders, not the demo's settings
        plans = plans[:2]
        config = config.model_copy(update={"render": config.render.model_copy(update={"width": 160, "height": 120, "samples": 4})})
    run = Run("pipeline_overhead", args.quick, args.out,
              settings={"preset": preset.name, "render": config.render.model_dump(mode="json"), "items": len(plans),
                        "count_multiplier": multiplier})
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        out, workdir = Path(tmp) / "out", Path(tmp) / "work"
        produce_item(plans[0], config.seed + 1, config.render, Path(tmp) / "warm", workdir, "bench")  # bpy import, caches
        rows = time_items(config, plans, out, workdir)
        run.sample_load()
        batch = None
        if not (args.quick or args.no_batch or preset != DEMO):  # another preset's whole batch is far too long
            progress("whole demo batch through `stim3d render --workers 1`")
            batch = time_batch(preset, Path(tmp) / "batch")
            run.sample_load()

    stage_names = (*STAGES, "other")
    medians = {stage: median([r[stage] for r in rows]) for stage in (*stage_names, "wall_s")}
    totals = {stage: sum(r[stage] for r in rows) for stage in (*stage_names, "wall_s")}
    shares = [r["outside_render_share"] for r in rows]
    figures = {
        "per_item": rows,
        "median_seconds": medians,
        "share_of_total_wall": {stage: totals[stage] / totals["wall_s"] for stage in stage_names},
        "outside_render_share_median": median(shares),
        "outside_render_share_max": max(shares),
        "outside_render_share_pooled": 1.0 - totals["render_call"] / totals["wall_s"],
        "batch": batch,
    }
    print_table(
        f"Per item, {preset.stem} preset ({config.render.width}x{config.render.height}, {config.render.samples} samples, "
        f"denoise {config.render.denoise}), {len(rows)} items",
        ["stage", "median s", "share of total wall"],
        [[stage, medians[stage], f"{figures['share_of_total_wall'][stage]:.2%}"] for stage in stage_names]
        + [["item wall", medians["wall_s"], "100%"]],
    )
    print(f"\noutside Cycles' render call: median {figures['outside_render_share_median']:.2%} per item, "
          f"max {figures['outside_render_share_max']:.2%}, pooled {figures['outside_render_share_pooled']:.2%} (goal < 5 %)")
    if batch:
        print(f"whole batch via the CLI ({batch['items']} items, 1 worker): {batch['wall_s']:.1f} s wall, "
              f"{batch['render_calls_s']:.1f} s in render calls: {batch['outside_render_share']:.2%} outside")
    run.finish(figures)


if __name__ == "__main__":
    main()
