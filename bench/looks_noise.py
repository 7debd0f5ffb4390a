"""Where does photoreal's render noise come from? Per-pixel noise of one scene with one light source or feature removed.

bench/looks_settings.py found photoreal missing the quality bar where studio and
clevr meet it. This benchmark takes its DYSM scene (bench/looks_settings.py SCENES)
in every look and renders it twice at `--samples` samples with two Cycles seeds, no
denoising, adaptive sampling off: the difference of the two renders is twice the
per-pixel noise of one. It reports the RMS of that difference (8-bit sRGB levels) on
the ground (object-index 0) and on the objects, PSNR and SSIM of one render against
the other, and the mean level (to see what a variant takes out of the image), for
photoreal as drawn and with one thing changed at a time (VARIANTS): the light tree
off, the environment's strength 0 (the sun alone), no sun, the ground's bump off,
the world's importance map at 256 px (before this benchmark: bench/results/looks_noise.json at commit
ee50678 measured photoreal with it "as drawn") and at Cycles' automatic resolution, the per-sample direct
clamp at 1 (spikes would shrink; steady noise not), and a setting's walls, trims and hedge casting no
shadow (as they did before commit ece8dfe), with the light tree on and off: the world behind them then
lit the scene through them, and the two sampling strategies no longer agreed on the mean level. Noise
variance scales as 1/samples, so a variant with half the RMS needs a quarter of the samples for the same noise.

`--scene` takes any scene of bench/looks_settings.py SCENES (default `dysm`); `ava_depth_relative`'s marble
top mirrors a window. The variants change Blender datablocks by wrapping render/backends/blender_looks.py
and blender_settings.py functions in this process only; the backend itself is not modified.

    python -m bench.looks_noise [--quick] [--samples 64] [--width 160 --height 120] [--scene dysm]
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from stim3d.render.settings import RenderSettings
from stim3d.scenes.model import LOOK_NAMES, DrawnLook, Scene

from .common import Run, parse_args, print_table, progress
from .looks_settings import SCENES, scene_items
from .render_quality import psnr, ssim

VARIANTS = ("as drawn", "light tree off", "light tree off, no environment", "light tree off, no sun",
            "light tree off, no bump", "light tree off, importance map 256 px", "light tree off, importance map automatic",
            "light tree off, direct clamp 1", "walls cast no shadow", "light tree off, walls cast no shadow")


def _look(scene: Scene, part: str, update: dict[str, Any] | None) -> Scene:
    """`scene` with its look's `part` updated (None: removed)."""
    look = scene.look
    assert isinstance(look, DrawnLook)
    value = None if update is None else getattr(look, part).model_copy(update=update)
    return scene.model_copy(update={"look": look.model_copy(update={part: value})})


def prepare(variant: str, scene: Scene, originals: dict[str, Any]) -> tuple[Scene, dict[str, Any]]:
    """Patch blender_looks for `variant` (restoring the originals first); the scene and RenderSettings fields to use."""
    from stim3d.render.backends import blender_grounds, blender_looks, blender_settings

    blender_looks.LOOK_CYCLES.clear()
    blender_looks.LOOK_CYCLES.update(originals["cycles"])
    blender_grounds._bump = originals["bump"]
    blender_looks.set_environment = originals["environment"]
    blender_looks.ENVIRONMENT_MAP_RESOLUTION = originals["map"]
    blender_settings.link_lamps = originals["link_lamps"]
    fields: dict[str, Any] = {"light_tree": not variant.startswith("light tree off")}
    if not isinstance(scene.look, DrawnLook) or scene.look.name != "photoreal":
        return scene, fields
    if variant.endswith("no environment"):
        scene = _look(scene, "environment", {"strength": 0.0})
    elif variant.endswith("no sun") and scene.look.sun is not None:
        scene = _look(scene, "sun", None)
    elif variant.endswith("no bump"):
        blender_grounds._bump = lambda *args, **kwargs: None
    elif variant.endswith("direct clamp 1"):
        blender_looks.LOOK_CYCLES["sample_clamp_direct"] = 1.0
    elif variant.endswith("importance map 256 px"):
        blender_looks.ENVIRONMENT_MAP_RESOLUTION = 256
    elif variant.endswith("importance map automatic"):
        def environment(scene_bpy, look_environment):
            world = originals["environment"](scene_bpy, look_environment)
            world.cycles.sampling_method = "AUTOMATIC"
            return world
        blender_looks.set_environment = environment
    elif variant.endswith("walls cast no shadow"):
        def link_lamps(scene_bpy, sun):
            originals["link_lamps"](scene_bpy, sun)
            for obj in scene_bpy.collection.objects:
                if obj.get("stim3d_surface") in blender_settings.SCREENS:
                    obj.visible_shadow = False
        blender_settings.link_lamps = link_lamps
    return scene, fields


