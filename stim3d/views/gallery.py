"""A static HTML gallery of a batch, with ground-truth overlays drawn from the item folders.

`build_gallery(OUT)` writes `OUT/gallery/index.html`: one page, no server and no
external assets (CSS and JS are inline), that opens from the file system. Each
card shows the thumbnail, family, question, gold answer and difficulty values;
filters by family and by any difficulty key (the look among them) hide cards; a card opens a detail
view whose overlays (instance mask in false colour, modal and amodal boxes,
per-object labels with visibility, grid rows and columns) are PNG layers drawn
here with Pillow from `mask.png` and `item.json` only: nothing re-renders, so
what the overlays show is exactly what the records claim.

Scale: thumbnails (`gallery/thumbs/`) and overlay layers (`gallery/overlays/`)
are made once and remade only when the item's files are newer, so rebuilding a
gallery of thousands of items costs one item.json read per item. The page does
no per-item work when it loads: card images are lazy-loaded, the detail data is
parsed on first use, and overlay layers load only when switched on.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Collection, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from PIL import Image
from pydantic import ValidationError

from stim3d.errors import Stim3dError
from stim3d.files import atomic_path, inside, write_text_atomic
from stim3d.render.batch.config import ConfigError
from stim3d.render.batch.folder import IMAGE, ITEM_JSON, MASK, BatchFolder
from stim3d.render.batch.item_folder import load_item, load_mask
from stim3d.render.batch.selection import SelectionError, select_items
from stim3d.scenes.model import Item, StudioLook
from stim3d.scenes.names import NAME_LIMIT, check_name
from stim3d.views.gallery_page import THUMB_WIDTH, GalleryEntry, render_index
from stim3d.views.overlays import LAYERS, OVERLAY_STYLE, OVERLAYS_DIR, grid_cells, overlay_paths, write_overlays

GALLERY_DIR = "gallery"
THUMBS_DIR = "thumbs"
ProgressFn = Callable[[int, int, str], None]  # (done, total, item_id) over the items whose files are made


class GalleryError(Stim3dError, ValueError):
    """A user's mistake (no items, an unknown family or filter key): one line naming what is wrong."""


@dataclass
class GalleryReport:
    index: Path
    items: int = 0
    excluded: int = 0
    thumbs_made: int = 0
    thumbs_reused: int = 0
    overlays_made: int = 0
    overlays_reused: int = 0
    unreadable: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        parts = [f"gallery: {self.items} items"]
        if self.excluded:
            parts.append(f"{self.excluded} filtered out")
        parts.append(f"thumbnails made {self.thumbs_made}, reused {self.thumbs_reused}")
        parts.append(f"overlays made {self.overlays_made}, reused {self.overlays_reused}")
        return "; ".join(parts)


# -- selecting items -----------------------------------------------------------------------------------

def item_folders(out: Path, skipped: dict[str, str] | None = None) -> list[Path]:
    """The items of the batch (`BatchFolder.item_folders`: those records.jsonl lists, as the exports read them),
    in item-id order; a clear error when there are none.

    A folder that is incomplete, fails its checksums.json or is not an item of the
    batch is left out and, when `skipped` is given, named there with the reason.
    """
    batch = BatchFolder(out)
    items = batch.items
    try:
        folders = batch.item_folders(skipped)
    except ConfigError as exc:
        raise GalleryError(str(exc)) from None
    if not folders:
        raise GalleryError(f"{out}: no rendered items (expected {items}/<item_id>/ with item.json, image.png, mask.png)")
    return folders


def page_name(name: str | None, family: str | None, filters: dict[str, str]) -> str:
    """The page's file name without .html: `name` (checked), "index" for all items, else one from the filters."""
    if name is not None:
        try:
            return check_name(name, "`name`")
        except ValueError as exc:
            raise GalleryError(str(exc)) from None
    if not family and not filters:
        return "index"
    parts = ([family] if family else []) + [f"{k}-{v}" for k, v in filters.items()]
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", "_".join(parts)).strip("._-")[:NAME_LIMIT] or "filtered"


def shown_items(items: list[Item], family: str | None, filters: dict[str, str]) -> list[Item]:
    """The items a gallery or a contact sheet shows (render/batch/selection.py's rule); a GalleryError when the
    filters select nothing or name a key no item has."""
    try:
        return select_items(items, family, filters)
    except SelectionError as exc:
        raise GalleryError(exc.reason, field=exc.field, value=exc.value) from None


def with_studio_look(items: list[Item]) -> list[Item]:
    """When any item has a look, studio items show `look: studio` too (in memory, for the page only), so the
    page's look filter can pick them; a studio-only gallery is left as it was."""
    if all(isinstance(item.scene.look, StudioLook) for item in items):
        return items
    return [item if "look" in item.difficulty else
            item.model_copy(update={"difficulty": {**item.difficulty, "look": item.scene.look.name}}) for item in items]


