"""Cycles settings per family: which knobs make a DYSM 3D item cheaper without losing image quality?

bench/render_quality.py chose the sample count (8 samples + OIDN). This benchmark
takes that setting as the baseline and varies the other Cycles knobs that fit these
scenes (diffuse and glossy primitives under a few area lights, no glass, no volume):
OIDN quality (HIGH / BALANCED / FAST), the OIDN prefilter, 4 and 2
samples, the adaptive-sampling threshold, the light tree, caustics, max bounces,
and combinations of the ones that pay. For one scene of each DYSM 3D family (the
middle item of each task of scenes/presets/dysm3d.yaml) at 800x600:

- reference: `--reference-samples` samples (default 1024, the issue's method; 512
  when the machine is too loaded to wait for 1024), adaptive sampling off, no
  denoising, full bounces, another Cycles seed than the test renders. A reference
  is cached under the scratch folder by scene and settings, so a rerun skips it;
- quality: PSNR (8-bit sRGB) and SSIM (luminance), as in bench/render_quality.py;
- cost: wall seconds of Cycles' render call (with the denoiser), wall seconds of the
  whole `render_scene` call (factory reset, scene build, render, files), and CPU
  seconds of that call (all threads; less sensitive to other work on the cores);
- side by side: every variant is rendered once per scene per round, the variants'
  order rotates from round to round, and each variant's cost is also given as the
  median of its paired ratio to the baseline in the same round and scene, so load
  drift on a shared machine cannot pick the winner.

Every variant sets all explored knobs explicitly (baseline values unless it varies
them), so the figures mean the same thing whatever render/backends/blender.py's
defaults are; the last variant is rendered through RenderSettings' own fields, as the
dysm3d preset sets them. The results file is rewritten after every round (`rounds_completed`),
so a run cut short still leaves its figures.
The choice: the variant with the least median render-call time whose PSNR >= 38 dB
and SSIM >= 0.99 on every scene.

The bench changes Cycles settings by wrapping blender.py's `_cycles` in this process
only; the backend itself is not modified. On a GPU machine `--device gpu` renders the
test variants (and the reference) on the GPU.

    python -m bench.render_settings [--quick] [--preset dysm3d] [--reference-samples 512] [--rounds 2] [--families a,b]
        [--variants all|short] [--device gpu]
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from stim3d.render.settings import RenderSettings
from stim3d.scenes.model import Item
from stim3d.scenes.presets import preset_names, preset_path

from .common import QUICK_DIR, Run, median, parse_args, print_table, progress, renderer_fingerprint
from .render_quality import DEFAULT_FAMILIES, HEIGHT, TARGET_PSNR, TARGET_SSIM, WIDTH, preset_items, psnr, ssim

REFERENCE_CACHE = QUICK_DIR / "references"
BASELINE_NAME = "8 spp + OIDN (preset before this bench)"
PRESET_NAME = "4 spp, denoise_quality fast, light_tree false (dysm3d preset now)"

# Cycles' own defaults in bpy 5.0.1 for every knob explored here.
BASE: dict[str, Any] = {
    "denoising_quality": "HIGH", "denoising_prefilter": "ACCURATE", "denoising_input_passes": "RGB_ALBEDO_NORMAL",
    "use_light_tree": True, "caustics_reflective": True, "caustics_refractive": True,
    "max_bounces": 12, "diffuse_bounces": 4, "glossy_bounces": 4, "transmission_bounces": 12,
    "transparent_max_bounces": 8, "adaptive_threshold": 0.01, "adaptive_min_samples": 0,
}
FAST_SCENE = {"use_light_tree": False, "caustics_reflective": False, "caustics_refractive": False}
FEWER_BOUNCES = {"max_bounces": 6, "diffuse_bounces": 3, "glossy_bounces": 3, "transmission_bounces": 3,
                 "transparent_max_bounces": 4}

# name -> (samples, denoise, Cycles overrides on top of BASE; None: no overrides, see SETTINGS_UPDATES)
VARIANTS: dict[str, tuple[int, bool, dict[str, Any] | None]] = {
    BASELINE_NAME: (8, True, {}),
    "8 spp + OIDN BALANCED": (8, True, {"denoising_quality": "BALANCED"}),
    "8 spp + OIDN FAST": (8, True, {"denoising_quality": "FAST"}),
    "8 spp + OIDN, prefilter FAST": (8, True, {"denoising_prefilter": "FAST"}),
    "8 spp + OIDN, adaptive threshold 0.1 (min 4)": (8, True, {"adaptive_threshold": 0.1, "adaptive_min_samples": 4}),
    "8 spp + OIDN, light tree off": (8, True, {"use_light_tree": False}),
    "8 spp + OIDN, caustics off": (8, True, {"caustics_reflective": False, "caustics_refractive": False}),
    "8 spp + OIDN, bounces 6 (3/3/3, transparent 4)": (8, True, FEWER_BOUNCES),
    "4 spp + OIDN": (4, True, {}),
    "4 spp + OIDN BALANCED": (4, True, {"denoising_quality": "BALANCED"}),
    "4 spp + OIDN FAST": (4, True, {"denoising_quality": "FAST"}),
    "4 spp + OIDN FAST, light tree + caustics off, prefilter FAST": (
        4, True, {"denoising_quality": "FAST", "denoising_prefilter": "FAST", **FAST_SCENE}),
    "2 spp + OIDN FAST": (2, True, {"denoising_quality": "FAST"}),
    PRESET_NAME: (4, True, None),
}
# Variants rendered through RenderSettings' own fields (blender.py's `_cycles` untouched): what a config sets.
SETTINGS_UPDATES: dict[str, dict[str, Any]] = {PRESET_NAME: {"denoise_quality": "fast", "light_tree": False}}
# `--variants short`: the other presets' setting (the baseline), the knobs that paid on DYSM 3D one at a time,
# and the dysm3d preset's combination: what a preset could move to, at a fifth of the full set's renders.
SHORT_VARIANTS = (BASELINE_NAME, "8 spp + OIDN, light tree off", "4 spp + OIDN", "4 spp + OIDN FAST", PRESET_NAME)


def preset_families(path: Path) -> tuple[tuple[str, ...], int, int]:
    """A preset's families (first appearance order) and its own render size."""
    from stim3d.render.batch.config import load_config

    config = load_config(path)
    families = tuple(dict.fromkeys(task.family for task in config.tasks))
    return families, config.render.width, config.render.height


