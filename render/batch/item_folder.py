"""The item folder `OUT/items/<item_id>/`: what is in it, how it is read, and how it is published.

Files are written into a hidden temporary sibling and the folder is renamed into
place only when complete (`stim3d.render.files.atomic_folder`), so a killed run
never leaves a half-written item that looks complete, and a rerun simply redoes
what is missing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from PIL import Image

from stim3d.render.backends.output import RenderOutput
from stim3d.render.batch.layout import item_dir
from stim3d.render.files import atomic_folder
from stim3d.scenes.model import Item

REQUIRED = ("item.json", "image.png", "mask.png")


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
    with atomic_folder(final) as tmp:
        Image.fromarray(output.image).save(tmp / "image.png")
        save_png16(tmp / "mask.png", mask)
        if output.depth is not None:
            np.save(tmp / "depth.npy", output.depth.astype(np.float32))
        (tmp / "item.json").write_text(item.to_json())
        timing = {**timing, "write": time.perf_counter() - started}
        (tmp / "timing.json").write_text(json.dumps({k: round(v, 4) for k, v in timing.items()}, indent=2) + "\n")
    return final


def install_item_files(out: Path, item_id: str, files: dict[str, bytes]) -> Path:
    """Write an item folder received as bytes (from a remote worker), published atomically like any other."""
    final = item_dir(out, item_id)
    with atomic_folder(final) as tmp:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
    return final