# -- thumbnails and overlays ---------------------------------------------------------------------------

def _is_fresh(target: Path, sources: Iterable[Path]) -> bool:
    """True when `target` exists and is not older than any source (make's rule)."""
    if not target.is_file():
        return False
    made = target.stat().st_mtime_ns
    return all(made >= s.stat().st_mtime_ns for s in sources)


def thumbnail(image: Image.Image, width: int) -> Image.Image:
    """Scale to `width` keeping the aspect ratio; small stimuli are enlarged nearest-neighbour, never blurred."""
    height = max(1, round(image.height * width / image.width))
    resample = Image.Resampling.NEAREST if width >= image.width else Image.Resampling.LANCZOS
    return image.convert("RGB").resize((width, height), resample)


def write_thumbnail(image_path: Path, thumb_path: Path, width: int = THUMB_WIDTH) -> tuple[int, int]:
    """A JPEG thumbnail no wider than `width` (tiny images keep their size; the page enlarges them)."""
    with Image.open(image_path) as image:
        thumb = thumbnail(image, min(width, image.width))
    thumb_path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(thumb_path) as tmp:
        thumb.save(tmp, format="JPEG", quality=88)
    return thumb.size


# Trubetskoy's 20 distinct colours without grey, white, black and beige: ids 1..16 never look alike.
# -- building ------------------------------------------------------------------------------------------

def _thumb_path(gallery: Path, item_id: str) -> Path:
    return gallery / THUMBS_DIR / f"{item_id}.jpg"


def _expected_layers(item: Item) -> list[str]:
    return [name for name in LAYERS if name != "grid" or grid_cells(item)]


def _overlays_fresh(item: Item, folder: Path, gallery: Path) -> bool:
    paths = overlay_paths(gallery, item.item_id)
    expected = _expected_layers(item)
    sources = [folder / MASK, folder / ITEM_JSON]
    return all(_is_fresh(paths[name], sources) for name in expected) and ("grid" in expected or not paths["grid"].exists())


def _make_files(item: Item, folder: Path, gallery: Path, thumb: bool,
                overlays: bool) -> tuple[str, list[str] | None, str | None]:
    """Worker: (re)make one item's thumbnail and/or overlay layers.

    Returns (item id, layers written or None, why the item was skipped or None): a
    corrupt image.png or mask.png skips that item, never the gallery. A target that
    resolves outside the batch folder (a symlinked gallery/) raises OutsideDestination.
    """
    for path in (_thumb_path(gallery, item.item_id), *overlay_paths(gallery, item.item_id).values()):
        inside(gallery.parent, path)
    try:
        if thumb:
            write_thumbnail(folder / IMAGE, _thumb_path(gallery, item.item_id))
        layers = None
        if overlays:
            mask, cam = load_mask(folder), item.scene.camera
            if mask.shape != (cam.height, cam.width):
                return item.item_id, None, f"mask.png is {mask.shape[1]}x{mask.shape[0]}, the item {cam.width}x{cam.height}"
            layers = write_overlays(item, mask, overlay_paths(gallery, item.item_id))
    except (OSError, SyntaxError) as exc:  # Pillow: unreadable, truncated or not a PNG
        return item.item_id, None, f"image.png or mask.png unreadable: {str(exc).splitlines()[0]}"
    return item.item_id, layers, None


def _drop_other_style(overlays: Path) -> None:
    """Delete overlay layers drawn by another version of this module (their freshness by mtime says nothing)."""
    stamp = overlays / "STYLE"
    if stamp.is_file() and stamp.read_text().strip() == OVERLAY_STYLE:
        return
    if overlays.exists():
        shutil.rmtree(overlays)
    overlays.mkdir(parents=True)
    stamp.write_text(OVERLAY_STYLE + "\n")


def _default_workers() -> int:
    from stim3d.render.batch.executors.jobs import available_cpus

    return available_cpus()


