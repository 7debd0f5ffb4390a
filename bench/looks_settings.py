"""Render settings per look and per family: which Cycles settings meet the quality bar in every look, at what cost?

The method of bench/render_settings.py, for one scene per family group and every
look (studio, clevr, photoreal), the same composed scene in every look:

- scenes: the middle item of a task of each seed preset (SCENES): DYSM 3D's
  shape_count, OddGrid-3D's labelled board with a colour odd cell (the ~5-dE
  difference and the row/column digits), ROSE-3D's glossy `finish` exception,
  AVA-3D's orientation car (thin wheels and cabin), and Rubrics-3D's letters scene (the
  rubric questions of scenes/rubrics.py ask about every family's scenes; letters built
  from small primitives are the DYSM families' finest detail, and rubrics3d renders
  them at 640x480, below dysm3d's 800x600); and two more AVA-3D scenes, `object` (ava_object's
  library objects, whose accent parts photoreal gives their own materials) and `count` (ava_count's
  crowd of small objects), and one scene of each other family (named by the family), not in the
  default list, so that the seven scenes above and these ten cover all 17 families;
- reference: `--reference-samples` samples (default 1024) as renders of 512 samples with
  other Cycles seeds, averaged (`reference`: the difference of the odd and even renders'
  means is the reference's own noise floor, recorded, and gives each candidate's SSIM
  ceiling, `ceiling`), adaptive sampling off, no denoising, light tree off (an
  unbiased sampling choice: the same converged image, less noise under an HDRI),
  cached under the scratch folder by scene, settings and the rendering code (a rerun skips it). A look's own scene settings (render/backends/blender_looks.py
  LOOK_CYCLES: bounces, glossy filter, indirect clamp, light tree) are part of the
  look and apply to the reference and the candidates alike;
- candidates (CANDIDATES): sample counts with OpenImageDenoise, including the dysm3d
  preset's settings and the other presets' (8 spp, OIDN high, light tree on);
- quality: PSNR (8-bit sRGB) and SSIM (luminance) against the reference, and both estimated
  against the converged image (bench/render_quality.py `psnr_converged`, `ssim_converged`: the
  reference's own noise variance, measured on its two halves, taken off); the bar, judged on the
  estimates, is PSNR >= 38 dB and SSIM >= 0.99 on every scene. A reference of more than two renders
  also gives each candidate's figures against its first 2, 4, 8, ... renders (`by_reference_size`):
  the plain figures climb as the reference converges, the estimates should stay put;
- fine detail (bench/looks_detail.py): colour dE2000 of each object's measured colour
  against the reference's, the odd cell's measured dE to its twin, the glossy
  exception's highlight contrast, the label digits' contrast and SSIM, and the
  smallest per-object SSIM (thin parts);
- cost: wall seconds of the whole `render_scene` call, every look and candidate of a
  scene rendered back to back (look order rotating by scene), so each is also given
  as its paired ratio to studio's render of the same scene and candidate.

The resolution is an option (`--width/--height`, default 240x180): on the shared,
loaded 2-core machine the 12 references at the presets' 640x480 (7x the pixels) did not fit a session.
The results file is rewritten after every scene, so a run cut short leaves figures.

    python -m bench.looks_settings [--quick] [--width 240 --height 180] [--reference-samples 1024]
        [--scenes dysm,oddgrid,rose,ava,rubrics] [--looks studio,clevr,photoreal] [--samples 8,16,32] [--device gpu]
    python -m bench.looks_settings --markdown bench/results/looks_settings.json   # the docs' tables
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from stim3d.render.settings import RenderSettings
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import LOOK_NAMES, Item
from stim3d.scenes.placement import InfeasibleError
from stim3d.scenes.presets import preset_path

from .common import QUICK_DIR, Run, add_device, median, parse_args, print_table, progress, renderer_fingerprint
from .looks_detail import detail
from .render_quality import TARGET_PSNR, TARGET_SSIM, psnr, psnr_converged, ssim, ssim_converged

REFERENCE_CACHE = QUICK_DIR / "looks_references"
# name -> (preset, family, params the plan must have): the middle such plan of the preset is the scene.
SCENES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "dysm": ("dysm3d", "shape_count", {}),
    "oddgrid": ("oddgrid3d", "odd_grid", {"odd_types": "color", "labels": True}),
    "rose": ("rose3d", "rose_grid", {"exception": "finish", "cue": False}),
    "ava": ("ava3d", "ava_orientation", {}),
    "rubrics": ("rubrics3d", "letters", {}),
    # library objects with per-part materials (a car's tyres, a chair's wooden legs), in photoreal only
    "object": ("ava3d", "ava_object", {}),
    "count": ("ava3d", "ava_count", {}),
    # every other family, each its own scene (the quality bar per family, not per family group)
    **{family: ("dysm3d", family, {}) for family in ("form_constancy", "shape_color_count", "spatial_grid")},
    **{family: ("ava3d", family, {}) for family in ("ava_color", "ava_depth_absolute", "ava_depth_relative",
                                                    "ava_localize", "ava_ocr", "ava_spatial", "ava_texture")},
}
DEFAULT_SCENES = ("dysm", "oddgrid", "rose", "ava", "rubrics")  # the family groups (the runs quoted before the others)
DYSM_SETTINGS = "4 spp, OIDN fast, light tree off (dysm3d preset)"
PRESET_SETTINGS = "8 spp, OIDN high, light tree on (oddgrid3d/rose3d/ava3d presets)"
# name -> RenderSettings fields (width, height and seed come from the scene)
CANDIDATES: dict[str, dict[str, Any]] = {
    DYSM_SETTINGS: {"samples": 4, "denoise_quality": "fast", "light_tree": False},
    "4 spp, OIDN high, light tree off": {"samples": 4, "light_tree": False},
    PRESET_SETTINGS: {"samples": 8},
    "8 spp, OIDN high, light tree off": {"samples": 8, "light_tree": False},
    "8 spp, OIDN balanced, light tree off": {"samples": 8, "denoise_quality": "balanced", "light_tree": False},
    "8 spp, OIDN fast, light tree off": {"samples": 8, "denoise_quality": "fast", "light_tree": False},
    "16 spp, OIDN high, light tree off": {"samples": 16, "light_tree": False},
    "32 spp, OIDN high, light tree off": {"samples": 32, "light_tree": False},
    "64 spp, OIDN high, light tree off": {"samples": 64, "light_tree": False},
}


def scene_items(name: str, width: int, height: int, looks: tuple[str, ...]) -> dict[str, Item]:
    """The scene `name` (SCENES) composed in every look, at width x height."""
    from stim3d.render.batch.config import load_config
    from stim3d.render.batch.plan import expand

    preset, family, wanted = SCENES[name]
    config = load_config(preset_path(preset))  # type: ignore[arg-type]  # SCENES names shipped presets only
    plans = [p for p in expand(config) if p.family == family and all(p.params.get(k) == v for k, v in wanted.items())]
    if not plans:
        raise SystemExit(f"no plan of {preset} matches {family} {wanted}")
    middle = len(plans) // 2
    for plan in plans[middle:] + plans[:middle]:  # the middle one, or the next that fits the frame and has the detail
        entropy = [config.seed, plan.task_index, plan.item_index]
        try:
            items = {look: make_item(plan.family, plan.params, entropy, plan.item_id, Frame(width, height),
                                     look=look)  # type: ignore[arg-type]
                     for look in looks}
        except InfeasibleError:
            continue
        if has_detail(family, next(iter(items.values()))):
            return items
    raise SystemExit(f"no plan of {preset} matching {family} {wanted} fits {width}x{height}")


def has_detail(family: str, item: Item) -> bool:
    """Whether `item` has the detail its scene is chosen for: an OddGrid board its odd cell (a tenth have none)."""
    return family != "odd_grid" or any(o.attributes.get("odd") for o in item.scene.objects)


def render(item: Item, fields: dict[str, Any], seed: int, workdir: Path, device: str = "cpu") -> tuple[Any, float]:
    """One render of `item` with RenderSettings `fields`; the output and wall seconds of render_scene."""
    from stim3d.render.backends import blender

    camera = item.scene.camera
    settings = RenderSettings(width=camera.width, height=camera.height, device=device, **fields)
    start = time.perf_counter()
    output = blender.render_scene(item.scene, settings, seed, workdir)
    return output, time.perf_counter() - start


REFERENCE_CHUNK = 512  # samples per reference render: a larger reference adds renders, reusing cached ones


def reference_chunk(samples: int) -> int:
    """Samples per render of a `samples`-sample reference (at least two renders, so it has two halves)."""
    return min(REFERENCE_CHUNK, samples // 2)


def to_uint8(image: np.ndarray) -> np.ndarray:
    """A float image (8-bit levels) rounded and clipped back to 8 bits."""
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def half_means(renders: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The means of the odd- and even-seeded renders: a reference's two independent halves."""
    return np.mean(renders[0::2], axis=0), np.mean(renders[1::2], axis=0)


