"""Memory of one batch worker over many items: does Blender's memory creep?

One process does exactly what a batch worker does (`render.batch.executors.Worker`, item
after item, Blender reset between scenes) for `--items` counting items, never
recycled, and reads its own resident set size (VmRSS) after each item. Prints the
RSS after the first item, after the last, the maximum, and the least-squares growth
(MB per 100 items) over the first and the second half: caches that fill up (bounded
LRU caches of meshes and collision trees) show in the first half, a leak in both.
`stim3d render` recycles a worker after 50 items by default anyway; this measures
what recycling guards against.

    python -m bench.batch_memory [--quick] [--items N] [--width W --height H --samples S]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from stim3d.render.batch.config import parse_config
from stim3d.render.batch.executors.jobs import Job, JobContext, Worker
from stim3d.render.batch.keys import item_key
from stim3d.render.batch.plan import expand

from .common import Run, add_device, parse_args, print_table, progress


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status (Linux only)")


def slope_per_100(values: list[float]) -> float:
    """Least-squares growth in MB per 100 items (0 for fewer than 3 values)."""
    return float(np.polyfit(np.arange(len(values)), values, 1)[0] * 100) if len(values) > 2 else 0.0


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], lambda p: (
        p.add_argument("--items", type=int, default=200),
        p.add_argument("--width", type=int, default=160),
        p.add_argument("--height", type=int, default=120),
        p.add_argument("--samples", type=int, default=8),
        add_device(p),
    ))
    items = 20 if args.quick else args.items
    config = parse_config({
        "seed": 5,
        "render": {"engine": "cycles", "width": args.width, "height": args.height, "samples": args.samples,
                   "denoise": True, "threads": 2, "device": args.device},
        "tasks": [
            {"family": "shape_count", "count": items - items // 2,
             "grid": {"n_shape_types": [1, 2, 3, 4, 5], "min_visibility": [0.7, 0.8, 0.9, 0.99]},
             "params": {"max_instances": 3}},
            {"family": "shape_color_count", "count": items // 2,
             "grid": {"n_shape_types": [2, 3, 4], "min_visibility": [0.7, 0.9]}},
        ],
    })
    run = Run("batch_memory", args.quick, args.out, settings={**config.render.model_dump(), "items": items},
              device=args.device)
    context = JobContext(config.seed, config.render, Path())
    samples: list[float] = []
    failed = 0
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        worker = Worker(context, Path(tmp) / "out", Path(tmp) / "scratch")
        for n, plan in enumerate(expand(config), 1):
            outcome = worker.run(Job(plan, item_key(plan, config.seed, config.render)))
            failed += outcome.status != "rendered"
            samples.append(rss_mb())
            if n % 10 == 0 or n == 1:
                progress(f"item {n}/{items}: RSS {samples[-1]:.1f} MB")
                run.sample_load()
    half = len(samples) // 2
    figures = {"items": items, "failed_items": failed, "rss_first_mb": round(samples[0], 1),
               "rss_last_mb": round(samples[-1], 1), "rss_max_mb": round(max(samples), 1),
               "slope_mb_per_100_items_first_half": round(slope_per_100(samples[:half]), 2),
               "slope_mb_per_100_items_second_half": round(slope_per_100(samples[half:]), 2),
               "rss_every_10_items_mb": [round(s, 1) for s in samples[::10]]}
    print_table(f"RSS of one worker over {items} items ({args.width}x{args.height}, {args.samples} samples, Cycles)",
                ["first MB", "last MB", "max MB", "MB/100 items, 1st half", "MB/100 items, 2nd half"],
                [[figures["rss_first_mb"], figures["rss_last_mb"], figures["rss_max_mb"],
                  figures["slope_mb_per_100_items_first_half"], figures["slope_mb_per_100_items_second_half"]]])
    run.finish(figures)


if __name__ == "__main__":
    main()
