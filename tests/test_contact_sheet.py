"""The contact sheet (stim3d/views/contact_sheet.py): N captioned thumbnails in C columns, one PNG."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from stim3d.render.batch.config import parse_config
from stim3d.render.batch.driver import render_batch
from stim3d.views.contact_sheet import contact_sheet
from stim3d.views.gallery import GalleryError

pytestmark = pytest.mark.bpy  # the batch is rendered with Cycles

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sheet") / "batch"
    config = parse_config({
        "seed": 5,
        "render": {"engine": "cycles", "width": 80, "height": 60, "samples": 4, "denoise": False},
        "tasks": [
            {"family": "shape_count", "count": 4, "grid": {"min_visibility": [0.7, 0.9]}},
            {"family": "shape_color_count", "count": 2},
        ],
    })
    report = render_batch(config, out)
    assert not report.failed, report.failed
    return out


def item_ids(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "items").iterdir() if not p.name.startswith("."))


def ink_lines(region: np.ndarray) -> int:
    """Separate bands of rows holding dark (text) pixels on the white caption background."""
    dark_rows = (region.min(axis=2) < 128).any(axis=1)
    return int(np.count_nonzero(dark_rows[1:] & ~dark_rows[:-1]) + dark_rows[0])


@pytest.mark.parametrize("n, columns", [(5, 3), (6, 2), (2, 4)])
def test_sheet_has_n_captioned_cells_in_the_asked_columns(batch, n, columns):
    sheet = contact_sheet(batch, n=n, columns=columns, thumb_width=96)
    pixels = np.asarray(sheet.image)
    cols = min(columns, n)
    rows = math.ceil(n / cols)
    assert len(sheet.cells) == n and (sheet.columns, sheet.rows) == (cols, rows)
    assert len({c.thumb_box[0] for c in sheet.cells}) == cols
    assert len({c.caption_box[1] for c in sheet.cells}) == rows
    assert all(c.thumb_box[2] - c.thumb_box[0] == 96 for c in sheet.cells)
    # the sheet is exactly the grid of cells plus equal margins: its size follows from N and C
    cell_w = sheet.cells[0].caption_box[2] - sheet.cells[0].caption_box[0]
    cell_h = sheet.cells[0].caption_box[3] - sheet.cells[0].thumb_box[1]
    margin = sheet.cells[0].thumb_box[0]
    assert sheet.image.size == (cols * cell_w + (cols + 1) * margin, rows * cell_h + (rows + 1) * margin)

    for cell in sheet.cells:
        # the thumbnail is the item's own image
        x0, y0, x1, y1 = cell.thumb_box
        with Image.open(batch / "items" / cell.item_id / "image.png") as image:
            expected = np.asarray(image.convert("RGB").resize((x1 - x0, y1 - y0))).astype(float)
        assert np.abs(pixels[y0:y1, x0:x1].astype(float) - expected).mean() < 12, cell.item_id
        # the caption holds text: id, question, gold answer, difficulty (at least four lines of ink)
        cx0, cy0, cx1, cy1 = cell.caption_box
        assert ink_lines(pixels[cy0:cy1, cx0:cx1]) >= 4, cell.item_id
    # empty slots of the last row stay blank
    for slot in range(n, rows * cols):
        x = margin + (slot % cols) * (cell_w + margin)
        y = margin + (slot // cols) * (cell_h + margin)
        assert (pixels[y:y + cell_h, x:x + cell_w] == 255).all()


def test_sheet_spreads_over_the_batch_and_records_its_items(batch, tmp_path):
    ids = item_ids(batch)
    sheet = contact_sheet(batch, n=3, columns=3, thumb_width=64)
    chosen = [c.item_id for c in sheet.cells]
    assert chosen[0] == ids[0] and chosen[-1] == ids[-1] and len(set(chosen)) == 3  # not just the first three
    assert sheet.available == len(ids)
    path = tmp_path / "sheet.png"
    sheet.save(path)
    with Image.open(path) as saved:
        assert json.loads(saved.text["stim3d:items"]) == chosen
        assert saved.size == sheet.image.size
    # asking for more items than there are shows them all
    assert [c.item_id for c in contact_sheet(batch, n=50, columns=4, thumb_width=64).cells] == ids


def test_family_selection_and_bad_arguments(batch):
    sheet = contact_sheet(batch, n=10, columns=5, family="shape_color_count", thumb_width=64)
    assert [c.item_id for c in sheet.cells] == [i for i in item_ids(batch) if i.startswith("shape_color_count")]
    for kwargs, message in [({"n": 0}, "^n 0: "), ({"columns": 0}, "^columns 0: "), ({"family": "hexagons"}, "^family 'hexagons': ")]:
        with pytest.raises(GalleryError, match=message):
            contact_sheet(batch, **kwargs)


def test_cli_writes_the_sheet_and_names_mistakes(batch, tmp_path):
    out = tmp_path / "figs" / "sheet.png"
    result = subprocess.run([sys.executable, "-m", "stim3d", "contact-sheet", str(batch), "-o", str(out), "--n", "4",
                             "--columns", "2", "--thumb-width", "64"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "4 items (2 x 2)" in result.stdout
    with Image.open(out) as image:
        assert len(json.loads(image.text["stim3d:items"])) == 4
    result = subprocess.run([sys.executable, "-m", "stim3d", "contact-sheet", str(batch), "-o", str(out), "--n", "-1"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [  # refused at parse time, before the batch is read
        "stim3d: error: argument --n: '-1': must be at least 1 (see 'stim3d contact-sheet --help')"]
