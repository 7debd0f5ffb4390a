"""How exact is each way of measuring visibility? Ours at 1 ray per pixel, DYSM's vertex count, CLEVR's pixel rule.

On generated counting scenes (shape_count and shape_color_count, min_visibility
0.5..0.99: the levels below 0.7 supply scenes that really violate 0.7, without
which "accepts a violating scene" could not be measured at 0.7), every object's
visible fraction is measured by
- the reference: our ray cast at 4 x 4 rays per pixel;
- ours: the default ray cast, 1 ray through each pixel centre (what items record);
- DYSM as published: the fraction of the object's (Blender default) mesh vertices
  whose line to the camera no earlier-placed object blocks;
- DYSM's vertex test against all other objects (its counting error alone);
- CLEVR: no fraction; a scene passes when every object has >= 200 visible pixels.
Figures: mean and max absolute error of the fraction against the reference (all
objects, and occluded objects only), and how often each method accepts a scene
that violates min_visibility 0.7 / 0.9 according to the reference (and rejects
one that meets it).

    python -m bench.visibility_accuracy [--quick] [--scenes N]
"""

from __future__ import annotations

import numpy as np

from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.placement import InfeasibleError
from stim3d.scenes.visibility import measure

from .common import Run, parse_args, print_table, progress
from .dysm_vertex_visibility import CLEVR_MIN_PIXELS, clevr_accepts, dysm_visibility

WIDTH, HEIGHT = 480, 320  # CLEVR's image size: its 200-pixel rule was set for it
LEVELS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99)
FAMILIES = ("shape_count", "shape_color_count")
THRESHOLDS = (0.7, 0.9)
REFERENCE_RAYS = 4
FRACTION_METHODS = ("ours_1ray", "dysm_published", "dysm_all_blockers")
BATCH_SEED = 2024


