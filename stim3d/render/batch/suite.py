"""The seed suite: every seed preset rendered into one root, one batch folder per preset, one summary.

`stim3d render all --out ROOT` renders SUITE_PRESETS in order into `ROOT/<preset>/`
(each an ordinary batch folder: resumable, its own records.jsonl and summary.json)
and writes `ROOT/suite.json`: per preset its items, failures, this run's wall time
and seconds per item, the best constant answer per question type, and for rubric
records the best constant description (scoring/rubric_baseline.py). The command
line's overrides (engine, size, samples, look) and `--shard k/n` apply to every
preset, so a tiny trial of the whole suite is one command:
`stim3d render all --out ROOT --engine workbench --width 64 --height 48 --shard 1/200`.

The suite is a fixed list, not a config file: each preset keeps its own seed, render
settings and tasks (a batch config has one `render` block), and a folder per preset
keeps each resumable on its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from stim3d.files import write_json_atomic
from stim3d.render.batch.config import BatchConfig
from stim3d.render.batch.driver import BatchInterrupted, Shard, render_batch
from stim3d.render.batch.folder import BatchFolder, LinkRefused, is_link
from stim3d.render.batch.keys import expected_keys
from stim3d.render.batch.plan import expand
from stim3d.render.batch.summary import BatchReport
from stim3d.render.provenance import code_identity

SUITE_NAME = "all"  # `stim3d render all`: the name the command line reserves for the suite
SUITE_PRESETS = ("dysm3d", "oddgrid3d", "rose3d", "ava3d", "rubrics3d")  # the seed presets, cheapest first
SUITE_SUMMARY = "suite.json"


def select_presets(names: str | None) -> tuple[str, ...]:
    """The seed presets a comma-separated `--presets` names, in suite order (all of them for None).

    A part of the suite renders into the same layout (`ROOT/<preset>/`, one suite.json naming
    only those presets), so a suite too long for one sitting can be split by preset
    (bench/full_suite.py). An unknown or repeated name is a ValueError naming it.
    """
    if names is None:
        return SUITE_PRESETS
    chosen = [n.strip() for n in names.split(",")]
    for name in chosen:
        if name not in SUITE_PRESETS:
            raise ValueError(f"{name!r} is not a seed preset (the suite's are {', '.join(SUITE_PRESETS)})")
        if chosen.count(name) > 1:
            raise ValueError(f"{name!r} is named twice")
    return tuple(n for n in SUITE_PRESETS if n in chosen)


@dataclass
class PresetResult:
    """One preset's part of a suite run: its batch report and this run's wall time."""

    name: str
    report: BatchReport
    wall_seconds: float
    description_baselines: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        rendered = self.report.rendered
        return {"preset": self.name, "folder": self.name, "wall_seconds": round(self.wall_seconds, 1),
                "wall_seconds_per_rendered_item": round(self.wall_seconds / rendered, 3) if rendered else None,
                **self.report.to_json(), "description_baseline": self.description_baselines}


class SuiteInterrupted(BatchInterrupted):
    """A Ctrl-C or SIGTERM stopped the suite inside one preset; suite.json says how far it got."""

    def __init__(self, preset: str, stop: BatchInterrupted):
        super().__init__(stop.report)
        self.args = (f"{preset}: {self.args[0]}",)


@dataclass
class SuiteReport:
    """Every preset's result, in suite order."""

    presets: list[PresetResult] = field(default_factory=list)
    shard: str | None = None
    interrupted: str | None = None  # the preset a Ctrl-C or SIGTERM stopped; the presets after it did not start

    @property
    def failed(self) -> int:
        return sum(len(p.report.failed) for p in self.presets)

    def to_json(self) -> dict[str, Any]:
        return {"presets": [p.to_json() for p in self.presets], "shard": self.shard, "interrupted": self.interrupted,
                "total": {"items": sum(p.report.total for p in self.presets),
                          "rendered": sum(p.report.rendered for p in self.presets),
                          "skipped": sum(p.report.skipped for p in self.presets), "failed": self.failed,
                          "wall_seconds": round(sum(p.wall_seconds for p in self.presets), 1)}}

    def summary_lines(self) -> list[str]:
        lines = [f"suite{f' (shard {self.shard})' if self.shard else ''}: {len(self.presets)} presets"]
        for p in self.presets:
            r = p.report
            lines.append(f"  {p.name:<10} items {r.total:>5}  rendered {r.rendered:>5}  skipped {r.skipped:>5}  "
                         f"failed {len(r.failed):>3}  wall {p.wall_seconds:8.1f} s")
        total = self.to_json()["total"]
        lines.append(f"  {'total':<10} items {total['items']:>5}  rendered {total['rendered']:>5}  "
                     f"skipped {total['skipped']:>5}  failed {total['failed']:>3}  wall {total['wall_seconds']:8.1f} s")
        return lines


def description_baselines(config: BatchConfig, out: Path, shard: Shard | None) -> list[dict[str, Any]]:
    """The best constant description per family of the preset's rubric records ([] when it has none)."""
    from stim3d.scoring.rubric import Rubric
    from stim3d.scoring.rubric_baseline import description_baselines as baselines

    plans = expand(config)
    if not any("describe" in plan.questions for plan in plans):
        return []
    plans = shard.select(plans) if shard else plans
    records = BatchFolder(out).collect_records(expected_keys(config, plans))
    pairs = [(r.family, r.answer.gold) for r in records if isinstance(r.answer.gold, Rubric)]
    return [asdict(b) for b in baselines(pairs)]


def render_suite(presets: Sequence[tuple[str, BatchConfig]], root: Path, *, shard: Shard | None = None,
                 progress_for: Callable[[str], AbstractContextManager[Any]] | None = None,
                 **batch_options: Any) -> SuiteReport:
    """Render each (name, config) into `root/<name>/` with `render_batch(**batch_options)`; write suite.json.

    `progress_for(name)` is entered as each preset starts and left when it ends; what it
    yields is that preset's progress callback (the command line's display). A preset folder or suite.json that is a
    symbolic link is refused before anything is rendered (docs/hardening.md). A Ctrl-C or SIGTERM
    still writes suite.json, with `interrupted` naming the preset it stopped and that preset's
    partial figures, so a suite rendered over several sittings can be timed (bench/full_suite.py);
    then SuiteInterrupted is raised.
    """
    root = Path(root)
    for path in [root / SUITE_SUMMARY, *(root / name for name, _ in presets)]:
        if is_link(path):
            raise LinkRefused(f"{path}: a symbolic link inside the suite folder {root}; stim3d never writes through "
                              "one (docs/hardening.md): replace it with a real folder or file")
    root.mkdir(parents=True, exist_ok=True)
    report = SuiteReport(shard=str(shard) if shard else None)
    families = {task.family for _, config in presets for task in config.tasks}

    def write_summary() -> None:
        write_json_atomic(root / SUITE_SUMMARY, {**report.to_json(), "code": code_identity(families)})

    for name, config in presets:
        started = time.perf_counter()
        try:
            with (progress_for(name) if progress_for else nullcontext()) as progress:
                batch = render_batch(config, root / name, shard=shard, progress=progress, **batch_options)
        except BatchInterrupted as stop:
            report.presets.append(PresetResult(name, stop.report, time.perf_counter() - started))
            report.interrupted = name
            write_summary()
            raise SuiteInterrupted(name, stop) from None
        wall = time.perf_counter() - started
        report.presets.append(PresetResult(name, batch, wall, description_baselines(config, root / name, shard)))
    write_summary()
    return report
