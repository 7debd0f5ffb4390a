"""One item folder's own files: their names, which are checked, the checksums, the integrity check, item.json.

render/batch/folder.py owns the batch folder and hands these on; render/batch/item_folder.py writes
them. An item folder holds item.json, image.png and mask.png (REQUIRED), optional passes
(depth.npy, normals.npy, masks/), timing.json (wall-clock times, never checked) and
checksums.json, the SHA-256 and size of every other file, written last.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from pydantic import ValidationError

from stim3d.files import file_sha256
from stim3d.scenes.model import Item

ITEM_JSON, IMAGE, MASK, DEPTH, TIMING, CHECKSUMS = "item.json", "image.png", "mask.png", "depth.npy", "timing.json", \
    "checksums.json"
NORMALS = "normals.npy"  # the optional normals pass: (H, W, 3) float16, camera space (scenes/interchange.py)
MASKS_DIR = "masks"  # the optional per-object masks (render.object_masks): the one sub-folder an item folder has
REQUIRED = (ITEM_JSON, IMAGE, MASK)
UNCHECKED = (CHECKSUMS, TIMING)  # timing.json holds wall-clock times; it proves nothing about the item


def is_link(path: Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def item_file_names(folder: Path) -> list[str]:
    """The item folder's files as relative names: its own files and those in masks/ (as "masks/NAME")."""
    names = [p.name for p in sorted(folder.iterdir()) if p.is_file()]
    masks = folder / MASKS_DIR
    if masks.is_dir() and not is_link(masks):
        names += [f"{MASKS_DIR}/{p.name}" for p in sorted(masks.iterdir()) if p.is_file()]
    return names


def checked_item_name(name: str) -> bool:
    """Whether `name` may be a file of an item folder: a plain name, or one inside masks/; never hidden."""
    parts = name.split("/")
    return (len(parts) == 1 or (len(parts) == 2 and parts[0] == MASKS_DIR)) and all(
        part and not part.startswith(".") and os.sep not in part and part not in ("..", ".") for part in parts)


def write_checksums(folder: Path) -> None:
    """Record sha256 and size of the folder's files (before the folder is published)."""
    sums = {name: {"sha256": file_sha256(folder / name), "bytes": (folder / name).stat().st_size}
            for name in item_file_names(folder) if name not in UNCHECKED}
    (folder / CHECKSUMS).write_text(json.dumps(sums, indent=2, sort_keys=True) + "\n")


def verify_item(folder: Path, require_checksums: bool = True) -> str | None:
    """None when the item folder is complete and intact; else why not (a missing, truncated, changed or linked file).

    Without `require_checksums`, a folder without checksums.json (an older stim3d, or
    assembled by hand) is judged by its required files alone: the rule for *reading* a
    folder. Whether an item is *done* always requires them (`BatchFolder.state`).
    """
    if is_link(folder) or not folder.is_dir():
        return "a symbolic link (not followed)" if is_link(folder) else "no item folder"
    if linked := [name for name in (*REQUIRED, CHECKSUMS) if is_link(folder / name)]:
        return f"{', '.join(linked)}: a symbolic link (not followed)"
    missing = [name for name in REQUIRED if not (folder / name).is_file()]
    if missing:
        return f"missing {', '.join(missing)}"
    try:
        sums = json.loads((folder / CHECKSUMS).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"no {CHECKSUMS}" if require_checksums else None
    except (OSError, ValueError) as exc:
        return f"{CHECKSUMS} unreadable: {exc}"
    if not isinstance(sums, dict) or not set(REQUIRED) <= set(sums):
        return f"{CHECKSUMS} does not list {', '.join(REQUIRED)}"
    for name, expected in sorted(sums.items()):
        path = folder / name
        if not checked_item_name(name) or not isinstance(expected, dict) or is_link(path) or is_link(path.parent):
            return f"{CHECKSUMS}: bad entry {name!r}"
        try:
            if path.stat().st_size != expected.get("bytes") or file_sha256(path) != expected.get("sha256"):
                return f"{name} does not match its checksum (truncated or changed)"
        except OSError:
            return f"{name} missing"
    return None


def item_problem(exc: ValueError) -> str:
    """One line naming what is wrong with an item.json: the first field pydantic refused and why (and how many
    more), or the reading error itself."""
    if not isinstance(exc, ValidationError):
        return str(exc).splitlines()[0]
    error = exc.errors()[0]
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{'.'.join(map(str, error['loc'])) or 'item'}: {error['msg']}{more}"


def load_item(folder: Path) -> Item:
    """The item in `folder`/item.json; ValueError naming the file when it is not UTF-8 (ValidationError if invalid)."""
    path = Path(folder) / ITEM_JSON
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    return Item.model_validate_json(text)
