"""Does a ROSE glossy `finish` exception show? Its highlight against its row's matte objects, per majority shape.

A `finish` exception is the same object as its neighbours but glossy, so the only cue a
viewer has is a specular highlight. For each primitive as the majority shape, this
composes `--scenes` rose_grid finish scenes (grid sizes of the rose3d preset), renders
them with Cycles at rose3d's own render settings (scenes/presets/rose3d.yaml) and
measures, for every glossy exception, its peak contrast (brightest minus median
luminance of its pixels in the object-index pass) over the largest peak contrast of
the matte objects in its row: objects of one row stand at one distance and see the
lights alike. tests/test_validity_colors.py holds one scene to a margin of 1.5.

The shape is forced by setting scenes/families/rose/rose_grid.py FINISH_SHAPES while the
scenes are composed (restored after); the family draws the majority from
FINISH_SHAPES, which this measurement chose.

    python -m bench.rose_finish [--quick] [--scenes 6] [--shapes sphere,cone,torus,cube,cylinder] [--device gpu]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import SHAPES, Item
from stim3d.scenes.placement import InfeasibleError

from .common import Run, add_device, median, parse_args, print_table, progress

MARGIN = 1.5  # the margin tests/test_validity_colors.py holds a rendered finish scene to
MIN_PIXELS = 12  # fewer visible pixels carry too little to judge (as tests/test_validity_colors.py)


def finish_scenes(shape: str, count: int, width: int, height: int) -> list[Item]:
    """`count` rose_grid finish scenes whose majority is `shape`, over the preset's grid sizes."""
    from stim3d.scenes.families.rose import rose_grid

    shipped, rose_grid.FINISH_SHAPES = rose_grid.FINISH_SHAPES, (shape,)  # while composing, then restored
    items = []
    try:
        for i in range(count):
            params = {"exception": "finish", "rows": 4 + i % 5, "cols": 4 + (i * 2) % 5, "min_exceptions": 1,
                      "max_exceptions": 4, "cue": False}
            try:
                items.append(make_item("rose_grid", params, [29, SHAPES.index(shape), i], f"finish-{shape}-{i}",
                                       Frame(width, height)))
            except InfeasibleError:
                continue
    finally:
        rose_grid.FINISH_SHAPES = shipped
    return items


def highlight_ratios(item: Item, image: np.ndarray, instance_map: np.ndarray) -> list[float]:
    """Per glossy exception: its peak contrast over the largest of its row's matte objects."""
    lum = (image.astype(np.float64) / 255.0) @ np.array([0.2126, 0.7152, 0.0722])

    def peak(object_id: int) -> float | None:
        values = lum[instance_map == object_id]
        return float(values.max() - np.median(values)) if values.size >= MIN_PIXELS else None

    peaks = {o.id: peak(o.id) for o in item.scene.objects if o.countable}
    ratios = []
    for o in item.scene.objects:
        if o.countable and o.finish == "glossy" and peaks[o.id] is not None:
            row = [peaks[m.id] for m in item.scene.objects if m.countable and m.finish == "matte"
                   and m.attributes.get("row") == o.attributes["row"] and peaks[m.id] is not None]
            if row:
                ratios.append(round(peaks[o.id] / max(row), 3))  # type: ignore[operator, type-var]
    return ratios


def main() -> None:
    def add(parser):
        parser.add_argument("--scenes", type=int, default=6, help="finish scenes per majority shape (default 6)")
        parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated majority shapes")
        add_device(parser)

    args = parse_args(__doc__.splitlines()[0], add)
    from stim3d.render.backends import blender
    from stim3d.render.batch.config import load_config
    from stim3d.scenes.presets import preset_path

    shapes = tuple(args.shapes.split(","))
    for shape in shapes:
        if shape not in SHAPES:
            raise SystemExit(f"--shapes: unknown shape {shape!r} (known: {', '.join(SHAPES)})")
    settings = load_config(preset_path("rose3d")).render.model_copy(update={"device": args.device})  # type: ignore[arg-type]
    count = args.scenes
    if args.quick:
        settings, count, shapes = settings.model_copy(update={"width": 160, "height": 120, "samples": 2}), 1, shapes[:2]
    run = Run("rose_finish", args.quick, args.out, settings={
        "render": settings.model_dump(mode="json"), "scenes_per_shape": count, "shapes": shapes, "margin": MARGIN}, device=args.device)
    rows = []
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        for shape in shapes:
            ratios: list[float] = []
            for item in finish_scenes(shape, count, settings.width, settings.height):
                output = blender.render_scene(item.scene, settings, item.seed, Path(tmp))
                ratios += highlight_ratios(item, output.image, output.instance_map)
                progress(f"{shape} {item.item_id}: {ratios[-4:]}")
            rows.append({"shape": shape, "exceptions": len(ratios), "ratio_min": min(ratios, default=None),
                         "ratio_median": median(ratios) if ratios else None,
                         "below_margin": sum(r < MARGIN for r in ratios), "below_1_2": sum(r < 1.2 for r in ratios),
                         "ratios": ratios})
            run.sample_load()
    print_table(f"glossy exception's highlight over its row's matte objects, rose3d settings "
                f"({settings.width}x{settings.height})",
                ["majority shape", "exceptions", "min", "median", f"below {MARGIN}", "below 1.2"],
                [[r["shape"], r["exceptions"], r["ratio_min"], r["ratio_median"], r["below_margin"], r["below_1_2"]]
                 for r in rows])
    run.finish({"shapes": rows})


if __name__ == "__main__":
    main()
