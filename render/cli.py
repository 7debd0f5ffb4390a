"""The `stim3d` command: a thin layer that parses, calls the library, prints.

Every user mistake (bad config, bad argument, missing file) ends as one line on
stderr naming what is wrong, and exit code 2; never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

from pydantic import ValidationError

from . import __version__


class UsageError(Exception):
    """A user's mistake outside the config (an argument, a path)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage too; keep it short)
        self.exit(2, f"stim3d: error: {message} (see '{self.prog} --help')\n")


# -- commands --------------------------------------------------------------------------------------

def cmd_families(args: argparse.Namespace) -> int:
    from scenes.families import FAMILIES

    for name, family in FAMILIES.items():
        print(f"{name}: {family.description}")
        for field_name, info in family.params_model.model_fields.items():
            limits = [
                f"{label} {getattr(m, attr)}"
                for m in info.metadata
                for attr, label in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"))
                if getattr(m, attr, None) is not None
            ]
            bounds = f" [{', '.join(limits)}]" if limits else ""
            print(f"  {field_name} (default {info.default!r}){bounds}: {info.description or ''}")
        print()
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from .config import expand, load_config

    config = load_config(args.config)
    plans = expand(config)
    per_family: dict[str, int] = {}
    for plan in plans:
        per_family[plan.family] = per_family.get(plan.family, 0) + 1
    summary = ", ".join(f"{n} {family}" for family, n in per_family.items())
    print(f"{args.config}: valid; {len(plans)} items ({summary}); engine {config.render.engine} "
          f"{config.render.width}x{config.render.height}, {config.render.samples} samples")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from .batch import render_batch
    from .config import load_config

    config = load_config(args.config)
    overrides = {k: v for k, v in {"engine": args.engine, "samples": args.samples, "width": args.width,
                                   "height": args.height, "depth": True if args.depth else None}.items() if v is not None}
    if overrides:
        try:
            config = config.model_copy(update={"render": config.render.model_validate({**config.render.model_dump(), **overrides})})
        except ValidationError as exc:
            error = exc.errors()[0]
            raise UsageError(f"--{error['loc'][0]} {error['input']!r}: {error['msg']}") from None

    def progress(done: int, total: int, item_id: str, status: str) -> None:
        if not args.quiet:
            print(f"[{done}/{total}] {item_id} {status}", file=sys.stderr, flush=True)

    report = render_batch(config, Path(args.out), force=args.force, progress=progress)
    for line in report.summary_lines():
        print(line)
    print(f"wrote {Path(args.out) / 'records.jsonl'}")
    return 1 if report.failed else 0


def cmd_show(args: argparse.Namespace) -> int:
    from .item_folder import load_item

    folder = Path(args.item)
    if folder.is_file() and folder.name == "item.json":
        folder = folder.parent
    if not (folder / "item.json").is_file():
        raise UsageError(f"{folder}: not an item folder (no item.json)")
    try:
        item = load_item(folder)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise UsageError(f"{folder / 'item.json'}: not a stim3d item: {'.'.join(map(str, error['loc']))}: {error['msg']}") from None
    cam = item.scene.camera
    print(f"{item.item_id}  family {item.family}  seed {item.seed}  {cam.width}x{cam.height}")
    if item.provenance:
        p = item.provenance
        agreement = f"  mask agreement {p.mask_agreement:.4f}" if p.mask_agreement is not None else ""
        print(f"rendered with {p.engine} ({p.samples} samples, Blender {p.blender_version}){agreement}")
    print("difficulty: " + ", ".join(f"{k}={v}" for k, v in item.difficulty.items()))
    header = f"{'id':>3} {'shape':<9} {'colour':<7} {'size':>5} {'visible':>8} {'amodal':>8} {'visib.':>7} {'occl.':>6} {'trunc.':>6}  bbox_visible"
    print(header)
    truths = {t.id: t for t in item.ground_truth.objects}
    for obj in item.scene.objects:
        t = truths[obj.id]
        print(f"{obj.id:>3} {obj.shape:<9} {obj.color.name:<7} {obj.size:>5.2f} {t.visible_px:>8.0f} {t.amodal_px:>8.0f} "
              f"{t.visibility:>7.3f} {t.occlusion:>6.3f} {t.truncation:>6.3f}  {t.bbox_visible}")
    for q in item.questions:
        print(f"Q {q.question_id}: {q.text}  ->  gold: {q.gold} ({q.answer_type})")
    return 0


# -- parser ------------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="stim3d", description="Photorealistic 3D stimuli with exact ground truth.")
    parser.add_argument("--version", action="version", version=f"stim3d {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("families", help="list task families and their parameters")
    p.set_defaults(func=cmd_families)

    p = sub.add_parser("validate", help="check a config without rendering")
    p.add_argument("config")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("render", help="render a config into item folders and records.jsonl")
    p.add_argument("config")
    p.add_argument("--out", required=True, help="batch folder (created; rerunning resumes)")
    p.add_argument("--engine", choices=["cycles", "workbench", "raster"], help="override render.engine")
    p.add_argument("--samples", type=int, help="override render.samples")
    p.add_argument("--width", type=int, help="override render.width")
    p.add_argument("--height", type=int, help="override render.height")
    p.add_argument("--depth", action="store_true", help="also write depth.npy")
    p.add_argument("--force", action="store_true", help="re-render everything, even into a folder made from another config")
    p.add_argument("--quiet", action="store_true", help="no per-item progress lines")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("show", help="print an item's ground truth and questions")
    p.add_argument("item", help="item folder (or its item.json)")
    p.set_defaults(func=cmd_show)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from scenes.placement import InfeasibleError
    from scenes.visibility import RayBackendMissing

    from .config import ConfigError

    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except (ConfigError, UsageError, RayBackendMissing, InfeasibleError) as exc:
        print(f"stim3d: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stim3d: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
