"""`stim3d sweep look`: one scene rendered in every look, side by side.

Each source item (an item folder, or every item a config plans) is rendered once per
look into a normal item folder, `OUT/items/<item_id>-<look>/`, through the batch
runner of composed items (render/batch/composed.py, `render_item`, so a look's colour
golds are re-measured and its look redrawn when a named colour no longer reads right,
scenes/look_colours.py). Only the appearance differs: the look is drawn from the
item's own seed (scenes/looks.py `with_look`), geometry, masks and golds are the
source's. The run also writes:

- `OUT/records.jsonl`: the records of every look item; they share the source's
  `scene_id`, so a score report can pair a scene's looks (`stim3d score --by look`);
- `OUT/looks.json`: per source item, each look's item id, status, redraws and the
  objects whose colour still fails or that stay under the contrast floor;
- `OUT/strip-<source item>.png`: the looks' images side by side, labelled.

A rerun into the same folder skips look items whose key (item, settings, code) matches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stim3d.render.batch.composed import ComposedPlan, ComposedReport, render_composed
from stim3d.render.batch.executors import Executor
from stim3d.render.batch.folder import BatchFolder
from stim3d.render.batch.item_folder import load_item
from stim3d.render.batch.keys import level_key
from stim3d.render.batch.lock import folder_lock
from stim3d.render.sweep.run import SweepRunReport, refuse_batch_folder
from stim3d.render.sweep.sources import load_sources
from stim3d.scenes.looks import with_look
from stim3d.scenes.model import LADDER, LOOK_NAMES, Item, LookName
from stim3d.scenes.names import check_name
from stim3d.scenes.sweep import SweepError

LOOKS_SUMMARY = "looks.json"
ProgressFn = Callable[[int, int, str, str], None]  # (done, total, label, status)


def parse_looks(text: str) -> list[LookName]:
    """--looks: a comma-separated list of look names, each once; SweepError naming the bad one."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    for name in names:
        if name not in LOOK_NAMES:
            raise SweepError(f"{name!r} is not a look; allowed: {', '.join(LOOK_NAMES)}", field="looks",
                             value=repr(text))
    if not names or len(set(names)) != len(names):
        raise SweepError(f"give each look once, e.g. {','.join(LOOK_NAMES)}", field="looks", value=repr(text))
    return names  # type: ignore[return-value]


def look_item(source: Item, look: LookName) -> Item:
    """`source`'s scene in `look`: a new item id and question ids, the source's scene_id, no provenance."""
    try:
        new_id = check_name(f"{source.item_id}-{look}", "item id")
    except ValueError as exc:
        raise SweepError(str(exc)) from None
    drawn = with_look(source, look)
    questions = [q.model_copy(update={"question_id": f"{new_id}-{q.question_id.removeprefix(f'{source.item_id}-')}"})
                 for q in drawn.questions]
    scene_id = source.difficulty.get("scene_id", source.item_id)
    difficulty = {**drawn.difficulty, "scene_id": scene_id, "source_item_id": source.item_id}
    return drawn.model_copy(update={"item_id": new_id, "questions": questions, "difficulty": difficulty,
                                    "provenance": None})


@dataclass
class LookSweepReport(SweepRunReport):
    """A look sweep's run: `failed` when any look item or source item could not be made."""

    def summary_lines(self) -> list[str]:
        lines = []
        for sweep in self.sweeps:
            lines.append(f"{sweep['source_item_id']} ({sweep['family']}):")
            for entry in sweep["looks"]:
                if entry["status"] == "failed":
                    lines.append(f"  {entry['look']}: failed ({entry['reason']})")
                    continue
                fails = f", colour still failing for objects {entry['colour_failures']}" \
                    if entry["colour_failures"] else ""
                if entry.get("contrast_failures"):
                    fails += f", under the contrast floor: objects {entry['contrast_failures']}"
                lines.append(f"  {entry['look']}: {entry['item_id']} ({entry['status']}; "
                             f"{entry['redraws']} colour or contrast redraws{fails})")
        for item_id, reason in sorted(self.failed_sources.items()):
            lines.append(f"failed {item_id}: {reason}")
        lines.append(f"look items rendered: {self.rendered}  skipped (already done): {self.skipped}  "
                     f"records: {self.records}")
        return lines


