"""Merge shard folders into one batch: item folders, failures, records.jsonl, summary.json.

Shards (`stim3d render --shard k/n`) write item folders but not the batch-level
files. `merge_shards` checks that every shard was rendered from the same config
(`batch.json` hash), takes each planned item from the first shard folder that holds
it complete with the right `item_key` (files are hard-linked when the folders share
a filesystem, copied otherwise; temporary name, then rename), carries over the
failures of items no shard completed, and writes `records.jsonl` and `summary.json`
in item-id order, so the result does not depend on the order in which shards
finished or are named. The output may be one of the shard folders (merge in place).

Each shard's batch.json must hold a config whose hash is the hash it records (a
hand-edited config is refused, not trusted). The output folder is locked for the
merge (`render.batch.lock`), and temporaries a killed merge left there are removed
first.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pydantic import ValidationError

from stim3d.files import atomic_folder
from stim3d.render.batch.config import BatchConfig, ConfigError
from stim3d.render.batch.folder import MANIFEST, TIMING, BatchFolder, is_link, item_file_names
from stim3d.render.batch.keys import code_mismatch, expected_keys
from stim3d.render.batch.lock import folder_lock
from stim3d.render.batch.summary import (
    ConstantBaseline,
    baseline_lines,
    constant_baselines,
    failure_lines,
    look_counts,
    look_lines,
    seconds_lines,
    seconds_stats,
)
from stim3d.render.provenance import code_identity
from stim3d.version import __version__


@dataclass
class MergeReport:
    total: int = 0
    present: int = 0
    copied: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    unusable: dict[str, str] = field(default_factory=dict)  # missing items found on disk but not done: why
    seconds: list[float] = field(default_factory=list)
    records: int = 0
    baselines: list[ConstantBaseline] = field(default_factory=list)
    shards: int = 0
    looks: dict[str, dict[str, int]] = field(default_factory=dict)

    def summary_lines(self) -> list[str]:
        lines = [f"items: {self.total}  present: {self.present} ({self.copied} copied from {self.shards} shard folder(s))  "
                 f"failed: {len(self.failed)}  missing: {len(self.missing)}"]
        lines += seconds_lines(self.seconds)
        lines += failure_lines(self.failed, self.attempts)
        absent = [item_id for item_id in self.missing if item_id not in self.unusable]
        if absent:
            shown = ", ".join(absent[:5]) + (", ..." if len(absent) > 5 else "")
            lines.append(f"missing (no shard rendered them; rerun their shard): {shown}")
        for item_id, reason in sorted(self.unusable.items()):
            lines.append(f"not usable {item_id}: {reason}; rerun its shard")
        lines += baseline_lines(self.baselines)
        lines += look_lines(self.looks)
        lines.append(f"records: {self.records}")
        return lines

    def to_json(self) -> dict:
        return {
            "items": self.total, "present": self.present, "shards": self.shards,
            "failed": {k: {"reason": v, "attempts": self.attempts.get(k, 1)} for k, v in sorted(self.failed.items())},
            "missing": self.missing, "unusable": dict(sorted(self.unusable.items())),
            "seconds_per_item": seconds_stats(self.seconds), "records": self.records,
            "constant_baseline": [asdict(b) for b in self.baselines], "looks": self.looks,
        }


def _link_or_copy_folder(source: Path, final: Path) -> None:
    """Publish a shard's item folder in the merged batch: hard links where the filesystem allows, else copies."""
    with atomic_folder(final) as tmp:
        for name in item_file_names(source):  # its own files and masks/ (render.object_masks)
            path = source / name
            if is_link(path) or ("/" in name and is_link(path.parent)):  # never followed out of a shard folder
                continue
            (tmp / name).parent.mkdir(exist_ok=True)
            try:
                os.link(path, tmp / name)
            except OSError:
                shutil.copy2(path, tmp / name)


def _item_seconds(folder: Path) -> float | None:
    try:
        return sum(json.loads((folder / TIMING).read_text()).values())
    except (OSError, ValueError, TypeError):
        return None


