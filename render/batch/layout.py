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
