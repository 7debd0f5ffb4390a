"""Colour golds under each look: how many items needed their look redrawn, how many still fail, how far off.

Renders a small batch of colour-naming scenes (shape_color_count and ava_color by
default) with variants over the looks (one scene, every look), through `stim3d render`,
so the post-render colour check of render/batch/produce.py runs as in a user's batch.
For each look, and for each look and family, it counts items whose look was redrawn
(`scene.look.redraws > 0`) and items with objects still failing after the last draw
(`scene.look.colour_failures`; its share of the items), and gives the median and p95
CIEDE2000 between each judged object's measured colour and its named palette colour
(judged as scenes/look_colours.py judges: at least MIN_VISIBLE_PX visible pixels, a
palette colour, no print). Studio draws no look: its colour redraws re-expose its own rig
(its look's `exposure_correction_ev`), counted in its look's `redraws` like the others'.

    python -m bench.looks_colours [--quick] [--count 6] [--size 160x120] [--samples 8] [--seed 26]
        [--looks studio,clevr,photoreal] [--families shape_color_count,ava_color] [--folder DIR --shard k/n]

`--preset NAME` renders that seed preset's own tasks for the named families instead (their
parameters, counts, variants, size and sampling; the other families' tasks are left out, so a
scene is a fresh draw from the same task, not the preset's item of that id), once per look into
`FOLDER/<look>`: the issue-44 measurement at the presets' settings.

A sample too large for one sitting is rendered in shards into one kept folder: each run
with `--folder DIR --shard k/n` renders (or resumes) the k-th of n slices of the plan
(every n-th item; an odd n puts both looks of two variants into every slice) and
reports on every item the folder holds so far, so shards 1..k are a uniform sample of
the whole plan. The results file says how many of the planned items it covers.

`--looks photoreal --families shape_color_count,ava_color,ava_count --count 6 --samples 4`
is the before/after sample of bench/results/looks_NOTES.md ("Before and after photoreal's second round"): run once at the
older commit and once at the newer, each with its own `--out`. `--looks clevr,photoreal
--families shape_color_count,ava_color,odd_grid,rose_grid` is the white-balance sample
(bench/results/looks_NOTES.md, "White balance per environment").
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from stim3d.render.batch.config import parse_config
from stim3d.render.batch.plan import expand
from stim3d.scenes.colors import PALETTE, delta_e_srgb, srgb_to_lab
from stim3d.scenes.look_colours import judged, measured_colours
from stim3d.scenes.look_contrast import contrast_failures
from stim3d.scenes.model import LOOK_NAMES, DrawnLook, Item

from .common import Run, name_list, parse_args, print_table

FAMILIES = ("shape_color_count", "ava_color")


def _args(parser) -> None:
    parser.add_argument("--count", type=int, default=6, help="scenes per family")
    parser.add_argument("--size", default="160x120")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--looks", default=",".join(LOOK_NAMES), help="comma-separated looks (default: all)")
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated families with colour names")
    parser.add_argument("--markdown", nargs="+", type=Path, metavar="RESULTS_JSON",
                        help="render nothing: print the docs' table per look and family of these results files")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                        help="render nothing: compare two results files on the items drawn alike in both")
    parser.add_argument("--seed", type=int, default=26, help="the batch seed (another seed: scenes independent of "
                        "the ones the looks' constants were tuned on)")
    parser.add_argument("--preset", help="render this seed preset's tasks of --families, at its own settings, "
                        "once per look (needs --folder)")
    parser.add_argument("--folder", type=Path, help="render into this folder and keep it (rerunning resumes; "
                        "default: a temporary folder)")
    parser.add_argument("--shard", help="k/n: render only the k-th of n slices of the plan into --folder")
    parser.add_argument("--objects", choices=("all", "failing"), default="all",
                        help="which judged objects the results file lists (failing: only those of items still "
                        "failing, for a sample too large to list whole)")
    parser.add_argument("--params", default="{}", help='JSON: fixed parameters per family, e.g. '
                        '\'{"odd_grid": {"grid_range": [3, 5]}}\' (small grids fit a small image)')


def _params(text: str, families: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """--params: a JSON object of family name -> that family's fixed parameters (families of this run only)."""
    try:
        params = json.loads(text)
    except json.JSONDecodeError as error:
        raise SystemExit(f"bench.looks_colours: --params is not JSON: {error}") from None
    if not isinstance(params, dict) or any(f not in families or not isinstance(p, dict) for f, p in params.items()):
        raise SystemExit(f"bench.looks_colours: --params {text!r}: an object of family -> parameters, "
                         f"families among {', '.join(families)}")
    return params