def reference(item: Item, samples: int, workdir: Path, device: str = "cpu") -> dict[str, Any]:
    """The reference of `item`: the mean of `samples` / REFERENCE_CHUNK renders with Cycles seeds + 1, + 2, ...

    Each render is cached on its own (by scene, settings, seed and the rendering code),
    so a 2048-sample reference renders only the two renders a 1024-sample one lacks.
    The renders split into two halves (odd and even seeds) whose difference measures the
    reference's own noise: `floor_psnr`/`floor_ssim` of one half against the other, and
    `noise`, (half A - half B) / 2, an estimate of the full reference's own error (its
    variance is the mean's), from which `ceiling` gives the best SSIM any candidate can
    show against this reference.
    """
    from stim3d.render.backends import blender_looks

    chunk = reference_chunk(samples)
    fields = {"samples": chunk, "denoise": False, "adaptive_sampling": False, "light_tree": False}
    world = f"|map {blender_looks.ENVIRONMENT_MAP_RESOLUTION}" if item.scene.look and item.scene.look.environment else ""
    on = "" if device == "cpu" else f"|{device}"  # CPU references keep the keys they were cached under
    key = hashlib.sha256(f"{item.scene.model_dump_json()}|{fields}|{blender_looks.LOOK_CYCLES}{world}|{renderer_fingerprint()}{on}".encode()).hexdigest()
    images, seconds = [], 0.0
    for k in range(1, samples // chunk + 1):
        cached = REFERENCE_CACHE / f"{item.item_id}-{key[:16]}-seed{k}.npz"
        if not cached.is_file():
            output, took = render(item, fields, item.seed + k, workdir, device)
            REFERENCE_CACHE.mkdir(parents=True, exist_ok=True)
            np.savez_compressed(cached, image=output.image, instance_map=output.instance_map, seconds=took)
        with np.load(cached) as data:
            images.append(data["image"].astype(np.float64))
            instance_map, seconds = data["instance_map"], seconds + float(data["seconds"])
    a, b = half_means(images)
    half_a, half_b = to_uint8(a), to_uint8(b)
    return {"image": to_uint8((a + b) / 2), "mean": (a + b) / 2, "renders": images, "instance_map": instance_map,
            "noise": (a - b) / 2, "seconds": round(seconds, 1), "floor_psnr": round(psnr(half_a, half_b), 2),
            "floor_ssim": round(ssim(half_a, half_b), 4)}


def by_reference_size(candidate: np.ndarray, renders: list[np.ndarray], chunk: int) -> list[dict[str, Any]]:
    """The candidate's figures against the references made of the first 2, 4, 8, ... of `renders`: the plain PSNR and
    SSIM climb as the reference converges, the estimates against the converged image should not move (their check)."""
    rows = []
    k = 2
    while k <= len(renders):
        a, b = half_means(renders[:k])
        mean, noise = (a + b) / 2, (a - b) / 2
        rows.append({"reference_samples": k * chunk, "psnr": round(psnr(candidate, to_uint8(mean)), 2),
                     "ssim": round(ssim(candidate, to_uint8(mean)), 4),
                     "psnr_converged": round(psnr_converged(candidate, mean, noise), 2),
                     "ssim_converged": round(ssim_converged(candidate, mean, noise), 4)})
        k *= 2
    return rows


def ceiling(candidate: np.ndarray, noise: np.ndarray) -> float:
    """SSIM of `candidate` against itself plus the reference's own noise: what it would score were it exact.

    Against a noisy reference even the converged image loses SSIM on flat surfaces
    (there SSIM is about C2 / (C2 + noise variance)); a candidate near this ceiling
    differs from the reference by little more than the reference's own noise.
    """
    return round(ssim(candidate, to_uint8(candidate + noise)), 4)


def summarise(rows: list[dict], references: list[dict], looks: tuple[str, ...], candidates: list[str]) -> dict:
    """Per look and candidate: quality minima over scenes, the bar, s/item, paired ratio to studio."""
    figures: dict[str, Any] = {}
    for look in looks:
        per: dict[str, Any] = {}
        floors = [r for r in references if r["look"] == look]
        for name in candidates:
            cases = [r for r in rows if r["look"] == look and r["candidate"] == name]
            if not cases:
                continue
            studio = {r["scene"]: r["seconds"] for r in rows if r["look"] == "studio" and r["candidate"] == name}
            judged = [(r["psnr_converged"], r["ssim_converged"]) for r in cases]
            ratios = [r["seconds"] / studio[r["scene"]] for r in cases if r["scene"] in studio]
            per[name] = {
                "scenes": [r["scene"] for r in cases],
                "seconds_per_item_median": round(median([r["seconds"] for r in cases]), 2),
                "ratio_to_studio_median": round(median(ratios), 2) if ratios else None,
                "psnr_min": min(r["psnr"] for r in cases), "ssim_min": min(r["ssim"] for r in cases),
                "psnr_converged_min": min(p for p, _ in judged), "ssim_converged_min": min(q for _, q in judged),
                "meets_bar": all(p >= TARGET_PSNR and q >= TARGET_SSIM for p, q in judged),
                "colour_de_max": max(r["detail"]["colour_de_max"] for r in cases),
                "object_ssim_min": min(r["detail"]["object_ssim_min"] for r in cases),
                "ssim_ceiling_min": min(r["ssim_ceiling"] for r in cases),
            }
        passing = [n for n in per if per[n]["meets_bar"]]
        chosen = min(passing, key=lambda n: per[n]["seconds_per_item_median"]) if passing else None
        figures[look] = {"by_candidate": per, "chosen": chosen,
                         "reference_halves_psnr_min": min((r["floor_psnr"] for r in floors), default=None),
                         "reference_halves_ssim_min": min((r["floor_ssim"] for r in floors), default=None)}
    by_scene: dict[str, dict[str, Any]] = {}
    for r in rows:  # per scene: the cheapest passing candidate of each look (a preset's choice)
        entry = by_scene.setdefault(r["scene"], {}).setdefault(r["look"], {"passing": []})
        if r["psnr_converged"] >= TARGET_PSNR and r["ssim_converged"] >= TARGET_SSIM:
            entry["passing"].append(r["candidate"])
    return {"looks": figures, "by_scene": by_scene}


def report(figures: dict, title: str) -> None:
    table = []
    for look, f in figures["looks"].items():
        for name, c in f["by_candidate"].items():
            table.append([look, name, c["seconds_per_item_median"], c["ratio_to_studio_median"], c["psnr_min"],
                          c["ssim_min"], c["ssim_ceiling_min"], c["psnr_converged_min"], c["ssim_converged_min"],
                          c["colour_de_max"], c["object_ssim_min"], c["meets_bar"]])
    print_table(title, ["look", "candidate", "s/item", "x studio", "PSNR min", "SSIM min", "SSIM ceiling",
                        "PSNR conv.", "SSIM conv.", "dE max", "obj SSIM min", "bar"], table)
    for look, f in figures["looks"].items():
        print(f"{look}: cheapest meeting the bar on every scene: {f['chosen']}; the reference's two halves against "
              f"each other: PSNR >= {f['reference_halves_psnr_min']} dB, SSIM >= {f['reference_halves_ssim_min']}")


def markdown(path: Path) -> None:
    """The tables of docs/looks_cost.md, from a results file."""
    import json

    document = json.loads(path.read_text())
    figures, code = document["figures"], document["code"]
    print(f"*Source: `{path.as_posix()}` (commit `{code['git_commit'][:12]}`; `{document['command']}`; "
          f"{document['settings']['resolution']}; scenes {', '.join(figures['scenes_completed'])}; load average "
          f"{document['load_average']['start']} at start, {document['load_average']['max_sampled']} at most).*\n")
    print("| look | candidate (+ OIDN) | s / item | x studio | PSNR min dB | SSIM min | SSIM ceiling "
          "| PSNR min dB, converged | SSIM min, converged | colour dE max | object SSIM min | bar |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for look, f in figures["looks"].items():
        for name, c in f["by_candidate"].items():
            ratio = c["ratio_to_studio_median"]  # None when studio was not in the run (--looks)
            # absent from files written before they were measured
            ceiling_min, p_conv, s_conv = (c.get(k) for k in ("ssim_ceiling_min", "psnr_converged_min", "ssim_converged_min"))
            print(f"| {look} | {name} | {c['seconds_per_item_median']:.2f} | "
                  f"{'n/a' if ratio is None else f'{ratio:.2f}x'} | {c['psnr_min']:.1f} | {c['ssim_min']:.4f} | "
                  f"{'n/a' if ceiling_min is None else f'{ceiling_min:.4f}'} | "
                  f"{'n/a' if p_conv is None else f'{p_conv:.1f}'} | {'n/a' if s_conv is None else f'{s_conv:.4f}'} | "
                  f"{c['colour_de_max']:.1f} | {c['object_ssim_min']:.3f} | {'yes' if c['meets_bar'] else 'no'} |")
    print("\n| look | reference halves PSNR min dB | SSIM min | cheapest meeting the bar on every scene |\n|---|---|---|---|")
    for look, f in figures["looks"].items():
        print(f"| {look} | {f['reference_halves_psnr_min']} | {f['reference_halves_ssim_min']} | {f['chosen'] or 'none'} |")
    print("\n| scene | " + " | ".join(figures["looks"]) + " |\n|---|" + "---|" * len(figures["looks"]))
    for scene, per_look in figures["by_scene"].items():  # the first candidate (CANDIDATES' order) meeting the bar
        cells = []
        for look in figures["looks"]:
            row = next((r for r in figures["rows"] if r["scene"] == scene and r["look"] == look
                        and r["candidate"] in per_look.get(look, {}).get("passing", [])), None)
            converged = f" (converged: {row['psnr_converged']} dB, {row['ssim_converged']})" \
                if row and "psnr_converged" in row else ""
            cells.append(f"{row['candidate']}: {row['psnr']} dB, {row['ssim']}{converged}" if row else "no candidate")
        print(f"| {scene} | " + " | ".join(cells) + " |")
    print("\n| scene | look | candidate | PSNR dB (converged) | SSIM (converged) | s | fine detail |\n|---|---|---|---|---|---|---|")
    shown = {look: {f["chosen"] or list(f["by_candidate"])[-1], DYSM_SETTINGS} for look, f in figures["looks"].items()}
    for r in figures["rows"]:  # per scene: each look's choice (or its most samples) and the dysm3d preset's settings
        if r["candidate"] not in shown[r["look"]]:
            continue
        extra = ", ".join(f"{k} {v}" for k, v in r["detail"].items())
        converged = f" ({r['psnr_converged']})" if "psnr_converged" in r else ""
        converged_ssim = f" ({r['ssim_converged']})" if "ssim_converged" in r else ""
        print(f"| {r['scene']} ({r['item_id']}) | {r['look']} | {r['candidate']} | {r['psnr']}{converged} | "
              f"{r['ssim']}{converged_ssim} | {r['seconds']} | {extra} |")


def main() -> None:
    def add(parser):
        parser.add_argument("--width", type=int, default=240)
        parser.add_argument("--height", type=int, default=180)
        parser.add_argument("--reference-samples", type=int, default=1024)
        parser.add_argument("--scenes", default=",".join(DEFAULT_SCENES),
                            help=f"comma-separated, of {', '.join(SCENES)} (default {', '.join(DEFAULT_SCENES)})")
        parser.add_argument("--looks", default=",".join(LOOK_NAMES))
        parser.add_argument("--samples", help="only the candidates of these sample counts, comma-separated (e.g. 8,16,32)")
        add_device(parser)
        parser.add_argument("--markdown", type=Path, metavar="RESULTS_JSON", help="only print docs tables of a results file")

    args = parse_args(__doc__.splitlines()[0], add)
    if args.markdown:
        return markdown(args.markdown)
    scenes, looks = tuple(args.scenes.split(",")), tuple(args.looks.split(","))
    for name in scenes:
        if name not in SCENES:
            raise SystemExit(f"--scenes: unknown scene {name!r} (known: {', '.join(SCENES)})")
    for look in looks:
        if look not in LOOK_NAMES:
            raise SystemExit(f"--looks: unknown look {look!r} (known: {', '.join(LOOK_NAMES)})")
    width, height, reference_samples = args.width, args.height, args.reference_samples
    if reference_samples < 2 or reference_samples % reference_chunk(reference_samples):
        raise SystemExit(f"--reference-samples: {reference_samples} is not a multiple of {REFERENCE_CHUNK} "
                         f"(or an even count below {2 * REFERENCE_CHUNK})")
    candidates = list(CANDIDATES)
    if args.samples:
        wanted = {int(n) for n in (part.strip() for part in args.samples.split(",")) if n.isdigit()}
        candidates = [n for n in candidates if CANDIDATES[n]["samples"] in wanted]
        if not candidates:
            raise SystemExit(f"--samples: no candidate has {args.samples} samples "
                             f"(they have {sorted({c['samples'] for c in CANDIDATES.values()})})")
    if args.quick:
        width, height, reference_samples, scenes, candidates = 160, 120, 16, scenes[:2], candidates[:2]
    run = Run("looks_settings", args.quick, args.out, {
        "resolution": f"{width}x{height}", "reference_samples": reference_samples, "scenes": scenes, "looks": looks,
        "reference": f"mean of renders of {reference_chunk(reference_samples)} samples (Cycles seeds + 1, + 2, ...), "
                     "adaptive sampling off, no denoising, light tree off, the look's LOOK_CYCLES",
        "candidates": {n: CANDIDATES[n] for n in candidates}, "target_psnr_db": TARGET_PSNR, "target_ssim": TARGET_SSIM},
        device=args.device)
    rows: list[dict] = []
    references: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        workdir = Path(tmp)
        for s, name in enumerate(scenes):
            items = scene_items(name, width, height, looks)
            order = looks[s % len(looks):] + looks[:s % len(looks)]
            refs = {}
            for look in order:
                progress(f"{name} ({items[look].item_id}) {look}: {reference_samples}-sample reference")
                refs[look] = reference(items[look], reference_samples, workdir, args.device)
                references.append({"scene": name, "look": look, "item_id": items[look].item_id,
                                   **{k: v for k, v in refs[look].items()
                                      if k not in ("image", "mean", "renders", "instance_map", "noise")}})
                run.sample_load()
            for cand in candidates:
                for look in order:
                    output, seconds = render(items[look], CANDIDATES[cand], items[look].seed, workdir, args.device)
                    ref = refs[look]
                    image, instance_map = ref["image"], ref["instance_map"]
                    row = {"scene": name, "item_id": items[look].item_id, "look": look, "candidate": cand,
                           "seconds": round(seconds, 2), "psnr": round(psnr(output.image, image), 2),
                           "ssim": round(ssim(output.image, image), 4),
                           "psnr_converged": round(psnr_converged(output.image, ref["mean"], ref["noise"]), 2),
                           "ssim_converged": round(ssim_converged(output.image, ref["mean"], ref["noise"]), 4),
                           "ssim_ceiling": ceiling(output.image, ref["noise"]),
                           "detail": detail(items[look], output.image, image, instance_map)}
                    if len(ref["renders"]) > 2:
                        row["by_reference_size"] = by_reference_size(output.image, ref["renders"],
                                                                     reference_chunk(reference_samples))
                    rows.append(row)
                    progress(f"  {name} {look} {cand}: {row['psnr']} dB, SSIM {row['ssim']} (ceiling "
                             f"{row['ssim_ceiling']}); against the converged image {row['psnr_converged']} dB, SSIM "
                             f"{row['ssim_converged']}; {row['seconds']} s")
                run.sample_load()
            figures = {**summarise(rows, references, looks, candidates), "scenes_completed": list(scenes[:s + 1]),
                       "references": references, "rows": rows}
            run.finish(figures)  # rewritten after every scene
    report(figures, f"per look, {width}x{height}, vs a {reference_samples}-sample reference, scenes {', '.join(scenes)}")


if __name__ == "__main__":
    main()
