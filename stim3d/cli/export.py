"""Dataset exports: export imagefolder|coco|clevr|bop."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stim3d.cli.common import UsageError


def cmd_export(args: argparse.Namespace) -> int:
    from stim3d.render.export.bop import export_bop
    from stim3d.render.export.clevr import export_clevr
    from stim3d.render.export.coco import export_coco
    from stim3d.render.export.common import ExportError, default_destination
    from stim3d.render.export.imagefolder import export_imagefolder
    from stim3d.render.export.lmms_eval import export_lmms_eval
    from stim3d.render.export.vlmevalkit import export_vlmevalkit

    batches = [Path(b) for b in args.batches]
    if args.to is None and len(batches) > 1:
        raise UsageError("several batch folders: say where the merged export goes with --to DIR")
    export = {"imagefolder": export_imagefolder, "coco": export_coco, "clevr": export_clevr,
              "bop": export_bop, "vlmevalkit": export_vlmevalkit,
              "lmms-eval": export_lmms_eval}[args.format]
    try:
        dest = Path(args.to) if args.to else default_destination(batches[0], args.format)
        report = export(batches, dest)
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    for where, reason in sorted(report.skipped.items()):
        print(f"skipped {where}: {reason}", file=sys.stderr)
    print(f"{args.format}: {report.summary()}")
    print(f"wrote {dest}")
    return 1 if report.skipped else 0  # the export is complete but for the items named above


def register(sub: argparse._SubParsersAction) -> None:
    """Add this group's subcommands to the `stim3d` parser."""
    p = sub.add_parser("export", help="export batches as a Hugging Face imagefolder, COCO instances, CLEVR scene JSON, BOP, "
                       "a VLMEvalKit TSV or an lmms-eval task")
    p.add_argument("format", choices=["imagefolder", "coco", "clevr", "bop", "vlmevalkit", "lmms-eval"])
    p.add_argument("batches", nargs="+", metavar="OUT", help="batch folder(s); several are merged")
    p.add_argument("--to", help="destination folder, new or empty (default: OUT/exports/FORMAT for one batch)")
    p.set_defaults(func=cmd_export)
