"""bench/looks_detail.py sees a lost fine detail: an odd cell's colour difference, the label digits.

The pictures are painted from the scene's own ray-cast mask (no renderer): every
object in its palette colour. The odd cell's measured difference must then equal the
nominal CIEDE2000 the family records on it (`delta_e`), and it must vanish when the
odd cell is painted like the other cells, as a denoiser that smeared it would.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.looks_detail import detail
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.visibility import measure


@pytest.fixture(scope="module")
def board():
    item = make_item("odd_grid", {"odd_types": "color", "rows": 5, "cols": 5, "labels": True, "layout": "board"},
                     [1, 0, 0], "detail", Frame(320, 240))
    mask = measure(item.scene, 1).instance_map
    picture = np.full((*mask.shape, 3), 128, dtype=np.uint8)
    for obj in item.scene.objects:
        picture[mask == obj.id] = np.rint(np.asarray(obj.color.srgb) * 255)
    return item, mask, picture


def test_an_identical_picture_keeps_every_detail(board):
    item, mask, picture = board
    odd = next(o for o in item.scene.objects if o.attributes.get("odd"))
    figures = detail(item, picture, picture, mask)
    assert figures["colour_de_max"] == 0.0 and figures["object_ssim_min"] == pytest.approx(1.0)
    assert figures["odd_de"] == figures["odd_de_reference"] == pytest.approx(odd.attributes["delta_e"], abs=0.3)
    assert figures["label_contrast"] == figures["label_contrast_reference"] > 20  # dark digits on the board


def test_an_odd_cell_painted_like_the_others_and_digits_painted_out_are_seen(board):
    item, mask, picture = board
    odd = next(o for o in item.scene.objects if o.attributes.get("odd"))
    cell = next(o for o in item.scene.objects if "row" in o.attributes and not o.attributes.get("odd"))
    labels = [o.id for o in item.scene.objects if "label_axis" in o.attributes]
    smeared = picture.copy()
    smeared[mask == odd.id] = np.rint(np.asarray(cell.color.srgb) * 255)
    digits = np.isin(mask, labels)
    rows, cols = np.nonzero(digits)
    box = (slice(rows.min(), rows.max() + 1), slice(cols.min(), cols.max() + 1))
    around = picture[box][~digits[box]]
    smeared[digits] = around[np.argsort(around.sum(axis=1))[len(around) // 2]]  # painted in the colour around them
    figures = detail(item, smeared, picture, mask)
    assert figures["odd_de"] == pytest.approx(0.0, abs=0.3)
    assert figures["colour_de_max"] == pytest.approx(odd.attributes["delta_e"], abs=0.3)
    assert figures["label_contrast"] == pytest.approx(0.0, abs=1.0)
    assert figures["label_contrast_reference"] > 20
    assert figures["label_ssim"] < 0.9
