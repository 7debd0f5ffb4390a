"""Dataset exports: export imagefolder|coco|clevr|bop."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from stim3d.cli.common import UsageError


def cmd_export(args: argparse.Namespace) -> int:
    from stim3d.export.bop import export_bop
    from stim3d.export.clevr import export_clevr
    from stim3d.export.coco import export_coco
    from stim3d.export.common import ExportReport, default_destination
    from stim3d.export.imagefolder import export_imagefolder
    from stim3d.export.lmms_eval import export_lmms_eval
    from stim3d.export.vlmevalkit import export_vlmevalkit

    batches = [Path(b) for b in args.batches]
    if args.to is None and len(batches) > 1:
        raise UsageError("several batch folders: say where the merged export goes with --to DIR")
    exports: dict[str, Callable[..., ExportReport]] = {
        "imagefolder": export_imagefolder, "coco": export_coco, "clevr": export_clevr, "bop": export_bop,
        "vlmevalkit": export_vlmevalkit, "lmms-eval": export_lmms_eval}
    export = exports[args.format]
    dest = Path(args.to) if args.to else default_destination(batches[0], args.format)
    report = export(batches, dest, split=args.split)
    for where, reason in sorted(report.skipped.items()):
        print(f"skipped {where}: {reason}", file=sys.stderr)
    for where, reason in sorted(report.omitted.items()):
        print(f"left out {where}: {reason}", file=sys.stderr)
    print(f"{args.format}: {report.summary()}")
    print(f"wrote {dest}")
    return 1 if report.skipped else 0  # complete but for the torn items named above (left-out ones are by design)


def register(sub: argparse._SubParsersAction) -> None:
    """Add this group's subcommands to the `stim3d` parser."""
    p = sub.add_parser("export", help="export batches as a Hugging Face imagefolder, COCO instances, CLEVR scene JSON, BOP, "
                       "a VLMEvalKit TSV or an lmms-eval task")
    p.add_argument("format", choices=["imagefolder", "coco", "clevr", "bop", "vlmevalkit", "lmms-eval"])
    p.add_argument("batches", nargs="+", metavar="OUT", help="batch folder(s); several are merged")
    p.add_argument("--to", help="destination folder, new or empty (default: OUT/exports/FORMAT for one batch)")
    p.add_argument("--split", metavar="NAME", help="export only this split's items and questions (a batch made "
                   "with `splits:` holds several; default: all)")
    p.set_defaults(func=cmd_export)
