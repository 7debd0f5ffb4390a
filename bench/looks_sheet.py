"""The looks contact sheet: one scene per family (rows) in every look (columns), same seed, same geometry.

    python -m bench.looks_sheet [--size 240x180] [--samples 16] [--families a,b] [--looks a,b]
                                [--before IMAGE --before-label TEXT] [--bare] [-o docs/images/looks_contact.png]

Each row is one composed scene (the family's defaults, entropy [2026, row, 0] where row is the family's
place among all registered families, so a family's row is the same scene whichever --families are
asked for, and rows draw different looks) rendered in each look with Cycles + OpenImageDenoise; the
masks of a row are identical (tests/test_looks.py). docs/looks.md and the README show the result.

Old against new (bench/results/looks_NOTES.md, "Photoreal, second round"): `--bare --looks photoreal` run in a checkout
of the older commit writes just its cells stacked in rows; `--before` puts that image in as an extra
first column headed `--before-label`, beside the current code's looks.
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
from stim3d.scenes.model import LADDER, LOOK_NAMES
from stim3d.scenes.placement import InfeasibleError

from .common import progress

ROOT = Path(__file__).resolve().parent.parent
PARAMS: dict[str, dict] = {"odd_grid": {"rows": 5, "cols": 5}}
LABEL_W, HEADER_H, PAD = 130, 22, 4


def row_of(family: str) -> int:
    """The family's row entropy: its place among every registered family (the full sheet's row)."""
    return sorted(FAMILIES).index(family)


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


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="240x180")
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--families", default=",".join(sorted(FAMILIES)))
    parser.add_argument("--looks", default=",".join(LADDER))
    parser.add_argument("--before", type=Path, help="an older --bare sheet of the same families, shown first")
    parser.add_argument("--before-label", default="before", help="the --before column's heading")
    parser.add_argument("--bare", action="store_true", help="cells only, one look: the input of a later --before")
    parser.add_argument("-o", "--out", type=Path, default=ROOT / "docs" / "images" / "looks_contact.png")
    args = parser.parse_args()
    unknown = [f for f in args.families.split(",") if f not in FAMILIES] + \
        [look for look in args.looks.split(",") if look not in LOOK_NAMES]
    if unknown or (args.bare and (len(args.looks.split(",")) != 1 or args.before)):
        parser.error(f"unknown family or look: {', '.join(unknown)}" if unknown else "--bare takes one look, no --before")
    return args


def main() -> None:
    args = _args()
    width, height = (int(v) for v in args.size.split("x"))
    families, looks = args.families.split(","), args.looks.split(",")
    before = Image.open(args.before).convert("RGB") if args.before else None
    if before is not None and before.size != (width, len(families) * height):
        raise SystemExit(f"bench.looks_sheet: --before {args.before} is {before.size[0]}x{before.size[1]}, not one "
                         f"{width}x{height} cell per family ({len(families)} rows)")
    headings = ([args.before_label] if before is not None else []) + looks
    label_w, header_h, pad = (0, 0, 0) if args.bare else (LABEL_W, HEADER_H, PAD)
    sheet = Image.new("RGB", (label_w + len(headings) * (width + pad), header_h + len(families) * (height + pad)),
                      "white")
    draw = ImageDraw.Draw(sheet)
    for c, heading in enumerate(headings if not args.bare else []):
        draw.text((label_w + c * (width + pad) + width // 2 - 3 * len(heading), 5), heading, fill="black")
    with tempfile.TemporaryDirectory() as scratch:
        for r, family in enumerate(families):
            y = header_h + r * (height + pad)
            if not args.bare:
                draw.text((6, y + height // 2 - 6), family, fill="black")
            if before is not None:
                sheet.paste(before.crop((0, r * height, width, (r + 1) * height)), (label_w, y))
            for c, look in enumerate(looks, start=len(headings) - len(looks)):
                progress(f"{family} in {look}")
                cell = render_cell(family, look, row_of(family), width, height, args.samples,
                                   Path(scratch) / f"{family}-{look}")
                sheet.paste(cell, (label_w + c * (width + pad), y))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(args.out, optimize=True)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
