"""What both exports share: reading batches through their records, naming items so ids never clash, and
publishing the export folder atomically.

Names read from records (item ids, splits, image paths) are checked before they
become paths, and every image and mask is decoded before it is exported: an item
whose image.png or mask.png is corrupt, or whose mask is not the image's size, is
skipped and named in the report, never shipped and never fatal to the rest."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from stim3d.errors import Stim3dError
from stim3d.files import OutsideDestination, atomic_folder, file_sha256, inside
from stim3d.render.batch.config import ConfigError
from stim3d.render.batch.folder import IMAGE, MASK, BatchFolder, is_link
from stim3d.render.batch.item_folder import load_item
from stim3d.scenes.model import DrawnLook, Item
from stim3d.scenes.names import check_name
from stim3d.scoring.records import Record


class ExportError(Stim3dError, ValueError):
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
    skipped: dict[str, str] = field(default_factory=dict)  # "<batch>/<item_id>" -> why it was not exported
    # "<batch>/<item_id>" -> why the format cannot hold it: whole items a reader would fail on, left out on purpose
    # (named like `skipped`, but the export is complete as the format allows, so not an error)
    omitted: dict[str, str] = field(default_factory=dict)

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
        if self.skipped:
            parts.append(f"{len(self.skipped)} items skipped (torn or corrupt item folders)")
        if self.omitted:
            parts.append(f"{len(self.omitted)} items left out (the format cannot hold them)")
        return ", ".join(parts)


def batch_namespace(batch: Path) -> str:
    folder = BatchFolder(batch)
    try:
        manifest = folder.manifest()
    except ConfigError:
        raise ExportError(f"{folder.manifest_path}: corrupt; restore it (its config hash names the batch's items)") \
            from None
    config_hash = manifest.get("config_hash") if manifest else None
    if isinstance(config_hash, str) and config_hash and config_hash.isalnum():
        return config_hash[:8]
    return hashlib.sha256(folder.records_path.read_bytes()).hexdigest()[:8]


def image_problem(folder: Path) -> str | None:
    """Why an item's image.png and mask.png cannot be exported (None if both decode and have one size)."""
    try:
        with Image.open(folder / IMAGE) as image:
            image.load()
            size = image.size
        with Image.open(folder / MASK) as mask:
            mask.load()
            mask_size = mask.size
    except (OSError, SyntaxError) as exc:  # Pillow: truncated, not a PNG
        return f"image.png or mask.png unreadable: {str(exc).splitlines()[0]}"
    if mask_size != size:
        return f"mask.png is {mask_size[0]}x{mask_size[1]} but image.png is {size[0]}x{size[1]}"
    return None


def _checked_names(record: Record, records_path: Path) -> None:
    try:
        check_name(record.item_id, "item id")
        check_name(record.split, "split")
    except ValueError as exc:
        raise ExportError(f"{records_path}: {exc}") from None


def collect_items(batches: Sequence[Path], skipped: dict[str, str] | None = None,
                  split: str | None = None) -> tuple[list[ExportedItem], int]:
    """Every item of the batches with its records, in batch then record order; and the duplicates skipped.

    Items whose image or mask is missing, does not decode (or differ in size) are left out and,
    when `skipped` is given, named there ("<batch folder>/<item id>" -> reason). Exports call
    `exportable_items`, which also leaves out items whose item.json does not parse. With `split`, only that
    split's records count (`stim3d export --split`: a batch made with `splits:` holds several), so an item of
    another split is neither exported nor checked; ExportError when no batch holds the split.
    """
    items: dict[str, ExportedItem] = {}
    duplicates = 0
    held: set[str] = set()
    for batch in map(Path, batches):
        folder_of = BatchFolder(batch)
        records_path = folder_of.records_path
        if not records_path.is_file():
            raise ExportError(f"{batch}: not a batch folder (no {records_path.name})")
        try:
            records = folder_of.read_records()
        except ValueError as exc:
            raise ExportError(str(exc)) from None
        namespace = batch_namespace(batch)
        seen_here: dict[str, ExportedItem] = {}
        unusable: set[str] = set()
        held.update(record.split for record in records)
        for record in records:
            if record.item_id in unusable or (split is not None and record.split != split):
                continue
            entry = seen_here.get(record.item_id)
            if entry is None:
                _checked_names(record, records_path)
                folder = batch / Path(record.image.path).parent
                image = batch / record.image.path
                try:
                    inside(batch, image)
                except OutsideDestination:
                    raise ExportError(f"{records_path}: image path {record.image.path!r} leads outside {batch}") from None
                linked = [p.name for p in (folder, image, folder / MASK) if is_link(p)] + \
                    [link.name for link in [folder_of.link_in(folder)] if link is not None]
                if linked:  # never read through a link out of the batch (docs/hardening.md)
                    unusable.add(record.item_id)
                    if skipped is not None:
                        skipped[f"{batch}/{record.item_id}"] = f"{linked[0]} is a symbolic link (not followed)"
                    continue
                missing = [name for name in (IMAGE, MASK) if not (folder / name).is_file()]
                if missing:  # a torn item folder: skipped and named, like one whose item.json does not parse
                    unusable.add(record.item_id)
                    if skipped is not None:
                        skipped[f"{batch}/{record.item_id}"] = f"{' and '.join(missing)} missing"
                    continue
                if file_sha256(image) != record.image.sha256:
                    raise ExportError(f"{records_path}: stale: {record.image.path} no longer has the recorded sha256")
                problem = image_problem(folder)
                if problem is not None:
                    unusable.add(record.item_id)
                    if skipped is not None:
                        skipped[f"{batch}/{record.item_id}"] = problem
                    continue
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
    if split is not None and split not in held:
        raise ExportError(f"no item of split {split!r}: the batches hold {', '.join(sorted(held)) or 'no records'}")
    return list(items.values()), duplicates


