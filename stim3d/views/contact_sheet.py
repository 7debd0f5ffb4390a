"""A contact sheet: one PNG of N thumbnails with captions, for papers and issues.

Each cell holds an item's image scaled to a common width and a caption: the
item id, the question, the gold answer and the difficulty values. Items are
taken evenly spread over the batch in item-id order (not the first N), so a
sheet of a mixed batch shows every part of it. The PNG carries the item ids
of its cells, in order, in a text chunk (`stim3d:items`), so a figure can be
traced back to its items.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont
from PIL.PngImagePlugin import PngInfo

from stim3d.files import atomic_path
from stim3d.render.batch.folder import IMAGE
from stim3d.render.batch.item_folder import load_item
from stim3d.scenes.model import Item
from stim3d.scoring.answers import answer_text
from stim3d.views.gallery import GalleryError, item_folders, shown_items, thumbnail
from stim3d.views.gallery_page import short_value

GAP = 10
BACKGROUND = (255, 255, 255)
INK = (20, 20, 20)
DIM = (110, 110, 110)
CAPTION_LINES = 6  # id, question (up to two lines), gold, difficulty (the rest)


@dataclass(frozen=True)
class SheetCell:
    item_id: str
    thumb_box: tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive) of the scaled image
    caption_box: tuple[int, int, int, int]


@dataclass
class ContactSheet:
    image: Image.Image
    cells: list[SheetCell]
    columns: int
    rows: int
    available: int  # items that matched; the sheet shows min(n, available) of them
    skipped: dict[str, str] = field(default_factory=dict)  # item id -> why it could not be shown (corrupt files)

    def save(self, path: Path) -> None:
        """Write the PNG atomically, with the cells' item ids in the `stim3d:items` text chunk."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        info = PngInfo()
        info.add_text("stim3d:items", json.dumps([cell.item_id for cell in self.cells]))
        info.add_text("Software", "stim3d contact-sheet")
        with atomic_path(path) as tmp:
            self.image.save(tmp, format="PNG", pnginfo=info)


def spread(count: int, n: int) -> list[int]:
    """n indices into range(count), evenly spaced, first and last included (all of them when n >= count)."""
    if n >= count:
        return list(range(count))
    if n == 1:
        return [0]
    return [round(k * (count - 1) / (n - 1)) for k in range(n)]


def _fit(draw: ImageDraw.ImageDraw, text: str, font: ImageFont.FreeTypeFont | ImageFont.ImageFont, width: int,
         lines: int) -> list[str]:
    """Word-wrap `text` into at most `lines` lines of `width` pixels; an ellipsis marks what was cut."""
    if lines < 1:
        return []
    words, out, line = text.split(), [], ""
    for word in words:
        candidate = f"{line} {word}".strip()
        if draw.textlength(candidate, font=font) <= width or not line:
            line = candidate
        else:
            out.append(line)
            line = word
    if line:
        out.append(line)
    if len(out) > lines:
        out = out[:lines]
        out[-1] += " …"
    for k, text_line in enumerate(out):  # a single word wider than the cell
        while draw.textlength(text_line, font=font) > width and len(text_line) > 2:
            text_line = text_line[:-2] + "…"
        out[k] = text_line
    return out


def caption(item: Item, leading: list[str]) -> tuple[str, str, str, str]:
    """(id, question, gold, difficulty) of an item's caption; the first question when it has several.

    Difficulty keys named in `leading` come first: those that vary across the
    sheet, which are what a reader compares.
    """
    question = item.questions[0] if item.questions else None
    text = question.text if question else ""
    gold = f"gold: {answer_text(question.answer_type, question.gold)}" if question else ""
    if len(item.questions) > 1:
        text += f" (+{len(item.questions) - 1} more)"
    keys = [k for k in leading if k in item.difficulty] + [k for k in item.difficulty if k not in leading]
    difficulty = " · ".join(f"{k} {short_value(item.difficulty[k])}" for k in keys)
    return item.item_id, text, gold, difficulty


