"""Config -> item plan -> workers -> item folders -> records.jsonl; resumable, shardable.

A batch folder holds `batch.json` (the config and its hash), `items/<item_id>/`
folders written atomically (temporary name, then rename), `failures/<item_id>.json`
for items that could not be made (with the reason and the number of attempts),
`records.jsonl` built from the item folders in item-id order, and `summary.json`
(counts, failures, seconds per item, the best constant answer per question type).

Resume: a rerun of the same config skips every complete item whose `item_key`
matches and redoes the rest (temporary folders left by a killed run are removed
first), so a run killed at any moment and rerun ends with the same files as an
uninterrupted one. A different config in the same folder is refused unless forced.

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
import math
import os
import re
import shutil
import socket
import statistics
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Literal

from scenes.model import RenderSettings

from .config import BatchConfig, ConfigError, ItemPlan, expand
from .executors import (Job, JobContext, Outcome, available_cpus, check_ray, run_local, run_ray,
                        threads_per_worker)
from .handoff import Record, file_sha256, records_for, write_jsonl_atomic
from .item_folder import ITEMS_DIR, is_complete, item_dir, load_item, remove_stale_temporaries

MANIFEST = "batch.json"
RECORDS = "records.jsonl"
SUMMARY = "summary.json"
FAILURES_DIR = "failures"
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


ProgressFn = Callable[[ProgressEvent], None]


@dataclass(frozen=True)
class ConstantBaseline:
    """Accuracy of always giving the most frequent gold answer, for one question type."""

    question_type: str
    questions: int
    best_answer: str
    accuracy: float
    distinct_answers: int


@dataclass
class BatchReport:
    total: int = 0
    rendered: int = 0
    skipped: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)  # items that needed more than one attempt
    seconds: list[float] = field(default_factory=list)
    records: int = 0
    baselines: list[ConstantBaseline] = field(default_factory=list)
    shard: str | None = None
    executor: str = "local"
    workers: int = 1

    @property
    def done(self) -> int:
        return self.rendered + len(self.failed)

    def summary_lines(self) -> list[str]:
        where = f" (shard {self.shard})" if self.shard else ""
        lines = [f"items{where}: {self.total}  rendered: {self.rendered}  skipped (already done): {self.skipped}  "
                 f"failed: {len(self.failed)}   [{self.executor}, {self.workers} worker(s)]"]
        lines += seconds_lines(self.seconds)
        lines += failure_lines(self.failed, self.attempts)
        lines += baseline_lines(self.baselines)
        if self.shard:
            lines.append("records: not written for a shard; run `stim3d merge` over the shard folders")
        else:
            lines.append(f"records: {self.records}")
        return lines

    def to_json(self) -> dict:
        return {
            "items": self.total, "rendered": self.rendered, "skipped": self.skipped,
            "failed": {k: {"reason": v, "attempts": self.attempts.get(k, 1)} for k, v in sorted(self.failed.items())},
            "seconds_per_item": seconds_stats(self.seconds), "records": self.records,
            "constant_baseline": [asdict(b) for b in self.baselines],
            "executor": self.executor, "workers": self.workers,
        }


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped the run; workers are stopped, nothing complete is lost. Carries the partial report."""

    def __init__(self, report: BatchReport):
        super().__init__(f"interrupted after {report.done} of {report.total - report.skipped} items")
        self.report = report


# -- summaries -----------------------------------------------------------------------------------

def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def seconds_stats(seconds: list[float]) -> dict[str, float | int] | None:
    if not seconds:
        return None
    return {"n": len(seconds), "median": round(statistics.median(seconds), 3), "p95": round(percentile(seconds, 95), 3),
            "max": round(max(seconds), 3)}


def seconds_lines(seconds: list[float]) -> list[str]:
    stats = seconds_stats(seconds)
    if not stats:
        return []
    return [f"seconds per rendered item: median {stats['median']:.2f}, p95 {stats['p95']:.2f}, max {stats['max']:.2f} "
            f"({stats['n']} items)"]


def failure_lines(failed: dict[str, str], attempts: dict[str, int]) -> list[str]:
    lines = []
    for item_id, reason in sorted(failed.items()):
        tries = attempts.get(item_id, 1)
        lines.append(f"failed {item_id}{f' after {tries} attempts' if tries > 1 else ''}: {reason.splitlines()[0]}")
    return lines


def constant_baselines(records: Iterable[Record]) -> list[ConstantBaseline]:
    """Per question type (family and answer type), the accuracy of always answering the most frequent gold.

    Answers are balanced by construction, so this should sit near 1 / distinct answers.
    """
    golds: dict[str, Counter] = defaultdict(Counter)
    for record in records:
        golds[f"{record.family} ({record.answer.type})"][json.dumps(record.answer.gold)] += 1
    baselines = []
    for question_type, counts in sorted(golds.items()):
        answer, hits = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        total = sum(counts.values())
        baselines.append(ConstantBaseline(question_type, total, answer, round(hits / total, 4), len(counts)))
    return baselines


