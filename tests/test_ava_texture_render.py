"""AVA-3D texture through Cycles (one tiny batch, one item per class): the pattern on the image is the class.

For every face point of the sign whose pixel the renderer's mask gives to the sign (away
from its outline and from the pattern's own edges), the rendered unmarked pixel reads as
ink or paper (nearer the sign's dark or light luminance) exactly where the class's
definition (scenes/surfaces.py `texture_ink`) puts ink, in at least 90 % of those points;
those points span at least three periods along both pattern axes and a period is at least
`min_period` of the image width, so the texture is resolvable at the rendered size.
`cracked` (Blender's Voronoi) has no numpy twin: its sign must show ink on a thin network
(5-45 % of the face) with both tones present.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from stim3d.cli import main
from stim3d.render.batch.item_folder import load_item, load_mask
from stim3d.render.markers import RAW_IMAGE
from stim3d.scenes.families.ava.ava_sign import face_points_px
from stim3d.scenes.surfaces import TEXTURE_CLASSES, face_uv, texture_ink

pytestmark = pytest.mark.bpy

CONFIG = """\
seed: 5
render: {engine: cycles, width: 160, height: 120, samples: 4, denoise: false}
tasks:
  - family: ava_texture
    count: 6
    params: {size_range: [1.9, 2.2], periods: [3.0, 3.6], contrast: [0.85, 1.0], max_distractors: 1,
             min_period: 0.05, max_view_deg: 20}
    grid: {answer: [striped, chequered, polka-dotted, grid, zigzagged, cracked]}
"""
MARGIN = 0.12  # periods: a sample this close to a pattern edge is not judged (the edge pixel mixes both)


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ava_texture")
    (folder / "tex.yaml").write_text(CONFIG)
    assert main(["render", str(folder / "tex.yaml"), "--out", str(folder / "out"), "--quiet"]) == 0
    return folder / "out"


def sign_samples(folder: Path):
    """Face points on a fine grid whose pixel (and its 3x3 neighbourhood) the renderer's mask gives to the sign."""
    item, mask = load_item(folder), load_mask(folder)
    sign = next(o for o in item.scene.objects if "texture" in o.attributes)
    x, y = np.meshgrid(*(np.linspace(-0.48, 0.48, 121) * sign.size,) * 2)
    px = face_points_px(sign, item.scene.camera, x, y)
    cols, rows = np.floor(px[..., 0]).astype(int), np.floor(px[..., 1]).astype(int)
    inside = (cols >= 1) & (rows >= 1) & (cols < mask.shape[1] - 1) & (rows < mask.shape[0] - 1)
    ok = inside.copy()
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            ok[inside] &= mask[rows[inside] + dr, cols[inside] + dc] == sign.id
    image = np.asarray(Image.open(folder / RAW_IMAGE).convert("L"), dtype=float)
    lum = np.where(ok, image[np.clip(rows, 0, mask.shape[0] - 1), np.clip(cols, 0, mask.shape[1] - 1)], np.nan)
    return item, sign, x, y, ok, lum


def test_the_rendered_pattern_is_the_class_s_definition_and_resolvable(batch):
    seen = set()
    for folder in sorted((batch / "items").iterdir()):
        item, sign, x, y, ok, lum = sign_samples(folder)
        name = sign.attributes["texture"]
        seen.add(name)
        dark, light = np.nanpercentile(lum, 5), np.nanpercentile(lum, 95)
        assert light - dark > 40, (name, dark, light)  # both tones on the image
        rendered_ink = lum < (dark + light) / 2
        u, v = face_uv(x, y, sign.attributes["texture_period_m"], sign.attributes["texture_angle_deg"])
        reference = texture_ink(name, u, v)
        assert item.difficulty["period_px"] >= 0.05 * 160
        if reference is None:  # cracked: a thin network of ink
            assert 0.05 < rendered_ink[ok].mean() < 0.45, name
            continue
        shifts = [(du, dv) for du in (-MARGIN, 0, MARGIN) for dv in (-MARGIN, 0, MARGIN)]
        steady = ok & np.all([texture_ink(name, u + du, v + dv) == reference for du, dv in shifts], axis=0)
        agreement = (rendered_ink[steady] == reference[steady]).mean()
        assert agreement >= 0.9, (folder.name, name, agreement)
        for axis in (u, v):  # whole periods judged along both axes
            assert np.ptp(np.floor(axis[steady])) >= 2, name
    assert seen == set(TEXTURE_CLASSES)
