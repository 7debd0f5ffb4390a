"""Photoreal frames as a photographer would judge them, over every family at the presets' own settings.

For every task of every seed preset (scenes/presets), `--per-task` items are rendered (the preset's own size,
samples, denoiser and parameters) once per look of `--looks` into `FOLDER/<look>` with `stim3d render` (a
killed run resumes). On every rendered frame it measures:

- the share of pixels clipped (a channel at 255) and crushed (black in every channel), render/camera_pipeline.py
  `clipped_share` and `crushed_share`, on the photograph (an AVA item's frame before its marker boxes are drawn,
  image_raw.png); a frame passes at no more than 1 % of each;
- the share of the frame that is background: pixels whose camera ray first meets neither an object nor the
  support surface the objects stand on (the table's top, the paved patch outdoors, the dome's ground near the
  objects), ray cast against the setting's own stage geometry as bench/settings_background.py classes a ray
  (`background_share`); a frame "shows a background" when at least BACKGROUND_MIN of it is;
- which of its setting, lens (the physical camera) and pipeline (the camera after the sensor) item.json records,
  seconds per item (timing.json's stages), redraws, objects still failing colour or under the contrast floor, the
  mask's agreement with the ray-cast instance map (provenance), and, with several looks, whether mask.png and
  every gold are identical to the first look's item of the same id (with one look there is nothing to compare:
  `same_masks_and_golds` is null).

The sample the docs quote: `--per-task 5,ava3d=7 --presets dysm3d,ava3d,oddgrid3d,rose3d --looks studio,photoreal`
(125 items of all 17 families; AVA-3D's ten tasks take 7 each so that its families weigh as in the presets).

    python -m bench.photoreal_frames --folder DIR [--per-task 1[,ava3d=7]] [--looks studio,photoreal_raw,photoreal]
        [--presets dysm3d,ava3d,oddgrid3d,rose3d,rubrics3d] [--measure-only] [--out PATH]
    python -m bench.photoreal_frames --seconds bench/results/photoreal_ladder.json   # docs/looks_cost.md's table
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from PIL import Image

from stim3d.render.camera_pipeline import clipped_share, crushed_share
from stim3d.render.markers import RAW_IMAGE
from stim3d.scenes.model import LOOK_NAMES, DrawnLook, Item
from stim3d.scenes.presets import preset_path

from .common import Run, name_list, parse_args, print_table
from .settings_background import ray_labels

PRESETS = ("dysm3d", "ava3d", "oddgrid3d", "rose3d", "rubrics3d")
LOOKS = ("studio", "photoreal_raw", "photoreal")
BACKGROUND_MIN = 0.02  # a frame shows a background when at least this share of it is one
LIMIT = 0.01  # a frame passes with at most this share clipped and at most this share crushed
RECORDED = ("setting", "lens", "pipeline")  # the parts of a drawn look each photoreal item.json must record
STEP = 4  # the background is ray cast through every STEP-th pixel's centre in each direction


def _args(parser) -> None:
    parser.add_argument("--folder", type=Path, help="kept folder: one sub-folder per preset and look (required "
                        "unless --seconds)")
    parser.add_argument("--per-task", default="1", help="items per task of each preset (default 1); a preset of its own "
                        "count after a comma, e.g. 5,ava3d=7")
    parser.add_argument("--looks", default=",".join(LOOKS), help="comma-separated looks (the first is the reference "
                        "every other look's masks and golds are compared with)")
    parser.add_argument("--presets", default=",".join(PRESETS), help="comma-separated seed presets")
    parser.add_argument("--measure-only", action="store_true",
                        help="measure the items the folder holds, render nothing (a run still rendering elsewhere)")
    parser.add_argument("--seconds", type=Path, metavar="RESULTS_JSON",
                        help="only print a results file's median seconds per item by preset and look, as a docs table")


def median(values: list[float]) -> float | None:
    """The median (of an even count, the mean of the middle two), None of nothing."""
    return statistics.median(values) if values else None


def seconds_table(path: Path) -> None:
    """Print the median seconds per item of each preset and look of a results file, and of all its items."""
    frames = json.loads(path.read_text())["figures"]["frames"]
    looks = list(dict.fromkeys(f["look"] for f in frames))
    presets = list(dict.fromkeys(f["preset"] for f in frames))
    print("| preset | " + " | ".join(looks) + " |")
    print("|---" * (len(looks) + 1) + "|")
    for preset in (*presets, None):
        rows = [f for f in frames if preset is None or f["preset"] == preset]
        n = len({f["item"] for f in rows})
        cells = [median([f["seconds"] for f in rows if f["look"] == look]) for look in looks]
        print(f"| {preset or f'all {n} items'} | " + " | ".join("n/a" if c is None else f"{c:.1f}" for c in cells) + " |")


def per_task_counts(text: str, presets: tuple[str, ...]) -> dict[str, int]:
    """`--per-task`: a count for every preset, then `preset=count` overrides; one line naming the bad part otherwise."""
    default, *overrides = (part.strip() for part in text.split(","))
    counts: dict[str, int] = {}
    for part in [f"={default}", *overrides]:
        name, _, count = part.rpartition("=")
        if not count.isdigit() or int(count) < 1 or (name and name not in presets):
            raise SystemExit(f"bench.photoreal_frames: --per-task {text!r}: {part!r} is not a count of at least 1 "
                             f"or preset=count of {', '.join(presets)}")
        counts.update({p: int(count) for p in presets} if not name else {name: int(count)})
    return counts


def config(preset: str, per_task: int, look: str) -> dict[str, Any]:
    """The preset with every task cut to `per_task` items, in `look`."""
    path = preset_path(preset)
    assert path is not None, preset
    document = yaml.safe_load(path.read_text())
    document["render"] = {**document.get("render", {}), "look": look}
    for task in document["tasks"]:
        if "splits" in task:  # a task with splits takes its count from them: its first split only
            task["splits"] = {next(iter(task["splits"])): per_task}
        else:
            task["count"] = per_task
        task.pop("look", None)
    return document


def render(folder: Path, preset: str, per_task: int, look: str) -> Path:
    out = folder / preset / look
    out.mkdir(parents=True, exist_ok=True)
    path = out.parent / f"{look}.json"
    path.write_text(json.dumps(config(preset, per_task, look)))
    subprocess.run([sys.executable, "-m", "stim3d", "render", str(path), "--out", str(out), "--quiet"], check=False)
    return out


def background_share(item: Item, shape: tuple[int, ...], step: int = STEP) -> float:
    """The share of the frame's pixels (every `step`-th row and column, through their centres) that show neither
    an object nor the support surface: the ray's first hit is another part of the setting's stage, or nothing (the
    sky or the environment map), as bench/settings_background.py `ray_labels` classes it; 0 without a setting."""
    look = item.scene.look
    if not isinstance(look, DrawnLook) or look.setting is None:
        return 0.0
    ys, xs = np.mgrid[0:shape[0]:step, 0:shape[1]:step]
    labels = ray_labels(item, xs.ravel() + 0.5, ys.ravel() + 0.5)
    return float(np.mean((labels == "beyond") | (labels == "sky")))


def frame(item_dir: Path) -> dict[str, Any]:
    """One rendered item's figures."""
    item = Item.model_validate_json((item_dir / "item.json").read_text())
    # the photograph: an AVA item's image.png has its markers drawn on (pure red or blue boxes, clipped by design),
    # image_raw.png is the frame before them (render/markers.py)
    photograph = item_dir / RAW_IMAGE if (item_dir / RAW_IMAGE).is_file() else item_dir / "image.png"
    image = np.asarray(Image.open(photograph).convert("RGB"))
    mask = np.asarray(Image.open(item_dir / "mask.png"))
    timing = json.loads((item_dir / "timing.json").read_text()) if (item_dir / "timing.json").is_file() else {}
    look = item.scene.look
    setting = look.setting.kind if isinstance(look, DrawnLook) and look.setting is not None else None
    return {"item": item.item_id, "family": item.family, "look": look.name, "setting": setting,
            "clipped": round(clipped_share(image), 5), "crushed": round(crushed_share(image), 5),
            "background": round(background_share(item, mask.shape), 4),
            "seconds": round(sum(v for v in timing.values() if isinstance(v, (int, float))), 2),
            "mask_agreement": item.provenance.mask_agreement if item.provenance is not None else None,
            "recorded": [part for part in RECORDED if isinstance(look, DrawnLook) and getattr(look, part) is not None],
            "redraws": look.redraws, "colour_failures": len(look.colour_failures),
            "contrast_failures": len(look.contrast_failures),
            "golds": json.dumps([q.gold for q in item.questions], sort_keys=True, default=str)}