def _cycles_with(overrides: dict[str, Any] | None):
    """blender.py's `_cycles`, then BASE and `overrides` on scene.cycles (None: blender.py's own)."""
    from stim3d.render.backends import blender

    original = blender.__dict__.setdefault("_bench_original_cycles", blender._cycles)
    if overrides is None:
        return original

    def configure(bpy, scene_bpy, settings, seed):
        original(bpy, scene_bpy, settings, seed)
        for name, value in {**BASE, **overrides}.items():
            setattr(scene_bpy.cycles, name, value)

    return configure


def render(item: Item, samples: int, denoise: bool, adaptive: bool, overrides: dict[str, Any] | None, seed: int,
           workdir: Path, device: str, update: dict[str, Any] | None = None) -> dict:
    """One render with the variant's settings; image, render-call seconds, whole-call wall and CPU seconds."""
    from stim3d.render.backends import blender

    camera = item.scene.camera
    settings = RenderSettings(engine="cycles", width=camera.width, height=camera.height, samples=samples,
                              denoise=denoise, adaptive_sampling=adaptive, device=device)  # type: ignore[arg-type]
    settings = settings.model_copy(update=update or {})
    blender._cycles = _cycles_with(overrides)
    try:
        c0, w0 = time.process_time(), time.perf_counter()
        output = blender.render_scene(item.scene, settings, seed, workdir)
        return {"image": output.image, "render_s": output.render_seconds,
                "scene_s": time.perf_counter() - w0, "cpu_s": time.process_time() - c0}
    finally:
        blender._cycles = _cycles_with(None)


