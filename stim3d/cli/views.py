"""Looking at a batch: gallery, contact-sheet."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stim3d.cli.common import UsageError, whole

NESTED_FILTER = "--filter: a value nested too deeply to read; give a plain value, e.g. min_visibility=0.7"


def cmd_gallery(args: argparse.Namespace) -> int:
    from stim3d.eval.wrong import FILTER_KEY, wrong_item_ids
    from stim3d.render.batch.selection import parse_filters
    from stim3d.views.gallery import build_gallery

    def progress(done: int, total: int, item_id: str) -> None:
        if done == total or done % max(1, total // 20) == 0:
            print(f"[{done}/{total}] {item_id}", file=sys.stderr, flush=True)

    try:
        filters = parse_filters(args.filter)
        only_items, only_label = None, None
        if (model := filters.pop(FILTER_KEY, None)) is not None:  # the items a model got wrong (stim3d/eval/wrong.py)
            only_items, only_label = wrong_item_ids(Path(args.out), model), f"{FILTER_KEY}={model}"
        report = build_gallery(Path(args.out), family=args.family, filters=filters, progress=progress,
                               name=args.name, only_items=only_items, only_label=only_label)
    except RecursionError:  # a filter value like [[[[...]]]] read as YAML
        raise UsageError(NESTED_FILTER) from None
    for item_id, reason in sorted(report.unreadable.items()):
        print(f"skipped {item_id}: {reason}", file=sys.stderr)
    print(report.summary())
    print(f"wrote {report.index}")
    return 0

def cmd_contact_sheet(args: argparse.Namespace) -> int:
    from stim3d.render.batch.selection import parse_filters
    from stim3d.views.contact_sheet import contact_sheet

    try:
        sheet = contact_sheet(Path(args.out), n=args.n, columns=args.columns, family=args.family,
                              filters=parse_filters(args.filter), thumb_width=args.thumb_width)
    except RecursionError:
        raise UsageError(NESTED_FILTER) from None
    for item_id, reason in sorted(sheet.skipped.items()):
        print(f"skipped {item_id}: {reason}", file=sys.stderr)
    sheet.save(Path(args.output))
    print(f"contact sheet: {len(sheet.cells)} items ({sheet.columns} x {sheet.rows}) of {sheet.available}, "
          f"{sheet.image.width}x{sheet.image.height} px")
    print(f"wrote {args.output}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add this group's subcommands to the `stim3d` parser."""
    filter_help = "only items whose difficulty (or parameter) KEY equals VALUE, e.g. min_visibility=0.7; repeatable"
    p = sub.add_parser("gallery", help="write OUT/gallery/index.html: thumbnails, filters, ground-truth overlays")
    p.add_argument("out", help="batch folder")
    p.add_argument("--family", help="only this family")
    p.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE", help=filter_help)
    p.add_argument("--name", help="write gallery/NAME.html (default: index.html for all items; a filtered page is "
                                  "named from its family and filters, so it never replaces index.html)")
    p.set_defaults(func=cmd_gallery)
    p = sub.add_parser("contact-sheet", help="one PNG of N captioned thumbnails, spread evenly over the batch")
    p.add_argument("out", help="batch folder")
    p.add_argument("-o", "--output", required=True, help="PNG file to write")
    p.add_argument("--n", type=whole(1, 100_000), default=24, help="number of items (default 24)")
    p.add_argument("--columns", type=whole(1, 1000), default=6, help="columns (default 6)")
    p.add_argument("--thumb-width", type=whole(32, 2048, " pixels"), default=256,
                   help="width of each image in pixels, 32 to 2048 (default 256)")
    p.add_argument("--family", help="only this family")
    p.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE", help=filter_help)
    p.set_defaults(func=cmd_contact_sheet)
