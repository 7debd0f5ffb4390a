"""Running a sweep: solve each source item's levels, render them with the composed-item runner, write sweeps.json."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from stim3d.render.batch.composed import ComposedPlan, ComposedReport, render_composed
from stim3d.render.batch.executors import Executor
from stim3d.render.batch.folder import BatchFolder
from stim3d.render.batch.keys import level_key
from stim3d.render.batch.lock import folder_lock
from stim3d.render.sweep.pictures import plot_achieved, read_scores, strip
from stim3d.render.sweep.sources import Sources, load_sources
from stim3d.scenes.model import Item, SceneObject
from stim3d.scenes.sweep import ItemSweep, SweepError, sweep_item

SUMMARY = "sweeps.json"
PLOT = "sweep_plot.png"

ProgressFn = Callable[[int, int, str, str], None]  # (done, total, label, status)



@dataclass
class SweepRunReport:
    """What a sweep run did (occlusion or looks): its sweeps.json rows, the items that failed, counts, files."""

    sweeps: list[dict] = field(default_factory=list)
    failed_sources: dict[str, str] = field(default_factory=dict)
    rendered: int = 0
    skipped: int = 0
    records: int = 0
    outputs: list[Path] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.failed_sources)


@dataclass
class SweepReport(SweepRunReport):
    """An occlusion sweep's run: `failed` also when a level was unreachable."""

    unreachable: int = 0

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


def run_occlusion_sweep(
    source: Path,
    levels: list[float],
    out: Path,
    *,
    target_id: int | None = None,
    occluder_id: int | Literal["add"] | None = None,
    engine: str | None = None,
    samples: int | None = None,
    plot: bool = False,
    scores: Path | None = None,
    progress: ProgressFn | None = None,
    workers: int = 1,
    executor: Executor = "local",
    address: str | None = None,
) -> SweepReport:
    """Sweep every source item and render its reachable levels into `out`.

    Levels are solved here (ray casting only), then rendered by the batch
    executors exactly like batch items: `workers` processes (or Ray actors), crash
    isolation with one retry, recycling. Raises SweepError (or ConfigError) for a
    bad source or, with a single item folder, for ids that are not in its scene;
    with a config, an item that cannot be swept is reported and the others go on.
    `scores` (the JSON `stim3d score` writes for these records) adds accuracy vs
    visibility to the plot.
    """
    out = Path(out)
    refuse_batch_folder(out)
    correct = read_scores(scores) if scores is not None else None  # a bad file fails before any rendering
    sources = load_sources(source, engine, samples)
    report = SweepReport(failed_sources=dict(sources.failed))
    with folder_lock(out):
        solved = _solve(sources, levels, target_id, occluder_id, report, progress)
        items = [(level, sources.settings) for _, swept in solved for level in swept.items if level is not None]
        run = render_composed(ComposedPlan(items, key=level_key), out, progress=progress, workers=workers,
                              executor=executor, address=address, locked=True)
        for item, swept in solved:
            report.sweeps.append(_sweep_summary(item, swept, _level_rows(swept, run, report)))
        report.records = run.records
        summary = BatchFolder(out).write_summary(
            {"levels": levels, "sweeps": report.sweeps,
             "failed": [{"item_id": k, "reason": v} for k, v in sorted(report.failed_sources.items())]}, SUMMARY)
        report.outputs = [BatchFolder(out).records_path, summary]
        if plot or correct is not None:
            report.outputs.append(plot_achieved(report.sweeps, out / PLOT, correct))
            for sweep in report.sweeps:
                report.outputs.append(strip(sweep, out, out / f"strip-{sweep['source_item_id']}.png"))
    return report


def refuse_batch_folder(out: Path) -> None:
    """A sweep writes its own records: refuse a batch folder (SweepError) before anything is written."""
    folder = BatchFolder(out)
    if folder.manifest_path.exists():
        raise SweepError(f"is a batch folder (it has {folder.manifest_path.name}); a sweep writes its own records, so "
                         "give it a folder of its own", field="out", value=out)


def _solve(sources: Sources, levels: list[float], target_id: int | None, occluder_id: int | Literal["add"] | None,
           report: SweepReport, progress: ProgressFn | None) -> list[tuple[Item, ItemSweep]]:
    """Each source item's sweep (ray casting only); an item of a config that cannot be swept is reported."""
    total = len(sources.items) * len(levels)
    solved: list[tuple[Item, ItemSweep]] = []
    for item in sources.items:
        def note(message: str, item_id: str = item.item_id) -> None:
            if progress:
                progress(0, total, item_id, message)

        try:
            solved.append((item, sweep_item(item, levels, target_id, occluder_id, progress=note)))
        except SweepError as exc:
            if not sources.from_config:
                raise
            report.failed_sources[item.item_id] = str(exc)
    return solved


def _level_rows(swept: ItemSweep, run: ComposedReport, report: SweepReport) -> list[dict]:
    """sweeps.json's row of each level: reached (rendered or skipped), failed, or unreachable with the reason."""
    rows = []
    for result, level_item in zip(swept.sweep.levels, swept.items):
        if level_item is None:
            report.unreachable += 1
            assert result.unreachable is not None
            rows.append({"requested": result.requested, "item_id": None, "status": "unreachable",
                         "reason": result.unreachable.code, "detail": result.unreachable.detail})
            continue
        state = run.status[level_item.item_id]
        if state == "failed":
            reason = run.reasons[level_item.item_id]
            report.failed_sources[level_item.item_id] = reason
            rows.append({"requested": result.requested, "item_id": level_item.item_id, "status": "failed",
                         "reason": reason})
            continue
        report.rendered += state == "rendered"
        report.skipped += state == "skipped"
        rows.append({"requested": result.requested, "item_id": level_item.item_id, "status": state,
                     "achieved": result.achieved, "offset_m": result.offset})
    return rows


def _occluder(item: Item, swept: ItemSweep) -> SceneObject | None:
    """The sweep's occluder: an object of the source scene, or the panel `--occluder add` put in the level scenes
    (None when no level could be made: a tiny image where the panel reaches no level)."""
    occluder_id = swept.sweep.occluder_id
    if any(o.id == occluder_id for o in item.scene.objects):
        return item.scene.object(occluder_id)
    return next((level.scene.object(occluder_id) for level in swept.items if level is not None), None)


def _sweep_summary(item: Item, swept: ItemSweep, levels: list[dict]) -> dict:
    sweep, occluder = swept.sweep, _occluder(item, swept)
    return {
        "sweep_id": swept.sweep_id,
        "source_item_id": item.item_id,
        "family": item.family,
        "target_id": sweep.target_id,
        "target_shape": item.scene.object(sweep.target_id).shape,
        "occluder_id": sweep.occluder_id,
        "occluder_shape": occluder.shape if occluder is not None else None,
        "occluder_added": occluder is None or not occluder.countable,  # not in the source scene: the added panel
        "path": {"start": list(sweep.path.start), "direction": list(sweep.path.direction),
                 "max_offset_m": sweep.path.max_offset},
        "answer_depends_on_visibility": False,
        "levels": levels,
    }
