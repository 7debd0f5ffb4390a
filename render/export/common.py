"""What both exports share: reading batches through their records, naming items so ids never clash, and
publishing the export folder atomically."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from stim3d.render.batch.layout import MANIFEST, RECORDS
from stim3d.render.files import atomic_folder, file_sha256
from stim3d.scoring.records import Record, read_records


class ExportError(ValueError):
    """A batch folder that cannot be exported (missing files, stale records, clashing items)."""


@dataclass
class ExportedItem:
    """One item to export: where it lives, its unique name, and its records."""

    batch: str
    folder: Path
    item_id: str
    uid: str
    image_sha256: str
    records: list[Record] = field(default_factory=list)


@dataclass
class ExportReport:
    dest: Path
    batches: int = 0
    items: int = 0
    questions: int = 0
    annotations: int = 0
    duplicates_skipped: int = 0
    objects_without_pixels: int = 0

    def summary(self) -> str:
        parts = [f"{self.items} images from {self.batches} batch folder(s)"]
        if self.questions:
            parts.append(f"{self.questions} questions")
        if self.annotations:
            parts.append(f"{self.annotations} object annotations")
        if self.duplicates_skipped:
            parts.append(f"{self.duplicates_skipped} duplicate items skipped")
        if self.objects_without_pixels:
            parts.append(f"{self.objects_without_pixels} fully hidden objects not annotated")
        return ", ".join(parts)


def batch_namespace(batch: Path) -> str:
    manifest = batch / MANIFEST
    if manifest.is_file():
        config_hash = json.loads(manifest.read_text()).get("config_hash")
        if isinstance(config_hash, str) and config_hash:
            return config_hash[:8]
    return hashlib.sha256((batch / RECORDS).read_bytes()).hexdigest()[:8]


def collect_items(batches: Sequence[Path]) -> tuple[list[ExportedItem], int]:
    """Every item of the batches with its records, in batch then record order; and the duplicates skipped."""
    items: dict[str, ExportedItem] = {}
    duplicates = 0
    for batch in map(Path, batches):
        records_path = batch / RECORDS
        if not records_path.is_file():
            raise ExportError(f"{batch}: not a batch folder (no {RECORDS})")
        try:
            records = read_records(records_path)
        except ValueError as exc:
            raise ExportError(str(exc)) from None
        namespace = batch_namespace(batch)
        seen_here: dict[str, ExportedItem] = {}
        for record in records:
            entry = seen_here.get(record.item_id)
            if entry is None:
                folder = batch / Path(record.image.path).parent
                image = batch / record.image.path
                if not image.is_file() or not (folder / "mask.png").is_file():
                    raise ExportError(f"{batch}: item {record.item_id} is missing image.png or mask.png")
                if file_sha256(image) != record.image.sha256:
                    raise ExportError(f"{records_path}: stale: {record.image.path} no longer has the recorded sha256")
                entry = ExportedItem(namespace, folder, record.item_id, f"{namespace}-{record.item_id}", record.image.sha256)
                seen_here[record.item_id] = entry
            entry.records.append(record)
        for entry in seen_here.values():
            previous = items.get(entry.uid)
            if previous is None:
                items[entry.uid] = entry
            elif previous.image_sha256 == entry.image_sha256:
                duplicates += 1
            else:
                raise ExportError(
                    f"item {entry.item_id} of batch {namespace} is in {previous.folder} and {entry.folder} "
                    "with different images; export them separately"
                )
    return list(items.values()), duplicates


@contextmanager
def export_folder(dest: Path) -> Iterator[Path]:
    """A temporary folder that becomes `dest` when the export completes; `dest` must be absent or empty."""
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ExportError(f"{dest} already exists and is not empty; choose another --to or remove it")
    with atomic_folder(dest) as tmp:
        yield tmp
