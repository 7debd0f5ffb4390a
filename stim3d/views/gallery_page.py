"""The gallery's HTML page: cards, filters and the detail view; its CSS and JavaScript are package data files
(stim3d/views/assets/)."""


import functools
import html
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import quote

from stim3d.render.batch.folder import ITEMS_DIR
from stim3d.scenes.model import Item
from stim3d.scoring.answers import answer_text
from stim3d.views.overlays import LAYER_TITLES, LAYERS, OVERLAYS_DIR, grid_cells, hex_colour, object_colour

THUMB_WIDTH = 256
MAX_SELECT_VALUES = 12  # a numeric difficulty key with more distinct values gets a min/max range filter


@functools.cache
def _asset(name: str) -> str:
    return resources.files("stim3d.views").joinpath("assets", name).read_text(encoding="utf-8")


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
class GalleryEntry:
    item: Item
    thumb: str
    thumb_size: tuple[int, int]
    layers: tuple[str, ...]


def _item_data(entry: GalleryEntry) -> dict[str, Any]:
    """What the detail view needs about one item (parsed by the page on first use)."""
    item = entry.item
    folder = f"../{ITEMS_DIR}/{quote(item.item_id)}"
    prov = item.provenance
    provenance = ""
    if prov is not None:
        blender = f", Blender {prov.blender_version}" if prov.blender_version else ""
        agreement = f" (agreement with the ray cast {prov.mask_agreement:.4f})" if prov.mask_agreement is not None else ""
        samples = f", {prov.samples} samples" if prov.samples is not None else ""
        provenance = f"{prov.engine}{samples}{blender}; mask from the {prov.mask_source}{agreement}"
    objects = []
    for obj in item.scene.objects:
        t = item.ground_truth.of(obj.id)
        cell = grid_cells(item).get(obj.id)
        objects.append([obj.id, obj.shape, obj.color.name, round(obj.size, 3), round(t.visibility, 3), round(t.occlusion, 3),
                        round(t.truncation, 3), int(t.visible_px), hex_colour(object_colour(obj.id)),
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
        "q": [[q.text, answer_text(q.answer_type, q.gold), q.answer_type] for q in item.questions],
        "d": {k: short_value(v) for k, v in item.difficulty.items()},
        "o": objects,
        "prov": provenance,
    }


def _card(index: int, entry: GalleryEntry, axes: list[_FilterAxis]) -> str:
    item = entry.item
    attrs = [f'data-i="{index}"', f'data-family="{html.escape(item.family)}"']
    for k, axis in enumerate(axes):
        if axis.key in item.difficulty:  # no attribute: the card never matches a filter on this key
            value = item.difficulty[axis.key]
            shown = _token(value) if axis.kind == "select" else repr(float(value))  # type: ignore[arg-type]  # numeric axis
            attrs.append(f'data-k{k}="{html.escape(shown)}"')
    question = item.questions[0] if item.questions else None
    q_html = ""
    if question is not None:
        more = f' <span class="more">+{len(item.questions) - 1}</span>' if len(item.questions) > 1 else ""
        q_html = (f'<p class="q">{html.escape(question.text)}{more}</p>'
                  f'<p class="gold">gold <b>{html.escape(answer_text(question.answer_type, question.gold))}</b></p>')
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


def _filters_html(entries: list[GalleryEntry], axes: list[_FilterAxis]) -> str:
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
    """JSON safe inside <script type="application/json">: no `<` at all, so neither `</script` (which closes the
    element early) nor `<!--` followed by `<script` (which puts the HTML parser into its double-escaped state, where
    the rest of the page, gallery.js included, becomes part of this element) can come from an item's text.
    `\\u003c` is the same string to JSON.parse; `>` and `&` are escaped too, so no markup survives in any form."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_index(entries: list[GalleryEntry], title: str, note: str) -> str:
    """The whole page as one string: the cards, the detail data (JSON), and assets/gallery.css and gallery.js inlined
    (one self-contained file that opens from disk, no server)."""
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
<style>{_asset("gallery.css")}</style></head>
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
<script>{_asset("gallery.js")}</script>
</body></html>
"""
