"""Sweeps: sweep occlusion, sweep look."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from stim3d.cli.common import CliParser, UsageError, samples, whole, workers
from stim3d.render.batch.folder import ITEM_JSON
from stim3d.scenes.model import LADDER

MAX_LEVELS = 1001  # levels lie in [0, 1] and differ by at least 0.001


def levels_text(text: str) -> str:
    """--levels, bounded at parse time: a range that would expand to more than MAX_LEVELS levels (`0:1:1e-9`) is
    refused before it is expanded; every other check stays with render/sweep/levels.py's parse_levels."""
    parts = text.split(":")
    if len(parts) == 3:
        try:
            start, stop, step = (float(part) for part in parts)
        except ValueError:
            return text  # parse_levels names the part that is not a number
        if all(map(math.isfinite, (start, stop, step))) and step > 0 and (stop - start) / step > MAX_LEVELS:
            raise argparse.ArgumentTypeError(f"{text!r}: more than {MAX_LEVELS} levels; levels lie in [0, 1] and "
                                             "differ by at least 0.001")
    return text


def occluder_choice(text: str) -> int | str | None:
    """--occluder: "add" (the sweep adds a panel), "scene" (choose among the scene's objects), or an object id."""
    if text in ("add", "scene"):
        return None if text == "scene" else text
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give add, scene or an object id") from None
    if not 0 <= value <= 1_000_000:
        raise argparse.ArgumentTypeError(f"{text!r}: an object id is from 0 to 1000000")
    return value


def cmd_sweep(args: argparse.Namespace) -> int:
    from stim3d.cli.rendering import require_renderer
    from stim3d.errors import MissingObject
    from stim3d.render.batch.executors import check_ray
    from stim3d.render.sweep import parse_levels, run_occlusion_sweep

    def progress(done: int, total: int, label: str, status: str) -> None:
        if not args.quiet:
            print(f"[{done}/{total}] {label} {status}", file=sys.stderr, flush=True)

    require_renderer(args.engine or "cycles")  # a sweep renders every level
    try:
        if args.executor == "ray":
            check_ray(args.address)
        levels = parse_levels(args.levels)
        scores = Path(args.scores) if args.scores else None
        if scores is not None and not scores.is_file():
            raise UsageError(f"--scores {scores}: no such file (write it with 'stim3d score ... --out')")
        if not Path(args.source).exists():  # neither an item folder nor a config: say both, not "no such config"
            raise UsageError(f"{args.source}: no such item folder or config file")
        occluder_id = args.occluder if isinstance(args.occluder, int) else None
        _check_object_ids(Path(args.source), {"--target": args.target, "--occluder": occluder_id})
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {out}: exists and is not a folder")
        report = run_occlusion_sweep(Path(args.source), levels, out, target_id=args.target,
                                     occluder_id=args.occluder, engine=args.engine, samples=args.samples,
                                     plot=args.plot, scores=scores, progress=progress, workers=args.workers,
                                     executor=args.executor, address=args.address)
    except MissingObject as exc:  # an item of a config source lacks the --target/--occluder id
        raise UsageError(f"--target/--occluder: {exc}") from None
    for line in report.summary_lines():
        print(line)
    for path in report.outputs:
        print(f"wrote {path}")
    return 1 if report.failed else 0


def cmd_sweep_look(args: argparse.Namespace) -> int:
    from stim3d.cli.rendering import require_renderer
    from stim3d.render.batch.executors import check_ray
    from stim3d.render.sweep.looks import parse_looks, run_look_sweep

    def progress(done: int, total: int, label: str, status: str) -> None:
        if not args.quiet:
            print(f"[{done}/{total}] {label} {status}", file=sys.stderr, flush=True)

    require_renderer(args.engine or "cycles")
    if args.executor == "ray":
        check_ray(args.address)
    looks = parse_looks(args.looks)
    for source in args.sources:
        if not Path(source).exists():
            raise UsageError(f"{source}: no such item folder or config file")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a folder")
    report = run_look_sweep([Path(s) for s in args.sources], out, looks, engine=args.engine,
                            samples=args.samples, progress=progress, workers=args.workers,
                            executor=args.executor, address=args.address)
    for line in report.summary_lines():
        print(line)
    for path in report.outputs:
        print(f"wrote {path}")
    return 1 if report.failed else 0


