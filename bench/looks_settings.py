"""Cycles settings and cost per look: which sample count meets the quality bar in studio, clevr and photoreal?

The method of bench/render_settings.py, per look: for one scene per family (the
same composed scene in every look), a reference render with `--reference-samples`
samples (default 256: on this shared 2-core machine 1024 samples of a photoreal
scene did not fit a session; the reference's residual noise then counts against the
candidates, so the bar is conservative), adaptive sampling off, no denoising,
another Cycles seed; then candidates at 8, 16 and 32 samples with OpenImageDenoise.
Quality: PSNR (8-bit sRGB) and SSIM (luminance) against the reference, the issue's
bar being PSNR >= 38 dB and SSIM >= 0.99 on every scene. Cost: wall seconds of the
whole `render_scene` call per item. Every look of a scene is rendered back to back
in one round, the looks' order rotating from scene to scene, so load drift on a
shared machine hits every look alike; each look's cost is also given as the median
ratio to studio's paired render.

    python -m bench.looks_settings [--quick] [--reference-samples 256] [--size 160x120] [--families a,b]
        [--reference-denoise --out bench/results/looks_settings_denoised_reference.json]
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import LOOK_NAMES, Item, RenderSettings

from .common import Run, median, parse_args, print_table, progress
from .render_quality import TARGET_PSNR, TARGET_SSIM, psnr, ssim

FAMILIES = ("shape_color_count", "rose_grid")
CANDIDATES = (8, 16, 32)
PARAMS = {"rose_grid": {"exception": "finish"}}


def _args(parser) -> None:
    parser.add_argument("--reference-samples", type=int, default=256)
    parser.add_argument("--size", default="160x120", help="WIDTHxHEIGHT of every render")
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--reference-denoise", action="store_true",
                        help="denoise the reference too (its own noise floor otherwise caps SSIM under an HDRI)")


def render(item: Item, samples: int, denoise: bool, seed: int, workdir: Path) -> tuple[np.ndarray, float]:
    from stim3d.render.backends import blender

    camera = item.scene.camera
    settings = RenderSettings(width=camera.width, height=camera.height, samples=samples, denoise=denoise,
                              adaptive_sampling=denoise)
    start = time.perf_counter()
    output = blender.render_scene(item.scene, settings, seed, workdir)
    return output.image, time.perf_counter() - start


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _args)
    width, height = (int(v) for v in args.size.split("x"))
    families = tuple(args.families.split(","))
    candidates = (8,) if args.quick else CANDIDATES
    reference_samples = 32 if args.quick else args.reference_samples
    run = Run("looks_settings", args.quick, args.out, {"size": args.size, "families": families,
                                                        "reference_samples": reference_samples,
                                                        "candidates": candidates, "denoise": "OIDN high",
                                                        "reference_denoised": args.reference_denoise})
    rows: dict[str, dict[int, list[dict]]] = {look: {n: [] for n in candidates} for look in LOOK_NAMES}
    with tempfile.TemporaryDirectory() as scratch:
        for s, family in enumerate(families):
            items = {look: make_item(family, PARAMS.get(family, {}), [2026, 0, 0], f"{family}-{look}",
                                     Frame(width, height), look=look) for look in LOOK_NAMES}
            order = LOOK_NAMES[s % 3:] + LOOK_NAMES[:s % 3]
            references = {}
            for look in order:
                progress(f"{family} {look}: reference {reference_samples} spp")
                references[look], _ = render(items[look], reference_samples, args.reference_denoise, items[look].seed + 1,
                                             Path(scratch) / "ref")
            for n in candidates:
                for look in order:
                    image, seconds = render(items[look], n, True, items[look].seed, Path(scratch) / "test")
                    row = {"family": family, "seconds": round(seconds, 2),
                           "psnr": round(psnr(image, references[look]), 2),
                           "ssim": round(ssim(image, references[look]), 4)}
                    rows[look][n].append(row)
                    progress(f"{family} {look} {n} spp: {row}")
                run.sample_load()
    figures: dict[str, dict] = {}
    for look in LOOK_NAMES:
        per_samples = {}
        for n in candidates:
            studio = {r["family"]: r["seconds"] for r in rows["studio"][n]}
            cases = rows[look][n]
            per_samples[str(n)] = {
                "seconds_per_item_median": round(median([r["seconds"] for r in cases]), 2),
                "ratio_to_studio_median": round(median([r["seconds"] / studio[r["family"]] for r in cases]), 2),
                "psnr_min": min(r["psnr"] for r in cases), "ssim_min": min(r["ssim"] for r in cases),
                "meets_bar": all(r["psnr"] >= TARGET_PSNR and r["ssim"] >= TARGET_SSIM for r in cases),
                "scenes": cases,
            }
        passing = [n for n in candidates if per_samples[str(n)]["meets_bar"]]
        figures[look] = {"by_samples": per_samples, "chosen_samples": min(passing) if passing else None}
    print_table(f"seconds per item and quality per look ({args.size}, OIDN, reference {reference_samples} spp)",
                ["look", "spp", "s/item", "x studio", "PSNR min", "SSIM min", "bar"],
                [[look, n, f["by_samples"][str(n)]["seconds_per_item_median"],
                  f["by_samples"][str(n)]["ratio_to_studio_median"], f["by_samples"][str(n)]["psnr_min"],
                  f["by_samples"][str(n)]["ssim_min"], f["by_samples"][str(n)]["meets_bar"]]
                 for look, f in figures.items() for n in candidates])
    run.finish(figures)


if __name__ == "__main__":
    main()
