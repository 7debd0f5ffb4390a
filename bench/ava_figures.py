"""The AVA-3D figures of docs/ava.md ("Measured"): depth pass vs ray cast, absolute-depth gold vs the
rendered depth, and how often the rendered colour is nearest its gold palette colour.

Renders one Cycles batch (40 ava_color, 10 ava_depth_absolute, 10 ava_depth_relative items at
160x120, 8 samples with OpenImageDenoise, depth pass on; about 2 minutes on 2 shared cores) into a
scratch folder and prints the figures.

    python -m bench.ava_figures [OUT]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from stim3d.cli import main
from stim3d.render.batch.item_folder import load_item, load_mask
from stim3d.scenes.visibility import measure

CONFIG = """\
seed: 77
render: {engine: cycles, width: 160, height: 120, samples: 8, denoise: true, depth: true}
tasks:
  - {family: ava_color, count: 40}
  - {family: ava_depth_absolute, count: 10}
  - {family: ava_depth_relative, count: 10}
"""


def figures(out: Path) -> list[str]:
    """The printed lines, from a rendered batch folder."""
    centre_errors, gold_errors, colours = [], [], []
    for folder in sorted(p for p in (out / "items").iterdir() if p.is_dir()):
        item, mask = load_item(folder), load_mask(folder)
        rendered, cast = np.load(folder / "depth.npy"), measure(item.scene)
        for truth in item.ground_truth.objects:
            if truth.centroid_px is None:
                continue
            ys, xs = np.nonzero((mask == truth.id) & (cast.instance_map == truth.id))
            k = int(np.argmin((xs + 0.5 - truth.centroid_px[0]) ** 2 + (ys + 0.5 - truth.centroid_px[1]) ** 2))
            centre_errors.append(abs(float(rendered[ys[k], xs[k]]) - float(cast.depth[ys[k], xs[k]])))
        question = item.questions[0]
        if item.family == "ava_depth_absolute":
            nearest = float(rendered[mask == question.subject["object_id"]].min())
            gold_errors.append(abs(float(question.gold) - nearest))  # type: ignore[arg-type]
        if item.family == "ava_color":
            d = item.difficulty
            colours.append((question.gold, d["measured_nearest"], float(d["measured_margin_de"]),  # type: ignore[arg-type]
                            bool(d["measured_ambiguous"])))
    right = sum(gold == nearest for gold, nearest, _, _ in colours)
    flagged = [c for c in colours if c[3]]
    return [
        f"depth pass vs ray cast at object centres: {len(centre_errors)} objects, max {max(centre_errors) * 1e3:.3f} mm, "
        f"median {float(np.median(centre_errors)) * 1e3:.4f} mm",
        f"absolute-depth gold vs nearest rendered depth on the object's mask: {len(gold_errors)} items, "
        f"max {max(gold_errors) * 1e3:.2f} mm",
        f"colour: measured nearest palette colour = gold in {right}/{len(colours)}; measured_ambiguous: {len(flagged)} "
        f"({', '.join(sorted(g for g, *_ in flagged))}); smallest margin {min(c[2] for c in colours):.1f} dE2000",
    ]


def run(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "ava_figures.yaml").write_text(CONFIG)
    if main(["render", str(out / "ava_figures.yaml"), "--out", str(out / "batch"), "--quiet"]) != 0:
        raise SystemExit("the render failed")
    print("\n".join(figures(out / "batch")))


if __name__ == "__main__":
    run(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="ava-figures-")))