def run_look_sweep(sources: Sequence[Path], out: Path, looks: Sequence[LookName] = LADDER, *,
                   engine: str | None = None, samples: int | None = None, progress: ProgressFn | None = None,
                   workers: int = 1, executor: Executor = "local", address: str | None = None) -> LookSweepReport:
    """Render every source item in every look of `looks` into `out`; write records, looks.json and the strips.

    Raises SweepError (or ConfigError) for a bad source; an item of a config that cannot
    be composed is reported and the others go on. All sources render with the first
    source's settings (size, engine, samples; `engine`/`samples` override them).
    """
    out = Path(out)
    refuse_batch_folder(out)
    loaded = [load_sources(Path(source), engine, samples) for source in sources]  # every source checked first
    settings = loaded[0].settings
    report = LookSweepReport(failed_sources={k: v for s in loaded for k, v in s.failed.items()})
    planned: list[tuple[Item, list[Item]]] = [(item, [look_item(item, look) for look in looks])
                                              for s in loaded for item in s.items]
    ids = [i.item_id for _, items in planned for i in items]
    if len(set(ids)) != len(ids):
        raise SweepError("the sources name one item twice; give each item folder or config once")
    folder = BatchFolder(out)
    with folder_lock(out):
        plan = ComposedPlan([(item, settings) for _, items in planned for item in items], key=level_key)
        run = render_composed(plan, out, progress=progress, workers=workers, executor=executor, address=address,
                              locked=True)
        for source, items in planned:
            entries = [_look_entry(item, run, folder, report) for item in items]
            report.sweeps.append({"source_item_id": source.item_id, "family": source.family, "looks": entries})
        report.records = run.records
        summary = folder.write_summary({"looks": list(looks), "sweeps": report.sweeps,
                                        "failed": [{"item_id": k, "reason": v}
                                                   for k, v in sorted(report.failed_sources.items())]}, LOOKS_SUMMARY)
        report.outputs = [folder.records_path, summary]
        for sweep in report.sweeps:
            report.outputs.append(look_strip(sweep, folder, out / f"strip-{sweep['source_item_id']}.png"))
    return report


def _look_entry(item: Item, run: ComposedReport, folder: BatchFolder, report: LookSweepReport) -> dict[str, Any]:
    """looks.json's row of one look item: rendered or skipped with its redraws and colour and contrast failures,
    or failed."""
    look = item.scene.look.name
    state = run.status[item.item_id]
    if state == "failed":
        report.failed_sources[item.item_id] = run.reasons[item.item_id]
        return {"look": look, "item_id": item.item_id, "status": "failed", "reason": run.reasons[item.item_id]}
    report.rendered += state == "rendered"
    report.skipped += state == "skipped"
    rendered = load_item(folder.item_dir(item.item_id))
    drawn = rendered.scene.look
    return {"look": look, "item_id": item.item_id, "status": state, "redraws": drawn.redraws,
            "colour_failures": list(drawn.colour_failures), "contrast_failures": list(drawn.contrast_failures)}


def look_strip(sweep: dict, folder: BatchFolder, path: Path, label_px: int = 18) -> Path:
    """The looks' images side by side at their rendered size, each labelled with its look (a grey panel for a
    look that failed)."""
    from PIL import Image, ImageDraw

    from stim3d.files import atomic_path

    images = {e["look"]: Image.open(folder.image_path(e["item_id"])).convert("RGB")
              for e in sweep["looks"] if e["status"] != "failed"}
    width, height = next(iter(images.values())).size if images else (160, 120)
    sheet = Image.new("RGB", (len(sweep["looks"]) * width, height + label_px), "white")
    draw = ImageDraw.Draw(sheet)
    for i, entry in enumerate(sweep["looks"]):
        image = images.get(entry["look"])
        sheet.paste(image if image is not None else Image.new("RGB", (width, height), (235, 235, 235)),
                    (i * width, label_px))
        label = entry["look"] if image is not None else f"{entry['look']}: failed"
        draw.text((i * width + 4, 3), label, fill="black")
    with atomic_path(path) as tmp:
        sheet.save(tmp, format="PNG")
    return path
