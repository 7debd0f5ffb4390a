"""Some tasks of a seed preset rendered whole, each item exactly as `stim3d render PRESET` renders it.

A preset's new tasks (ava3d's `ava_object`, `ava_texture`, `ava_ocr`) can be rendered whole without the
hours the rest of the preset takes: every planned item of the chosen families goes through the batch's own
per-item path (`render/batch/produce.py` `produce_item`: composition, ray cast, Cycles at the preset's
settings, the item folder) with the preset's seed, task index and item index, so each is the item the
whole preset makes. Figures per family: items planned and rendered, failures (with the constraint
named), seconds per item, the share of items a look redrew for colour (`scene.look.redraws`; a studio
preset has none) and the best constant answer of each question over the items.

    python -m bench.preset_tasks --preset ava3d --families ava_object,ava_texture,ava_ocr [--root DIR] [--quick]
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from pathlib import Path

from stim3d.render.batch.config import load_config
from stim3d.render.batch.plan import expand
from stim3d.render.batch.produce import produce_item
from stim3d.scenes.placement import InfeasibleError
from stim3d.scenes.presets import preset_path

from .common import Run, add_device, median, parse_args, path_label, print_table, progress


def constant_baselines(folders: list[Path]) -> dict[str, float]:
    """Per question (its id's last part: q0, q1, ...), the share of items the most common gold answers."""
    golds: dict[str, Counter] = {}
    for folder in folders:
        for question in json.loads((folder / "item.json").read_text())["questions"]:
            key = question["question_id"].rsplit("-", 1)[-1]
            golds.setdefault(key, Counter())[json.dumps(question["gold"])] += 1
    return {key: round(max(c.values()) / sum(c.values()), 4) for key, c in sorted(golds.items())}


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], lambda p: (
        p.add_argument("--preset", default="ava3d", help="a seed preset's name (default ava3d)"),
        p.add_argument("--families", default="ava_object,ava_texture,ava_ocr", help="comma-separated families"),
        p.add_argument("--root", type=Path, help="render into this folder and keep it (rerunning resumes)"),
        add_device(p)))
    path = preset_path(args.preset)
    assert path is not None, f"no preset named {args.preset}"
    config = load_config(path)
    families = args.families.split(",")
    settings = config.render.model_copy(update={"device": args.device})
    plans = [p for p in expand(config) if p.family in families]
    if args.quick:
        plans = [next(p for p in plans if p.family == f) for f in families]
        settings = settings.model_copy(update={"width": 160, "height": 120, "samples": 1})
    run = Run("preset_tasks", args.quick, args.out, device=args.device, settings={
        "preset": args.preset, "families": families, "items": len(plans), "root": path_label(str(args.root)),
        "render": settings.model_dump(mode="json")})
    rows: dict[str, dict] = {f: {"planned": 0, "rendered": 0, "resumed": 0, "failed": {}, "seconds": [],
                                 "redrawn": 0, "folders": []} for f in families}
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        out = args.root or Path(tmp) / "out"
        for n, plan in enumerate(plans, start=1):
            row = rows[plan.family]
            row["planned"] += 1
            done = out / "items" / plan.item_id / "item.json"
            resumed = done.is_file()  # rendered by an earlier run into --root
            start = time.perf_counter()
            try:
                folder = done.parent if resumed else produce_item(plan, config.seed, settings, out,
                                                                  Path(tmp) / "work", "bench")
            except InfeasibleError as exc:
                row["failed"][plan.item_id] = str(exc)
                progress(f"{n}/{len(plans)} {plan.item_id}: FAILED {exc}")
                continue
            row["rendered"] += 1
            row["resumed"] += int(resumed)
            if not resumed:
                row["seconds"].append(time.perf_counter() - start)
            row["folders"].append(folder)
            look = json.loads((folder / "item.json").read_text())["scene"].get("look") or {}
            row["redrawn"] += int(look.get("redraws", 0) or 0) > 0  # the look's colour redraws; studio has none
            progress(f"{n}/{len(plans)} {plan.item_id}: " + ("done before" if resumed else f"{row['seconds'][-1]:.1f} s"))
            if n % 20 == 0:
                run.sample_load()
        figures = {family: {
            "planned": r["planned"], "rendered": r["rendered"], "rendered_by_earlier_runs": r["resumed"], "failures": len(r["failed"]), "failed": r["failed"],
            "median_seconds_per_item": round(median(r["seconds"]), 2) if r["seconds"] else None,
            "share_redrawn": round(r["redrawn"] / r["rendered"], 4) if r["rendered"] else None,
            "best_constant_answer": constant_baselines(r["folders"]),
        } for family, r in rows.items()}

    print_table(f"{args.preset}: tasks rendered whole at the preset's settings "
                f"({settings.width}x{settings.height}, {settings.samples} samples)",
                ["family", "planned", "rendered", "failed", "s per item (median)", "redrawn", "best constant"],
                [[f, v["planned"], v["rendered"], v["failures"], v["median_seconds_per_item"], v["share_redrawn"],
                  ", ".join(f"{k} {b:.1%}" for k, b in v["best_constant_answer"].items())] for f, v in figures.items()])
    run.finish({"families": figures, "complete": all(v["rendered"] == v["planned"] for v in figures.values())})


if __name__ == "__main__":
    main()
