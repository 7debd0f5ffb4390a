"""Config -> items -> item folders -> records.jsonl, resumable.

A batch folder holds `batch.json` (the config and its hash), `items/<item_id>/`
folders written atomically, `failures/<item_id>.json` for items that could not
be made, and `records.jsonl` built from the item folders in item-id order. A
rerun of the same config skips every complete item whose key matches and redoes
the rest, so a killed run resumes where it stopped; a different config is
refused unless forced.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from scenes.model import RenderSettings
from scenes.placement import InfeasibleError

from .config import BatchConfig, ConfigError, ItemPlan, expand
from .handoff import file_sha256, records_for, write_jsonl_atomic
from .item_folder import ITEMS_DIR, is_complete, item_dir, load_item, remove_stale_temporaries
from .produce import produce_item

MANIFEST = "batch.json"
RECORDS = "records.jsonl"
FAILURES_DIR = "failures"


@dataclass
class BatchReport:
    total: int = 0
    rendered: int = 0
    skipped: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    seconds: list[float] = field(default_factory=list)
    records: int = 0

    def summary_lines(self) -> list[str]:
        lines = [f"items: {self.total}  rendered: {self.rendered}  skipped (already done): {self.skipped}  failed: {len(self.failed)}"]
        if self.seconds:
            lines.append(f"seconds per rendered item: median {statistics.median(self.seconds):.2f}, max {max(self.seconds):.2f}")
        for item_id, reason in sorted(self.failed.items()):
            lines.append(f"failed {item_id}: {reason}")
        lines.append(f"records: {self.records}")
        return lines


ProgressFn = Callable[[int, int, str, str], None]  # (done, total, item_id, status)


def item_key(plan: ItemPlan, batch_seed: int, settings: RenderSettings) -> str:
    """Hash of everything that determines one item's files."""
    payload = {"family": plan.family, "params": plan.params, "entropy": [batch_seed, plan.task_index, plan.item_index],
               "split": plan.split, "render": settings.model_dump(mode="json")}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _check_manifest(out: Path, config: BatchConfig, force: bool) -> None:
    manifest = out / MANIFEST
    if manifest.exists() and not force:
        previous = json.loads(manifest.read_text()).get("config_hash")
        if previous != config.content_hash():
            raise ConfigError(
                f"{out} holds a batch rendered from a different config (hash {previous} != {config.content_hash()}); "
                "use another --out, or --force to re-render it with this config"
            )
    out.mkdir(parents=True, exist_ok=True)
    payload = {"config_hash": config.content_hash(), "config": config.model_dump(mode="json")}
    manifest.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")


def _record_failure(out: Path, item_id: str, reason: str) -> None:
    folder = out / FAILURES_DIR
    folder.mkdir(exist_ok=True)
    (folder / f"{item_id}.json").write_text(json.dumps({"item_id": item_id, "reason": reason}) + "\n")


def _clear_failure(out: Path, item_id: str) -> None:
    (out / FAILURES_DIR / f"{item_id}.json").unlink(missing_ok=True)


def render_batch(
    config: BatchConfig,
    out: Path,
    *,
    force: bool = False,
    progress: ProgressFn | None = None,
) -> BatchReport:
    """Render every planned item not already complete; write records.jsonl. Never raises for one bad item."""
    out = Path(out)
    _check_manifest(out, config, force)
    remove_stale_temporaries(out)
    settings = config.render
    plans = expand(config)
    report = BatchReport(total=len(plans))
    with tempfile.TemporaryDirectory(prefix="stim3d-") as scratch:
        for n, plan in enumerate(plans, start=1):
            key = item_key(plan, config.seed, settings)
            folder = item_dir(out, plan.item_id)
            if not force and is_complete(folder) and load_item(folder).provenance.item_key == key:
                report.skipped += 1
                status = "skipped"
            else:
                started = time.perf_counter()
                workdir = Path(scratch) / plan.item_id
                try:
                    produce_item(plan, config.seed, settings, out, workdir, key)
                    report.rendered += 1
                    report.seconds.append(time.perf_counter() - started)
                    _clear_failure(out, plan.item_id)
                    status = "rendered"
                except InfeasibleError as exc:
                    report.failed[plan.item_id] = str(exc)
                    _record_failure(out, plan.item_id, str(exc))
                    status = "failed"
                finally:
                    shutil.rmtree(workdir, ignore_errors=True)
            if progress:
                progress(n, len(plans), plan.item_id, status)
    report.records = write_records(out)
    return report


def write_records(out: Path) -> int:
    """Build records.jsonl from every complete item folder, in item-id order. Returns the record count."""
    items = out / ITEMS_DIR
    rows = []
    for folder in sorted(p for p in items.iterdir() if not p.name.startswith(".")) if items.is_dir() else []:
        if not is_complete(folder):
            continue
        item = load_item(folder)
        image = folder / "image.png"
        rows.extend(records_for(item, os.path.relpath(image, out), file_sha256(image)))
    write_jsonl_atomic(out / RECORDS, rows)
    return len(rows)
