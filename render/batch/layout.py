"""The names inside a batch folder: the one place that knows them.

```
OUT/batch.json                 the config and its hash (MANIFEST)
OUT/items/<item_id>/           one folder per item (ITEMS_DIR), published atomically
OUT/failures/<item_id>.json    items that could not be made (FAILURES_DIR)
OUT/records.jsonl              one record per question (RECORDS)
OUT/summary.json               counts, seconds, constant baselines (SUMMARY)
```
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from stim3d.render.files import TMP_MARK

MANIFEST = "batch.json"
RECORDS = "records.jsonl"
SUMMARY = "summary.json"
ITEMS_DIR = "items"
FAILURES_DIR = "failures"

_ITEM_TEMPORARY = re.compile(rf"\.(.+){re.escape(TMP_MARK)}")


def item_dir(out: Path, item_id: str) -> Path:
    return Path(out) / ITEMS_DIR / item_id


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The folder's batch.json (None if it has none); ConfigError naming the file when it is corrupt."""
    from stim3d.render.batch.config import ConfigError

    manifest = Path(folder) / MANIFEST
    if not manifest.is_file():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{manifest}: corrupt ({str(exc).splitlines()[0]}); restore it, or render into a new folder") from None
    if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
        raise ConfigError(f"{manifest}: corrupt (no config in it); restore it, or render into a new folder")
    return data


def batch_item_folders(out: Path, skipped: dict[str, str] | None = None) -> list[Path]:
    """The items of a batch, the one notion that records.jsonl, the gallery, contact sheets and exports share.

    The items listed in OUT/records.jsonl (what `stim3d score` and the exports read),
    when their folder is complete and intact (item_folder.verify_item). While a batch
    has no records.jsonl yet (still rendering), the complete folders whose item id its
    batch.json plans; without a batch.json (a loose folder of items), every complete
    folder. A folder dropped in by hand or by the add-on's Render and Save is not an
    item of the batch: it is named in `skipped` with the reason. Item-id order.
    """
    from stim3d.render.batch.item_folder import verify_item

    out = Path(out)
    items = out / ITEMS_DIR
    listed: set[str] | None = None
    why_not = ""
    if (out / RECORDS).is_file():
        listed = set()
        for line in (out / RECORDS).read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                item_id = json.loads(line).get("item_id") if line.strip() else None
            except (ValueError, AttributeError):
                continue  # a damaged line: `stim3d score` names it; here it lists nothing
            if isinstance(item_id, str):
                listed.add(item_id)
        why_not = f"not in {RECORDS} (not an item of this batch)"
    elif (manifest := read_manifest(out)) is not None:
        from stim3d.render.batch.config import expand, parse_config

        listed = {plan.item_id for plan in expand(parse_config(manifest["config"], str(out / MANIFEST)))}
        why_not = f"not an item of this batch ({MANIFEST} does not plan it)"
    folders = []
    for path in sorted(items.iterdir()) if items.is_dir() else []:
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


def remove_item_temporaries(out: Path, item_ids: set[str] | None = None) -> int:
    """Delete temporary item folders left by killed runs: all of them, or only those of `item_ids`.

    A shard passes its own items: another shard may share the folder and be writing now.
    """
    items = Path(out) / ITEMS_DIR
    if not items.is_dir():
        return 0
    removed = 0
    for path in items.iterdir():
        match = _ITEM_TEMPORARY.match(path.name)
        if match and (item_ids is None or match[1] in item_ids):
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
            removed += 1
    return removed