def scene_params(index: int) -> tuple[str, dict]:
    """The index-th scene's family and parameters: levels, families and crowding cycle evenly."""
    family = FAMILIES[index % len(FAMILIES)]
    params = {
        "min_visibility": LEVELS[index % len(LEVELS)],
        "n_shape_types": 1 + (index // len(FAMILIES)) % 5,
        "max_instances": 1 + (index // 3) % 3,
    }
    return family, params


def measure_scene(index: int) -> dict | None:
    """All methods on one generated scene; None when the scene could not be built."""
    family, params = scene_params(index)
    try:
        item = make_item(family, params, [BATCH_SEED, 0, index], f"acc-{index:04d}", Frame(WIDTH, HEIGHT))
    except InfeasibleError:
        return None
    scene = item.scene
    countable = [o.id for o in scene.objects if o.countable]
    reference = {t.id: t.visibility for t in measure(scene, rays_per_pixel=REFERENCE_RAYS).truths}
    ours = measure(scene, rays_per_pixel=1)
    fractions = {
        "ours_1ray": {t.id: t.visibility for t in ours.truths},
        "dysm_published": dysm_visibility(scene, blockers="earlier"),
        "dysm_all_blockers": dysm_visibility(scene, blockers="all"),
    }
    visible_px = {t.id: t.visible_px for t in ours.truths if t.id in countable}
    return {
        "index": index,
        "family": family,
        "level": params["min_visibility"],
        "reference": [reference[i] for i in countable],
        "fractions": {name: [values[i] for i in countable] for name, values in fractions.items()},
        "clevr_accepts": clevr_accepts(visible_px),
        "min_visible_px": min(visible_px.values()),
    }


def summarise(scenes: list[dict]) -> dict:
    reference = np.concatenate([s["reference"] for s in scenes])
    occluded = reference < 0.999
    errors = {}
    for name in FRACTION_METHODS:
        values = np.concatenate([s["fractions"][name] for s in scenes])
        error = np.abs(values - reference)
        errors[name] = {
            "mean_abs_error": float(error.mean()),
            "max_abs_error": float(error.max()),
            "mean_abs_error_occluded": float(error[occluded].mean()) if occluded.any() else None,
            "max_abs_error_occluded": float(error[occluded].max()) if occluded.any() else None,
            "mean_signed_error_occluded": float((values - reference)[occluded].mean()) if occluded.any() else None,
        }
    decisions = {}
    for threshold in THRESHOLDS:
        violates = np.array([min(s["reference"]) < threshold for s in scenes])
        per_method = {}
        for name in (*FRACTION_METHODS, "clevr_200px"):
            if name == "clevr_200px":
                accepts = np.array([s["clevr_accepts"] for s in scenes])
            else:
                accepts = np.array([min(s["fractions"][name]) >= threshold for s in scenes])
            per_method[name] = {
                "accepted_violating": int((accepts & violates).sum()),
                "rejected_meeting": int((~accepts & ~violates).sum()),
            }
        decisions[str(threshold)] = {"violating_scenes": int(violates.sum()), "meeting_scenes": int((~violates).sum()), "methods": per_method}
    return {
        "scenes": len(scenes),
        "objects": int(len(reference)),
        "occluded_objects": int(occluded.sum()),
        "errors": errors,
        "decisions": decisions,
        "clevr_min_visible_px_median": float(np.median([s["min_visible_px"] for s in scenes])),
    }


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], lambda p: p.add_argument("--scenes", type=int, help="number of scenes (default 200; --quick 14)"))
    n_scenes = args.scenes or (14 if args.quick else 200)
    run = Run(
        "visibility_accuracy",
        args.quick,
        args.out,
        settings={"scenes": n_scenes, "resolution": f"{WIDTH}x{HEIGHT}", "levels": LEVELS, "families": FAMILIES,
                  "reference_rays_per_pixel": REFERENCE_RAYS * REFERENCE_RAYS, "clevr_min_pixels": CLEVR_MIN_PIXELS,
                  "batch_seed": BATCH_SEED},
    )
    scenes, skipped, index = [], 0, 0
    while len(scenes) < n_scenes:
        result = measure_scene(index)
        index += 1
        if result is None:
            skipped += 1
            continue
        scenes.append(result)
        if len(scenes) % 10 == 0 or len(scenes) == n_scenes:
            progress(f"{len(scenes)}/{n_scenes} scenes measured")
            run.sample_load()
    figures = summarise(scenes)
    figures["infeasible_skipped"] = skipped

    names = {"ours_1ray": "ours, 1 ray/px", "dysm_published": "DYSM vertices (published)",
             "dysm_all_blockers": "DYSM vertices, all blockers", "clevr_200px": "CLEVR >= 200 px"}
    print_table(
        f"Visibility fraction vs reference ({REFERENCE_RAYS}x{REFERENCE_RAYS} rays/px), {figures['scenes']} scenes, "
        f"{figures['objects']} objects ({figures['occluded_objects']} occluded), {WIDTH}x{HEIGHT}",
        ["method", "mean |err|", "max |err|", "mean |err| occluded", "max |err| occluded", "mean err occluded"],
        [[names[n], e["mean_abs_error"], e["max_abs_error"], e["mean_abs_error_occluded"], e["max_abs_error_occluded"],
          e["mean_signed_error_occluded"]] for n, e in figures["errors"].items()],
    )
    rows = []
    for name in names:
        row = [names[name]]
        for threshold in THRESHOLDS:
            d = figures["decisions"][str(threshold)]
            m = d["methods"][name]
            row += [f"{m['accepted_violating']}/{d['violating_scenes']}", f"{m['rejected_meeting']}/{d['meeting_scenes']}"]
        rows.append(row)
    print_table(
        "Scene decisions vs the reference (accepted although violating / rejected although meeting)",
        ["method", *[f"{kind} @{t}" for t in THRESHOLDS for kind in ("accepts violating", "rejects meeting")]],
        rows,
    )
    run.finish(figures)


if __name__ == "__main__":
    main()