def baseline_lines(baselines: list[ConstantBaseline]) -> list[str]:
    if not baselines:
        return []
    width = max(len("question type"), *(len(b.question_type) for b in baselines))
    lines = ["best constant answer per question type (balanced answers keep it near 1/distinct):",
             f"  {'question type':<{width}}  questions  answer  accuracy  distinct"]
    for b in baselines:
        lines.append(f"  {b.question_type:<{width}}  {b.questions:>9}  {b.best_answer:>6}  {b.accuracy:>8.3f}  "
                     f"{b.distinct_answers:>8}")
    return lines


# -- keys, manifest, failures, temporaries ---------------------------------------------------------

def item_key(plan: ItemPlan, batch_seed: int, settings: RenderSettings) -> str:
    """Hash of everything that determines one item's files."""
    payload = {"family": plan.family, "params": plan.params, "entropy": [batch_seed, plan.task_index, plan.item_index],
               "split": plan.split, "render": settings.model_dump(mode="json")}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def expected_keys(config: BatchConfig, plans: list[ItemPlan] | None = None) -> dict[str, str]:
    """item_id -> item_key for the planned items (all of the config's when `plans` is None)."""
    return {plan.item_id: item_key(plan, config.seed, config.render) for plan in (plans or expand(config))}


def stored_key(folder: Path) -> str | None:
    """The item_key a complete item folder was rendered with (None if incomplete or unreadable)."""
    if not is_complete(folder):
        return None
    try:
        return (json.loads((folder / "item.json").read_text()).get("provenance") or {}).get("item_key")
    except (OSError, ValueError):
        return None


def write_text_atomic(path: Path, text: str) -> None:
    """Write via a temporary sibling and rename; the name is unique across hosts sharing a filesystem."""
    tmp = path.with_name(f".{path.name}.tmp-{socket.gethostname()}-{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def read_manifest(folder: Path) -> dict | None:
    manifest = folder / MANIFEST
    return json.loads(manifest.read_text()) if manifest.is_file() else None


def _check_manifest(out: Path, config: BatchConfig, force: bool) -> None:
    previous = read_manifest(out)
    if previous is not None and not force and previous.get("config_hash") != config.content_hash():
        raise ConfigError(
            f"{out} holds a batch rendered from a different config (hash {previous.get('config_hash')} != "
            f"{config.content_hash()}); use another --out, or --force to re-render it with this config"
        )
    out.mkdir(parents=True, exist_ok=True)
    payload = {"config_hash": config.content_hash(), "config": config.model_dump(mode="json")}
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


def remove_temporaries_of(out: Path, item_ids: set[str]) -> int:
    """Delete the temporary item folders (`.tmp-<item_id>-<pid>`) of these items only.

    A shard must not touch another shard's temporaries: they may share the folder and be writing now.
    """
    items = out / ITEMS_DIR
    if not items.is_dir():
        return 0
    removed = 0
    for path in items.glob(".tmp-*"):
        match = re.fullmatch(r"\.tmp-(.+)-\d+", path.name)
        if match and match[1] in item_ids and path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
    return removed


def install_item_files(out: Path, item_id: str, files: dict[str, bytes]) -> Path:
    """Write an item folder received as bytes (from a remote worker) with the temporary-then-rename step."""
    final = item_dir(out, item_id)
    tmp = final.with_name(f".tmp-{item_id}-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, data in files.items():
        (tmp / name).write_bytes(data)
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    return final


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
    _check_manifest(out, config, force)
    plans = expand(config)
    if shard is not None:
        plans = shard.select(plans)
        remove_temporaries_of(out, {plan.item_id for plan in plans})
    else:
        remove_stale_temporaries(out)
    keys = expected_keys(config, plans)
    todo = [Job(plan, keys[plan.item_id]) for plan in plans
            if force or stored_key(item_dir(out, plan.item_id)) != keys[plan.item_id]]
    report = BatchReport(total=len(plans), skipped=len(plans) - len(todo), shard=str(shard) if shard else None,
                         executor=executor, workers=workers or 1)
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
                                   seconds=outcome.seconds, reason=outcome.reason, attempts=outcome.attempts))

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
        remove_temporaries_of(out, {job.item_id for job in todo})
        raise BatchInterrupted(report) from None

    if shard is None:
        records = collect_records(out, keys)
        write_jsonl_atomic(out / RECORDS, records)
        report.records = len(records)
        report.baselines = constant_baselines(records)
        write_text_atomic(out / SUMMARY, json.dumps(report.to_json(), indent=2) + "\n")
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
        item = load_item(folder)
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
