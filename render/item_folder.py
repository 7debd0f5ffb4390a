"""The item folder `OUT/items/<item_id>/`, written atomically.

Files are written into a hidden temporary sibling and the folder is renamed into
place only when complete, so a killed run never leaves a half-written item that
looks complete, and a rerun simply redoes what is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
from PIL import Image

from scenes.model import Item

from .output import RenderOutput

ITEMS_DIR = "items"
REQUIRED = ("item.json", "image.png", "mask.png")


def item_dir(out: Path, item_id: str) -> Path:
    return out / ITEMS_DIR / item_id


def is_complete(folder: Path) -> bool:
    return folder.is_dir() and all((folder / name).is_file() for name in REQUIRED)


def load_item(folder: Path) -> Item:
    return Item.model_validate_json((folder / "item.json").read_text())


def save_png16(path: Path, ids: np.ndarray) -> None:
    Image.fromarray(ids.astype(np.uint16)).save(path)


def load_mask(folder: Path) -> np.ndarray:
    return np.asarray(Image.open(folder / "mask.png")).astype(np.uint16)


def write_item_folder(
    out: Path, item: Item, output: RenderOutput, mask: np.ndarray, timing: dict[str, float]
) -> Path:
    """Write image, mask, item.json (and depth.npy, timing.json); return the final folder.

    `timing` (seconds per stage) goes to timing.json, not item.json: item.json must be
    byte-for-byte reproducible. The write stage's own time is added here.
    """
    started = time.perf_counter()
    final = item_dir(out, item.item_id)
    tmp = final.with_name(f".tmp-{item.item_id}-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    Image.fromarray(output.image).save(tmp / "image.png")
    save_png16(tmp / "mask.png", mask)
    if output.depth is not None:
        np.save(tmp / "depth.npy", output.depth.astype(np.float32))
    (tmp / "item.json").write_text(item.to_json())
    timing = {**timing, "write": time.perf_counter() - started}
    (tmp / "timing.json").write_text(json.dumps({k: round(v, 4) for k, v in timing.items()}, indent=2) + "\n")
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    return final


def remove_stale_temporaries(out: Path) -> int:
    """Delete temporary folders left by killed runs; returns how many."""
    items = out / ITEMS_DIR
    stale = [p for p in items.glob(".tmp-*") if p.is_dir()] if items.is_dir() else []
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    return len(stale)
