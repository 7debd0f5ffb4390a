"""What an item costs outside Cycles' render call: the factory reset, the scene build, PNG encoding, checksums.

render/backends/blender.py resets Blender to factory settings before every item and
builds every datablock again (render/backends/blender_scene.py). Reusing datablocks
between items (meshes, materials, world) could save at most what the reset and the
build cost, so both are timed here, per item, on the preset's scenes at its size:

- reset: `bpy.ops.wm.read_factory_settings(use_empty=True)`;
- clear: what a reuse path would do instead, at the least: remove the scene's
  objects, meshes, materials, worlds, lights and cameras (`bpy.data.batch_remove`);
- build: `blender_scene.build` (meshes from the shared primitives, materials, world,
  light, camera), after either;
- share of the item: each against the median all-in item time of the same items
  rendered by `render_item` (compose excluded; that runs ahead on a thread).

Determinism proof: the same items are rendered in plan order and in reverse order in
one process (each worker renders whatever comes next after whatever came before),
and every file of every item folder but timing.json is compared byte for byte.
tests/test_item_order.py runs the same check on a tiny batch.

PNG: the final image.png is written by Pillow (item_folder.py, its default zlib
level 6); each rendered image is encoded at levels 0, 1, 3, 6 and 9 and the bytes and
median seconds are kept, with SHA-256 of the folder's files for scale.

    python -m bench.item_overhead [--quick] [--preset dysm3d] [--items N] [--device gpu]
"""

from __future__ import annotations

import hashlib
import io
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from stim3d.render.batch.config import load_config
from stim3d.render.batch.keys import expected_keys
from stim3d.render.batch.plan import expand
from stim3d.render.batch.produce import compose_item, render_item
from stim3d.scenes.presets import preset_path

from .common import Run, add_device, median, parse_args, print_table, progress

PNG_LEVELS = (0, 1, 3, 6, 9)
UNCOMPARED = {"timing.json"}  # wall-clock seconds: the one file that may differ between two renders


