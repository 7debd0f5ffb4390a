"""Config -> item plan -> workers -> item folders -> records.jsonl; resumable, shardable.

A batch folder holds `batch.json` (the config and its hash), `items/<item_id>/`
folders written atomically (temporary name, then rename), `failures/<item_id>.json`
for items that could not be made (with the reason and the number of attempts),
`records.jsonl` built from the item folders in item-id order, and `summary.json`
(counts, failures, seconds per item, the best constant answer per question type).

The folder's names and rules (manifest, the done-or-redo rule, failures, records)
belong to `render/batch/folder.py` (`BatchFolder`); the item keys to
`render/batch/keys.py`. This module decides what to render and reports.

One run at a time: the folder is locked for the run (`render.batch.lock`; shards
of one folder may run together, a plain run excludes them all), so a second run
into it is refused with one line.

Resume: a rerun of the same config skips every item that `BatchFolder.state`
finds done (its key matches and its files match their checksums), and redoes the rest (temporary folders left by a killed run are removed
first), so a run killed at any moment and rerun ends with the same files as an
uninterrupted one. A different config in the same folder is refused unless forced;
`force` also removes item folders and failures the new plan does not have.

Shards: `Shard(k, n)` selects the items whose index in the plan is k-1 modulo n.
Shards may write into separate folders or one shared folder; a sharded run writes
its item folders and failures but not the batch-level files (records.jsonl,
summary.json): `render.batch.merge.merge_shards` builds those once all shards are done.

Where items render (local worker processes or Ray actors) is `render.batch.executors` (`run_jobs`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from stim3d.render.batch.config import BatchConfig, ConfigError
from stim3d.render.batch.executors import DEFAULT_RECYCLE_AFTER, Executor, Job, Outcome, check_ray, run_jobs
from stim3d.render.batch.folder import BatchFolder
from stim3d.render.batch.item_folder import install_item_files
from stim3d.render.batch.keys import expected_keys
from stim3d.render.batch.lock import folder_lock
from stim3d.render.batch.plan import ItemPlan, expand
from stim3d.render.batch.summary import BatchReport, constant_baselines, look_counts
from stim3d.render.provenance import code_identity

__all__ = ["DEFAULT_RECYCLE_AFTER", "BatchInterrupted", "Executor", "ProgressEvent", "ProgressFn", "Shard",
           "render_batch"]


@dataclass(frozen=True)
class Shard:
    """The k-th (1-based) of n deterministic slices of the item plan: items with index % n == k - 1."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise ConfigError(f"shard {self.index}/{self.count}: expected k/n with 1 <= k <= n")

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not match:
            raise ConfigError(f"shard {text!r}: expected k/n with 1 <= k <= n, e.g. 2/3")
        return cls(int(match[1]), int(match[2]))

    def select(self, plans: list[ItemPlan]) -> list[ItemPlan]:
        return [plan for i, plan in enumerate(plans) if i % self.count == self.index - 1]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class ProgressEvent:
    """What a progress display is told: once at `start`, then once per finished item."""

    kind: Literal["start", "item"]
    total: int  # items to render in this run (skipped ones excluded)
    done: int = 0
    failed: int = 0
    skipped: int = 0
    item_id: str = ""
    status: str = ""  # "rendered" | "failed"
    seconds: float = 0.0
    reason: str = ""
    attempts: int = 1
    retries: int = 0  # extra attempts so far in this run (after a worker died or raised)