def reference_image(item: Item, samples: int, workdir: Path, device: str) -> tuple[np.ndarray, dict]:
    """The high-sample reference of `item`, from the cache when an identical one was rendered before."""
    key = hashlib.sha256(f"{item.scene.model_dump_json()}|{samples}|{item.seed + 1}|{BASE}|{renderer_fingerprint()}".encode()).hexdigest()[:16]
    cached = REFERENCE_CACHE / f"{item.item_id}-{samples}-{key}.npz"
    if cached.is_file():
        with np.load(cached) as data:
            return data["image"], {"render_s": float(data["render_s"]), "cpu_s": float(data["cpu_s"]), "cached": True}
    out = render(item, samples, False, False, {}, item.seed + 1, workdir, device)
    REFERENCE_CACHE.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(cached, image=out["image"], render_s=out["render_s"], cpu_s=out["cpu_s"])
    return out["image"], {"render_s": out["render_s"], "cpu_s": out["cpu_s"], "cached": False}


def summarise(name: str, rows: list[dict], baseline_rows: list[dict]) -> dict:
    """One variant over all scenes and rounds: quality (first round), costs, paired ratios to the baseline."""
    samples, denoise, overrides = VARIANTS[name]
    first = {r["scene"]: r for r in rows if r["round"] == 0}
    base = {(r["scene"], r["round"]): r for r in baseline_rows}
    ratio = [base[(r["scene"], r["round"])]["render_s"] / r["render_s"] for r in rows]
    cpu_ratio = [base[(r["scene"], r["round"])]["cpu_s"] / r["cpu_s"] for r in rows]
    return {
        "variant": name, "samples": samples, "denoise": denoise, "cycles": overrides,
        "render_settings": SETTINGS_UPDATES.get(name),
        "psnr_db_min": min(r["psnr_db"] for r in first.values()), "ssim_min": min(r["ssim"] for r in first.values()),
        "per_scene": {s: {"psnr_db": round(r["psnr_db"], 2), "ssim": round(r["ssim"], 5)} for s, r in first.items()},
        "deterministic": all(r["same_as_round_0"] for r in rows),
        "render_s_median": median([r["render_s"] for r in rows]),
        "scene_s_median": median([r["scene_s"] for r in rows]),
        "cpu_s_median": median([r["cpu_s"] for r in rows]),
        "speedup_vs_baseline_render": median(ratio), "speedup_vs_baseline_cpu": median(cpu_ratio),
    }


