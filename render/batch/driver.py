"""Config -> item plan -> workers -> item folders -> records.jsonl; resumable, shardable.

A batch folder holds `batch.json` (the config and its hash), `items/<item_id>/`
folders written atomically (temporary name, then rename), `failures/<item_id>.json`
for items that could not be made (with the reason and the number of attempts),
`records.jsonl` built from the item folders in item-id order, and `summary.json`
(counts, failures, seconds per item, the best constant answer per question type).

One run at a time: the folder is locked for the run (`render.batch.lock`; a shard
locks only its own slice), so a second run into it is refused with one line.

Resume: a rerun of the same config skips every complete item whose `item_key`
matches and whose files match the checksums recorded when it was written
(`item_folder.verify_item`), and redoes the rest (temporary folders left by a killed run are removed
first), so a run killed at any moment and rerun ends with the same files as an
uninterrupted one. A different config in the same folder is refused unless forced;
`force` also removes item folders and failures the new plan does not have.

Shards: `Shard(k, n)` selects the items whose index in the plan is k-1 modulo n.
Shards may write into separate folders or one shared folder; a sharded run writes
its item folders and failures but not the batch-level files (records.jsonl,
summary.json): `render.merge.merge_shards` builds those once all shards are done.

Where items render (local worker processes or Ray actors) is `render.executors`;
this module decides what to render and writes everything but the item folders.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from stim3d.provenance import code_identity
from stim3d.render.batch.config import BatchConfig, ConfigError, ItemPlan, expand
from stim3d.render.batch.executors.jobs import Job, JobContext, Outcome, available_cpus, threads_per_worker
from stim3d.render.batch.executors.local import run_local
from stim3d.render.batch.executors.ray_cluster import check_ray, run_ray
from stim3d.render.batch.item_folder import install_item_files, is_complete, load_item, verify_item
from stim3d.render.batch.layout import (
    FAILURES_DIR,
    ITEMS_DIR,
    MANIFEST,
    RECORDS,
    SUMMARY,
    item_dir,
    read_manifest,
    remove_item_temporaries,
)
from stim3d.render.batch.lock import folder_lock
from stim3d.render.batch.records import records_for
from stim3d.render.batch.summary import BatchReport, constant_baselines
from stim3d.render.files import file_sha256, remove_temporaries, write_jsonl_atomic, write_text_atomic
from stim3d.scenes.model import RenderSettings
from stim3d.scoring.records import Record

DEFAULT_RECYCLE_AFTER = 50
Executor = Literal["local", "ray"]


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


# -- keys, manifest, failures, temporaries ---------------------------------------------------------

def item_key(plan: ItemPlan, batch_seed: int, settings: RenderSettings) -> str:
    """Hash of everything that determines one item's files, the code that makes it included.

    The stim3d version and the family's generator revision are part of it: an item made
    by other code never counts as done (and `_check_manifest` refuses such a folder).
    """
    payload = {"family": plan.family, "params": plan.params, "entropy": [batch_seed, plan.task_index, plan.item_index],
               "split": plan.split, "render": settings.model_dump(mode="json"),
               "code": code_identity({plan.family}, with_commit=False)}
    if plan.questions != ("default",):  # only then: keys of items without a describe question stay as they were
        payload["questions"] = list(plan.questions)
    if plan.look is not None:  # a task's or variant's own look (render.look is in "render" already)
        payload["look"] = plan.look
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def expected_keys(config: BatchConfig, plans: list[ItemPlan] | None = None) -> dict[str, str]:
    """item_id -> item_key for the planned items (all of the config's when `plans` is None)."""
    return {plan.item_id: item_key(plan, config.seed, config.render) for plan in (plans or expand(config))}


def stored_key(folder: Path) -> str | None:
    """The item_key a complete, intact item folder was rendered with (None if incomplete, corrupt or unreadable).

    Intact means every file matches checksums.json, so a truncated image, a hand-edited
    item.json or a folder without checksums is re-rendered rather than counted as done.
    """
    return None if verify_item(folder) else _key_of(folder)


def _key_of(folder: Path) -> str | None:
    try:
        provenance = load_item(folder).provenance
    except (OSError, ValueError):  # unreadable, not UTF-8, not JSON, not a valid item
        return None
    return provenance.item_key if provenance else None


def check_item(folder: Path) -> str | None:
    """Why an existing item folder cannot count as done (None if it can): a file fails its checksum, item.json is invalid."""
    problem = verify_item(folder)
    if problem is None:
        try:
            load_item(folder)
        except (OSError, ValueError) as exc:
            problem = f"item.json is not a valid item: {str(exc).splitlines()[0]}"
    return problem


def remove_unplanned(out: Path, planned: set[str]) -> int:
    """Delete item folders and failures of items not in `planned` (after --force with a smaller config)."""
    removed = 0
    items, failures = out / ITEMS_DIR, out / FAILURES_DIR
    for folder in sorted(items.iterdir()) if items.is_dir() else []:
        if not folder.name.startswith(".") and folder.name not in planned:
            shutil.rmtree(folder) if folder.is_dir() else folder.unlink()
            removed += 1
    for failure in sorted(failures.glob("*.json")) if failures.is_dir() else []:
        if failure.stem not in planned:
            failure.unlink()
    return removed


def code_mismatch(previous: dict, code: dict) -> str | None:
    """Why a folder's recorded code differs from this one's (version or a generator revision), or None."""
    recorded = previous.get("code")
    if not isinstance(recorded, dict):
        return "a stim3d that did not record its generator revisions"
    if {k: recorded.get(k) for k in code} == code:
        return None
    revisions = ", ".join(f"{k} {v}" for k, v in (recorded.get("generator_revisions") or {}).items())
    return f"stim3d {recorded.get('stim3d_version')} (generator revisions: {revisions or 'none'})"


def _check_manifest(out: Path, config: BatchConfig, force: bool) -> None:
    previous = read_manifest(out)
    if previous is not None and not force and previous.get("config_hash") != config.content_hash():
        raise ConfigError(
            f"{out} holds a batch rendered from a different config (hash {previous.get('config_hash')} != "
            f"{config.content_hash()}); use another --out, or --force to re-render it with this config"
        )
    families = {task.family for task in config.tasks}
    code = code_identity(families, with_commit=False)
    if previous is not None and not force and (other := code_mismatch(previous, code)) is not None:
        revisions = ", ".join(f"{k} {v}" for k, v in code["generator_revisions"].items())
        raise ConfigError(
            f"{out} was rendered by {other}, this is stim3d {code['stim3d_version']} (generator revisions: "
            f"{revisions}); its items would be mixed with new ones: use another --out, or --force to re-render it"
        )
    out.mkdir(parents=True, exist_ok=True)
    payload = {"config_hash": config.content_hash(), "config": config.model_dump(mode="json"),
               "code": code_identity(families)}
    # Key order is kept: the order of a task's grid axes decides which item gets which combination,
    # and `stim3d merge` rebuilds the item plan from this file.
    write_text_atomic(out / MANIFEST, json.dumps(payload, indent=2) + "\n")


def record_failure(out: Path, item_id: str, reason: str, attempts: int = 1) -> None:
    folder = out / FAILURES_DIR
    folder.mkdir(exist_ok=True)
    payload = {"item_id": item_id, "reason": reason, "attempts": attempts}
    write_text_atomic(folder / f"{item_id}.json", json.dumps(payload) + "\n")


def clear_failure(out: Path, item_id: str) -> None:
    (out / FAILURES_DIR / f"{item_id}.json").unlink(missing_ok=True)


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
    if executor not in ("local", "ray"):
        raise ConfigError(f"executor = {executor!r}: allowed: local, ray")
    if executor == "ray":
        check_ray(address)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: exists and is not a folder")
    with folder_lock(out, str(shard) if shard else None):
        return _render_locked(config, out, force, progress, workers, shard, executor, address, recycle_after)


def _render_locked(config: BatchConfig, out: Path, force: bool, progress: ProgressFn | None, workers: int | None,
                   shard: Shard | None, executor: Executor, address: str | None, recycle_after: int) -> BatchReport:
    """render_batch's work, with the folder locked."""
    _check_manifest(out, config, force)
    plans = expand(config)
    if force:
        remove_unplanned(out, {plan.item_id for plan in plans})
    if shard is not None:
        plans = shard.select(plans)
        remove_item_temporaries(out, {plan.item_id for plan in plans})
    else:
        remove_item_temporaries(out)
        remove_temporaries(out)  # records.jsonl or summary.json of a run killed while writing them
        remove_temporaries(out / FAILURES_DIR)
    keys = expected_keys(config, plans)
    todo = [Job(plan, keys[plan.item_id]) for plan in plans
            if force or stored_key(item_dir(out, plan.item_id)) != keys[plan.item_id]]
    report = BatchReport(total=len(plans), skipped=len(plans) - len(todo), shard=str(shard) if shard else None,
                         executor=executor, workers=workers or 1)
    for job in todo:  # name the folders that exist but did not verify: they are redone, never shipped
        folder = item_dir(out, job.item_id)
        if not force and folder.is_dir() and (problem := check_item(folder)):
            report.redone[job.item_id] = problem
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
            clear_failure(out, outcome.item_id)
        else:
            report.failed[outcome.item_id] = outcome.reason
            record_failure(out, outcome.item_id, outcome.reason, outcome.attempts)
        if progress:
            progress(ProgressEvent("item", total=len(todo), done=report.done, failed=len(report.failed),
                                   skipped=report.skipped, item_id=outcome.item_id,
                                   status="rendered" if outcome.status == "rendered" else "failed",
                                   seconds=outcome.seconds, reason=outcome.reason, attempts=outcome.attempts,
                                   retries=report.retries))

    try:
        if todo and executor == "ray":
            context = JobContext(config.seed, config.render, out)
            report.workers = run_ray(todo, context, workers, recycle_after, on_outcome, address=address)
        elif todo:
            count = min(workers or 1, len(todo))
            threads = threads_per_worker(config.render, available_cpus(), count)
            context = JobContext(config.seed, config.render.model_copy(update={"threads": threads}), out)
            report.workers = count
            run_local(todo, context, count, recycle_after, on_outcome)
    except KeyboardInterrupt:
        remove_item_temporaries(out, {job.item_id for job in todo})
        raise BatchInterrupted(report) from None

    if shard is None:
        records = collect_records(out, keys)
        write_jsonl_atomic(out / RECORDS, records)
        report.records = len(records)
        report.baselines = constant_baselines(records)
        summary = {**report.to_json(), "code": code_identity({task.family for task in config.tasks})}
        write_text_atomic(out / SUMMARY, json.dumps(summary, indent=2) + "\n")
    else:
        report.baselines = constant_baselines(collect_records(out, keys))
    return report


def collect_records(out: Path, expected: dict[str, str] | None = None) -> list[Record]:
    """Records of the complete item folders in item-id order; with `expected` (item_id -> item_key), only those items."""
    items = out / ITEMS_DIR
    if not items.is_dir():
        return []
    if expected is None:
        folders = sorted(p for p in items.iterdir() if not p.name.startswith("."))
    else:
        folders = [item_dir(out, item_id) for item_id in sorted(expected)]
    rows: list[Record] = []
    for folder in folders:
        if not is_complete(folder) or (expected is not None and stored_key(folder) != expected[folder.name]):
            continue
        try:
            item = load_item(folder)
        except (OSError, ValueError):  # not a valid item: not done (a rerun redoes it and says why)
            continue
        image = folder / "image.png"
        rows.extend(records_for(item, os.path.relpath(image, out), file_sha256(image)))
    return rows


def write_records(out: Path, expected: dict[str, str] | None = None) -> int:
    """Build records.jsonl from the complete item folders, in item-id order. Returns the record count.

    With `expected` (item_id -> item_key, see `expected_keys`), only those items with a
    matching key are included: folders left by another config are not mixed in.
    """
    rows = collect_records(Path(out), expected)
    write_jsonl_atomic(Path(out) / RECORDS, rows)
    return len(rows)
