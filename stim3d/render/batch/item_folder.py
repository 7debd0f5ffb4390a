"""Writing one item folder's pixels and files: image, mask, depth, normals, item.json, timing, checksums.

Files are written into a hidden temporary sibling and the folder is renamed into
place only when complete (`stim3d.files.atomic_folder`), so a killed run
never leaves a half-written item that looks complete, and a rerun simply redoes
what is missing. Where the folder is and when it counts as done is the batch
folder's business (`render/batch/folder.py`): callers pass the final folder that
`BatchFolder.item_dir` named.

`checksums.json` (written last, inside the folder) holds the SHA-256 and size of
every file but itself and timing.json, so it is as deterministic as the files it
covers. item.json does not carry them: it must stay byte-identical for a given config.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from PIL import Image

from stim3d.files import atomic_folder
from stim3d.render.backends.output import RenderOutput
from stim3d.render.batch.folder import (
    DEPTH,
    IMAGE,
    ITEM_JSON,
    MASK,
    MASKS_DIR,
    NORMALS,
    TIMING,
    BatchFolder,
    LinkRefused,
    checked_item_name,
    load_item,
    write_checksums,
)
from stim3d.scenes.model import Item

__all__ = ["install_item_files", "load_item", "load_mask", "save_png16", "write_item_folder"]


def save_png16(path: Path, ids: np.ndarray) -> None:
    Image.fromarray(ids.astype(np.uint16)).save(path)


def load_mask(folder: Path) -> np.ndarray:
    return np.asarray(Image.open(folder / MASK)).astype(np.uint16)


def write_item_folder(
    out: Path, item: Item, output: RenderOutput, mask: np.ndarray, timing: dict[str, float],
    extra_images: dict[str, np.ndarray] | None = None, object_masks: dict[str, np.ndarray] | None = None,
) -> Path:
    """Write image, mask, item.json (and depth.npy, normals.npy, timing.json, `extra_images` as PNGs); return the final folder.

    `timing` (seconds per stage) goes to timing.json, not item.json: item.json must be
    byte-for-byte reproducible. The write stage's own time is added here.
    """
    started = time.perf_counter()
    with atomic_folder(_final(out, item.item_id)) as tmp:
        Image.fromarray(output.image).save(tmp / IMAGE)
        for name, extra in (extra_images or {}).items():  # e.g. image_raw.png under markers (render/markers.py)
            Image.fromarray(extra).save(tmp / name)
        save_png16(tmp / MASK, mask)
        if object_masks is not None:  # render.object_masks (render/object_masks.py): 8-bit, 255 where the object is
            (tmp / MASKS_DIR).mkdir()
            for name, pixels in object_masks.items():
                Image.fromarray(pixels.astype(np.uint8) * 255).save(tmp / MASKS_DIR / name)
        if output.depth is not None:
            np.save(tmp / DEPTH, output.depth.astype(np.float32))
        if output.normals is not None:  # float16: 1e-3 is finer than any shading normal needs, half the bytes
            np.save(tmp / NORMALS, output.normals.astype(np.float16))
        (tmp / ITEM_JSON).write_text(item.to_json())
        timing = {**timing, "write": time.perf_counter() - started}
        (tmp / TIMING).write_text(json.dumps({k: round(v, 4) for k, v in timing.items()}, indent=2) + "\n")
        write_checksums(tmp)
    return _final(out, item.item_id)


def install_item_files(out: Path, item_id: str, files: dict[str, bytes]) -> Path:
    """Write an item folder received as bytes (from a remote worker), published atomically like any other."""
    with atomic_folder(_final(out, item_id)) as tmp:
        for name, data in files.items():
            if "/" in name and checked_item_name(name):  # masks/NAME: the one sub-folder an item folder has
                (tmp / MASKS_DIR).mkdir(exist_ok=True)
                (tmp / name).write_bytes(data)
            else:  # any other name lands in the folder itself, never elsewhere
                (tmp / Path(name).name).write_bytes(data)
    return _final(out, item_id)


def _final(out: Path, item_id: str) -> Path:
    """The item's folder, its id checked and links refused: nothing is written or deleted outside `out`."""
    batch = BatchFolder(out)
    final = batch.item_dir(item_id)
    if (link := batch.link_in(final)) is not None:
        raise LinkRefused(f"{link}: a symbolic link inside the batch folder {out}; stim3d never writes or deletes "
                          "through one (docs/hardening.md)")
    return final
