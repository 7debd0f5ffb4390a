"""A rendered batch folder read back as model objects: `load_batch` (also `stim3d.load_batch`).

It reads through `BatchFolder` (folder.py), the one owner of the folder's layout and
its done-or-redo rule, so the API, `stim3d eval` and `stim3d study` see exactly the
items a render counts as complete.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stim3d.render.batch.config import BatchConfig, ConfigError
from stim3d.render.batch.folder import BatchFolder, load_item
from stim3d.scenes.model import Item
from stim3d.scoring.records import Record


@dataclass
class Batch:
    """A rendered batch folder read back: its config, complete items, their records, the summary, and what was skipped."""

    folder: Path
    config: BatchConfig | None
    items: list[Item] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    summary: dict[str, Any] | None = None
    skipped: dict[str, str] = field(default_factory=dict)  # item id -> why it was left out (with its records)

    def item(self, item_id: str) -> Item:
        """The complete item `item_id`; KeyError when the batch has none."""
        for item in self.items:
            if item.item_id == item_id:
                return item
        raise KeyError(f"batch {self.folder} has no item {item_id!r}")

    def image_path(self, item_id: str) -> Path:
        """Where the item's image.png is (whether or not it exists)."""
        return BatchFolder(self.folder).image_path(item_id)

    def mask_path(self, item_id: str) -> Path:
        """Where the item's mask.png is: 16-bit, pixel = object id, 0 = background."""
        return BatchFolder(self.folder).mask_path(item_id)


def load_batch(folder: str | Path) -> Batch:
    """Read a batch folder (from `render_batch`, `render_items`, `stim3d render` or `stim3d merge`).

    Parameters
    ----------
    folder : str or Path
        The batch folder.

    Returns
    -------
    Batch
        Its config (None when it has no batch.json), the complete items in item-id order,
        the records of records.jsonl (empty when it was not written yet, e.g. a single
        shard) and summary.json.

    Items are those of the batch's one listing (`BatchFolder.item_folders`: records.jsonl,
    else batch.json's plan): a folder that is incomplete, fails its checksums or is a
    symbolic link is left out, its records with it, and named in `Batch.skipped`.

    Raises
    ------
    ConfigError
        `folder` is not a batch folder (no batch.json, no records.jsonl and no item), or one
        of its files is corrupt (the message names it).
    """
    batch = BatchFolder(folder)
    if not batch.root.is_dir():
        raise ConfigError(f"{batch.root}: no such folder")
    manifest = batch.manifest()
    records = batch.read_records()
    skipped: dict[str, str] = {}
    folders = batch.item_folders(skipped)
    if manifest is None and not batch.records_path.is_file() and not folders:
        raise ConfigError(f"{batch.root}: not a stim3d batch folder (no {batch.manifest_path.name}, no "
                          f"{batch.records_path.name} and no complete item folder)")
    items = []
    for path in folders:
        try:
            items.append(load_item(path))
        except (OSError, ValueError) as exc:
            skipped[path.name] = f"item.json is not a valid item: {str(exc).splitlines()[0]}"
    kept = {item.item_id for item in items}
    for record in records:
        if record.item_id not in kept:
            skipped.setdefault(record.item_id, "no complete item folder")
    return Batch(
        folder=batch.root,
        config=BatchConfig.model_validate(manifest["config"]) if manifest else None,
        items=items,
        records=[r for r in records if r.item_id in kept],
        summary=batch.read_summary(),
        skipped=skipped,
    )