def varying_keys(items: list[Item]) -> list[str]:
    """Difficulty keys whose values differ between the items that have them (in first-seen order).

    A key that one family lacks is not "varying" for that reason: in a mixed-family
    sheet it would otherwise lead every caption and push the keys that do vary out
    of the cell.
    """
    keys: list[str] = []
    for item in items:
        keys.extend(k for k in item.difficulty if k not in keys)
    return [k for k in keys
            if len({json.dumps(item.difficulty[k]) for item in items if k in item.difficulty}) > 1]


def contact_sheet(
    out: Path,
    n: int = 24,
    columns: int = 6,
    *,
    family: str | None = None,
    filters: dict[str, str] | None = None,
    thumb_width: int = 256,
) -> ContactSheet:
    """Lay out up to `n` items of the batch in `columns` columns, each image `thumb_width` pixels wide, captioned."""
    if n < 1:
        raise GalleryError("a contact sheet needs at least 1 item", field="n", value=n)
    if columns < 1:
        raise GalleryError("must be at least 1", field="columns", value=columns)
    if not 32 <= thumb_width <= 2048:
        raise GalleryError(f"thumb width {thumb_width}: allowed 32..2048 pixels")
    skipped: dict[str, str] = {}
    folders = item_folders(Path(out), skipped)

    def readable(folder: Path) -> Item | None:  # a corrupt item is skipped and named, never fatal
        try:
            return load_item(folder)
        except (ValueError, OSError) as exc:
            skipped[folder.name] = f"item.json does not parse: {str(exc).splitlines()[0]}"
            return None

    if family is None and not filters:  # no need to read every item.json of a large batch
        available = len(folders)
        items = [i for i in (readable(folders[k]) for k in spread(len(folders), n)) if i is not None]
    else:
        matching = shown_items([i for i in map(readable, folders) if i is not None], family, filters or {})
        available = len(matching)
        items = [matching[k] for k in spread(len(matching), n)]
    by_id = {f.name: f for f in folders}

    font_px = max(10, round(thumb_width / 20))
    font = ImageFont.load_default(size=font_px)
    line_h = round(font_px * 1.3)
    shown, thumbs = [], []
    for item in items:
        try:
            with Image.open(by_id[item.item_id] / IMAGE) as image:
                thumbs.append(thumbnail(image, thumb_width))
        except (OSError, SyntaxError, KeyError) as exc:  # Pillow: truncated or not a PNG; KeyError: id != folder
            skipped[item.item_id] = f"image.png unreadable: {str(exc).splitlines()[0]}"
            continue
        shown.append(item)
    items = shown
    if not items:
        raise GalleryError(f"{out}: no readable items ({len(skipped)} skipped: {', '.join(sorted(skipped)[:3])})")
    thumb_h = max(t.height for t in thumbs)
    caption_h = CAPTION_LINES * line_h + GAP // 2
    cols = min(columns, len(items))
    rows = math.ceil(len(items) / cols)
    cell_w, cell_h = thumb_width, thumb_h + caption_h
    sheet = Image.new("RGB", (cols * cell_w + (cols + 1) * GAP, rows * cell_h + (rows + 1) * GAP), BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    leading = varying_keys(items)
    cells = []
    for k, (item, thumb) in enumerate(zip(items, thumbs)):
        x = GAP + (k % cols) * (cell_w + GAP)
        y = GAP + (k // cols) * (cell_h + GAP)
        top = y + (thumb_h - thumb.height) // 2
        sheet.paste(thumb, (x, top))
        item_id, question, gold, difficulty = caption(item, leading)
        lines = [(t, DIM) for t in _fit(draw, item_id, font, cell_w, 1)] + [(t, INK) for t in _fit(draw, question, font, cell_w, 2)]
        lines += [(gold, INK)] if gold else []
        lines += [(t, DIM) for t in _fit(draw, difficulty, font, cell_w, CAPTION_LINES - len(lines))]
        cy = y + thumb_h + GAP // 2
        for text, colour in lines:
            draw.text((x, cy), text, font=font, fill=colour)
            cy += line_h
        cells.append(SheetCell(item.item_id, (x, top, x + thumb.width, top + thumb.height),
                               (x, y + thumb_h, x + cell_w, y + cell_h)))
    return ContactSheet(sheet, cells, cols, rows, available, skipped)