def summary(frames: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts and shares over one look's frames."""
    n = len(frames)
    passing = sum(f["clipped"] <= LIMIT and f["crushed"] <= LIMIT for f in frames)
    showing = sum(f["background"] >= BACKGROUND_MIN for f in frames)
    seconds = [f["seconds"] for f in frames]
    agreements = [f["mask_agreement"] for f in frames if f["mask_agreement"] is not None]
    return {"mask_agreement_min": min(agreements) if agreements else None, "frames": n, "exposure_ok": passing,
            "exposure_ok_share": round(passing / n, 4) if n else None,
            "background_shown": showing, "background_share": round(showing / n, 4) if n else None,
            "colour_failing_items": sum(f["colour_failures"] > 0 for f in frames),
            "under_contrast_floor_items": sum(f["contrast_failures"] > 0 for f in frames),
            "redrawn_items": sum(f["redraws"] > 0 for f in frames),
            **{f"with_{part}": sum(part in f["recorded"] for f in frames) for part in RECORDED},
            "seconds_median": median(seconds),
            "families": len({f["family"] for f in frames})}


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _args)
    if args.seconds:
        return seconds_table(args.seconds)
    if args.folder is None:
        raise SystemExit("photoreal_frames: --folder DIR is required (or --seconds RESULTS_JSON)")
    looks = name_list(args.looks, LOOK_NAMES, "looks", "photoreal_frames")
    presets = name_list(args.presets, PRESETS, "presets", "photoreal_frames")
    per_task = per_task_counts("1" if args.quick else args.per_task, presets)
    run = Run("photoreal_frames", args.quick, args.out, {"per_task": per_task, "looks": looks, "presets": presets,
                                                          "limit": LIMIT, "background_min": BACKGROUND_MIN})
    frames: dict[str, list[dict[str, Any]]] = {look: [] for look in looks}
    compare = len(looks) > 1  # one look has nothing to compare its masks and golds with
    identical = {look: 0 for look in looks}
    for preset in presets:
        outs = {look: args.folder / preset / look if args.measure_only
                else render(args.folder, preset, per_task[preset], look)
                for look in looks}
        reference: dict[str, tuple[bytes, str]] = {}
        for look in looks:
            for item_dir in sorted((outs[look] / "items").glob("*/")):
                if not (item_dir / "item.json").is_file():
                    continue
                row = {"preset": preset, **frame(item_dir)}
                seen = (np.asarray(Image.open(item_dir / "mask.png")).tobytes(), row["golds"])
                if look == looks[0]:
                    reference[row["item"]] = seen
                if compare:
                    row["same_masks_and_golds"] = reference.get(row["item"]) == seen
                    identical[look] += row["same_masks_and_golds"]
                frames[look].append(row)
        run.sample_load()
    by_look = {look: {**summary(rows), "same_masks_and_golds": identical[look] if compare else None}
               for look, rows in frames.items()}
    counts = ", ".join(f"{p} {n}" for p, n in per_task.items())
    print_table(f"frames per look (items per task: {counts}; presets' own settings)",
                ["look", "frames", "families", "clip & crush <= 1 %", "background shown", "colour failing",
                 "under floor", "redrawn", "setting/lens/pipeline", "median s", "least mask agreement", "masks & golds as " + looks[0]],
                [[look, s["frames"], s["families"], s["exposure_ok_share"], s["background_share"],
                  s["colour_failing_items"], s["under_contrast_floor_items"], s["redrawn_items"],
                  "/".join(str(s[f"with_{part}"]) for part in RECORDED), s["seconds_median"],
                  s["mask_agreement_min"], s["same_masks_and_golds"]] for look, s in by_look.items()])
    run.finish({"by_look": by_look, "frames": [row for rows in frames.values() for row in rows]})


if __name__ == "__main__":
    main()
