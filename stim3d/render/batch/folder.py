"""The batch folder on disk and its one owner, `BatchFolder`: names, manifest, item listing, done-or-redo, failures.

```
OUT/batch.json                 the config, its hash and the code that rendered it (MANIFEST)
OUT/items/<item_id>/           one folder per item, published atomically (item.json, image.png, mask.png,
                               checksums.json, timing.json, depth.npy, extra images)
OUT/failures/<item_id>.json    items that could not be made, with the reason and the attempts
OUT/records.jsonl              one record per question, in item-id order (RECORDS)
OUT/summary.json               counts, seconds, constant baselines (SUMMARY)
```

Render, merge, sweeps, `stim3d.render_items`, `load_batch`, exports, the gallery and
contact sheets all read and write a batch folder through this module; no other module
knows these names or when an item counts as done. One item folder's own files (their
names, checksums, the integrity check, item.json) are render/batch/item_files.py's, handed
on from here; the resume keys are in render/batch/keys.py.

Symbolic links (docs/hardening.md): stim3d never writes, deletes or reads through a
symbolic link *inside* a batch folder (a tar of a batch can carry any link). A writer
refuses such a folder with one line (`LinkRefused`); a reader skips an item whose folder
or files are links and names it. The folder itself (`--out`) may be a link: the user
chose it on the command line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stim3d.files import TMP_MARK, file_sha256, inside, write_jsonl_atomic, write_text_atomic
from stim3d.files import remove_temporaries as _remove_file_temporaries
from stim3d.render.batch.config import BatchConfig, ConfigError, parse_config
from stim3d.render.batch.item_files import (
    CHECKSUMS,
    DEPTH,
    IMAGE,
    ITEM_JSON,
    MASK,
    MASKS_DIR,
    NORMALS,
    REQUIRED,
    TIMING,
    UNCHECKED,
    checked_item_name,
    is_link,
    item_file_names,
    load_item,
    verify_item,
    write_checksums,
)
from stim3d.render.batch.keys import code_mismatch
from stim3d.render.batch.plan import expand
from stim3d.render.batch.records import records_for
from stim3d.render.provenance import code_identity
from stim3d.scenes.mesh_files import changed_mesh_files
from stim3d.scenes.names import check_name
from stim3d.scoring.records import Record, read_records

# Callers read every batch-folder and item-folder name from this module (the item folder's from item_files.py).
__all__ = ["BatchFolder", "CHECKSUMS", "DEPTH", "FAILURES_DIR", "IMAGE", "ITEMS_DIR", "ITEM_JSON", "ItemState",
           "LinkRefused", "MANIFEST", "MASK", "MASKS_DIR", "NORMALS", "RECORDS", "REQUIRED", "SUMMARY", "TIMING",
           "UNCHECKED", "checked_item_name", "is_link", "item_file_names", "load_item", "verify_item",
           "write_checksums"]

MANIFEST = "batch.json"
RECORDS = "records.jsonl"
SUMMARY = "summary.json"
ITEMS_DIR = "items"
FAILURES_DIR = "failures"

_ITEM_TEMPORARY = re.compile(rf"\.(.+){re.escape(TMP_MARK)}")


class LinkRefused(ConfigError):
    """A symbolic link inside a batch folder, where stim3d would write or delete through it."""


@dataclass(frozen=True)
class ItemState:
    """Whether an item's folder is done for a key, and if not, why it is (re)rendered."""

    done: bool
    reason: str = ""  # "" when done; "not rendered" when there is no folder; else what is wrong with it
    key: str | None = None  # the key stored in its item.json, when the folder is intact


