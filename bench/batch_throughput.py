"""Batch throughput: items per minute with 1 and 2 local workers at the demo render settings.

The demo preset (scenes/presets/demo.yaml: 480x360, 16 samples, OIDN) with its
counting tasks scaled to `--items` items is rendered by `render.batch.render_batch`
with one worker (Cycles on all cores) and with two (Cycles on half the cores each),
into fresh folders. Other work on shared cores drifts over minutes, so the batch is
split into `--rounds` rounds that alternate the order (1 then 2 workers, then 2
then 1, ...) and the figures add the rounds up; each run's load average is kept.
Wall time runs from the call to its return: worker start and bpy import, every
item, records.jsonl.

Also reported, from the items' timing.json: the share of wall time outside Cycles'
own render call, for the whole run (1 - sum of render calls / workers / wall) and
per item in steady state (median of 1 - render_call / the item's stages).

    python -m bench.batch_throughput [--quick] [--items N] [--rounds R]
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from stim3d.render.batch.config import load_config
from stim3d.render.batch.driver import render_batch

from .common import Run, add_device, load_average, parse_args, print_table, progress, wait_for_quiet

DEMO = Path(__file__).resolve().parents[1] / "stim3d" / "scenes" / "presets" / "demo.yaml"


def scaled_demo(items: int):
    """The demo preset with its tasks' counts scaled so the batch has `items` items."""
    config = load_config(DEMO)
    total = sum(task.count for task in config.tasks)
    counts = [max(1, round(task.count * items / total)) for task in config.tasks]
    counts[0] += items - sum(counts)
    tasks = [task.model_copy(update={"count": n}) for task, n in zip(config.tasks, counts)]
    return config.model_copy(update={"tasks": tasks})


def measure(config, workers: int, folder: Path) -> dict:
    """One run; the raw sums, so that rounds add up."""
    load = load_average()
    start = time.perf_counter()
    report = render_batch(config, folder, workers=workers)
    wall = time.perf_counter() - start
    timings = [json.loads(p.read_text()) for p in sorted((folder / "items").glob("*/timing.json"))]
    return {"workers": workers, "items": report.rendered, "failed": len(report.failed), "wall_s": wall,
            "seconds": report.seconds, "render_calls": [t["render_call"] for t in timings],
            "outside_per_item": [1 - t["render_call"] / sum(t.values()) for t in timings], "load_average": load}


def combine(runs: list[dict]) -> dict:
    workers, wall = runs[0]["workers"], sum(r["wall_s"] for r in runs)
    items = sum(r["items"] for r in runs)
    render_calls = [c for r in runs for c in r["render_calls"]]
    return {
        "workers": workers,
        "items": items,
        "failed": sum(r["failed"] for r in runs),
        "wall_s": round(wall, 1),
        "items_per_minute": round(items / wall * 60, 2),
        "seconds_per_item_median": round(statistics.median(s for r in runs for s in r["seconds"]), 2),
        "render_call_s_median": round(statistics.median(render_calls), 2),
        "outside_render_share_of_wall": round(1 - sum(render_calls) / workers / wall, 4),
        "outside_render_share_per_item_median": round(statistics.median(o for r in runs for o in r["outside_per_item"]), 4),
        "load_average_per_run": [r["load_average"] for r in runs],
    }


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], lambda p: (p.add_argument("--items", type=int, default=24),
                                                          p.add_argument("--rounds", type=int, default=3),
                                                          add_device(p)))
    items, rounds = (4, 1) if args.quick else (args.items, args.rounds)
    config = scaled_demo(items // rounds)
    config = config.model_copy(update={"render": config.render.model_copy(update={"device": args.device})})
    if not args.quick:
        wait_for_quiet(max_load=2.5, max_minutes=10)  # timings on cores other work is using are not throughput
    run = Run("batch_throughput", args.quick, args.out,
              settings={**config.render.model_dump(), "items": items, "rounds": rounds}, device=args.device)
    runs: dict[int, list[dict]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        for round_index in range(rounds):
            for workers in ((1, 2) if round_index % 2 == 0 else (2, 1)):
                progress(f"round {round_index + 1}/{rounds}: {items // rounds} demo items with {workers} worker(s) ...")
                result = measure(config, workers, Path(tmp) / f"r{round_index}-w{workers}")
                runs[workers].append(result)
                run.sample_load()
                progress(f"  {result['items'] / result['wall_s'] * 60:.2f} items/min (load average {result['load_average']})")
    rows = [combine(runs[w]) for w in (1, 2)]
    print_table(f"Throughput at the demo settings ({config.render.width}x{config.render.height}, "
                f"{config.render.samples} samples, denoise={config.render.denoise}), {items} items in {rounds} round(s)",
                ["workers", "items/min", "wall s", "s/item (median)", "render call s (median)",
                 "outside render, whole run", "outside render, per item"],
                [[r["workers"], r["items_per_minute"], r["wall_s"], r["seconds_per_item_median"], r["render_call_s_median"],
                  f"{r['outside_render_share_of_wall']:.1%}", f"{r['outside_render_share_per_item_median']:.1%}"]
                 for r in rows])
    run.finish({"runs": rows})


if __name__ == "__main__":
    main()
