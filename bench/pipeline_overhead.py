"""Pipeline overhead: how much of an item's wall time is spent outside Cycles' render call?

Items of a preset (default scenes/presets/demo.yaml: its render settings and task
grids, with each task's count multiplied) go through `Worker.run`, exactly what a
batch worker does, after one warm-up item (bpy import, first scene), both ways in
one run, side by side (`--rounds`, the order of the two alternating from round to
round so that load drift favours neither):

- "inline": each item composed when its turn comes (stim3d 0.2.0.dev0 before the
  worker composed ahead);
- "ahead": the worker is told its next item and composes it on a thread while
  Cycles renders the current one (the batch driver's way, render/batch/executors).

Stages come from the timing.json each item folder gets: compose_and_visibility
(placement ray-casts every candidate, and the final scene's instance map for the
mask check), scene_build_and_passes (Blender reset, datablocks, pass files read
back), render_call (Cycles), write. Share outside the render call = 1 -
render_call / item wall time (goal: under 5 %). In "ahead" mode composition
overlaps the previous render, so it is not part of the item's wall time.

A second figure times the whole demo batch through the command line
(`stim3d render demo.yaml --workers 1`: process start, bpy import, worker, records)
against the sum of its items' render calls.

    python -m bench.pipeline_overhead [--quick] [--items-per-cell N] [--rounds N] [--no-batch]
    python -m bench.pipeline_overhead --preset dysm3d --items-per-cell 1 --max-items 20 --rounds 4 --out bench/results/pipeline_overhead_dysm3d.json
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stim3d.render.batch.config import load_config
from stim3d.render.batch.executors.jobs import Job, JobContext, Worker
from stim3d.render.batch.plan import ItemPlan, expand
from stim3d.render.settings import RenderSettings

from .common import Run, add_device, median, parse_args, print_table, progress

DEMO = Path(__file__).resolve().parents[1] / "stim3d" / "scenes" / "presets" / "demo.yaml"
STAGES = ("compose_and_visibility", "scene_build_and_passes", "render_call", "write")
MODES = ("inline", "ahead")


def time_items(seed: int, settings: RenderSettings, plans: list[ItemPlan], mode: str, round_: int, tmp: Path) -> list[dict]:
    """Every plan through one Worker, as a batch worker runs them; one row per item."""
    out = tmp / f"{mode}-{round_}"
    worker = Worker(JobContext(seed, settings, out), out, tmp / f"work-{mode}-{round_}")
    rows = []
    for n, plan in enumerate(plans):
        ahead = plans[n + 1] if mode == "ahead" and n + 1 < len(plans) else None
        start = time.perf_counter()
        outcome = worker.run(Job(plan, "bench", ahead=ahead))
        wall = time.perf_counter() - start
        if outcome.status != "rendered":
            raise SystemExit(f"{plan.item_id}: {outcome.status}: {outcome.reason}")
        timing = json.loads((out / "items" / plan.item_id / "timing.json").read_text())
        row = {"item": plan.item_id, "round": round_, "wall_s": wall, **{stage: timing.get(stage, 0.0) for stage in STAGES}}
        row["outside_render_share"] = 1.0 - row["render_call"] / wall
        rows.append(row)
        progress(f"round {round_ + 1} {mode} item {n + 1}/{len(plans)} {plan.item_id}: {wall:.2f} s, "
                 f"{row['outside_render_share']:.1%} outside the render call")
    return rows


def summarise(rows: list[dict]) -> dict:
    shares = [r["outside_render_share"] for r in rows]
    wall = sum(r["wall_s"] for r in rows)
    return {
        "per_item": rows,
        "median_seconds": {stage: median([r[stage] for r in rows]) for stage in (*STAGES, "wall_s")},
        "item_wall_s_total": wall,
        "outside_render_share_median": median(shares),
        "outside_render_share_max": max(shares),
        "outside_render_share_pooled": 1.0 - sum(r["render_call"] for r in rows) / wall,
    }


def time_batch(config_path: Path, out: Path, device: str = "cpu") -> dict:
    """The demo batch through the CLI, one worker; compared with the sum of its items' render calls."""
    stim3d = Path(sys.executable).with_name("stim3d")
    start = time.perf_counter()
    subprocess.run([str(stim3d), "render", str(config_path), "--out", str(out), "--workers", "1", "--quiet",
                    "--device", device],
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
        parser.add_argument("--rounds", type=int, default=2, help="rounds of both modes, order alternating (default 2)")
        add_device(parser)

    args = parse_args(__doc__.splitlines()[0], add)
    preset = DEMO.with_name(f"{args.preset}.yaml")
    if not preset.is_file():
        raise SystemExit(f"no preset {preset}")
    config = load_config(preset)
    multiplier = args.items_per_cell or (1 if args.quick else 3)
    config = config.model_copy(update={"tasks": [t.model_copy(update={"count": t.count * multiplier}) for t in config.tasks]})
    config = config.model_copy(update={"render": config.render.model_copy(update={"device": args.device})})
    plans = expand(config)
    if args.max_items and len(plans) > args.max_items:
        plans = plans[:: -(-len(plans) // args.max_items)]
    if args.quick:  # checks the script works: two tiny renders, not the demo's settings
        plans = plans[:2]
        config = config.model_copy(update={"render": config.render.model_copy(update={"width": 160, "height": 120, "samples": 4})})
    run = Run("pipeline_overhead", args.quick, args.out,
              settings={"preset": preset.name, "render": config.render.model_dump(mode="json"), "items": len(plans),
                        "count_multiplier": multiplier, "rounds": 1 if args.quick else args.rounds},
              device=args.device)
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        warm = Worker(JobContext(config.seed + 1, config.render, Path(tmp) / "warm"), Path(tmp) / "warm", Path(tmp) / "w")
        warm.run(Job(plans[0], "bench"))  # bpy import, caches
        rows: dict[str, list[dict]] = {mode: [] for mode in MODES}
        for round_ in range(1 if args.quick else args.rounds):
            for mode in (MODES if round_ % 2 == 0 else MODES[::-1]):
                rows[mode] += time_items(config.seed, config.render, plans, mode, round_, Path(tmp))
                run.sample_load()
        modes = {mode: summarise(rows[mode]) for mode in MODES}
        run.sample_load()
        batch = None
        if not (args.quick or args.no_batch or preset != DEMO):  # another preset's whole batch is far too long
            progress("whole demo batch through `stim3d render --workers 1`")
            batch = time_batch(preset, Path(tmp) / "batch", args.device)
            run.sample_load()

    inline, ahead = modes["inline"], modes["ahead"]
    figures = {**modes, "wall_ratio_inline_over_ahead": inline["item_wall_s_total"] / ahead["item_wall_s_total"],
               "batch": batch}
    print_table(
        f"Per item, {preset.stem} preset ({config.render.width}x{config.render.height}, {config.render.samples} samples, "
        f"denoise {config.render.denoise}), {len(plans)} items, median seconds",
        ["stage", *MODES],
        [[stage, *(modes[m]["median_seconds"][stage] for m in MODES)] for stage in (*STAGES, "wall_s")],
    )
    for mode in MODES:
        m = modes[mode]
        print(f"{mode}: outside Cycles' render call median {m['outside_render_share_median']:.2%} per item, "
              f"max {m['outside_render_share_max']:.2%}, pooled {m['outside_render_share_pooled']:.2%} (goal < 5 %)")
    print(f"item wall time, inline / ahead: {figures['wall_ratio_inline_over_ahead']:.3f}")
    if batch:
        print(f"whole batch via the CLI ({batch['items']} items, 1 worker): {batch['wall_s']:.1f} s wall, "
              f"{batch['render_calls_s']:.1f} s in render calls: {batch['outside_render_share']:.2%} outside")
    run.finish(figures)


if __name__ == "__main__":
    main()
