"""Every item of every shipped preset composes: no `InfeasibleError` at the preset's size, 640x480 or 800x600.

A shipped preset promises every item it lists; an item whose layout search gives
up would fail at render time. Composition (layout search and ray-cast visibility,
no image) is deterministic per item, so composing every planned item at a size
proves the preset renders whole at that size on every engine (the engines render
the composed scene; none changes the geometry). The whole set takes far longer
than a test may (about 6,000 items per size), so the test suite keeps a sample
(tests/test_preset_feasibility.py) and this script runs all of it:

    python -m bench.preset_feasibility [--quick] [--preset rose3d] [--size 640x480] [--jobs 2]

Figures: per preset and size, items composed, infeasible items (with their ids
and errors) and seconds. `--quick` composes the first 20 items of each preset.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path

from bench.common import Run, parse_args, print_table, progress
from stim3d.scenes.presets import preset_names, preset_path

SIZES = ((640, 480), (800, 600))  # the sizes a user is likely to pick, besides the preset's own


def preset_paths() -> list[Path]:
    """Every shipped preset's file, by name (scenes/presets/__init__.py)."""
    return [path for name in preset_names() if (path := preset_path(name)) is not None]


@lru_cache(maxsize=8)
def _planned(path: str):
    """The preset's config and its expanded plan, once per worker process."""
    from stim3d.render.batch.config import load_config
    from stim3d.render.batch.plan import expand

    config = load_config(path)
    return config, expand(config)


def compose_one(args: tuple[str, int, int, int]) -> tuple[str, str | None]:
    """(item id, None or the error line) for one planned item of a preset at width x height."""
    from stim3d.scenes.families.base import Frame
    from stim3d.scenes.items import make_item, seed_entropy
    from stim3d.scenes.placement import InfeasibleError

    path, index, width, height = args
    config, plans = _planned(path)
    plan = plans[index]
    frame = Frame(width, height, config.render.rays_per_pixel)
    try:
        make_item(plan.family, plan.params, seed_entropy(config.seed, plan.task_index, plan.item_index),
                  plan.item_id, frame, plan.split, plan.scene_id, plan.questions)
    except InfeasibleError as exc:
        return plan.item_id, str(exc)
    return plan.item_id, None


def sizes_of(path: Path, chosen: list[str]) -> list[tuple[int, int]]:
    from stim3d.render.batch.config import load_config

    render = load_config(path).render
    sizes = [(render.width, render.height), *SIZES]
    if chosen:
        sizes = [tuple(int(v) for v in s.split("x")) for s in chosen]  # type: ignore[misc]
    return list(dict.fromkeys(sizes))


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], lambda p: (
        p.add_argument("--preset", action="append", default=[], help="preset name (default: every shipped one)"),
        p.add_argument("--size", action="append", default=[], help="WxH (default: the preset's own, 640x480, 800x600)"),
        p.add_argument("--jobs", type=int, default=1, help="worker processes"),
        p.add_argument("--merge", action="store_true", help="keep the results file's other presets and sizes"),
    ))
    from stim3d.render.batch.config import load_config
    from stim3d.render.batch.plan import expand

    run = Run("preset_feasibility", args.quick, args.out, settings={"sizes": args.size or "own+640x480+800x600"})
    figures: dict[str, dict] = {}
    if args.merge and run.path().is_file():  # figures of earlier runs carry their own commit
        earlier = json.loads(run.path().read_text())
        figures = {key: {**value, "commit": value.get("commit", earlier["code"]["git_commit"])}
                   for key, value in earlier["figures"].items()}
    rows = []
    paths = [p for p in preset_paths() if not args.preset or p.stem in args.preset]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for path in paths:
            count = len(expand(load_config(path)))
            indices = range(min(count, 20) if args.quick else count)
            for width, height in sizes_of(path, args.size):
                started = time.perf_counter()
                jobs = [(str(path), i, width, height) for i in indices]
                failed = {item: error for item, error in pool.map(compose_one, jobs, chunksize=8) if error}
                seconds = round(time.perf_counter() - started, 1)
                key = f"{path.stem}@{width}x{height}"
                figures[key] = {"items": len(jobs), "infeasible": len(failed), "failed": failed, "seconds": seconds,
                                "commit": run.code["git_commit"]}
                rows.append((path.stem, f"{width}x{height}", len(jobs), len(failed), seconds))
                progress(f"{key}: {len(jobs)} items, {len(failed)} infeasible, {seconds} s")
                run.sample_load()
                run.finish(figures)  # after every preset and size: a long run stopped early keeps what it measured
    print_table("Preset feasibility (composition + ray-cast visibility)", ("preset", "size", "items", "infeasible", "s"), rows)
    run.finish(figures)


if __name__ == "__main__":
    main()
