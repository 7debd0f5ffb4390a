"""A static HTML gallery of a batch, with ground-truth overlays drawn from the item folders.

`build_gallery(OUT)` writes `OUT/gallery/index.html`: one page, no server and no
external assets (CSS and JS are inline), that opens from the file system. Each
card shows the thumbnail, family, question, gold answer and difficulty values;
filters by family and by any difficulty key hide cards; a card opens a detail
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

import colorsys
import functools
import html
import json
import math
import os
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import yaml
from PIL import Image, ImageDraw, ImageFont
from pydantic import ValidationError

from stim3d.render.batch.item_folder import is_complete, load_item, load_mask
from stim3d.render.batch.layout import ITEMS_DIR
from stim3d.render.files import atomic_path, write_text_atomic
from stim3d.scenes.camera import geometry
from stim3d.scenes.model import Item

GALLERY_DIR = "gallery"
THUMBS_DIR = "thumbs"
OVERLAYS_DIR = "overlays"
THUMB_WIDTH = 256
LAYERS = ("mask", "modal", "amodal", "labels", "grid")
LAYER_TITLES = {
    "mask": "instance mask",
    "modal": "modal boxes",
    "amodal": "amodal boxes",
    "labels": "labels + visibility",
    "grid": "grid rows/columns",
}
MAX_SELECT_VALUES = 12  # a numeric difficulty key with more distinct values gets a min/max range filter
OVERLAY_TARGET_WIDTH = 640  # vector layers of small images are drawn larger so their text stays legible
MASK_ALPHA = 150
OVERLAY_STYLE = "1"  # bump when the drawing changes: layers made by another style are all remade

ProgressFn = Callable[[int, int, str], None]  # (done, total, item_id) over the items whose files are made


class GalleryError(ValueError):
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

def item_folders(out: Path) -> list[Path]:
    """Complete item folders of a batch, in item-id order; a clear error when there are none."""
    items = Path(out) / ITEMS_DIR
    folders = sorted(p for p in items.iterdir() if not p.name.startswith(".") and is_complete(p)) if items.is_dir() else []
    if not folders:
        raise GalleryError(f"{out}: no rendered items (expected {items}/<item_id>/ with item.json, image.png, mask.png)")
    return folders


def parse_filters(pairs: Iterable[str]) -> dict[str, str]:
    """`KEY=VALUE` strings -> {key: value}; the value is compared after YAML parsing (0.7, true, red)."""
    filters: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise GalleryError(f"--filter {pair!r}: expected KEY=VALUE, e.g. min_visibility=0.7")
        filters[key.strip()] = value.strip()
    return filters


def _parse_value(text: str) -> Any:
    """A filter value as YAML reads it (0.7 -> float, true -> bool); text that is not YAML stays text."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _values_equal(actual: Any, parsed: Any, wanted: str) -> bool:
    numeric = (int, float)
    if isinstance(actual, numeric) and not isinstance(actual, bool) and isinstance(parsed, numeric) and not isinstance(parsed, bool):
        return math.isclose(actual, parsed, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(actual, bool) or isinstance(parsed, bool):
        return actual is parsed
    return actual == parsed or str(actual) == wanted


def _lookup(item: Item, key: str) -> tuple[bool, Any]:
    """A filter key names a difficulty value first, then a family parameter."""
    if key in item.difficulty:
        return True, item.difficulty[key]
    if key in item.params:
        return True, item.params[key]
    return False, None


def select_items(items: list[Item], family: str | None, filters: dict[str, str]) -> list[Item]:
    """The items a gallery (or sheet) shows: all of `family` (when given) whose keys equal the filter values."""
    if family is not None:
        families = sorted({item.family for item in items})
        if family not in families:
            raise GalleryError(f"--family {family!r}: no items of that family here; families: {', '.join(families)}")
        items = [item for item in items if item.family == family]
    for key, wanted in filters.items():
        if not any(_lookup(item, key)[0] for item in items):
            keys = sorted({k for item in items for k in (*item.difficulty, *item.params)})
            raise GalleryError(f"--filter {key}={wanted}: no item has a difficulty or parameter {key!r}; keys: {', '.join(keys)}")
        parsed = _parse_value(wanted)
        items = [item for item in items if (found := _lookup(item, key))[0] and _values_equal(found[1], parsed, wanted)]
    if not items:
        shown = " ".join([f"--family {family}"] * (family is not None) + [f"--filter {k}={v}" for k, v in filters.items()])
        raise GalleryError(f"no items match {shown}")
    return items


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
_DISTINCT = (
    "#e6194b", "#3cb44b", "#ffe119", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6",
    "#bfef45", "#fabed4", "#469990", "#dcbeff", "#9a6324", "#800000", "#aaffc3", "#000075",
)


def object_colour(object_id: int) -> tuple[int, int, int]:
    """A distinct, stable false colour per object id, shared by every layer and the object table.

    The first 16 ids get hand-picked contrasting colours; later ids step round
    the hue circle by the golden ratio.
    """
    if 1 <= object_id <= len(_DISTINCT):
        code = _DISTINCT[object_id - 1]
        return int(code[1:3], 16), int(code[3:5], 16), int(code[5:7], 16)
    hue = (object_id * 0.618033988749895) % 1.0
    r, g, b = colorsys.hsv_to_rgb(hue, 0.8, 1.0)
    return round(r * 255), round(g * 255), round(b * 255)


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def mask_layer(mask: np.ndarray) -> Image.Image:
    """The instance mask in false colour at the image's own resolution; background fully transparent."""
    top = int(mask.max()) if mask.size else 0
    lut = np.zeros((top + 1, 4), dtype=np.uint8)
    for object_id in range(1, top + 1):
        lut[object_id] = (*object_colour(object_id), MASK_ALPHA)
    return Image.fromarray(lut[mask.astype(np.int64)], mode="RGBA")


def overlay_scale(width: int) -> int:
    """Vector layers of small images are drawn at a whole multiple of the image size, so labels stay legible."""
    return max(1, min(8, math.ceil(OVERLAY_TARGET_WIDTH / width)))


@dataclass(frozen=True)
class _Pen:
    scale: int
    line: int
    font: ImageFont.ImageFont | ImageFont.FreeTypeFont
    font_px: int


@functools.lru_cache(maxsize=32)
def _font(size: int, thread: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    """Pillow's bundled font (no system fonts needed); one per thread, as a FreeType face is not thread-safe."""
    return ImageFont.load_default(size=size)


def _pen(width: int) -> _Pen:
    scale = overlay_scale(width)
    canvas = width * scale
    font_px = max(11, round(canvas / 52))
    return _Pen(scale, max(2, round(canvas / 320)), _font(font_px, threading.get_ident()), font_px)


def _box_edges(box: tuple[int, int, int, int], pen: _Pen) -> tuple[int, int, int, int]:
    """Pixel-exact outline of an [x0, y0, x1, y1) box on the scaled canvas (the line lies inside the box)."""
    s = pen.scale
    return box[0] * s, box[1] * s, box[2] * s - 1, box[3] * s - 1


def _dashed_rectangle(draw: ImageDraw.ImageDraw, edges: tuple[int, int, int, int], colour: tuple[int, ...], pen: _Pen) -> None:
    x0, y0, x1, y1 = edges
    w, dash, gap = pen.line, 3 * pen.line, 2 * pen.line
    for x in range(x0, x1 + 1, dash + gap):
        end = min(x + dash - 1, x1)
        draw.rectangle((x, y0, end, min(y0 + w - 1, y1)), fill=colour)
        draw.rectangle((x, max(y1 - w + 1, y0), end, y1), fill=colour)
    for y in range(y0, y1 + 1, dash + gap):
        end = min(y + dash - 1, y1)
        draw.rectangle((x0, y, min(x0 + w - 1, x1), end), fill=colour)
        draw.rectangle((max(x1 - w + 1, x0), y, x1, end), fill=colour)


def boxes_layer(item: Item, which: str) -> Image.Image:
    """Modal (`bbox_visible`, solid) or amodal (`bbox_amodal`, dashed, may leave the frame) boxes, one colour per object."""
    cam = item.scene.camera
    pen = _pen(cam.width)
    layer = Image.new("RGBA", (cam.width * pen.scale, cam.height * pen.scale), (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    for truth in item.ground_truth.objects:
        box = truth.bbox_visible if which == "modal" else truth.bbox_amodal
        if box is None:
            continue
        colour = (*object_colour(truth.id), 255)
        edges = _box_edges(box, pen)
        if which == "modal":
            draw.rectangle(edges, outline=colour, width=pen.line)
        else:
            _dashed_rectangle(draw, edges, colour, pen)
    return layer


def _label(draw: ImageDraw.ImageDraw, anchor: tuple[float, float], text: str, colour: tuple[int, int, int], pen: _Pen,
           size: tuple[int, int]) -> None:
    """A dark tag with light text just above `anchor`, kept inside the canvas, edged in the object's colour."""
    left, top, right, bottom = draw.multiline_textbbox((0, 0), text, font=pen.font, spacing=2)
    pad = max(2, pen.font_px // 5)
    w, h = right - left + 2 * pad, bottom - top + 2 * pad
    x = min(max(0, anchor[0] - w / 2), size[0] - w)
    y = min(max(0, anchor[1] - h - pen.line * 2), size[1] - h)
    draw.rectangle((x, y, x + w, y + h), fill=(20, 20, 24, 215), outline=(*colour, 255), width=max(1, pen.line // 2))
    draw.multiline_text((x + pad - left, y + pad - top), text, font=pen.font, fill=(255, 255, 255, 255), spacing=2)


def labels_layer(item: Item) -> Image.Image:
    """Per object: a dot at its visible centroid and a tag 'id shape colour / vis v' (hidden objects: at their amodal box)."""
    cam = item.scene.camera
    pen = _pen(cam.width)
    size = (cam.width * pen.scale, cam.height * pen.scale)
    layer = Image.new("RGBA", size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    for obj in item.scene.objects:
        truth = item.ground_truth.of(obj.id)
        colour = object_colour(obj.id)
        if truth.centroid_px is not None:
            at = (truth.centroid_px[0] * pen.scale, truth.centroid_px[1] * pen.scale)
        elif truth.bbox_amodal is not None:
            x0, y0, x1, y1 = truth.bbox_amodal
            at = ((x0 + x1) / 2 * pen.scale, (y0 + y1) / 2 * pen.scale)
        else:
            continue  # entirely outside the extended image plane: nothing to point at
        r = pen.line * 1.5
        draw.ellipse((at[0] - r, at[1] - r, at[0] + r, at[1] + r), fill=(*colour, 255), outline=(0, 0, 0, 255))
        state = f"vis {truth.visibility:.2f}" if truth.visible_px > 0 else "hidden"
        _label(draw, at, f"{obj.id} {obj.shape} {obj.color.name}\n{state}", colour, pen, size)
    return layer


GRID_GROUP_KEYS = ("grid", "letter_index")  # attributes that split one scene into several grids (two letters' dot matrices)


def grid_cells(item: Item) -> dict[int, tuple[int, int]]:
    """{object id: (row, col)} from `attributes` (keys row and col or column), for families that lay out a grid."""
    cells = {}
    for obj in item.scene.objects:
        row = obj.attributes.get("row")
        col = obj.attributes.get("col", obj.attributes.get("column"))
        if isinstance(row, (int, float)) and isinstance(col, (int, float)) and not isinstance(row, bool) and not isinstance(col, bool):
            cells[obj.id] = (int(row), int(col))
    return cells


def _grid_group(item: Item, object_id: int) -> str:
    attributes = item.scene.object(object_id).attributes
    return "/".join(str(attributes[k]) for k in GRID_GROUP_KEYS if k in attributes)


def grid_layer(item: Item) -> Image.Image | None:
    """Rows and columns through the projected object centres, tagged 'r,c'; None for an item without a grid.

    The lines join the centres of each row's (column's) objects in column (row)
    order, so a perspective view shows the lattice as the camera sees it, and a
    row numbering that does not run top to bottom is visible at a glance.
    """
    cells = grid_cells(item)
    if not cells:
        return None
    cam = item.scene.camera
    pen = _pen(cam.width)
    size = (cam.width * pen.scale, cam.height * pen.scale)
    ids = sorted(cells)
    u, v, _ = geometry(cam).project(np.array([item.scene.object(i).location for i in ids]))
    centre = {i: (float(u[k]) * pen.scale, float(v[k]) * pen.scale) for k, i in enumerate(ids)}
    layer = Image.new("RGBA", size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    lines = {"row": (255, 255, 255, 230), "col": (255, 210, 60, 230)}
    for axis, index, order in (("row", 0, 1), ("col", 1, 0)):
        groups: dict[tuple[str, int], list[int]] = {}
        for object_id, cell in cells.items():
            groups.setdefault((_grid_group(item, object_id), cell[index]), []).append(object_id)
        for members in groups.values():
            members.sort(key=lambda i: cells[i][order])
            if len(members) > 1:
                draw.line([centre[i] for i in members], fill=lines[axis], width=pen.line)
    for object_id, (row, col) in cells.items():
        _label(draw, centre[object_id], f"{row},{col}", (255, 210, 60), pen, size)
    return layer


def overlay_paths(gallery: Path, item_id: str) -> dict[str, Path]:
    folder = gallery / OVERLAYS_DIR / item_id
    return {layer: folder / f"{layer}.png" for layer in LAYERS}


def write_overlays(item: Item, mask: np.ndarray, paths: dict[str, Path]) -> list[str]:
    """Draw every overlay layer of one item into `paths`; returns the layers written (no grid layer without a grid)."""
    layers: dict[str, Image.Image | None] = {
        "mask": mask_layer(mask),
        "modal": boxes_layer(item, "modal"),
        "amodal": boxes_layer(item, "amodal"),
        "labels": labels_layer(item),
        "grid": grid_layer(item),
    }
    written = []
    for name, image in layers.items():
        path = paths[name]
        if image is None:
            path.unlink(missing_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            image.save(tmp, format="PNG", compress_level=1)  # speed over size: layers are mostly transparent
        written.append(name)
    return written


# -- the page ------------------------------------------------------------------------------------------

def format_gold(answer_type: str, gold: Any) -> str:
    """A gold answer the way the protocol asks for it (cells as 'Row r, Column c')."""
    if answer_type == "cell":
        return f"Row {gold[0]}, Column {gold[1]}"
    if answer_type == "cell_set":
        return "; ".join(f"Row {r}, Column {c}" for r, c in gold) or "(none)"
    return str(gold)


def short_value(value: Any) -> str:
    """A value as shown on cards and captions: floats to 4 significant digits, JSON spelling for booleans."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.0f}"
    return str(value)


@dataclass(frozen=True)
class _FilterAxis:
    """One difficulty key as a page filter: a list of values, or a numeric min/max range.

    `families` are those whose items carry the key: picking another family hides the filter.
    """

    key: str
    kind: str  # "select" | "range"
    families: tuple[str, ...]
    values: tuple[str, ...] = ()
    low: float = 0.0
    high: float = 0.0


def _token(value: Any) -> str:
    """The string a card carries for a select filter (the same for 0.7 and 0.70)."""
    return short_value(value)


def _axes(items: list[Item]) -> list[_FilterAxis]:
    """A filter for every difficulty key that takes more than one value in the gallery."""
    keys: list[str] = []
    for item in items:
        keys.extend(k for k in item.difficulty if k not in keys)
    axes = []
    for key in keys:
        having = [item for item in items if key in item.difficulty]
        values = [item.difficulty[key] for item in having]
        families = tuple(sorted({item.family for item in having}))
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        tokens = sorted({_token(v) for v in values}, key=_sort_key)
        if len(numbers) == len(values) and len(tokens) > MAX_SELECT_VALUES:
            axes.append(_FilterAxis(key, "range", families, low=min(numbers), high=max(numbers)))
        elif len(tokens) > 1:
            axes.append(_FilterAxis(key, "select", families, values=tuple(tokens)))
    return axes


def _sort_key(token: str) -> tuple[int, float, str]:
    try:
        return 0, float(token), token
    except ValueError:
        return 1, 0.0, token


@dataclass(frozen=True)
class _Entry:
    item: Item
    thumb: str
    thumb_size: tuple[int, int]
    layers: tuple[str, ...]


def _item_data(entry: _Entry) -> dict[str, Any]:
    """What the detail view needs about one item (parsed by the page on first use)."""
    item = entry.item
    folder = f"../{ITEMS_DIR}/{quote(item.item_id)}"
    prov = item.provenance
    provenance = ""
    if prov is not None:
        blender = f", Blender {prov.blender_version}" if prov.blender_version else ""
        agreement = f" (agreement with the ray cast {prov.mask_agreement:.4f})" if prov.mask_agreement is not None else ""
        provenance = f"{prov.engine}, {prov.samples} samples{blender}; mask from the {prov.mask_source}{agreement}"
    objects = []
    for obj in item.scene.objects:
        t = item.ground_truth.of(obj.id)
        cell = grid_cells(item).get(obj.id)
        objects.append([obj.id, obj.shape, obj.color.name, round(obj.size, 3), round(t.visibility, 3), round(t.occlusion, 3),
                        round(t.truncation, 3), int(t.visible_px), _hex(object_colour(obj.id)),
                        f"{cell[0]},{cell[1]}" if cell else ""])
    return {
        "id": item.item_id,
        "family": item.family,
        "split": item.split,
        "w": item.scene.camera.width,
        "h": item.scene.camera.height,
        "image": f"{folder}/image.png",
        "mask": f"{folder}/mask.png",
        "json": f"{folder}/item.json",
        "layers": {name: f"{OVERLAYS_DIR}/{quote(item.item_id)}/{name}.png" for name in entry.layers},
        "q": [[q.text, format_gold(q.answer_type, q.gold), q.answer_type] for q in item.questions],
        "d": {k: short_value(v) for k, v in item.difficulty.items()},
        "o": objects,
        "prov": provenance,
    }


def _card(index: int, entry: _Entry, axes: list[_FilterAxis]) -> str:
    item = entry.item
    attrs = [f'data-i="{index}"', f'data-family="{html.escape(item.family)}"']
    for k, axis in enumerate(axes):
        if axis.key in item.difficulty:  # no attribute: the card never matches a filter on this key
            value = item.difficulty[axis.key]
            attrs.append(f'data-k{k}="{html.escape(_token(value) if axis.kind == "select" else repr(float(value)))}"')
    question = item.questions[0] if item.questions else None
    q_html = ""
    if question is not None:
        more = f' <span class="more">+{len(item.questions) - 1}</span>' if len(item.questions) > 1 else ""
        q_html = (f'<p class="q">{html.escape(question.text)}{more}</p>'
                  f'<p class="gold">gold <b>{html.escape(format_gold(question.answer_type, question.gold))}</b></p>')
    difficulty = " · ".join(f"{html.escape(k)} <b>{html.escape(short_value(v))}</b>" for k, v in item.difficulty.items())
    w, h = entry.thumb_size
    small = " small" if w < THUMB_WIDTH else ""
    short_id = item.item_id.removeprefix(f"{item.family}-") or item.item_id  # the family is shown next to it
    return (
        f'<article class="card" tabindex="0" {" ".join(attrs)}>'
        f'<img class="thumb{small}" loading="lazy" decoding="async" src="{html.escape(entry.thumb)}" width="{w}" height="{h}" '
        f'alt="{html.escape(item.item_id)}">'
        f'<div class="meta"><span class="fam">{html.escape(item.family)}</span>'
        f'<span class="id" title="{html.escape(item.item_id)}">{html.escape(short_id)}</span></div>'
        f"{q_html}<p class=\"diff\">{difficulty}</p></article>"
    )


def _filters_html(entries: list[_Entry], axes: list[_FilterAxis]) -> str:
    families = sorted({e.item.family for e in entries})
    options = "".join(f'<option value="{html.escape(f)}">{html.escape(f)}</option>' for f in families)
    parts = [f'<label>family <select id="f-family"><option value="">any</option>{options}</select></label>']
    for k, axis in enumerate(axes):
        label = f'<label class="axis" data-families="{html.escape(" ".join(axis.families))}">{html.escape(axis.key)} '
        if axis.kind == "select":
            values = "".join(f'<option value="{html.escape(v)}">{html.escape(v)}</option>' for v in axis.values)
            parts.append(f'{label}<select class="f-axis" data-k="{k}"><option value="">any</option>{values}</select></label>')
        else:
            parts.append(
                f'{label}<input class="f-min" data-k="{k}" type="number" step="any" placeholder="{axis.low:.4g}" '
                f'title="at least"> – <input class="f-max" data-k="{k}" type="number" step="any" placeholder="{axis.high:.4g}" '
                f'title="at most"></label>'
            )
    parts.append('<button type="button" id="f-reset">reset</button><span id="count"></span>')
    return "".join(parts)


def _json_for_script(data: Any) -> str:
    """JSON safe inside <script>: no '</' can close the element early."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")


def render_index(entries: list[_Entry], title: str, note: str) -> str:
    """The whole page as one string: inline CSS, the cards, the detail data (JSON) and inline JS."""
    axes = _axes([e.item for e in entries])
    cards = "\n".join(_card(i, e, axes) for i, e in enumerate(entries))
    toggles = "".join(
        f'<label><input type="checkbox" id="ov-{name}" data-layer="{name}"> {LAYER_TITLES[name]}</label>' for name in LAYERS
    )
    data = _json_for_script([_item_data(e) for e in entries])
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{_CSS}</style></head>
<body>
<header><h1>{html.escape(title)}</h1><p class="note">{html.escape(note)}</p>
<form id="filters" onsubmit="return false">{_filters_html(entries, axes)}</form></header>
<main id="cards">
{cards}
</main>
<dialog id="detail">
<div class="bar"><button type="button" id="d-prev" title="previous (left arrow)">◀</button><h2 id="d-title"></h2>
<button type="button" id="d-next" title="next (right arrow)">▶</button><button type="button" id="d-close" title="close (Esc)">✕</button></div>
<div class="body"><div class="left"><div class="toggles">{toggles}</div><div id="d-stage"><img id="d-image" alt=""></div></div>
<div class="right" id="d-info"></div></div>
</dialog>
<script type="application/json" id="items">{data}</script>
<script>{_JS}</script>
</body></html>
"""


_CSS = """
:root{color-scheme:dark;--bg:#17181b;--card:#222328;--line:#34363d;--text:#e6e6e6;--dim:#9a9ca3;--acc:#f0c040}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--text);font:13px/1.35 system-ui,sans-serif}
header{position:sticky;top:0;z-index:2;background:#1d1e22ee;border-bottom:1px solid var(--line);padding:8px 14px}
h1{font-size:16px;margin:0 12px 0 0;display:inline}.note{display:inline;color:var(--dim);margin:0}
#filters{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;margin-top:6px}
#filters label{color:var(--dim)}#filters label[hidden]{display:none}#filters select,#filters input{background:#2b2c32;color:var(--text);border:1px solid var(--line);
border-radius:4px;padding:2px 4px}#filters input{width:64px}#count{color:var(--acc);margin-left:auto}
button{background:#2b2c32;color:var(--text);border:1px solid var(--line);border-radius:4px;padding:2px 8px;cursor:pointer}
main{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:10px;padding:12px 14px}
.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:6px;cursor:pointer;
content-visibility:auto;contain-intrinsic-size:220px 300px}
.card:hover,.card:focus{outline:2px solid var(--acc)}.card[hidden]{display:none}
.thumb{width:100%;height:auto;display:block;border-radius:3px;background:#000}.thumb.small{image-rendering:pixelated}
.meta{display:flex;justify-content:space-between;gap:6px;margin-top:4px;font-size:11px}.fam{color:var(--acc)}
.id{color:var(--dim);overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.q{margin:4px 0 0}.gold{margin:2px 0 0}.gold b{color:#8fe08f}.more{color:var(--dim);font-size:11px}
.diff{margin:4px 0 0;color:var(--dim);font-size:11px}.diff b{color:var(--text);font-weight:500}
dialog{background:var(--bg);color:var(--text);border:1px solid var(--line);border-radius:8px;padding:0;
width:min(1400px,96vw);max-height:94vh}
dialog::backdrop{background:#000b}.bar{display:flex;gap:8px;align-items:center;padding:8px 12px;border-bottom:1px solid var(--line)}
.bar h2{font-size:15px;margin:0;flex:1}.body{display:flex;gap:14px;padding:12px;flex-wrap:wrap}
.left{flex:0 0 auto}.toggles{display:flex;flex-wrap:wrap;gap:4px 12px;margin-bottom:8px;color:var(--dim)}
.toggles label:has(input:disabled){opacity:.35}
#d-stage{position:relative;background:#000}#d-stage img{position:absolute;left:0;top:0;width:100%;height:100%}
#d-stage img.pixels,#d-stage img.layer-mask{image-rendering:pixelated}
.right{flex:1 1 320px;min-width:300px;overflow:auto;max-height:80vh}
.right table{border-collapse:collapse;width:100%;font-size:12px}.right td,.right th{border-bottom:1px solid var(--line);
padding:2px 6px;text-align:right;white-space:nowrap}.right th{color:var(--dim);font-weight:500}.right td:nth-child(2),.right td:nth-child(3){text-align:left}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;vertical-align:middle}.right h3{font-size:13px;margin:10px 0 4px}
.right a{color:var(--acc)}.qa{margin:2px 0}.qa b{color:#8fe08f}.prov{color:var(--dim)}
"""

_JS = r"""
(function () {
  "use strict";
  var cards = Array.prototype.slice.call(document.querySelectorAll(".card"));
  var items = null;  // parsed on first use: nothing per item happens at load
  function data() {
    if (items === null) { items = JSON.parse(document.getElementById("items").textContent); }
    return items;
  }
  var count = document.getElementById("count");
  function showCount() {
    var shown = 0;
    for (var i = 0; i < cards.length; i++) { if (!cards[i].hidden) { shown++; } }
    count.textContent = "showing " + shown + " of " + cards.length;
  }
  function applyFilters() {
    var family = document.getElementById("f-family").value;
    document.querySelectorAll("label.axis").forEach(function (label) {
      var applies = family === "" || label.dataset.families.split(" ").indexOf(family) >= 0;
      if (!applies) { label.querySelectorAll("select,input").forEach(function (el) { el.value = ""; }); }
      label.hidden = !applies;
    });
    var tests = [];
    document.querySelectorAll(".f-axis").forEach(function (el) {
      if (el.value !== "") { tests.push({k: "k" + el.dataset.k, eq: el.value}); }
    });
    document.querySelectorAll(".f-min,.f-max").forEach(function (el) {
      if (el.value !== "") {
        tests.push({k: "k" + el.dataset.k, num: parseFloat(el.value), min: el.classList.contains("f-min")});
      }
    });
    cards.forEach(function (card) {
      var ok = family === "" || card.dataset.family === family;
      for (var t = 0; ok && t < tests.length; t++) {
        var test = tests[t], value = card.dataset[test.k];
        if (test.eq !== undefined) { ok = value === test.eq; }
        else if (value === undefined) { ok = false; }
        else { ok = test.min ? parseFloat(value) >= test.num : parseFloat(value) <= test.num; }
      }
      card.hidden = !ok;
    });
    showCount();
  }
  document.getElementById("filters").addEventListener("input", applyFilters);
  document.getElementById("filters").addEventListener("change", applyFilters);
  document.getElementById("f-reset").addEventListener("click", function () {
    document.getElementById("filters").reset();
    applyFilters();
  });

  var dialog = document.getElementById("detail"), stage = document.getElementById("d-stage");
  var image = document.getElementById("d-image"), info = document.getElementById("d-info");
  var toggles = Array.prototype.slice.call(document.querySelectorAll(".toggles input"));
  var current = -1;
  function esc(text) {
    var d = document.createElement("div");
    d.textContent = String(text);
    return d.innerHTML;
  }
  function fit(item) {
    var maxW = Math.min(window.innerWidth * 0.62, 980), maxH = window.innerHeight * 0.78;
    var scale = Math.min(maxW / item.w, maxH / item.h);
    if (scale >= 1) { scale = Math.max(1, Math.floor(scale)); }
    stage.style.width = Math.round(item.w * scale) + "px";
    stage.style.height = Math.round(item.h * scale) + "px";
    image.classList.toggle("pixels", scale >= 2);
  }
  function layerImage(name) {
    var el = stage.querySelector("img.layer-" + name);
    if (!el) {
      el = document.createElement("img");
      el.className = "layer layer-" + name;
      el.alt = "";
      stage.appendChild(el);
    }
    return el;
  }
  function showLayers() {
    var item = data()[current];
    toggles.forEach(function (box) {
      var name = box.dataset.layer, src = item.layers[name];
      box.disabled = !src;
      var el = layerImage(name);
      var on = box.checked && !!src;
      if (on && el.getAttribute("src") !== src) { el.src = src; }  // a layer loads only when switched on
      el.hidden = !on;
    });
  }
  function table(item) {
    var grid = item.o.some(function (o) { return o[9] !== ""; });
    var rows = item.o.map(function (o) {
      return "<tr><td><span class=\"sw\" style=\"background:" + o[8] + "\"></span> " + o[0] + "</td><td>" + esc(o[1]) +
        "</td><td>" + esc(o[2]) + "</td><td>" + o[3] + "</td><td>" + o[4] + "</td><td>" + o[5] + "</td><td>" + o[6] +
        "</td><td>" + o[7] + "</td>" + (grid ? "<td>" + esc(o[9]) + "</td>" : "") + "</tr>";
    }).join("");
    return "<table><tr><th>id</th><th>shape</th><th>colour</th><th>size</th><th title=\"visibility\">vis.</th>" +
      "<th title=\"occlusion\">occl.</th><th title=\"truncation\">trunc.</th><th title=\"visible pixels\">px</th>" +
      (grid ? "<th>row,col</th>" : "") + "</tr>" + rows + "</table>";
  }
  function open(index, keepHash) {
    var item = data()[index];
    current = index;
    document.getElementById("d-title").textContent = item.id + "  ·  " + item.family + "  ·  " + item.w + "×" + item.h;
    fit(item);
    image.src = item.image;
    showLayers();
    var qa = item.q.map(function (q) {
      return "<p class=\"qa\">" + esc(q[0]) + " → <b>" + esc(q[1]) + "</b> <span class=\"prov\">(" + esc(q[2]) + ")</span></p>";
    }).join("");
    var diff = Object.keys(item.d).map(function (k) { return esc(k) + " <b>" + esc(item.d[k]) + "</b>"; }).join(" · ");
    info.innerHTML = "<h3>questions</h3>" + qa + "<h3>difficulty</h3><p>" + diff + "</p><h3>objects</h3>" + table(item) +
      "<p class=\"prov\">" + esc(item.prov) + "</p><p><a href=\"" + item.image + "\">image.png</a> · <a href=\"" + item.mask +
      "\">mask.png</a> · <a href=\"" + item.json + "\">item.json</a></p>";
    if (!dialog.open) { dialog.showModal(); }
    if (!keepHash) { history.replaceState(null, "", "#" + hashFor(item)); }
  }
  function hashFor(item) {
    var on = toggles.filter(function (b) { return b.checked; }).map(function (b) { return b.dataset.layer; });
    return "item=" + encodeURIComponent(item.id) + (on.length ? "&show=" + on.join(",") : "");
  }
  function step(delta) {
    var visible = cards.filter(function (c) { return !c.hidden; }).map(function (c) { return +c.dataset.i; });
    if (!visible.length) { return; }
    var at = visible.indexOf(current);
    open(visible[(at + delta + visible.length) % visible.length]);
  }
  document.getElementById("cards").addEventListener("click", function (event) {
    var card = event.target.closest(".card");
    if (card) { open(+card.dataset.i); }
  });
  document.getElementById("cards").addEventListener("keydown", function (event) {
    var card = event.target.closest(".card");
    if (card && event.key === "Enter") { open(+card.dataset.i); }
  });
  toggles.forEach(function (box) {
    box.addEventListener("change", function () {
      showLayers();
      history.replaceState(null, "", "#" + hashFor(data()[current]));
    });
  });
  document.getElementById("d-prev").addEventListener("click", function () { step(-1); });
  document.getElementById("d-next").addEventListener("click", function () { step(1); });
  document.getElementById("d-close").addEventListener("click", function () { dialog.close(); });
  dialog.addEventListener("close", function () { history.replaceState(null, "", location.pathname + location.search); });
  dialog.addEventListener("keydown", function (event) {
    if (event.key === "ArrowLeft") { step(-1); } else if (event.key === "ArrowRight") { step(1); }
  });
  function fromHash() {
    var params = new URLSearchParams(location.hash.slice(1)), id = params.get("item");
    if (!id) { return; }
    var shown = (params.get("show") || "").split(",");
    toggles.forEach(function (box) { box.checked = shown.indexOf(box.dataset.layer) >= 0; });
    var index = data().findIndex(function (item) { return item.id === id; });
    if (index >= 0) { open(index, true); }
  }
  window.addEventListener("hashchange", fromHash);
  showCount();
  fromHash();
})();
"""


# -- building ------------------------------------------------------------------------------------------

def _thumb_path(gallery: Path, item_id: str) -> Path:
    return gallery / THUMBS_DIR / f"{item_id}.jpg"


def _expected_layers(item: Item) -> list[str]:
    return [name for name in LAYERS if name != "grid" or grid_cells(item)]


def _overlays_fresh(item: Item, folder: Path, gallery: Path) -> bool:
    paths = overlay_paths(gallery, item.item_id)
    expected = _expected_layers(item)
    sources = [folder / "mask.png", folder / "item.json"]
    return all(_is_fresh(paths[name], sources) for name in expected) and ("grid" in expected or not paths["grid"].exists())


def _make_files(item: Item, folder: Path, gallery: Path, thumb: bool, overlays: bool) -> tuple[str, list[str] | None]:
    """Worker: (re)make one item's thumbnail and/or overlay layers. Returns (item id, layers written or None)."""
    if thumb:
        write_thumbnail(folder / "image.png", _thumb_path(gallery, item.item_id))
    layers = write_overlays(item, load_mask(folder), overlay_paths(gallery, item.item_id)) if overlays else None
    return item.item_id, layers


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
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def build_gallery(
    out: Path,
    *,
    family: str | None = None,
    filters: dict[str, str] | None = None,
    progress: ProgressFn | None = None,
    workers: int | None = None,
) -> GalleryReport:
    """Write OUT/gallery/index.html for the batch's items (optionally one family / matching filters only).

    Thumbnails and overlay layers already made and not older than the item's
    files are reused; the rest are made in `workers` threads (default: one per
    core) when there are many. `progress` is called once per item whose files
    are made. An item.json that does not parse is skipped and named in the
    report, never fatal.
    """
    out = Path(out)
    gallery = out / GALLERY_DIR
    report = GalleryReport(index=gallery / "index.html")
    loaded: list[tuple[Item, Path]] = []
    for folder in item_folders(out):
        try:
            loaded.append((load_item(folder), folder))
        except (ValidationError, ValueError) as exc:
            report.unreadable[folder.name] = str(exc).splitlines()[0]
    if not loaded:
        raise GalleryError(f"{out}: no readable items ({len(report.unreadable)} item.json files failed to parse)")
    chosen = select_items([item for item, _ in loaded], family, filters or {})
    folders = {item.item_id: folder for item, folder in loaded}
    report.excluded = len(loaded) - len(chosen)

    _drop_other_style(gallery / OVERLAYS_DIR)
    layers: dict[str, list[str]] = {}
    jobs = []
    for item in chosen:
        folder = folders[item.item_id]
        thumb = not _is_fresh(_thumb_path(gallery, item.item_id), [folder / "image.png"])
        overlays = not _overlays_fresh(item, folder, gallery)
        report.thumbs_made += thumb
        report.overlays_made += overlays
        if not overlays:
            layers[item.item_id] = _expected_layers(item)
        if thumb or overlays:
            jobs.append((item, folder, gallery, thumb, overlays))
    report.thumbs_reused = len(chosen) - report.thumbs_made
    report.overlays_reused = len(chosen) - report.overlays_made
    for done, (item_id, written) in enumerate(_run(jobs, workers or _default_workers()), start=1):
        if written is not None:
            layers[item_id] = written
        if progress:
            progress(done, len(jobs), item_id)

    entries = []
    for item in chosen:
        with Image.open(_thumb_path(gallery, item.item_id)) as thumb_image:  # reads the header only
            size = thumb_image.size
        entries.append(_Entry(item, f"{THUMBS_DIR}/{quote(item.item_id)}.jpg", size, tuple(layers[item.item_id])))
    title = f"stim3d gallery: {out.resolve().name}"
    page = render_index(entries, title, _note(out, len(loaded), len(chosen), family, filters or {}))
    write_text_atomic(report.index, page)
    report.items = len(entries)
    return report


PARALLEL_FROM = 16  # fewer files to make than this: not worth starting threads


def _run(jobs: list[tuple], workers: int) -> Iterator[tuple[str, list[str] | None]]:
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
    failures = out / "failures"
    failed = len(list(failures.glob("*.json"))) if failures.is_dir() else 0
    if failed:
        parts.append(f"{failed} items failed to build (see failures/)")
    return " · ".join(parts)