@contextmanager
def export_folder(dest: Path) -> Iterator[Path]:
    """A temporary folder that becomes `dest` when the export completes; `dest` must be absent or empty."""
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ExportError(f"{dest} already exists and is not empty; choose another `dest` or remove it")
    with atomic_folder(dest) as tmp:
        yield tmp


def look_name(item: Item | None, record: Record | None = None) -> str:
    """The look an exported item was rendered in: its item.json's, else its record's (studio when the record names
    none: studio items record no look in their difficulty, docs/looks.md)."""
    if item is not None:
        return item.scene.look.name
    value = record.difficulty.get("look") if record is not None else None
    return value if isinstance(value, str) else "studio"


def object_materials(item: Item | None) -> dict[int, str]:
    """Object id -> the look's material for it (scenes/looks.py); empty in studio, whose objects have none."""
    if item is None or not isinstance(item.scene.look, DrawnLook):
        return {}
    return {material.id: material.material for material in item.scene.look.objects}


def load_exported(entry: ExportedItem, report: ExportReport, note: str = "") -> Item | None:
    """The item.json of one exported item, or None with the reason in `report.skipped` (every export skips an
    item whose item.json does not parse and names it the same way; `note` says what of it is left out)."""
    try:
        return load_item(entry.folder)
    except (ValueError, OSError) as exc:
        report.skipped[f"{entry.folder.parent.parent}/{entry.item_id}{note}"] = \
            f"item.json does not parse: {str(exc).splitlines()[0]}"
        return None


def exportable_items(batches: Sequence[Path], report: ExportReport,
                     split: str | None = None) -> list[tuple[ExportedItem, Item]]:
    """The items every export writes, each with its item.json: THE one rule for torn items, shared by all formats;
    with `split`, those of that split only, each with that split's records (`collect_items`).

    An item folder with image.png or mask.png missing or undecodable, a link in it,
    an item.json that does not parse, or an image not of its camera's size is left out and named in `report.skipped`
    ("<batch folder>/<item id>" -> reason); the CLI prints each and exits 1. Sets
    `report.duplicates_skipped`. Batch-level faults (no records, stale sha256,
    clashing items) stay ExportError: they say the batch, not one item, is wrong.
    """
    entries, report.duplicates_skipped = collect_items(batches, report.skipped, split)
    usable = []
    for entry in entries:
        if (item := load_exported(entry, report)) is None:
            continue
        with Image.open(entry.folder / IMAGE) as image:  # decoded by collect_items already
            size = image.size
        cam = item.scene.camera
        if size != (cam.width, cam.height):  # masks and poses would not line up with the pixels
            report.skipped[f"{entry.folder.parent.parent}/{entry.item_id}"] = \
                f"image.png is {size[0]}x{size[1]}, the item's camera {cam.width}x{cam.height}"
            continue
        usable.append((entry, item))
    return usable


EXPORTS_DIR = "exports"


def default_destination(batch: Path, fmt: str) -> Path:
    """`BATCH/exports/FORMAT`, where an export goes without --to; ExportError when a symbolic link on that path
    (`BATCH/exports` or `BATCH/exports/FORMAT`) would carry the write out of the batch (docs/hardening.md)."""
    batch = Path(batch)
    dest = batch / EXPORTS_DIR / fmt
    link = BatchFolder(batch).link_in(dest)
    if link is not None:
        raise ExportError(f"{link}: a symbolic link inside the batch folder; an export never writes through one: "
                          "replace it with a real folder, or choose the destination with `dest=DIR`")
    return dest