def main() -> None:
    def add(parser):
        parser.add_argument("--preset", default="dysm3d",
                            help="seed preset whose families and size are measured (default dysm3d)")
        parser.add_argument("--families", help="comma-separated families, one scene each (default: the preset's; "
                                               f"for dysm3d {','.join(DEFAULT_FAMILIES)})")
        parser.add_argument("--variants", choices=("all", "short"), default="all",
                            help=f"short: {len(SHORT_VARIANTS)} of the {len(VARIANTS)} variants (SHORT_VARIANTS)")
        parser.add_argument("--reference-samples", type=int, default=1024, help="samples of the reference (default 1024)")
        parser.add_argument("--rounds", type=int, default=2, help="timing rounds (variant order rotates)")
        parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")

    args = parse_args(__doc__.splitlines()[0], add)
    preset = preset_path(args.preset)
    if preset is None:
        raise SystemExit(f"--preset {args.preset}: no such preset (known: {', '.join(preset_names())})")
    if args.preset == "dysm3d":  # the families and size this bench has always measured DYSM 3D at
        own_families, width, height = DEFAULT_FAMILIES, WIDTH, HEIGHT
    else:
        own_families, width, height = preset_families(preset)
    families = tuple(args.families.split(",")) if args.families else own_families
    reference_samples, rounds = args.reference_samples, args.rounds
    names = list(VARIANTS) if args.variants == "all" else list(SHORT_VARIANTS)
    if args.quick:
        width, height, reference_samples, rounds, families = 160, 120, 16, 1, families[:1]
        names = [*names[:2], PRESET_NAME]
    items, source = preset_items(families, width, height, preset)
    run = Run("render_settings", args.quick, args.out,
              settings={"preset": args.preset, "resolution": f"{width}x{height}", "reference_samples": reference_samples,
                        "rounds": rounds, "variants": args.variants,
                        "device": args.device, "reference": "adaptive sampling off, no denoising, Cycles defaults, seed + 1",
                        "baseline": BASELINE_NAME, "base_cycles": BASE, "scenes": [it.item_id for it in items],
                        "scene_source": source, "target_psnr_db": TARGET_PSNR, "target_ssim": TARGET_SSIM})
    rows: dict[str, list[dict]] = {name: [] for name in names}
    references = []
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        workdir = Path(tmp)
        render(items[0], 1, False, True, {}, 0, workdir, args.device)  # import bpy, warm caches
        refs = {}
        for n, item in enumerate(items, 1):
            progress(f"scene {n}/{len(items)} {item.item_id}: {reference_samples}-sample reference")
            refs[item.item_id], info = reference_image(item, reference_samples, workdir, args.device)
            references.append({"scene": item.item_id, **info})
            run.sample_load()
        images: dict[tuple[str, str], np.ndarray] = {}
        for round_index in range(rounds):
            order = names[round_index % len(names):] + names[:round_index % len(names)]
            order = order if round_index % 2 == 0 else order[::-1]
            for item in items:
                for name in order:
                    samples, denoise, overrides = VARIANTS[name]
                    out = render(item, samples, denoise, True, overrides, item.seed, workdir, args.device,
                                 SETTINGS_UPDATES.get(name))
                    reference = refs[item.item_id]
                    first = images.setdefault((name, item.item_id), out["image"])
                    rows[name].append({"scene": item.item_id, "round": round_index, "render_s": out["render_s"],
                                       "scene_s": out["scene_s"], "cpu_s": out["cpu_s"],
                                       "psnr_db": psnr(out["image"], reference), "ssim": ssim(out["image"], reference),
                                       "same_as_round_0": bool(np.array_equal(first, out["image"]))})
                    progress(f"  round {round_index + 1} {item.item_id} {name}: {rows[name][-1]['psnr_db']:.1f} dB, "
                             f"SSIM {rows[name][-1]['ssim']:.4f}, {out['render_s']:.2f} s")
                run.sample_load()
            figures = figures_of(names, rows, references)
            figures["rounds_completed"] = round_index + 1
            run.finish(figures)  # rewritten after every round

    report(figures, f"Cycles settings at {width}x{height} vs a {reference_samples}-sample reference, {len(items)} scenes "
                    f"({', '.join(families)}), {rounds} round(s)")


def figures_of(names: list[str], rows: dict[str, list[dict]], references: list[dict]) -> dict:
    summary = [summarise(name, rows[name], rows[BASELINE_NAME]) for name in names]
    passing = [s for s in summary if s["psnr_db_min"] >= TARGET_PSNR and s["ssim_min"] >= TARGET_SSIM]
    chosen = min(passing, key=lambda s: s["render_s_median"]) if passing else None
    return {"variants": summary, "reference": references, "chosen": chosen and chosen["variant"],
            "raw": {name: [dict(r) for r in rs] for name, rs in rows.items()}}


def report(figures: dict, title: str) -> None:
    summary = figures["variants"]
    chosen = next((s for s in summary if s["variant"] == figures["chosen"]), None)
    print_table(title,
                ["variant", "PSNR min", "SSIM min", "render s", "render_scene s", "CPU s", "x baseline (render)",
                 "x baseline (CPU)"],
                [[s["variant"], s["psnr_db_min"], s["ssim_min"], s["render_s_median"], s["scene_s_median"],
                  s["cpu_s_median"], s["speedup_vs_baseline_render"], s["speedup_vs_baseline_cpu"]] for s in summary])
    if chosen:
        print(f"\nfastest meeting PSNR >= {TARGET_PSNR} dB and SSIM >= {TARGET_SSIM} on every scene: {chosen['variant']} "
              f"({chosen['speedup_vs_baseline_render']:.2f}x the baseline's render call)")


if __name__ == "__main__":
    main()
