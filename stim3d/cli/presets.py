"""Presets by name: `stim3d presets` and the name-or-path rule of `render` and `validate`."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from stim3d.cli.common import UsageError, shown_name


def resolve_config(arg: str) -> str:
    """A config argument as a path: `-` and existing files as given, a preset's name as its shipped file.

    Anything else is a mistake named in one line with the presets listed (a path that
    does not exist and is not a preset name).
    """
    from stim3d.scenes.presets import preset_names, preset_path

    given = Path(arg)
    if arg == "-" or (given.exists() and not given.is_dir()):  # a file, or a device or pipe such as /dev/stdin
        return arg
    path = preset_path(arg)
    if path is not None:
        logging.getLogger(__name__).info("config %s: the shipped preset %s", arg, path)
        return str(path)
    if given.is_dir():  # load_config names it as a folder
        return arg
    raise UsageError(f"{shown_name(arg)}: no such config file and no preset of that name "
                     f"(presets: {', '.join(preset_names())})")


def preset_rows() -> list[dict[str, object]]:
    """Each shipped preset: name, file, item count, families (composition is not run: counts come from the plan)."""
    from stim3d.render.batch.config import load_config
    from stim3d.render.batch.plan import expand
    from stim3d.scenes.presets import preset_names, preset_path

    rows = []
    for name in preset_names():
        path = preset_path(name)
        assert path is not None  # listed names always resolve
        config = load_config(path)
        plans = expand(config)
        families: dict[str, int] = {}
        for plan in plans:
            families[plan.family] = families.get(plan.family, 0) + 1
        rows.append({"name": name, "path": str(path), "items": len(plans), "families": families,
                     "engine": config.render.engine, "width": config.render.width, "height": config.render.height})
    return rows


def cmd_presets(args: argparse.Namespace) -> int:
    rows = preset_rows()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        families = ", ".join(f"{n} {f}" for f, n in row["families"].items())  # type: ignore[attr-defined]
        print(f"{row['name']:<10} {row['items']:>6} items  {row['engine']} {row['width']}x{row['height']}  ({families})")
    print("render one with: stim3d render NAME --out FOLDER; every seed preset: stim3d render all --out FOLDER")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add `stim3d presets` to the parser."""
    p = sub.add_parser("presets", help="list the shipped preset configs with their item counts")
    p.add_argument("--json", action="store_true", help="one JSON list (name, path, items, families, engine, size)")
    p.set_defaults(func=cmd_presets)