def spread_plans(config, count: int):
    """`count` plans spread over every task of the config (round robin over tasks)."""
    by_task: dict[int, list] = {}
    for plan in expand(config):
        by_task.setdefault(plan.task_index, []).append(plan)
    chosen, i = [], 0
    while len(chosen) < count and any(by_task.values()):
        plans = by_task[sorted(by_task)[i % len(by_task)]]
        if plans:
            chosen.append(plans.pop(len(plans) // 2 if len(plans) > 1 else 0))
        i += 1
    return chosen


def clear_scene(bpy) -> None:
    """Remove every datablock a scene build makes, without a factory reset (the least a reuse path does)."""
    doomed: list[Any] = []
    for collection in (bpy.data.objects, bpy.data.meshes, bpy.data.materials, bpy.data.worlds, bpy.data.lights,
                       bpy.data.cameras, bpy.data.images, bpy.data.node_groups):
        doomed += [block for block in collection if block.name != "Render Result"]
    bpy.data.batch_remove(doomed)


def time_reset_and_build(items, repeats: int) -> dict[str, float]:
    import bpy

    from stim3d.render.backends import blender_scene

    reset, clear, build_after_reset, build_after_clear = [], [], [], []
    for _ in range(repeats):
        for item in items:
            t0 = time.perf_counter()
            bpy.ops.wm.read_factory_settings(use_empty=True)
            t1 = time.perf_counter()
            blender_scene.build(bpy.context.scene, item.scene)
            t2 = time.perf_counter()
            clear_scene(bpy)
            t3 = time.perf_counter()
            blender_scene.build(bpy.context.scene, item.scene)
            t4 = time.perf_counter()
            reset.append(t1 - t0)
            build_after_reset.append(t2 - t1)
            clear.append(t3 - t2)
            build_after_clear.append(t4 - t3)
    return {"reset_s": median(reset), "clear_s": median(clear), "build_after_reset_s": median(build_after_reset),
            "build_after_clear_s": median(build_after_clear)}


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file() and p.name not in UNCOMPARED}


def render_in_order(composed, settings, keys, out: Path, work: Path) -> list[float]:
    """Render the composed items in the given order into `out`; seconds per item (render_item all-in)."""
    seconds = []
    for n, c in enumerate(composed):
        started = time.perf_counter()
        render_item(c.item, settings, out, work / f"w{n}", keys[c.item.item_id],
                    {"compose_and_visibility": c.seconds}, raycast_map=c.raycast_map)
        seconds.append(time.perf_counter() - started)
    return seconds


def png_costs(images: list[np.ndarray], repeats: int) -> list[dict[str, Any]]:
    from PIL import Image

    rows = []
    for level in PNG_LEVELS:
        sizes, times = [], []
        for image in images:
            pil = Image.fromarray(image)
            for _ in range(repeats):
                buffer = io.BytesIO()
                t0 = time.perf_counter()
                pil.save(buffer, format="PNG", compress_level=level)
                times.append(time.perf_counter() - t0)
            sizes.append(buffer.tell())
        rows.append({"level": level, "median_bytes": int(median(sizes)), "median_seconds": median(times)})
    return rows


def main() -> None:
    def add(parser):
        parser.add_argument("--preset", default="dysm3d", help="preset whose scenes and render settings are used")
        parser.add_argument("--items", type=int, default=10, help="items, spread over the preset's tasks")
        add_device(parser)

    args = parse_args(__doc__.splitlines()[0], add)
    path = preset_path(args.preset)
    if path is None:
        raise SystemExit(f"--preset {args.preset}: no such preset")
    config = load_config(path)
    render = config.render.model_copy(update={"device": args.device})
    count, repeats = args.items, 3
    if args.quick:
        render = render.model_copy(update={"width": 320, "height": 240, "samples": 2})
        count, repeats = 3, 1
    config = config.model_copy(update={"render": render})
    plans = spread_plans(config, count)
    keys = expected_keys(config, plans)
    run = Run("item_overhead", args.quick, args.out, settings={
        "preset": args.preset, "render": render.model_dump(mode="json"), "items": [p.item_id for p in plans],
        "device": args.device, "repeats": repeats, "png_levels": list(PNG_LEVELS)}, device=args.device)
    progress(f"composing {len(plans)} items of {args.preset}")
    composed = [compose_item(plan, config.seed, render) for plan in plans]
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        work = Path(tmp)
        render_in_order(composed[:1], render, keys, work / "warm", work)  # import bpy, first-render caches
        progress("rendering in plan order, then in reverse order")
        forward = render_in_order(composed, render, keys, work / "forward", work)
        run.sample_load()
        backward = render_in_order(composed[::-1], render, keys, work / "backward", work)
        run.sample_load()
        differing, compared = [], 0
        for c in composed:
            name = c.item.item_id
            a, b = folder_bytes(work / "forward" / "items" / name), folder_bytes(work / "backward" / "items" / name)
            compared += len(a)
            differing += [f"{name}/{f}" for f in sorted(set(a) | set(b)) if a.get(f) != b.get(f)]
        from PIL import Image

        images = [np.asarray(Image.open(work / "forward" / "items" / c.item.item_id / "image.png").convert("RGB"))
                  for c in composed]
        folder = work / "forward" / "items" / composed[0].item.item_id
        t0 = time.perf_counter()
        for p in sorted(folder.iterdir()):
            hashlib.sha256(p.read_bytes()).hexdigest()
        checksum_s = time.perf_counter() - t0
    progress("timing reset, clear and build")
    blender = time_reset_and_build([c.item for c in composed], repeats)
    run.sample_load()
    png = png_costs(images, repeats)
    item_s = median(forward + backward)
    reuse_saves = (blender["reset_s"] + blender["build_after_reset_s"]) - (blender["clear_s"] + blender["build_after_clear_s"])
    figures = {
        "item_seconds_median": item_s, "blender": blender,
        "blender_share_of_item": {k: v / item_s for k, v in blender.items()},
        "reuse_upper_bound_s": blender["reset_s"] + blender["build_after_reset_s"],
        "clear_instead_of_reset_saves_s": reuse_saves,
        "determinism": {"items": len(composed), "files_compared": compared, "differing": differing,
                        "orders": ["plan", "reversed"], "holds": not differing},
        "png": png, "png_default_level": 6, "checksum_one_folder_s": checksum_s,
    }
    print_table(f"Blender per item ({args.preset}, {render.width}x{render.height}; item {item_s:.2f} s all-in)",
                ["step", "median s", "share of item"],
                [[k, v, v / item_s] for k, v in blender.items()])
    print_table("PNG image.png at each zlib level", ["level", "median bytes", "median s"],
                [[r["level"], r["median_bytes"], r["median_seconds"]] for r in png])
    print(f"determinism: {compared} files of {len(composed)} items, plan order vs reversed: "
          f"{'identical' if not differing else 'DIFFER: ' + ', '.join(differing)}")
    run.finish(figures)


if __name__ == "__main__":
    main()
