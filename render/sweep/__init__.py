"""`stim3d sweep occlusion`: render an occlusion sweep of an item folder or of every item of a config.

Each reachable level becomes a normal item folder (`OUT/items/<item_id>-vis0400/`:
image, mask, item.json, timing.json), rendered with the same backend, settings and
seed as any item (`stim3d.render.batch.produce.render_item`). The run also
writes:
- `OUT/records.jsonl`: the records of every level of this run (render/handoff.py);
  `difficulty` holds `sweep_id`, `sweep_level` (requested), `target_visibility`
  (achieved) and `answer_depends_on_visibility`;
- `OUT/sweeps.json`: per sweep, the target, the occluder, the path, and per level
  the achieved visibility or the reason it could not be reached; items that
  could not be made at all are listed with their reason;
- with `plot=True`: `OUT/sweep_plot.png` (achieved vs requested visibility) and
  `OUT/strip-<source item>.png` (the levels' images side by side, labelled).

A rerun into the same folder skips level folders whose key (scene, questions and
render settings) matches, as `stim3d render` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from stim3d.render.batch.config import expand, load_config
from stim3d.render.batch.item_folder import is_complete, load_item
from stim3d.render.batch.layout import MANIFEST, RECORDS, item_dir, remove_item_temporaries
from stim3d.render.batch.produce import render_item
from stim3d.render.batch.records import records_for
from stim3d.render.files import file_sha256, write_json_atomic, write_jsonl_atomic
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import Item, RenderSettings
from stim3d.scenes.placement import InfeasibleError
from stim3d.scenes.sweep import ItemSweep, SweepError, sweep_item
from stim3d.scoring.records import Record

SUMMARY = "sweeps.json"
PLOT = "sweep_plot.png"

ProgressFn = Callable[[int, int, str, str], None]  # (done, total, label, status)


# -- levels -----------------------------------------------------------------------------------------


def parse_levels(text: str) -> list[float]:
    """Visibility levels from `0.2,0.4,0.6` or a range `a:b:step` (end included when a step lands on it).

    Raises SweepError with one line naming the bad part. Levels must lie in
    [0, 1] and differ by at least 0.001 (each level names its item folder).
    """
    text = text.strip()
    if not text:
        raise SweepError("--levels is empty; give a list like 0.2,0.4,0.6 or a range like 0.1:1.0:0.1")

    def number(part: str) -> float:
        try:
            value = float(part)
        except ValueError:
            raise SweepError(f"--levels {text!r}: {part.strip()!r} is not a number") from None
        if not np.isfinite(value):
            raise SweepError(f"--levels {text!r}: {part.strip()!r} is not a finite number")
        return value

    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise SweepError(f"--levels {text!r}: a range is start:stop:step (three numbers)")
        start, stop, step = (number(p) for p in parts)
        if step <= 0:
            raise SweepError(f"--levels {text!r}: the step must be positive")
        if stop < start:
            raise SweepError(f"--levels {text!r}: the range ends ({stop}) before it starts ({start})")
        count = int(np.floor((stop - start) / step + 1e-9)) + 1
        levels = [round(start + i * step, 6) for i in range(count)]
    else:
        levels = [round(number(p), 6) for p in text.split(",")]
    for level in levels:
        if not 0.0 <= level <= 1.0:
            raise SweepError(f"--levels {text!r}: level {level} is outside [0, 1] (visibility is a fraction)")
    thousandths = [int(round(level * 1000)) for level in levels]
    if len(set(thousandths)) != len(levels):
        raise SweepError(f"--levels {text!r}: levels must differ by at least 0.001")
    return levels


# -- sources ----------------------------------------------------------------------------------------


@dataclass
class Sources:
    """The items to sweep (or why one could not be made) and the settings to render them with."""

    settings: RenderSettings
    items: list[Item] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    from_config: bool = False


def load_sources(source: Path, engine: str | None = None, samples: int | None = None) -> Sources:
    """An item folder (or its item.json) gives one item; a config gives every item it plans."""
    source = Path(source)
    overrides = {k: v for k, v in {"engine": engine, "samples": samples}.items() if v is not None}

    def with_overrides(settings: RenderSettings) -> RenderSettings:
        try:
            return RenderSettings.model_validate({**settings.model_dump(), **overrides})
        except ValidationError as exc:
            error = exc.errors()[0]
            raise SweepError(f"--{error['loc'][0]} {error['input']!r}: {error['msg']}") from None

    folder = source.parent if source.name == "item.json" else source
    if folder.is_dir():
        if not (folder / "item.json").is_file():
            raise SweepError(f"{folder}: not an item folder (no item.json) and not a config file")
        try:
            item = load_item(folder)
        except ValueError as exc:
            raise SweepError(f"{folder / 'item.json'}: not a stim3d item ({str(exc).splitlines()[0]})") from None
        settings = with_overrides(_settings_of(item))
        return Sources(settings=settings, items=[item])
    config = load_config(source)
    settings = with_overrides(config.render)
    sources = Sources(settings=settings, from_config=True)
    frame = Frame(config.render.width, config.render.height, config.render.rays_per_pixel)
    for plan in expand(config):
        entropy = [config.seed, plan.task_index, plan.item_index]
        try:
            sources.items.append(make_item(plan.family, plan.params, entropy, plan.item_id, frame, plan.split))
        except InfeasibleError as exc:
            sources.failed[plan.item_id] = str(exc)
    return sources


def _settings_of(item: Item) -> RenderSettings:
    """Render settings that reproduce how an item folder was made (size from its camera)."""
    camera = item.scene.camera
    base = {"width": camera.width, "height": camera.height, "rays_per_pixel": item.ground_truth.rays_per_pixel}
    if item.provenance is not None:
        p = item.provenance
        base.update(engine=p.engine, samples=p.samples, device=p.device, denoise=p.denoise)
    return RenderSettings.model_validate(base)


# -- running ----------------------------------------------------------------------------------------


@dataclass
class SweepReport:
    """What a run did. `failed` is true when any level was unreachable or any source item failed."""

    sweeps: list[dict] = field(default_factory=list)
    failed_sources: dict[str, str] = field(default_factory=dict)
    rendered: int = 0
    skipped: int = 0
    unreachable: int = 0
    records: int = 0
    outputs: list[Path] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.unreachable or self.failed_sources)

    def summary_lines(self) -> list[str]:
        lines = []
        for sweep in self.sweeps:
            lines.append(f"{sweep['sweep_id']}: target object {sweep['target_id']} ({sweep['target_shape']}), "
                         f"occluder object {sweep['occluder_id']} ({sweep['occluder_shape']})")
            for level in sweep["levels"]:
                if level["status"] == "unreachable":
                    lines.append(f"  level {level['requested']:.3f}: unreachable ({level['reason']}): {level['detail']}")
                else:
                    lines.append(f"  level {level['requested']:.3f}: achieved {level['achieved']:.4f}  {level['item_id']}")
        for item_id, reason in sorted(self.failed_sources.items()):
            lines.append(f"failed {item_id}: {reason}")
        lines.append(f"levels rendered: {self.rendered}  skipped (already done): {self.skipped}  "
                     f"unreachable: {self.unreachable}  records: {self.records}")
        return lines


def level_key(item: Item, settings: RenderSettings) -> str:
    """Hash of everything that determines a level's files (its item before rendering, and the settings)."""
    payload = item.to_json() + json.dumps(settings.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def run_occlusion_sweep(
    source: Path,
    levels: list[float],
    out: Path,
    *,
    target_id: int | None = None,
    occluder_id: int | None = None,
    engine: str | None = None,
    samples: int | None = None,
    plot: bool = False,
    scores: Path | None = None,
    progress: ProgressFn | None = None,
) -> SweepReport:
    """Sweep every source item and render its reachable levels into `out`.

    Raises SweepError (or ConfigError) for a bad source or, with a single item
    folder, for ids that are not in its scene; with a config, an item that cannot
    be swept is reported and the others go on. `scores` (the JSON `stim3d score`
    writes for these records) adds accuracy vs visibility to the plot.
    """
    out = Path(out)
    if (out / MANIFEST).exists():
        raise SweepError(f"--out {out} is a batch folder (it has {MANIFEST}); a sweep writes its own records.jsonl, "
                         "so give it a folder of its own")
    correct = read_scores(scores) if scores is not None else None  # a bad file fails before any rendering
    sources = load_sources(source, engine, samples)
    report = SweepReport(failed_sources=dict(sources.failed))
    out.mkdir(parents=True, exist_ok=True)
    remove_item_temporaries(out)
    total = len(sources.items) * len(levels)
    done = 0
    records: list[Record] = []
    with tempfile.TemporaryDirectory(prefix="stim3d-sweep-") as scratch:
        for item in sources.items:
            def note(message: str, done: int = done, item_id: str = item.item_id) -> None:
                if progress:
                    progress(done, total, item_id, message)

            try:
                swept = sweep_item(item, levels, target_id, occluder_id, progress=note)
            except SweepError as exc:
                if not sources.from_config:
                    raise
                report.failed_sources[item.item_id] = str(exc)
                done += len(levels)
                continue
            summary_levels = []
            for result, level_item in zip(swept.sweep.levels, swept.items):
                done += 1
                if level_item is None:
                    report.unreachable += 1
                    assert result.unreachable is not None
                    summary_levels.append({"requested": result.requested, "item_id": None, "status": "unreachable",
                                           "reason": result.unreachable.code, "detail": result.unreachable.detail})
                    if progress:
                        progress(done, total, item.item_id, f"level {result.requested}: unreachable "
                                 f"({result.unreachable.code})")
                    continue
                folder, status = _render_level(level_item, sources.settings, out, Path(scratch))
                if status == "rendered":
                    report.rendered += 1
                else:
                    report.skipped += 1
                image = folder / "image.png"
                records.extend(records_for(load_item(folder), os.path.relpath(image, out), file_sha256(image)))
                summary_levels.append({"requested": result.requested, "item_id": level_item.item_id, "status": status,
                                       "achieved": result.achieved, "offset_m": result.offset})
                if progress:
                    progress(done, total, level_item.item_id,
                             f"level {result.requested}: achieved {result.achieved:.4f}, {status}")
            report.sweeps.append(_sweep_summary(item, swept, summary_levels))
    write_jsonl_atomic(out / RECORDS, records)
    report.records = len(records)
    write_json_atomic(out / SUMMARY, {"levels": levels, "sweeps": report.sweeps,
                                       "failed": [{"item_id": k, "reason": v} for k, v in sorted(report.failed_sources.items())]})
    report.outputs = [out / RECORDS, out / SUMMARY]
    if plot or correct is not None:
        report.outputs.append(plot_achieved(report.sweeps, out / PLOT, correct))
        for sweep in report.sweeps:
            report.outputs.append(strip(sweep, out, out / f"strip-{sweep['source_item_id']}.png"))
    return report


def _render_level(item: Item, settings: RenderSettings, out: Path, scratch: Path) -> tuple[Path, str]:
    """Render one level into its item folder, unless a complete folder with the same key is there."""
    key = level_key(item, settings)
    folder = item_dir(out, item.item_id)
    if is_complete(folder) and load_item(folder).provenance.item_key == key:
        return folder, "skipped"
    return render_item(item, settings, out, scratch / item.item_id, key), "rendered"


def _sweep_summary(item: Item, swept: ItemSweep, levels: list[dict]) -> dict:
    sweep = swept.sweep
    return {
        "sweep_id": swept.sweep_id,
        "source_item_id": item.item_id,
        "family": item.family,
        "target_id": sweep.target_id,
        "target_shape": item.scene.object(sweep.target_id).shape,
        "occluder_id": sweep.occluder_id,
        "occluder_shape": item.scene.object(sweep.occluder_id).shape,
        "path": {"start": list(sweep.path.start), "direction": list(sweep.path.direction),
                 "max_offset_m": sweep.path.max_offset},
        "answer_depends_on_visibility": False,
        "levels": levels,
    }


# -- pictures ---------------------------------------------------------------------------------------


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
        raise SweepError(f"--scores {path}: not a scores file from 'stim3d score' ({type(exc).__name__}: {exc})") from None
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
        raise SweepError("--scores: the scores name none of this sweep's items (score this sweep's records.jsonl)")
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
    items = {lv["item_id"]: load_item(item_dir(out, lv["item_id"])) for lv in sweep["levels"] if lv["item_id"]}
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
            full = Image.open(item_dir(out, level["item_id"]) / "image.png").convert("RGB")
            image = np.asarray(full.crop(box).resize((width, panel_height), Image.LANCZOS))
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
