"""Mask agreement: does Blender's object-index pass (mask.png) equal the ray-cast instance map?

Items are spread evenly over the dysm3d preset's plan (every family; the
counting tasks of demo.yaml when that preset is missing), composed for 320x240,
rendered with Cycles at 8 samples by `render.produce.produce_item`, and each
written mask.png is compared with `scenes.visibility.measure(item.scene).instance_map`
(the map the ground truth was computed from). Figures: the share of equal pixels
over all items (goal >= 99.9 %), the worst item, and whether the differing pixels
lie on a silhouette edge of the ray-cast map (a sub-pixel disagreement) or inside
a region (a real bug).

    python -m bench.mask_agreement [--quick] [--items N]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from stim3d.render.batch.config import load_config
from stim3d.render.batch.item_folder import load_item, load_mask
from stim3d.render.batch.plan import expand
from stim3d.render.batch.produce import produce_item
from stim3d.render.settings import RenderSettings
from stim3d.scenes.placement import InfeasibleError
from stim3d.scenes.presets import preset_path
from stim3d.scenes.visibility import measure

from .common import Run, add_device, median, parse_args, print_table, progress

WIDTH, HEIGHT, SAMPLES = 320, 240, 8


def edge_pixels(ids: np.ndarray) -> np.ndarray:
    """Pixels with a 4-neighbour of another id (silhouette edges of the instance map)."""
    edge = np.zeros(ids.shape, dtype=bool)
    vertical = ids[1:, :] != ids[:-1, :]
    horizontal = ids[:, 1:] != ids[:, :-1]
    edge[1:, :] |= vertical
    edge[:-1, :] |= vertical
    edge[:, 1:] |= horizontal
    edge[:, :-1] |= horizontal
    return edge


def spread(plans: list, n: int) -> list:
    """About n / tasks evenly spaced plans of every task (family), taken in turn; then the rest as spares."""
    per_task = [[p for p in plans if p.task_index == t] for t in sorted({p.task_index for p in plans})]
    share = -(-n // len(per_task))
    rounds = [[task[i * len(task) // share] for task in per_task if i < len(task)] for i in range(share)]
    ordered = [p for round_ in rounds for p in round_]
    return ordered + [p for p in plans if p not in ordered]


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], lambda p: (
        p.add_argument("--items", type=int, help="items (default 50; --quick 4)"), add_device(p)))
    n_items = args.items or (4 if args.quick else 50)
    preset = preset_path("dysm3d") or preset_path("demo")
    assert preset is not None, "no dysm3d or demo preset installed"
    config = load_config(preset)
    settings = RenderSettings(engine="cycles", width=WIDTH, height=HEIGHT, samples=SAMPLES, denoise=False,
                              device=args.device)
    candidates = spread(expand(config), n_items)
    run = Run("mask_agreement", args.quick, args.out,
              settings={"preset": preset.name, "items": n_items, "render": settings.model_dump(mode="json")},
              device=args.device)
    rows, infeasible = [], 0
    with tempfile.TemporaryDirectory(prefix="stim3d-bench-") as tmp:
        for plan in candidates:
            if len(rows) == n_items:
                break
            try:
                folder = produce_item(plan, config.seed, settings, Path(tmp) / "out", Path(tmp) / "work", "bench")
            except InfeasibleError:
                infeasible += 1
                continue
            item = load_item(folder)
            rendered = load_mask(folder)
            raycast = measure(item.scene, item.ground_truth.rays_per_pixel).instance_map
            differ = rendered != raycast
            on_edge = differ & edge_pixels(raycast)
            rows.append({
                "item": plan.item_id, "family": plan.family, "pixels": int(differ.size),
                "differing_px": int(differ.sum()), "differing_px_off_edges": int((differ & ~on_edge).sum()),
                "agreement": float(1.0 - differ.mean()), "objects": len(item.scene.objects),
            })
            progress(f"{len(rows)}/{n_items} {plan.item_id}: {rows[-1]['differing_px']} px differ")
            if len(rows) % 10 == 0:
                run.sample_load()

    pixels = sum(r["pixels"] for r in rows)
    differing = sum(r["differing_px"] for r in rows)
    worst = min(rows, key=lambda r: r["agreement"])
    families = sorted({r["family"] for r in rows})
    figures = {
        "items": len(rows),
        "infeasible_skipped": infeasible,
        "pixels": pixels,
        "differing_px": differing,
        "agreement_pooled": 1.0 - differing / pixels,
        "agreement_worst_item": worst["agreement"],
        "worst_item": worst,
        "items_identical": sum(r["differing_px"] == 0 for r in rows),
        "differing_px_median": median([r["differing_px"] for r in rows]),
        "differing_px_off_edges": sum(r["differing_px_off_edges"] for r in rows),
        "per_family": {
            f: {"items": sum(r["family"] == f for r in rows),
                "differing_px": sum(r["differing_px"] for r in rows if r["family"] == f),
                "worst_agreement": min(r["agreement"] for r in rows if r["family"] == f)}
            for f in families
        },
        "per_item": rows,
    }
    print_table(
        f"Object-index pass (mask.png) vs ray-cast instance map, {len(rows)} items at {WIDTH}x{HEIGHT}, {SAMPLES} samples",
        ["family", "items", "differing px", "worst item agreement"],
        [[f, v["items"], v["differing_px"], f"{v['worst_agreement']:.5%}"] for f, v in figures["per_family"].items()]
        + [["all", len(rows), differing, f"{worst['agreement']:.5%}"]],
    )
    print(f"\npooled agreement {figures['agreement_pooled']:.5%} ({differing} of {pixels:,} px differ; goal >= 99.9 %); "
          f"{figures['items_identical']}/{len(rows)} items identical; worst {worst['item']} "
          f"{worst['agreement']:.5%} ({worst['differing_px']} px); differing px off silhouette edges: "
          f"{figures['differing_px_off_edges']}")
    run.finish(figures)


if __name__ == "__main__":
    main()