def judged_objects(item: Item) -> list[dict[str, Any]]:
    """One record per object the colour check judges: its name, material, environment and dE to its name."""
    look = item.scene.look
    materials = {o.id: o.material for o in look.objects} if isinstance(look, DrawnLook) else {}
    environment = look.environment.name if isinstance(look, DrawnLook) and look.environment is not None else None
    records = []
    for object_id, (name, colour) in judged(item, measured_colours(item)).items():
        records.append({"item": item.item_id, "redraws": look.redraws,
                        "colour": name, "material": materials.get(object_id),
                        "environment": environment, "measured_srgb": list(colour),
                        "delta_e": round(float(delta_e_srgb(colour, PALETTE[name])), 3)})
    return records


def summary(items: list[dict[str, Any]], objects: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts and dE statistics of one group of items (a look, or a look and a family)."""
    errors = [o["delta_e"] for o in objects]
    failing = sum(i["still_failing"] for i in items)
    return {"items": len(items), "redrawn": sum(i["redraws"] > 0 for i in items),
            "redraws": sum(i["redraws"] for i in items), "still_failing": failing,
            "exposure_corrected": sum(i.get("exposure_correction_ev", 0.0) != 0.0 for i in items),
            "under_contrast_floor": sum(i.get("under_contrast_floor", False) for i in items),
            "failing_share": round(failing / len(items), 3) if items else None, "judged_objects": len(errors),
            "delta_e_median": round(float(np.median(errors)), 2) if errors else None,
            "delta_e_p95": round(float(np.percentile(errors, 95)), 2) if errors else None}


def collect(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(one record per rendered item, one per judged object) of a `stim3d render` output folder."""
    items, objects = [], []
    for item_json in sorted((folder / "items").glob("*/item.json")):
        item = Item.model_validate_json(item_json.read_text())
        look = item.scene.look
        name = look.name
        items.append({"look": name, "family": item.family, "item": item.item_id, "redraws": look.redraws,
                      "exposure_correction_ev": look.exposure_correction_ev,
                      "still_failing": bool(look.colour_failures), "under_contrast_floor": bool(contrast_failures(item))})
        objects += [{"look": name, "family": item.family, **record} for record in judged_objects(item)]
    return items, objects


def compare(before: Path, after: Path) -> None:
    """Median and p95 dE per look and environment over the items drawn alike in both files: the same number of
    redraws and the same final environment, so the same look up to what changed between the two runs' code
    (after a redraw, the other items' final looks differ between runs and are not comparable object by object)."""
    runs = [json.loads(path.read_text())["figures"]["objects"] for path in (before, after)]
    drawn = [{(o["look"], o["item"]): (o["environment"], o.get("redraws")) for o in objects} for objects in runs]
    alike = {key for key, value in drawn[0].items() if key in drawn[1] and _alike(value, drawn[1][key])}
    rows = []
    for look in sorted({look for look, _item in alike}):
        groups = sorted({o["environment"] or "-" for o in runs[0] if (o["look"], o["item"]) in alike
                         and o["look"] == look})
        for group in [*groups, "all"]:
            errors = [[o["delta_e"] for o in objects if (o["look"], o["item"]) in alike and o["look"] == look
                       and group in ("all", o["environment"] or "-")] for objects in runs]
            rows.append([look, group, len({i for lk, i in alike if lk == look}) if group == "all" else "",
                         len(errors[0]), *(round(float(f(e)), 2) for e in errors
                                           for f in (np.median, lambda v: np.percentile(v, 95)))])
    print_table(f"items drawn alike in {before.name} and {after.name}", [
        "look", "environment", "items", "objects", "median before", "p95 before", "median after", "p95 after"], rows)
    for path, objects in zip((before, after), runs):
        print_table(f"{path.name}: per look and material, all judged objects (final draws)", [
            "look", "material", "objects", "median dE", "p95 dE", "median dL*", "median dC*"], _by_material(objects))


def failing_bound(failing: int, items: int, confidence: float = 0.95) -> float:
    """One-sided upper bound on the share of failing items given `failing` of `items` (Clopper-Pearson): the
    largest share under which seeing this few failures still has probability 1 - `confidence` (0 of n: about
    3/n). The issue's bar is a share under 1 %; a sample shows it only when this bound is under 1 % too."""
    if items == 0:
        return 1.0
    low, high = failing / items, 1.0
    for _ in range(60):  # bisection on the binomial tail P(X <= failing | share)
        share = (low + high) / 2
        tail = sum(math.comb(items, k) * share**k * (1 - share) ** (items - k) for k in range(failing + 1))
        low, high = (share, high) if tail > 1 - confidence else (low, share)
    return high


def markdown(paths: list[Path]) -> None:
    """The docs' table over results files (one per preset): per look and family, then per look."""
    figures = [json.loads(path.read_text())["figures"] for path in paths]
    looks = sorted({look for f in figures for look in f["per_family"]})
    print("| look | family | items | redrawn (redraws) | exposure corrected | still failing | share | 95 % upper bound "
          "| median dE | p95 dE | under the contrast floor |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for look in looks:
        rows = [(family, row) for f in figures for family, row in f["per_family"].get(look, {}).items()
                if row["items"]]
        for family, row in rows:
            print(f"| {look} | {family} | {row['items']} | {row['redrawn']} ({row['redraws']}) | "
                  f"{row.get('exposure_corrected', '-')} | {row['still_failing']} | {100 * row['still_failing'] / row['items']:.1f} % | "
                  f"{100 * failing_bound(row['still_failing'], row['items']):.1f} % | {row['delta_e_median']} | "
                  f"{row['delta_e_p95']} | {row.get('under_contrast_floor', '-')} |")
        items = sum(row["items"] for _, row in rows)
        failing = sum(row["still_failing"] for _, row in rows)
        print(f"| **{look}** | **all** | {items} | {sum(r['redrawn'] for _, r in rows)} "
              f"({sum(r['redraws'] for _, r in rows)}) | {sum(r.get('exposure_corrected', 0) for _, r in rows)} | "
              f"{failing} | {100 * failing / max(items, 1):.1f} % | "
              f"{100 * failing_bound(failing, items):.1f} % | | | "
              f"{sum(r.get('under_contrast_floor', 0) for _, r in rows)} |")


def _alike(first: tuple[str | None, int | None], second: tuple[str | None, int | None]) -> bool:
    """Two final draws of one item are alike: the same environment, and the same redraws where both record them."""
    return first[0] == second[0] and (None in (first[1], second[1]) or first[1] == second[1])


def _by_material(objects: list[dict[str, Any]]) -> list[list[Any]]:
    """Per look and material: dE, and the CIELAB lightness and chroma of the measured colour minus the name's."""
    rows = []
    for look, material in sorted({(o["look"], o["material"]) for o in objects}):
        group = [o for o in objects if (o["look"], o["material"]) == (look, material)]
        measured = srgb_to_lab(np.array([o["measured_srgb"] for o in group], dtype=float))
        named = srgb_to_lab(np.array([PALETTE[o["colour"]] for o in group], dtype=float))
        chroma = np.hypot(measured[:, 1], measured[:, 2]) - np.hypot(named[:, 1], named[:, 2])
        errors = [o["delta_e"] for o in group]
        rows.append([look, material, len(group), round(float(np.median(errors)), 2),
                     round(float(np.percentile(errors, 95)), 2), round(float(np.median(measured[:, 0] - named[:, 0])), 2),
                     round(float(np.median(chroma)), 2)])
    return rows


def _preset_config(name: str, families: tuple[str, ...], look: str) -> dict[str, Any]:
    """Seed preset `name` as a config holding only its tasks of `families`, rendered in `look`."""
    from stim3d.render.batch.config_yaml import read_yaml
    from stim3d.scenes.presets import preset_names, preset_path

    path = preset_path(name)
    if path is None:
        raise SystemExit(f"bench.looks_colours: --preset {name!r}: not a preset ({', '.join(preset_names())})")
    config = read_yaml(path.read_text(), str(path))
    tasks = [task for task in config["tasks"] if task["family"] in families]
    if not tasks:
        raise SystemExit(f"bench.looks_colours: preset {name} has no task of {', '.join(families)}")
    return {**config, "render": {**config["render"], "look": look}, "tasks": tasks}


def _render(config: dict[str, Any], folder: Path, path: Path, shard: str | None):
    """`stim3d render` `config` (or its slice `shard`) into `folder`, resuming; then `collect(folder)`."""
    path.write_text(json.dumps(config))
    done = subprocess.run([sys.executable, "-m", "stim3d", "render", str(path), "--out", str(folder), "--quiet",
                           *(["--shard", shard] if shard else [])], check=False)
    if done.returncode not in (0, 1):  # 1: some items failed (an infeasible scene); they are counted below
        raise SystemExit(f"bench.looks_colours: stim3d render exited with {done.returncode}")
    return collect(folder)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _args)
    if args.compare:
        compare(*args.compare)
        return
    if args.markdown:
        markdown(args.markdown)
        return
    count = 1 if args.quick else args.count
    width, height = (int(v) for v in args.size.split("x"))
    from stim3d.scenes.families import FAMILIES as REGISTRY

    looks = name_list(args.looks, LOOK_NAMES, "looks", "looks_colours")
    families = name_list(args.families, tuple(REGISTRY), "families", "looks_colours")
    params = _params(args.params, families)
    if (args.shard or args.preset) and not args.folder:
        raise SystemExit("bench.looks_colours: --shard and --preset need --folder (the items accumulate there)")
    if args.preset:
        configs = {look: _preset_config(args.preset, families, look) for look in looks}
        planned = sum(len(expand(parse_config(c, args.preset))) for c in configs.values())
        run = Run("looks_colours", args.quick, args.out, {"preset": args.preset, "families": families, "looks": looks,
                                                          "render": configs[looks[0]]["render"], "shard": args.shard})
        batches = [(config, args.folder / look) for look, config in configs.items()]
    else:
        variants = {look: {"look": look} for look in looks}
        config = {"seed": args.seed,
                  "render": {"engine": "cycles", "width": width, "height": height, "samples": args.samples},
                  "tasks": [{"family": family, "count": count, "variants": variants, "params": params.get(family, {})}
                            for family in families]}
        planned = count * len(families) * len(looks)
        run = Run("looks_colours", args.quick, args.out, {**config["render"], "count_per_family": count,
                                                           "families": families, "looks": looks, "params": params,
                                                           "seed": args.seed, "shard": args.shard})
        batches = [(config, args.folder)]
    items, objects = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for config, folder in batches:
            found = _render(config, folder or Path(scratch) / "out", Path(scratch) / "looks.json", args.shard)
            items, objects = items + found[0], objects + found[1]
    counts = {look: summary([i for i in items if i["look"] == look], [o for o in objects if o["look"] == look])
              for look in looks}
    per_family = {look: {family: summary([i for i in items if (i["look"], i["family"]) == (look, family)],
                                         [o for o in objects if (o["look"], o["family"]) == (look, family)])
                         for family in families} for look in looks}
    columns = ["items", "redrawn", "redraws", "still_failing", "failing_share", "delta_e_median", "delta_e_p95"]
    print_table("colour check per look", ["look", *columns], [[look, *(c[k] for k in columns)]
                                                               for look, c in counts.items()])
    print_table("colour check per look and family", ["look", "family", *columns],
                [[look, family, *(c[k] for k in columns)] for look, rows in per_family.items()
                 for family, c in rows.items()])
    print(f"{len(items)} of {planned} planned items rendered (the rest could not be composed, or lie in shards "
          "not rendered yet)")
    failing = sorted(i["item"] for i in items if i["still_failing"])
    print("still failing: " + (", ".join(failing) or "none"))
    listed = objects if args.objects == "all" else [o for o in objects if o["item"] in failing]
    run.finish({**counts, "per_family": per_family, "planned_items": planned, "rendered_items": len(items),
                "still_failing_items": failing, "objects": listed})


if __name__ == "__main__":
    main()