def _check_config_hash(folder: Path, manifest: dict) -> BatchConfig:
    """The config in `folder`'s batch.json, if it still has the hash recorded beside it; else ConfigError."""
    try:
        config = BatchConfig.model_validate(manifest["config"])
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ConfigError(f"{folder / MANIFEST}: corrupt config at {'.'.join(map(str, error['loc']))}: "
                          f"{error['msg']}") from None
    if config.content_hash() != manifest.get("config_hash"):
        raise ConfigError(f"{folder / MANIFEST}: its config hashes to {config.content_hash()}, not to the recorded "
                          f"{manifest.get('config_hash')} (edited by hand?); re-render that shard")
    return config


def _shard_manifests(shard_dirs: list[Path]) -> dict:
    if not shard_dirs:
        raise ConfigError("merge needs at least one shard folder")
    first: tuple[Path, dict] | None = None
    for folder in shard_dirs:
        manifest = BatchFolder(folder).manifest() if folder.is_dir() else None
        if manifest is None:
            raise ConfigError(f"{folder}: not a batch folder (no {MANIFEST})")
        _check_config_hash(folder, manifest)
        if first is None:
            first = (folder, manifest)
        elif manifest.get("config_hash") != first[1].get("config_hash"):
            raise ConfigError(f"{folder} was rendered from a different config (hash {manifest.get('config_hash')}) "
                              f"than {first[0]} (hash {first[1].get('config_hash')}); shards of one batch share one config")
    assert first is not None
    return first[1]


def merge_shards(shard_dirs: list[Path], out: Path) -> MergeReport:
    """Build one batch folder `out` from shard folders; see the module docstring. ConfigError for mismatched inputs."""
    shard_dirs = [Path(d) for d in shard_dirs]
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError("exists and is not a folder", field="out", value=out)
    manifest = _shard_manifests(shard_dirs)
    with folder_lock(out):
        merged = BatchFolder(out)
        merged.refuse_links()
        merged.remove_temporaries()
        return _merge_locked([BatchFolder(d) for d in shard_dirs], merged, manifest)


def _merge_locked(shards: list[BatchFolder], merged: BatchFolder, manifest: dict) -> MergeReport:
    out = merged.root
    existing = merged.manifest() if out.is_dir() else None
    if existing is not None and existing.get("config_hash") != manifest.get("config_hash"):
        raise ConfigError(f"{out} holds a batch of a different config (hash {existing.get('config_hash')} != "
                          f"{manifest.get('config_hash')}); merge into another folder")
    config = BatchConfig.model_validate(manifest["config"])
    families = {task.family for task in config.tasks}
    if (other := code_mismatch(manifest, code_identity(families, with_commit=False))) is not None:
        raise ConfigError(f"the shards were rendered by {other}, not by this stim3d {__version__}: "
                          f"merge them with the stim3d that rendered them, or re-render them")
    keys = expected_keys(config)
    merged.write_manifest_payload(manifest)
    report = MergeReport(total=len(keys), shards=len(shards))
    for item_id in sorted(keys):
        final = merged.item_dir(item_id)
        if not merged.state(item_id, keys[item_id]).done:
            source = next((shard for shard in shards if shard.state(item_id, keys[item_id]).done), None)
            if source is not None:
                _link_or_copy_folder(source.item_dir(item_id), final)
                report.copied += 1
        if merged.state(item_id, keys[item_id]).done:
            report.present += 1
            merged.clear_failure(item_id)
            seconds = _item_seconds(final)
            if seconds is not None:
                report.seconds.append(seconds)
            continue
        failure = next((data for batch in [merged, *shards] if (data := batch.failure(item_id)) is not None), None)
        found = [reason for batch in [merged, *shards]
                 if (reason := batch.state(item_id, keys[item_id]).reason) != "not rendered"]
        if failure is None:
            if found:
                report.unusable[item_id] = found[0]
            report.missing.append(item_id)
            continue
        report.failed[item_id] = failure.get("reason", "")
        report.attempts[item_id] = failure.get("attempts", 1)
        merged.record_failure(item_id, report.failed[item_id], report.attempts[item_id])
    records = merged.write_records(keys)
    report.records = len(records)
    report.baselines = constant_baselines(records)
    report.looks = look_counts(records)
    merged.write_summary({**report.to_json(), "code": code_identity(families)})
    return report
