"""The item folder `OUT/items/<item_id>/`: what is in it, how it is read, and how it is published.

Files are written into a hidden temporary sibling and the folder is renamed into
place only when complete (`stim3d.render.files.atomic_folder`), so a killed run
never leaves a half-written item that looks complete, and a rerun simply redoes
what is missing.

`checksums.json` (written last, inside the folder) holds the SHA-256 and size of
every file but itself and timing.json, so it is as deterministic as the files it
covers. A resume counts an item as done only when every file still matches
(`verify_item`): a truncated or edited image is re-rendered, never shipped.
item.json does not carry them: it must stay byte-identical for a given config.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
from PIL import Image

from stim3d.render.backends.output import RenderOutput
from stim3d.render.batch.layout import item_dir
from stim3d.render.files import atomic_folder, file_sha256
from stim3d.scenes.model import Item

REQUIRED = ("item.json", "image.png", "mask.png")
CHECKSUMS = "checksums.json"
UNCHECKED = (CHECKSUMS, "timing.json")  # timing.json holds wall-clock times; it proves nothing about the item


def write_checksums(folder: Path) -> None:
    """Record sha256 and size of the folder's files (before the folder is published)."""
    sums = {p.name: {"sha256": file_sha256(p), "bytes": p.stat().st_size}
            for p in sorted(folder.iterdir()) if p.is_file() and p.name not in UNCHECKED}
    (folder / CHECKSUMS).write_text(json.dumps(sums, indent=2, sort_keys=True) + "\n")


def verify_item(folder: Path, require_checksums: bool = True) -> str | None:
    """None when the item folder is complete and intact; else why not (a missing, truncated or changed file).

    Without `require_checksums`, a folder that has no checksums.json (written by an
    older stim3d, or assembled by hand) is judged by its required files alone.
    """
    if not folder.is_dir():
        return "no item folder"
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
        if os.sep in name or name.startswith(".") or not isinstance(expected, dict):
            return f"{CHECKSUMS}: bad entry {name!r}"
        try:
            if path.stat().st_size != expected.get("bytes") or file_sha256(path) != expected.get("sha256"):
                return f"{name} does not match its checksum (truncated or changed)"
        except OSError:
            return f"{name} missing"
    return None


def is_complete(folder: Path) -> bool:
    """All required files present and, where checksums.json exists, matching it."""
    return verify_item(folder, require_checksums=False) is None


def load_item(folder: Path) -> Item:
    """The item in `folder`/item.json; ValueError naming the file when it is not UTF-8 (ValidationError if invalid)."""
    path = folder / "item.json"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    return Item.model_validate_json(text)


def save_png16(path: Path, ids: np.ndarray) -> None:
    Image.fromarray(ids.astype(np.uint16)).save(path)


def load_mask(folder: Path) -> np.ndarray:
    return np.asarray(Image.open(folder / "mask.png")).astype(np.uint16)


def write_item_folder(
    out: Path, item: Item, output: RenderOutput, mask: np.ndarray, timing: dict[str, float],
    extra_images: dict[str, np.ndarray] | None = None,
) -> Path:
    """Write image, mask, item.json (and depth.npy, timing.json, `extra_images` as PNGs); return the final folder.

    `timing` (seconds per stage) goes to timing.json, not item.json: item.json must be
    byte-for-byte reproducible. The write stage's own time is added here.
    """
    started = time.perf_counter()
    final = item_dir(out, item.item_id)
    with atomic_folder(final) as tmp:
        Image.fromarray(output.image).save(tmp / "image.png")
        for name, extra in (extra_images or {}).items():  # e.g. image_raw.png under markers (render/markers.py)
            Image.fromarray(extra).save(tmp / name)
        save_png16(tmp / "mask.png", mask)
        if output.depth is not None:
            np.save(tmp / "depth.npy", output.depth.astype(np.float32))
        (tmp / "item.json").write_text(item.to_json())
        timing = {**timing, "write": time.perf_counter() - started}
        (tmp / "timing.json").write_text(json.dumps({k: round(v, 4) for k, v in timing.items()}, indent=2) + "\n")
        write_checksums(tmp)
    return final


def install_item_files(out: Path, item_id: str, files: dict[str, bytes]) -> Path:
    """Write an item folder received as bytes (from a remote worker), published atomically like any other."""
    final = item_dir(out, item_id)
    with atomic_folder(final) as tmp:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
    return final