class BatchFolder:
    """One batch folder on disk (see the module docstring); cheap to make, holds nothing but its path."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.items = self.root / ITEMS_DIR
        self.failures = self.root / FAILURES_DIR
        self.manifest_path = self.root / MANIFEST
        self.records_path = self.root / RECORDS
        self.summary_path = self.root / SUMMARY

    # -- names and the link rule ---------------------------------------------------------------------

    def item_dir(self, item_id: str) -> Path:
        """`items/<item_id>`: ConfigError unless the id is one safe path component (it comes from files and callers)."""
        try:
            check_name(item_id, "item id")
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        return self.items / item_id

    def image_path(self, item_id: str) -> Path:
        return self.item_dir(item_id) / IMAGE

    def mask_path(self, item_id: str) -> Path:
        return self.item_dir(item_id) / MASK

    def link_in(self, path: Path) -> Path | None:
        """The first symbolic link between the folder (excluded) and `path` (included), or None."""
        current = self.root
        for part in Path(path).relative_to(self.root).parts:
            current = current / part
            if is_link(current):
                return current
        return None

    def refuse_links(self) -> None:
        """Before writing or deleting anything: LinkRefused if a name stim3d manages here is a symbolic link."""
        names = [self.items, self.failures, self.manifest_path, self.records_path, self.summary_path]
        for folder in (self.items, self.failures):
            if folder.is_dir() and not is_link(folder):
                names += sorted(folder.iterdir())
        for path in names:
            if is_link(path):
                raise LinkRefused(f"{path}: a symbolic link inside the batch folder {self.root}; stim3d never writes, "
                                  "deletes or reads through one (docs/hardening.md): replace it with a real folder or file")

    def prepare(self) -> None:
        """Create the folder (and items/) for writing, refusing links first."""
        self.refuse_links()
        self.items.mkdir(parents=True, exist_ok=True)

    # -- the manifest -----------------------------------------------------------------------------------

    def manifest(self) -> dict[str, Any] | None:
        """batch.json (None if there is none); ConfigError naming the file when it is corrupt or a link."""
        if is_link(self.manifest_path):
            raise LinkRefused(f"{self.manifest_path}: a symbolic link (not followed); replace it with the real file")
        if not self.manifest_path.is_file():
            return None
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ConfigError(f"{self.manifest_path}: corrupt ({str(exc).splitlines()[0]}); restore it, or render into "
                              "a new folder") from None
        if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
            raise ConfigError(f"{self.manifest_path}: corrupt (no config in it); restore it, or render into a new folder")
        return data

    def check_manifest(self, config: BatchConfig, force: bool) -> None:
        """ConfigError unless this folder is new or holds `config` rendered by this code (or `force`)."""
        previous = self.manifest()
        if previous is None or force:
            return
        if previous.get("config_hash") != config.content_hash():
            raise ConfigError(
                f"{self.root} holds a batch rendered from a different config (hash {previous.get('config_hash')} != "
                f"{config.content_hash()}); use another `out`, or `force=True` to re-render it with this config")
        code = code_identity({task.family for task in config.tasks}, with_commit=False)
        if (other := code_mismatch(previous, code)) is not None:
            revisions = ", ".join(f"{k} {v}" for k, v in code["generator_revisions"].items())
            raise ConfigError(
                f"{self.root} was rendered by {other}, this is stim3d {code['stim3d_version']} (generator revisions: "
                f"{revisions}); its items would be mixed with new ones: use another `out`, or `force=True` to "
                "re-render it")

    def write_manifest(self, config: BatchConfig) -> None:
        families = {task.family for task in config.tasks}
        # Key order is kept: the order of a task's grid axes decides which item gets which combination,
        # and `stim3d merge` rebuilds the item plan from this file.
        self.write_manifest_payload({"config_hash": config.content_hash(), "config": config.model_dump(mode="json"),
                                     "code": code_identity(families)})

    def write_manifest_payload(self, payload: dict[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.manifest_path, json.dumps(payload, indent=2) + "\n")

    # -- items: the listing and the done-or-redo rule -----------------------------------------------

    def listed_ids(self) -> tuple[set[str] | None, str]:
        """The item ids of the batch and why a folder outside them is not one of its items (None: every folder).

        Those of records.jsonl once it is written (what `stim3d score` and the exports
        read); before that (still rendering), those batch.json plans; without either (a
        loose folder of items), every folder.
        """
        if self.records_path.is_file():
            listed = set()
            for line in self.records_path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    item_id = json.loads(line).get("item_id") if line.strip() else None
                except (ValueError, AttributeError):
                    continue  # a damaged line: `stim3d score` names it; here it lists nothing
                if isinstance(item_id, str):
                    listed.add(item_id)
            return listed, f"not in {RECORDS} (not an item of this batch)"
        if (manifest := self.manifest()) is not None:
            plans = expand(parse_config(manifest["config"], str(self.manifest_path)))
            return {plan.item_id for plan in plans}, f"not an item of this batch ({MANIFEST} does not plan it)"
        return None, ""

    def item_folders(self, skipped: dict[str, str] | None = None) -> list[Path]:
        """The batch's readable items (`listed_ids`), in item-id order: the one listing for every reader.

        A folder that is incomplete, fails its checksums, is a link or is not an item of
        the batch is left out and named in `skipped` with the reason.
        """
        if is_link(self.items):
            raise LinkRefused(f"{self.items}: a symbolic link (not followed); replace it with the real folder")
        listed, why_not = self.listed_ids()
        folders = []
        for path in sorted(self.items.iterdir()) if self.items.is_dir() else []:
            if path.name.startswith("."):
                continue
            problem = verify_item(path, require_checksums=False)
            if problem is None and listed is not None and path.name not in listed:
                problem = why_not
            if problem is None:
                folders.append(path)
            elif skipped is not None:
                skipped[path.name] = problem
        return folders

    def state(self, item_id: str, key: str | None) -> ItemState:
        """Done, or redo with the reason. The one rule: every required file present and matching checksums.json
        (required), item.json a valid item, and its stored key equal to `key` (any key when `key` is None)."""
        folder = self.item_dir(item_id)
        if not os.path.lexists(folder):
            return ItemState(False, "not rendered")
        if (link := self.link_in(folder)) is not None:
            return ItemState(False, f"{link.relative_to(self.root)} is a symbolic link (not followed)")
        if (problem := verify_item(folder)) is not None:
            return ItemState(False, problem)
        try:
            item = load_item(folder)
        except (OSError, ValueError) as exc:
            return ItemState(False, f"{ITEM_JSON} is not a valid item: {str(exc).splitlines()[0]}")
        provenance = item.provenance
        stored = provenance.item_key if provenance else None
        if stored is None:
            return ItemState(False, "never rendered (no provenance)")
        if key is not None and stored != key:
            return ItemState(False, "rendered from other settings or code (its item key differs)", stored)
        if changed := changed_mesh_files(item.scene):  # docs/objects.md: the key is the config's, not the file's
            return ItemState(False, f"mesh file changed since it was rendered: {', '.join(changed)}", stored)
        return ItemState(True, "", stored)

    # -- failures, unplanned items, temporaries ---------------------------------------------------------

    def record_failure(self, item_id: str, reason: str, attempts: int = 1) -> None:
        self.failures.mkdir(exist_ok=True)
        payload = {"item_id": item_id, "reason": reason, "attempts": attempts}
        write_text_atomic(self.failures / f"{check_name(item_id, 'item id')}.json", json.dumps(payload) + "\n")

    def clear_failure(self, item_id: str) -> None:
        (self.failures / f"{check_name(item_id, 'item id')}.json").unlink(missing_ok=True)

    def failure(self, item_id: str) -> dict[str, Any] | None:
        """The recorded failure of `item_id` (None if none); a corrupt file gives a reason naming it."""
        path = self.failures / f"{check_name(item_id, 'item id')}.json"
        if is_link(path) or not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError):
            return {"reason": f"{path} is corrupt"}
        return data if isinstance(data, dict) else {}

    def failure_count(self) -> int:
        return len(list(self.failures.glob("*.json"))) if self.failures.is_dir() and not is_link(self.failures) else 0

    def remove_unplanned(self, planned: set[str]) -> int:
        """Delete item folders and failures of items not in `planned` (after --force with a smaller config).

        Links were refused before (`refuse_links`); a link found now is only unlinked, never followed.
        """
        self.refuse_links()
        removed = 0
        for folder in sorted(self.items.iterdir()) if self.items.is_dir() else []:
            if not folder.name.startswith(".") and folder.name not in planned:
                _remove(inside(self.root, folder) if not is_link(folder) else folder)
                removed += 1
        for failure in sorted(self.failures.glob("*.json")) if self.failures.is_dir() else []:
            if failure.stem not in planned:
                failure.unlink()
        return removed

    def remove_temporaries(self, item_ids: set[str] | None = None) -> int:
        """Delete temporaries left by killed runs: item folders of `item_ids` only (a shard: another shard may
        be writing now), or all of them and those of records, summary and failures."""
        removed = 0
        for path in self.items.iterdir() if self.items.is_dir() and not is_link(self.items) else []:
            match = _ITEM_TEMPORARY.match(path.name)
            if match and (item_ids is None or match[1] in item_ids):
                _remove(path)
                removed += 1
        if item_ids is None:
            removed += _remove_file_temporaries(self.root)
            if not is_link(self.failures):
                removed += _remove_file_temporaries(self.failures)
        return removed

    # -- records and summary ---------------------------------------------------------------------------------

    def collect_records(self, expected: dict[str, str] | None = None) -> list[Record]:
        """Records in item-id order: with `expected` (item_id -> key), of the items done for their key;
        without, of every readable folder."""
        if expected is None:  # listed in records.jsonl or not: the records are being rebuilt
            return self.records_of([p.name for p in sorted(self.items.iterdir()) if not p.name.startswith(".")
                                    and verify_item(p, require_checksums=False) is None] if self.items.is_dir() else [])
        return self.records_of([i for i, key in sorted(expected.items()) if self.state(i, key).done])

    def records_of(self, item_ids: list[str]) -> list[Record]:
        """The records of these items, in this order (an item whose item.json does not load has none)."""
        rows: list[Record] = []
        for item_id in item_ids:
            folder = self.item_dir(item_id)
            try:
                item = load_item(folder)
            except (OSError, ValueError):  # not a valid item: not done (a rerun redoes it and says why)
                continue
            image = folder / IMAGE
            rows.extend(records_for(item, os.path.relpath(image, self.root), file_sha256(image)))
        return rows

    def write_records(self, expected: dict[str, str] | None = None, rows: list[Record] | None = None) -> list[Record]:
        """Write records.jsonl: `rows`, or those `collect_records(expected)` finds; returns what was written."""
        rows = self.collect_records(expected) if rows is None else rows
        write_jsonl_atomic(self.records_path, rows)
        return rows

    def write_summary(self, payload: dict[str, Any], name: str = SUMMARY) -> Path:
        path = self.root / name
        write_text_atomic(path, json.dumps(payload, indent=2) + "\n")
        return path

    def read_records(self) -> list[Record]:
        """records.jsonl ([] when not written yet); ConfigError naming the file and line when it is corrupt."""
        if not self.records_path.is_file():
            return []
        try:
            return read_records(self.records_path)
        except (UnicodeDecodeError, ValueError) as exc:
            raise ConfigError(f"{self.records_path}: {exc}" if str(self.records_path) not in str(exc) else str(exc)) \
                from None

    def read_summary(self) -> dict[str, Any] | None:
        """summary.json (None when not written yet); ConfigError naming the file when it is corrupt."""
        if not self.summary_path.is_file():
            return None
        try:
            data = json.loads(self.summary_path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ConfigError(f"{self.summary_path}: corrupt ({str(exc).splitlines()[0]})") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{self.summary_path}: corrupt (not a JSON object)")
        return data


def _remove(path: Path) -> None:
    """Delete a file, a folder, or a link itself (never what a link points to)."""
    if is_link(path) or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)