def build_gallery(
    out: Path,
    *,
    family: str | None = None,
    filters: dict[str, str] | None = None,
    progress: ProgressFn | None = None,
    workers: int | None = None,
    name: str | None = None,
    only_items: Collection[str] | None = None,
    only_label: str | None = None,
) -> GalleryReport:
    """Write OUT/gallery/index.html for the batch's items (optionally one family / matching filters only).

    A filtered page never replaces the full one: it is written as OUT/gallery/<name>.html,
    `name` given or derived from the family and filters (page_name); index.html is the
    page of every item. Pages share the thumbnails and overlays.

    Thumbnails and overlay layers already made and not older than the item's
    files are reused; the rest are made in `workers` threads (default: one per
    core) when there are many. `progress` is called once per item whose files
    are made. `only_items` keeps only those item ids (a subset chosen by the caller, such as
    the items a model got wrong), `only_label` ("KEY=VALUE") names that subset on the page
    and in its file name. An item.json that does not parse is skipped and named in the
    report, never fatal.
    """
    out = Path(out)
    gallery = out / GALLERY_DIR
    inside(out, gallery)  # a gallery/ symlinked elsewhere is refused before anything is written
    filters = dict(filters or {})
    shown = dict(filters)  # what the page's name and note say it shows: the filters and the subset's KEY=VALUE label
    if only_label:
        key, _, value = only_label.partition("=")
        shown[key] = value
    report = GalleryReport(index=gallery / f"{page_name(name, family, shown)}.html")
    loaded = _load_items(out, report)
    candidates = [item for item, _ in loaded]
    if only_items is not None:  # e.g. the items a model got wrong (`--filter wrong=MODEL`, stim3d/eval/wrong.py)
        wanted = set(only_items)
        candidates = [item for item in candidates if item.item_id in wanted]
    chosen = with_studio_look(shown_items(candidates, family, filters))
    report.excluded = len(loaded) - len(chosen)
    layers = _refresh_files(chosen, {item.item_id: folder for item, folder in loaded}, gallery, report,
                         workers or _default_workers(), progress)
    entries = []
    for item in chosen:
        if item.item_id in report.unreadable:
            continue
        with Image.open(_thumb_path(gallery, item.item_id)) as thumb_image:  # reads the header only
            size = thumb_image.size
        entries.append(GalleryEntry(item, f"{THUMBS_DIR}/{quote(item.item_id)}.jpg", size, tuple(layers[item.item_id])))
    title = f"stim3d gallery: {out.resolve().name}"
    write_text_atomic(report.index, render_index(entries, title, _note(out, len(loaded), len(chosen), family, shown)))
    report.items = len(entries)
    return report


def _load_items(out: Path, report: GalleryReport) -> list[tuple[Item, Path]]:
    """Every readable item with its folder; an item.json that does not parse is named in the report."""
    loaded: list[tuple[Item, Path]] = []
    for folder in item_folders(out, report.unreadable):
        try:
            loaded.append((load_item(folder), folder))
        except (ValidationError, ValueError, OSError) as exc:
            report.unreadable[folder.name] = f"item.json does not parse: {str(exc).splitlines()[0]}"
    if not loaded:
        raise GalleryError(f"{out}: no readable items ({len(report.unreadable)} item.json files failed to parse)")
    return loaded


def _refresh_files(chosen: list[Item], folders: dict[str, Path], gallery: Path, report: GalleryReport, workers: int,
                progress: ProgressFn | None) -> dict[str, list[str]]:
    """Thumbnails and overlay layers for the chosen items, reusing fresh ones; each item's layer names."""
    _drop_other_style(gallery / OVERLAYS_DIR)
    layers: dict[str, list[str]] = {}
    jobs = []
    for item in chosen:
        folder = folders[item.item_id]
        thumb = not _is_fresh(_thumb_path(gallery, item.item_id), [folder / IMAGE])
        overlays = not _overlays_fresh(item, folder, gallery)
        report.thumbs_made += thumb
        report.overlays_made += overlays
        if not overlays:
            layers[item.item_id] = _expected_layers(item)
        if thumb or overlays:
            jobs.append((item, folder, gallery, thumb, overlays))
    report.thumbs_reused = len(chosen) - report.thumbs_made
    report.overlays_reused = len(chosen) - report.overlays_made
    for done, (item_id, written, problem) in enumerate(_run(jobs, workers), start=1):
        if problem is not None:
            report.unreadable[item_id] = problem
        elif written is not None:
            layers[item_id] = written
        if progress:
            progress(done, len(jobs), item_id)
    return layers


PARALLEL_FROM = 16  # fewer files to make than this: not worth starting threads


def _run(jobs: list[tuple], workers: int) -> Iterator[tuple[str, list[str] | None, str | None]]:
    """Results of `_make_files` over jobs, in completion order.

    Threads, not processes: Pillow releases the GIL while it resizes and encodes,
    which is most of the work, and threads need no picklable state, no fresh
    interpreter and no fork of a process that may hold bpy.
    """
    if workers <= 1 or len(jobs) < PARALLEL_FROM:
        for job in jobs:
            yield _make_files(*job)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_make_files, *job) for job in jobs]
        for future in as_completed(futures):
            yield future.result()


def _note(out: Path, total: int, shown: int, family: str | None, filters: dict[str, str]) -> str:
    parts = [f"{shown} of {total} items"]
    if family:
        parts.append(f"family {family}")
    parts.extend(f"{k}={v}" for k, v in filters.items())
    failed = BatchFolder(out).failure_count()
    if failed:
        parts.append(f"{failed} items failed to build (see failures/)")
    return " · ".join(parts)