ProgressFn = Callable[[ProgressEvent], None]


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped the run; workers are stopped, nothing complete is lost. Carries the partial report."""

    def __init__(self, report: BatchReport):
        super().__init__(f"interrupted after {report.done} of {report.total - report.skipped} items")
        self.report = report


# -- the batch -----------------------------------------------------------------------------------

def render_batch(
    config: BatchConfig,
    out: Path,
    *,
    force: bool = False,
    progress: ProgressFn | None = None,
    workers: int | None = None,
    shard: Shard | None = None,
    executor: Executor = "local",
    address: str | None = None,
    recycle_after: int = DEFAULT_RECYCLE_AFTER,
    item_timeout: float | None = None,
) -> BatchReport:
    """Render every planned item (of `shard`, if given) not already complete; write the batch-level files.

    `workers` local processes (default 1) or Ray actors (default: enough to fill the
    cluster); each runs Cycles with cores / workers threads unless the config sets
    `render.threads`. Never raises for one bad item: failures are reported and
    written to failures/. Raises ConfigError for a folder made from another config
    (unless `force`), BatchInterrupted on Ctrl-C/SIGTERM, executors.BatchAborted when
    no worker can render anything, executors.ExecutorUnavailable when Ray is missing.

    Local workers are spawned, so they import the caller's main module: a script that
    calls this must do so under `if __name__ == "__main__":`, as with any multiprocessing code.
    """
    out = Path(out)
    if workers is not None and workers < 1:
        raise ConfigError(f"workers = {workers}: must be at least 1")
    if recycle_after < 1:
        raise ConfigError(f"recycle_after = {recycle_after}: must be at least 1")
    if item_timeout is not None and not item_timeout > 0:
        raise ConfigError(f"item_timeout = {item_timeout}: must be a positive number of seconds")
    if executor not in ("local", "ray"):
        raise ConfigError(f"executor = {executor!r}: allowed: local, ray")
    if executor == "ray":
        check_ray(address)
    if out.exists() and not out.is_dir():
        raise ConfigError("exists and is not a folder", field="out", value=out)
    with folder_lock(out, str(shard) if shard else None):
        return _render_locked(config, out, force, progress, workers, shard, executor, address, recycle_after,
                              item_timeout)


def _render_locked(config: BatchConfig, out: Path, force: bool, progress: ProgressFn | None, workers: int | None,
                   shard: Shard | None, executor: Executor, address: str | None, recycle_after: int,
                   item_timeout: float | None) -> BatchReport:
    """render_batch's work, with the folder locked."""
    batch = BatchFolder(out)
    batch.refuse_links()
    batch.check_manifest(config, force)
    batch.write_manifest(config)
    plans = expand(config)
    if force:
        batch.remove_unplanned({plan.item_id for plan in plans})
    if shard is not None:
        plans = shard.select(plans)
        batch.remove_temporaries({plan.item_id for plan in plans})
    else:
        batch.remove_temporaries()
    keys = expected_keys(config, plans)
    todo, redone = [], {}
    for plan in plans:
        state = batch.state(plan.item_id, keys[plan.item_id])
        if force or not state.done:
            todo.append(Job(plan, keys[plan.item_id]))
        if not force and not state.done and state.reason != "not rendered":
            redone[plan.item_id] = state.reason  # named: found on disk but redone, never shipped
    report = BatchReport(total=len(plans), skipped=len(plans) - len(todo), shard=str(shard) if shard else None,
                         executor=executor, workers=workers or 1, redone=redone)
    if progress:
        progress(ProgressEvent("start", total=len(todo), skipped=report.skipped))

    def on_outcome(outcome: Outcome) -> None:
        if outcome.files is not None:
            install_item_files(out, outcome.item_id, outcome.files)
        if outcome.attempts > 1:
            report.attempts[outcome.item_id] = outcome.attempts
        if outcome.status == "rendered":
            report.rendered += 1
            report.seconds.append(outcome.seconds)
            batch.clear_failure(outcome.item_id)
        else:
            report.failed[outcome.item_id] = outcome.reason
            batch.record_failure(outcome.item_id, outcome.reason, outcome.attempts)
        if progress:
            progress(ProgressEvent("item", total=len(todo), done=report.done, failed=len(report.failed),
                                   skipped=report.skipped, item_id=outcome.item_id,
                                   status="rendered" if outcome.status == "rendered" else "failed",
                                   seconds=outcome.seconds, reason=outcome.reason, attempts=outcome.attempts,
                                   retries=report.retries))

    try:
        used = run_jobs(todo, config.render, out, on_outcome, seed=config.seed, workers=workers, executor=executor,
                        address=address, recycle_after=recycle_after, item_timeout=item_timeout)
        report.workers = used or report.workers
    except KeyboardInterrupt:
        batch.remove_temporaries({job.item_id for job in todo})
        raise BatchInterrupted(report) from None

    if shard is None:
        records = batch.write_records(keys)
        report.records = len(records)
        report.baselines = constant_baselines(records)
        report.looks = look_counts(records)
        batch.write_summary({**report.to_json(), "code": code_identity({task.family for task in config.tasks})})
    else:
        shard_records = batch.collect_records(keys)
        report.baselines = constant_baselines(shard_records)
        report.looks = look_counts(shard_records)
    return report
