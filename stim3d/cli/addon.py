"""The Blender extension: addon build."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stim3d.cli.common import CliParser


def cmd_addon_build(args: argparse.Namespace) -> int:
    from stim3d.cli.addon_package import PLATFORMS, build_addon

    platforms = list(PLATFORMS) if "all" in args.platform or not args.platform else args.platform
    build_addon(Path(args.out), platforms, with_dependencies=not args.without_dependencies,
                progress=lambda message: print(message, file=sys.stderr, flush=True))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add this group's subcommands to the `stim3d` parser."""
    p = sub.add_parser("addon", help="the Blender extension (add-on): build its installable zip")
    addon = p.add_subparsers(dest="addon_command", required=True, parser_class=CliParser)
    p = addon.add_parser("build", help="write the extension zip(s) with the wheels Blender's Python 3.11 needs")
    p.add_argument("--out", default="dist", help="folder for the zip(s) (default: dist)")
    p.add_argument("--platform", action="append", default=[], choices=["linux-x64", "windows-x64", "macos-arm64", "all"],
                   help="Blender platform to bundle wheels for, one zip each; repeatable (default: all)")
    p.add_argument("--without-dependencies", action="store_true",
                   help="only stim3d's own wheel, no download: for a Blender whose Python already has trimesh, "
                        "embreex, python-fcl, pydantic, PyYAML, Pillow and OpenEXR")
    p.set_defaults(func=cmd_addon_build)
