"""Rendering items that are already composed: the one runner for sweeps, `stim3d.render_items` and the add-on.

A batch composes its items from a config inside the workers (driver.py). Everything
else hands over items already made: an occlusion sweep's levels and a look sweep's
looks (render/sweep/), a script's `stim3d.render_items`, the add-on's Render and Save.
They all take the same steps, here and nowhere else:

1. lock the folder (one writer per folder, render/batch/lock.py; a caller that holds it
   already says so), prepare it and remove
   the temporaries a killed run left;
2. per item, its resume key from the plan's key rule and the folder's one done-or-redo
   rule (`BatchFolder.state`): done items are skipped, so a rerun resumes;
3. render the rest, in this process or through the executors (local processes or
   Ray actors, crash isolation and one retry, exactly like batch items);
4. write records.jsonl: the records of this run's items, or of every item in the
   folder (`render_items` adds to a folder call after call).

What differs between callers is the plan (`ComposedPlan`): the items with their
settings, the key rule (kept per caller so folders made before keep resuming) and
which records to write.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from stim3d.render.batch.executors import Executor, Job, Outcome, run_jobs
from stim3d.render.batch.folder import BatchFolder
from stim3d.render.batch.item_folder import install_item_files
from stim3d.render.batch.lock import folder_lock
from stim3d.render.settings import RenderSettings
from stim3d.scenes.model import Item

KeyRule = Callable[[Item, RenderSettings], str]
ProgressFn = Callable[[int, int, str, str], None]  # (done, total, item id, status)


@dataclass(frozen=True)
class ComposedPlan:
    """What to render: items with their settings, how their resume keys are made, which records to write.

    `key=None` renders every item whatever the folder holds (an item edited by hand in the
    add-on has no key to resume by). `records="run"` writes the records of this run's
    items, `"folder"` those of every complete item in the folder.
    """

    items: Sequence[tuple[Item, RenderSettings]]
    key: KeyRule | None
    records: Literal["run", "folder"] = "run"
    edited_by_hand: bool = False


@dataclass
class ComposedReport:
    """Each item's status ("rendered", "skipped" or "failed"), why the failed ones failed, the records written."""

    status: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    records: int = 0

    @property
    def done(self) -> list[str]:
        """Items whose folder is complete after the run (rendered now or skipped as done), in plan order."""
        return [item_id for item_id, status in self.status.items() if status in ("rendered", "skipped")]


def render_composed(plan: ComposedPlan, out: Path, *, in_process: bool = False, scratch: Path | None = None,
                    progress: ProgressFn | None = None, workers: int = 1, executor: Executor = "local",
                    address: str | None = None, locked: bool = False) -> ComposedReport:
    """Render `plan` into the folder `out` (steps in the module docstring); returns what happened to each item.

    `in_process=True` renders here, one item after another, with `scratch` for the
    renderer's pass files (default `out/.work`, removed when empty): `render_items` and
    the add-on's child process. Otherwise the executors run it. Raises FolderLocked when
    another stim3d run holds `out`; `locked=True` says the caller holds its lock already
    (a sweep holds it while it also writes its summary and strips).
    """
    out = Path(out)
    folder = BatchFolder(out)
    report = ComposedReport()
    ids = [item.item_id for item, _ in plan.items]
    with nullcontext() if locked else folder_lock(out):
        folder.prepare()
        folder.remove_temporaries()  # all a killed run left: the lock is exclusive, no shard can be writing here
        todo: list[Job] = []
        for item, settings in plan.items:
            key = plan.key(item, settings) if plan.key is not None else None
            if key is not None and folder.state(item.item_id, key).done:
                report.status[item.item_id] = "skipped"
            else:
                report.status[item.item_id] = "pending"
                todo.append(Job(None, key or "", item, settings=settings))
        done = len(ids) - len(todo)

        def on_outcome(outcome: Outcome) -> None:
            nonlocal done
            done += 1
            if outcome.files is not None:
                install_item_files(out, outcome.item_id, outcome.files)
            rendered = outcome.status == "rendered"
            report.status[outcome.item_id] = "rendered" if rendered else "failed"
            if not rendered:
                report.reasons[outcome.item_id] = outcome.reason
            if progress:
                progress(done, len(ids), outcome.item_id, "rendered" if rendered else f"failed: {outcome.reason}")

        if in_process:
            _render_here(todo, out, scratch or out / ".work", plan.edited_by_hand, on_outcome)
        elif todo:
            run_jobs(todo, todo[0].settings or RenderSettings(), out, on_outcome, workers=workers, executor=executor,
                     address=address)
        rows = folder.records_of(report.done) if plan.records == "run" else None
        report.records = len(folder.write_records(rows=rows))
    return report


def _render_here(jobs: list[Job], out: Path, scratch: Path, edited_by_hand: bool,
                 on_outcome: Callable[[Outcome], None]) -> None:
    """Render each job in this process; an error propagates (the caller asked for these items by hand)."""
    from stim3d.render.batch.produce import render_item

    for job in jobs:
        assert job.item is not None and job.settings is not None
        render_item(job.item, job.settings, out, scratch / job.item_id, job.key or None, edited_by_hand=edited_by_hand)
        on_outcome(Outcome(job.item_id, "rendered"))
    if scratch.is_dir() and not any(scratch.iterdir()):
        scratch.rmdir()
