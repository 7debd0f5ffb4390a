"""Pictures of a sweep: achieved vs requested visibility (with accuracy when scores are given) and image strips."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from stim3d.render.batch.folder import BatchFolder
from stim3d.render.batch.item_folder import load_item
from stim3d.scenes.model import Item
from stim3d.scenes.sweep import SweepError


def _pyplot():
    """matplotlib with the file-only backend (no display on render machines)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def read_scores(path: Path) -> dict[str, list[bool]]:
    """{item_id: [correct, ...]} from the JSON `stim3d score` writes (its per-question results)."""
    try:
        questions = json.loads(Path(path).read_text())["questions"]
        by_item: dict[str, list[bool]] = {}
        for q in questions:
            by_item.setdefault(str(q["item_id"]), []).append(bool(q["correct"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SweepError(f"not a scores file from 'stim3d score' ({type(exc).__name__}: {exc})", field="scores",
                         value=path) from None
    return by_item


def accuracy_by_level(sweeps: list[dict], correct: dict[str, list[bool]]) -> list[tuple[float, float, float, int]]:
    """Per requested level: (level, mean achieved visibility, accuracy, questions) over every sweep's scored items."""
    rows = []
    levels = sorted({lv["requested"] for sweep in sweeps for lv in sweep["levels"]})
    for level in levels:
        reached = [lv for sweep in sweeps for lv in sweep["levels"]
                   if lv["requested"] == level and lv["item_id"] in correct]
        answers = [c for lv in reached for c in correct[lv["item_id"]]]
        if answers:
            achieved = float(np.mean([lv["achieved"] for lv in reached]))
            rows.append((level, achieved, float(np.mean(answers)), len(answers)))
    if not rows:
        raise SweepError("the scores name none of this sweep's items (score this sweep's records.jsonl)",
                         field="scores")
    return rows


def plot_achieved(sweeps: list[dict], path: Path, correct: dict[str, list[bool]] | None = None) -> Path:
    """Achieved vs requested visibility for every sweep (unreachable levels marked on the x axis);
    with scores, a second panel of accuracy vs achieved visibility."""
    plt = _pyplot()
    rows = accuracy_by_level(sweeps, correct) if correct is not None else None
    fig, axes = plt.subplots(1, 2 if rows else 1, figsize=(10.0 if rows else 5.0, 4.2), dpi=100, squeeze=False)
    ax = axes[0][0]
    ax.plot([0, 1], [0, 1], color="0.6", linewidth=1, label="achieved = requested")
    ax.fill_between([0, 1], [-0.01, 0.99], [0.01, 1.01], color="0.85", label="+/- 0.01")
    missed_label = "unreachable"
    for sweep in sweeps:
        reached = [(lv["requested"], lv["achieved"]) for lv in sweep["levels"] if lv["status"] != "unreachable"]
        missed = [lv["requested"] for lv in sweep["levels"] if lv["status"] == "unreachable"]
        if reached:
            xs, ys = zip(*reached)
            ax.plot(xs, ys, marker="o", markersize=4, linewidth=1, label=sweep["source_item_id"])
        if missed:
            ax.plot(missed, [0.0] * len(missed), linestyle="none", marker="x", color="tab:red", label=missed_label)
            missed_label = "_nolegend_"
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("requested visibility of the target")
    ax.set_ylabel("achieved visibility (ray cast)")
    ax.set_title("occlusion sweep")
    ax.legend(fontsize=7, loc="upper left")
    if rows:
        acc = axes[0][1]
        _, achieved, accuracy, counts = zip(*rows)
        acc.plot(achieved, accuracy, marker="o", color="tab:blue")
        for x, y, n in zip(achieved, accuracy, counts):
            acc.annotate(f"n={n}", (x, y), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7)
        acc.set_xlim(-0.02, 1.02)
        acc.set_ylim(-0.02, 1.08)
        acc.set_xlabel("achieved visibility of the target (mean per level)")
        acc.set_ylabel("accuracy (exact)")
        acc.set_title("accuracy vs visibility")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def focus_box(items: list[Item], object_ids: tuple[int, ...], pad: float = 0.35) -> tuple[int, int, int, int]:
    """A box (x0, y0, x1, y1) around the given objects in every level, padded, with the image's aspect ratio."""
    camera = items[0].scene.camera
    boxes = [t.bbox_amodal for item in items for t in item.ground_truth.objects if t.id in object_ids and t.bbox_amodal]
    if not boxes:
        return (0, 0, camera.width, camera.height)
    x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x1, y1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
    aspect = camera.width / camera.height
    width = max((x1 - x0) * (1 + 2 * pad), (y1 - y0) * (1 + 2 * pad) * aspect)
    width = min(width, camera.width, camera.height * aspect)
    height = width / aspect
    cx = min(max((x0 + x1) / 2, width / 2), camera.width - width / 2)
    cy = min(max((y0 + y1) / 2, height / 2), camera.height - height / 2)
    return (int(round(cx - width / 2)), int(round(cy - height / 2)), int(round(cx + width / 2)), int(round(cy + height / 2)))


def strip(sweep: dict, out: Path, path: Path, panel_height: int = 150, label_px: int = 22) -> Path:
    """The levels' images side by side, each labelled "requested -> achieved" visibility.

    Every panel shows the same region: the target and the occluder over all
    levels, padded, scaled to `panel_height` pixels.
    """
    from PIL import Image

    plt = _pyplot()
    items = {lv["item_id"]: load_item(BatchFolder(out).item_dir(lv["item_id"])) for lv in sweep["levels"] if lv["item_id"]}
    if items:
        first = next(iter(items.values())).scene.camera
        box = focus_box(list(items.values()), (sweep["target_id"], sweep["occluder_id"]))
        aspect = first.width / first.height
    else:
        box, aspect = None, 4 / 3
    width = int(round(panel_height * aspect))
    panels = []
    for level in sweep["levels"]:
        image = None
        if level["item_id"] is not None:
            full = Image.open(BatchFolder(out).image_path(level["item_id"])).convert("RGB")
            image = np.asarray(full.crop(box).resize((width, panel_height), Image.Resampling.LANCZOS))
        panels.append((level, image))
    dpi = 100
    n = len(panels)
    total_height = panel_height + label_px
    fig = plt.figure(figsize=(n * width / dpi, total_height / dpi), dpi=dpi)
    for i, (level, image) in enumerate(panels):
        ax = fig.add_axes((i / n, 0.0, 1.0 / n, panel_height / total_height))
        ax.set_axis_off()
        if image is None:
            ax.imshow(np.full((panel_height, width, 3), 235, dtype=np.uint8))
            ax.text(width / 2, panel_height / 2, f"unreachable\n{level['reason']}", ha="center", va="center", fontsize=8)
            title = f"{level['requested']:.2f}: unreachable"
        else:
            ax.imshow(image, interpolation="nearest")
            title = f"{level['requested']:.2f} -> {level['achieved']:.3f}"
        fig.text((i + 0.5) / n, 1.0 - 0.5 * label_px / total_height, title, ha="center", va="center", fontsize=9)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
