"""Ground-truth overlay layers of one item (mask, modal/amodal boxes, labels, grid), drawn from its folder's files.

Each layer is a transparent PNG the gallery stacks over the image; colours are stable per object id.
"""


import colorsys
import functools
import math
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from stim3d.files import atomic_path
from stim3d.scenes.camera import geometry
from stim3d.scenes.model import Item

LAYERS = ("mask", "modal", "amodal", "labels", "grid")
LAYER_TITLES = {
    "mask": "instance mask",
    "modal": "modal boxes",
    "amodal": "amodal boxes",
    "labels": "labels + visibility",
    "grid": "grid rows/columns",
}
OVERLAY_TARGET_WIDTH = 640  # vector layers of small images are drawn larger so their text stays legible
MASK_ALPHA = 150
OVERLAY_STYLE = "1"  # bump when the drawing changes: layers made by another style are all remade
OVERLAYS_DIR = "overlays"


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


def hex_colour(rgb: tuple[int, int, int]) -> str:
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
