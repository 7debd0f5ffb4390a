"""Batch throughput: items per minute with 1 and 2 local workers at the demo render settings.

The demo preset (scenes/presets/demo.yaml: 480x360, 16 samples, OIDN) with its
counting tasks scaled to `--items` items is rendered by `render.batch.render_batch`
twice, into fresh folders: once with one worker (Cycles on all cores), once with
two (Cycles on half the cores each). Wall time runs from the call to its return:
worker start and bpy import, every item, records.jsonl.

Also reported, from the items' timing.json: the share of wall time outside Cycles'
own render call, for the whole run (1 - sum of render calls x workers^-1 / wall) and
per item in steady state (median of 1 - render_call / the item's stages).

    python -m bench.batch_throughput [--quick] [--items N]
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from render.batch import render_batch
from render.config import load_config

from .common import Run, parse_args, print_table, progress, wait_for_quiet

DEMO = Path(__file__).resolve().parents[1] / "scenes" / "presets" / "demo.yaml"


def scaled_demo(items: int):
    """The demo preset with its tasks' counts scaled so the batch has `items` items."""
    config = load_config(DEMO)
    total = sum(task.count for task in config.tasks)
    counts = [max(1, round(task.count * items / total)) for task in config.tasks]
    counts[0] += items - sum(counts)
    tasks = [task.model_copy(update={"count": n}) for task, n in zip(config.tasks, counts)]
    return config.model_copy(update={"tasks": tasks})


def measure(config, workers: int, folder: Path) -> dict:
    start = time.perf_counter()
    report = render_batch(config, folder, workers=workers)
    wall = time.perf_counter() - start
    timings = [json.loads(p.read_text()) for p in sorted((folder / "items").glob("*/timing.json"))]
    render_calls = sum(t["render_call"] for t in timings)
    per_item_outside = [1 - t["render_call"] / sum(t.values()) for t in timings]
    return {
        "workers": workers,
        "items": report.rendered,
        "failed": len(report.failed),
        "wall_s": round(wall, 1),
        "items_per_minute": round(report.rendered / wall * 60, 2),
        "seconds_per_item_median": round(statistics.median(report.seconds), 2),
        "render_call_s_median": round(statistics.median(t["render_call"] for t in timings), 2),
        "outside_render_share_of_wall": round(1 - render_calls / workers / wall, 4),
        "outside_render_share_per_item_median": round(statistics.median(per_item_outside), 4),
    }


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], lambda p: p.add_argument("--items", type=int, default=24))
    items = 4 if args.quick else args.items
    config = scaled_demo(items)
    if not args.quick:
        wait_for_quiet(max_load=2.5, max_minutes=10)  # timings on cores other work is using are not throughput
    run = Run("batch_throughput", args.quick, args.out, settings={**config.render.model_dump(), "items": items})
    rows = []
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        for workers in (1, 2):
            progress(f"{items} demo items with {workers} worker(s) ...")
            rows.append(measure(config, workers, Path(tmp) / f"w{workers}"))
            run.sample_load()
            progress(f"  {rows[-1]['items_per_minute']} items/min")
    print_table(f"Throughput at the demo settings ({config.render.width}x{config.render.height}, "
                f"{config.render.samples} samples, denoise={config.render.denoise}), {items} items",
                ["workers", "items/min", "wall s", "s/item (median)", "render call s (median)",
                 "outside render, whole run", "outside render, per item"],
                [[r["workers"], r["items_per_minute"], r["wall_s"], r["seconds_per_item_median"], r["render_call_s_median"],
                  f"{r['outside_render_share_of_wall']:.1%}", f"{r['outside_render_share_per_item_median']:.1%}"]
                 for r in rows])
    run.finish({"runs": rows})


if __name__ == "__main__":
    main()