def _check_object_ids(source: Path, ids: dict[str, int | None]) -> None:
    """For an item folder source, refuse an object id its scene does not have, naming the ids it has."""
    from stim3d.render.batch.item_files import item_problem
    from stim3d.render.batch.item_folder import load_item

    if not (source / ITEM_JSON).is_file() or all(v is None for v in ids.values()):
        return
    try:
        item = load_item(source)
    except ValueError as exc:  # a ValidationError, or not UTF-8
        raise UsageError(f"{source / ITEM_JSON}: not a stim3d item: {item_problem(exc)}") from None
    present = sorted(o.id for o in item.scene.objects)
    for option, object_id in ids.items():
        if object_id is not None and object_id not in present:
            raise UsageError(f"{option} {object_id}: {item.item_id} has no object with that id (it has {present})")


def _run_options(p: argparse.ArgumentParser, what: str) -> None:
    """Progress and executor options, as `stim3d render` has them, for a sweep rendering `what`."""
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--workers", type=workers, default=1, metavar="N",
                   help=f"render {what} on N worker processes (Ray: actors), as `stim3d render` does (default 1)")
    p.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="local worker processes (default) or a Ray cluster (needs the ray extra)")
    p.add_argument("--address", help="Ray cluster address (with --executor ray; default: start a local Ray)")


def register(sub: argparse._SubParsersAction) -> None:
    """Add this group's subcommands to the `stim3d` parser."""
    p = sub.add_parser("sweep", help="the same scene at graded visibility levels of one object")
    sweeps = p.add_subparsers(dest="sweep_kind", required=True, parser_class=CliParser)
    p = sweeps.add_parser("occlusion", help="slide one occluder sideways in front of a target; one item per level",
                          description="Exit code: 0 when every level of every item was rendered, 1 when some "
                                      "level was unreachable or some item could not be made, 2 for bad input.")
    p.add_argument("source", help="an item folder, or a config (then every item it plans gets its sweep)")
    p.add_argument("--levels", required=True, metavar="LIST|A:B:STEP", type=levels_text,
                   help="target visibility levels: 0.2,0.4,0.6 or a range 0.1:1.0:0.1 (end included when a step lands on it)")
    p.add_argument("--out", required=True, help="folder for the level items, records.jsonl and sweeps.json")
    p.add_argument("--target", type=whole(0, 1_000_000), help="object id to hide (default: a central object the question asks about that some object can "
                        "hide down to the lowest level)")
    p.add_argument("--occluder", type=occluder_choice, metavar="add|scene|ID",
                   help="what moves: 'add' a panel sized to hide the target completely (not counted; every level "
                        "in [0, 1] lies on its path), 'scene' (default) the scene's object that hides the most of the "
                        "target and reaches the most levels, or that object id")
    p.add_argument("--engine", choices=["cycles", "workbench", "raster"], help="override the render engine")
    p.add_argument("--samples", type=samples, help="override the render samples (1 to 65536)")
    p.add_argument("--plot", action="store_true", help="also write sweep_plot.png and a strip of the images per sweep")
    p.add_argument("--scores", metavar="SCORES_JSON",
                   help="the JSON 'stim3d score' wrote for these records: adds accuracy vs visibility to the plot")
    _run_options(p, "levels")
    p.set_defaults(func=cmd_sweep)
    p = sweeps.add_parser("look", help="one scene on every rung of the realism ladder (clevr, studio, photoreal_raw, "
                          "photoreal): one item per look and a strip",
                          description="Exit code: 0 when every look of every item was rendered, 1 when some item "
                                      "could not be made, 2 for bad input.")
    p.add_argument("sources", nargs="+", metavar="SOURCE",
                   help="item folders or configs (a config gives every item it plans)")
    p.add_argument("--out", required=True, help="folder for the look items, records.jsonl, looks.json and the strips")
    p.add_argument("--looks", default=",".join(LADDER), metavar="LIST",
                   help=f"the looks, in strip order (default: the realism ladder, {','.join(LADDER)})")
    p.add_argument("--engine", choices=["cycles", "workbench", "raster"],
                   help="override the render engine (only Cycles shows a look fully; docs/looks.md)")
    p.add_argument("--samples", type=samples, help="override the render samples (1 to 65536)")
    _run_options(p, "items")
    p.set_defaults(func=cmd_sweep_look)
