"""Photoreal's settings contact sheet: families (rows) in each setting (columns), Cycles + OpenImageDenoise.

    python -m bench.settings_sheet [--size 320x240] [--samples 16] [--families a,b] [-o docs/images/looks_settings.png]

Each cell is the first item of entropy [2026, 9 + row, i] (i = 0, 1, ...; row: the family's row on the sheet)
whose photoreal setting is the column's kind (scenes/settings.py), the family's defaults (odd_grid 5x5), so a cell
is a fixed, reproducible item and rows draw different settings; its label names the setting's materials. docs/looks.md ("Settings") shows the result.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from PIL import Image, ImageDraw

from stim3d.render.settings import RenderSettings
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.settings import SETTING_KINDS

PARAMS = {"odd_grid": {"rows": 5, "cols": 5}}
FAMILIES = ("shape_count", "rose_grid", "ava_orientation", "letters")


def cell(family: str, kind: str, row: int, width: int, height: int, samples: int,
         workdir: Path) -> tuple[Image.Image, str]:
    from stim3d.render.backends import blender

    for index in range(200):
        item = make_item(family, PARAMS.get(family, {}), [2026, 9 + row, index], f"{family}-x", Frame(width, height),
                         look="photoreal")
        setting = item.scene.look.setting
        if setting.kind == kind:
            break
    settings = RenderSettings(width=width, height=height, samples=samples, look="photoreal")
    out = blender.render_scene(item.scene, settings, item.seed, workdir / f"{family}_{kind}")
    if setting.table is not None and setting.room is not None:
        label = f"{setting.table.top.material}, {'window' if setting.room.window else 'no window'}"
    elif setting.ground is not None:
        label = setting.ground.material + (", hedge" if setting.hedge else "")
    else:
        label = item.scene.look.environment.name
    return Image.fromarray(out.image), f"{family} [2026, {9 + row}, {index}]: {label}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="320x240")
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("-o", "--out", default="docs/images/looks_settings.png")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    families = args.families.split(",")
    kinds = list(SETTING_KINDS)
    label_h, pad = 16, 4
    sheet = Image.new("RGB", (len(kinds) * (width + pad) - pad, len(families) * (height + label_h + pad) + 18),
                      "white")
    draw = ImageDraw.Draw(sheet)
    for c, kind in enumerate(kinds):
        draw.text((c * (width + pad) + width // 2 - 3 * len(kind), 3), kind, fill="black")
    with tempfile.TemporaryDirectory() as folder:
        for r, family in enumerate(families):
            y = 18 + r * (height + label_h + pad)
            for c, kind in enumerate(kinds):
                image, label = cell(family, kind, r, width, height, args.samples, Path(folder))
                sheet.paste(image, (c * (width + pad), y + label_h))
                draw.text((c * (width + pad) + 2, y + 2), label, fill="black")
                print(label, flush=True)
    sheet.save(args.out, optimize=True)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
