"""The looks contact sheet: one scene per family (rows) in every look (columns), same seed, same geometry.

    python -m bench.looks_sheet [--size 240x180] [--samples 16] [--families a,b] [-o docs/images/looks_contact.png]

Each row is one composed scene (the family's defaults, entropy [2026, row, 0], so rows draw different
looks) rendered
in studio, clevr and photoreal with Cycles + OpenImageDenoise; the masks of a row are
identical (tests/test_looks.py). docs/looks.md and the README show the result.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from PIL import Image, ImageDraw

from stim3d.render.settings import RenderSettings
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import LOOK_NAMES
from stim3d.scenes.placement import InfeasibleError

from .common import progress

ROOT = Path(__file__).resolve().parent.parent
PARAMS: dict[str, dict] = {"odd_grid": {"rows": 5, "cols": 5}}
LABEL_W, HEADER_H, PAD = 130, 22, 4


def render_cell(family: str, look: str, row: int, width: int, height: int, samples: int, workdir: Path) -> Image.Image:
    """The family's scene in `look`, composed at the sheet size (or, if it cannot be, at 320x240 and scaled)."""
    from stim3d.render.backends import blender

    size = (width, height)
    try:
        item = make_item(family, PARAMS.get(family, {}), [2026, row, 0], family, Frame(*size), look=look)  # type: ignore[arg-type]
    except InfeasibleError:
        size = (320, 240)
        item = make_item(family, PARAMS.get(family, {}), [2026, row, 0], family, Frame(*size), look=look)  # type: ignore[arg-type]
    settings = RenderSettings(width=size[0], height=size[1], samples=samples, look=look)  # type: ignore[arg-type]
    output = blender.render_scene(item.scene, settings, item.seed, workdir)
    return Image.fromarray(output.image).resize((width, height), Image.LANCZOS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="240x180")
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--families", default=",".join(sorted(FAMILIES)))
    parser.add_argument("-o", "--out", type=Path, default=ROOT / "docs" / "images" / "looks_contact.png")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    families = args.families.split(",")
    sheet = Image.new("RGB", (LABEL_W + len(LOOK_NAMES) * (width + PAD), HEADER_H + len(families) * (height + PAD)),
                      "white")
    draw = ImageDraw.Draw(sheet)
    for c, look in enumerate(LOOK_NAMES):
        draw.text((LABEL_W + c * (width + PAD) + width // 2 - 24, 5), look, fill="black")
    with tempfile.TemporaryDirectory() as scratch:
        for r, family in enumerate(families):
            y = HEADER_H + r * (height + PAD)
            draw.text((6, y + height // 2 - 6), family, fill="black")
            for c, look in enumerate(LOOK_NAMES):
                progress(f"{family} in {look}")
                cell = render_cell(family, look, r, width, height, args.samples, Path(scratch) / f"{family}-{look}")
                sheet.paste(cell, (LABEL_W + c * (width + PAD), y))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(args.out, optimize=True)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