def noise(scene: Scene, samples: int, fields: dict[str, Any], workdir: Path) -> dict[str, float]:
    """Two renders with Cycles seeds 1 and 2; noise figures of their difference."""
    from stim3d.render.backends import blender

    camera = scene.camera
    settings = RenderSettings(width=camera.width, height=camera.height, samples=samples, denoise=False,
                              adaptive_sampling=False, **fields)
    start = time.perf_counter()
    a, b = (blender.render_scene(scene, settings, seed, workdir) for seed in (1, 2))
    ground = a.instance_map == 0
    diff = a.image.astype(np.float64) - b.image
    return {"ground_rms": round(float(np.sqrt(np.mean(diff[ground] ** 2))), 2),
            "objects_rms": round(float(np.sqrt(np.mean(diff[~ground] ** 2))), 2),
            "psnr": round(psnr(a.image, b.image), 2), "ssim": round(ssim(a.image, b.image), 4),
            "mean_level": round(float(a.image.mean()), 1), "seconds": round(time.perf_counter() - start, 1)}


def main() -> None:
    def add(parser):
        parser.add_argument("--samples", type=int, default=64)
        parser.add_argument("--width", type=int, default=160)
        parser.add_argument("--height", type=int, default=120)
        parser.add_argument("--scene", default="dysm", help="a scene of bench/looks_settings.py SCENES")

    args = parse_args(__doc__.splitlines()[0], add)
    from stim3d.render.backends import blender_grounds, blender_looks, blender_settings

    if args.scene not in SCENES:
        raise SystemExit(f"--scene: unknown scene {args.scene!r} (known: {', '.join(SCENES)})")

    width, height, samples, variants = args.width, args.height, args.samples, VARIANTS
    if args.quick:
        width, height, samples, variants = 80, 60, 4, VARIANTS[:2]
    items = scene_items(args.scene, width, height, LOOK_NAMES)
    originals = {"cycles": dict(blender_looks.LOOK_CYCLES), "bump": blender_grounds._bump,
                 "environment": blender_looks.set_environment, "map": blender_looks.ENVIRONMENT_MAP_RESOLUTION,
                 "link_lamps": blender_settings.link_lamps}
    run = Run("looks_noise", args.quick, args.out, {"resolution": f"{width}x{height}", "samples": samples,
                                                     "scene": items["photoreal"].item_id,
                                                     "photoreal_look": items["photoreal"].scene.look.model_dump()})
    rows = []
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        try:
            for look in ("studio", "clevr"):
                rows.append({"look": look, "variant": "as drawn",
                             **noise(items[look].scene, samples, {"light_tree": True}, Path(tmp))})
                progress(f"{rows[-1]}")
            for variant in variants:
                scene, fields = prepare(variant, items["photoreal"].scene, originals)
                rows.append({"look": "photoreal", "variant": variant, **noise(scene, samples, fields, Path(tmp))})
                progress(f"{rows[-1]}")
                run.sample_load()
        finally:
            prepare("as drawn", items["photoreal"].scene, originals)
    print_table(f"noise of one {samples}-sample render ({width}x{height}, two seeds, no denoising), "
                f"{items['photoreal'].item_id}",
                ["look", "variant", "ground RMS", "objects RMS", "PSNR", "SSIM", "mean level", "s"],
                [[r["look"], r["variant"], r["ground_rms"], r["objects_rms"], r["psnr"], r["ssim"], r["mean_level"],
                  r["seconds"]] for r in rows])
    run.finish({"rows": rows})


if __name__ == "__main__":
    main()
