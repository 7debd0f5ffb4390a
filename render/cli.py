"""The `stim3d` command: a thin layer that parses, calls the library, prints.

Every user mistake (bad config, bad argument, missing file) ends as one line on
stderr naming what is wrong, and exit code 2; never a traceback.
"""

from __future__ import annotations

import argparse
import os
import signal
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
    from .batch import BatchInterrupted, Shard, render_batch
    from .config import load_config
    from .executors import BatchAborted, ExecutorUnavailable
    from .progress import BatchProgress

    core_name, core = _load_scoring_core(args.scoring_core)  # a bad --scoring-core fails before rendering
    config = load_config(args.config)
    overrides = {k: v for k, v in {"engine": args.engine, "samples": args.samples, "width": args.width,
                                   "height": args.height, "depth": True if args.depth else None}.items() if v is not None}
    if overrides:
        try:
            config = config.model_copy(update={"render": config.render.model_validate({**config.render.model_dump(), **overrides})})
        except ValidationError as exc:
            error = exc.errors()[0]
            raise UsageError(f"--{error['loc'][0]} {error['input']!r}: {error['msg']}") from None

    shard = Shard.parse(args.shard) if args.shard else None
    signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops the workers like Ctrl-C does
    try:
        with BatchProgress(quiet=args.quiet) as progress:
            report = render_batch(config, Path(args.out), force=args.force, progress=progress, workers=args.workers,
                                  shard=shard, executor=args.executor, address=args.address,
                                  recycle_after=args.recycle_after)
    except BatchInterrupted as stop:
        print(f"stim3d: {stop}; workers stopped, finished items are kept. Rerun the same command to resume.",
              file=sys.stderr)
        return 130
    except ExecutorUnavailable as exc:
        raise UsageError(str(exc)) from None
    except BatchAborted as exc:
        print(f"stim3d: error: {exc}", file=sys.stderr)
        return 1
    for line in report.summary_lines():
        print(line)
    if shard is None:
        print(f"wrote {Path(args.out) / 'records.jsonl'}")
    delivered = _deliver_records(Path(args.out), core_name, core) if shard is None else True  # shards: after merge
    return 1 if report.failed or not delivered else 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def cmd_merge(args: argparse.Namespace) -> int:
    from .merge import merge_shards

    core_name, core = _load_scoring_core(args.scoring_core)  # a sharded batch is finished when it is merged
    report = merge_shards([Path(d) for d in args.shard_dirs], Path(args.out))
    for line in report.summary_lines():
        print(line)
    print(f"wrote {Path(args.out) / 'records.jsonl'}")
    delivered = _deliver_records(Path(args.out), core_name, core)
    return 1 if report.failed or report.missing or not delivered else 0


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1")
    return value


def _load_scoring_core(spec: str | None):
    from scoring.cores import ScoringCoreError, load_core

    try:
        return load_core(spec)
    except ScoringCoreError as exc:
        raise UsageError(str(exc)) from None


def _deliver_records(out: Path, name: str, core) -> bool:
    """Hand the batch's records to the scoring core and print what it returns; False if the core failed."""
    from .handoff import read_records

    records_path = out / "records.jsonl"
    if not records_path.is_file():
        print(f"scoring core {name} not called: no {records_path} (build it first, e.g. by merging shards)")
        return True
    records = read_records(records_path)
    try:
        lines = core(records, out)
    except Exception as exc:  # a plug-in core's failure must not hide the batch, which is complete on disk
        print(f"stim3d: scoring core {name} failed on {len(records)} records: {type(exc).__name__}: {exc}", file=sys.stderr)
        return False
    for line in lines or ():
        print(line)
    return True


def cmd_score(args: argparse.Namespace) -> int:
    import json

    from scoring.report import format_report, read_predictions, score

    from .handoff import read_records

    records_path = Path(args.records)
    if records_path.is_dir():
        records_path = records_path / "records.jsonl"
    for path in (records_path, Path(args.predictions)):
        if not path.is_file():
            raise UsageError(f"{path}: no such file")
    try:
        records = read_records(records_path)
        predictions, count = read_predictions(Path(args.predictions))
        report = score(records, predictions, count, by=args.by)
    except ValueError as exc:  # ScoringInputError, a bad record or rule: one line naming it
        raise UsageError(str(exc)) from None
    for line in format_report(report):
        print(line)
    out = Path(args.out) if args.out else Path(args.predictions).with_suffix(".scores.json")
    out.write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    print(f"wrote {out}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from .export import ExportError, export_coco, export_imagefolder

    batches = [Path(b) for b in args.batches]
    if args.to is None and len(batches) > 1:
        raise UsageError("several batch folders: say where the merged export goes with --to DIR")
    dest = Path(args.to) if args.to else batches[0] / "exports" / args.format
    export = export_imagefolder if args.format == "imagefolder" else export_coco
    try:
        report = export(batches, dest)
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    print(f"{args.format}: {report.summary()}")
    print(f"wrote {dest}")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from .handoff import record_schema_text

    if args.out:
        Path(args.out).write_text(record_schema_text())
        print(f"wrote {args.out}")
    else:
        print(record_schema_text(), end="")
    return 0


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


def cmd_gallery(args: argparse.Namespace) -> int:
    from .gallery import GalleryError, build_gallery, parse_filters

    def progress(done: int, total: int, item_id: str) -> None:
        if done == total or done % max(1, total // 20) == 0:
            print(f"[{done}/{total}] {item_id}", file=sys.stderr, flush=True)

    try:
        report = build_gallery(Path(args.out), family=args.family, filters=parse_filters(args.filter), progress=progress)
    except GalleryError as exc:
        raise UsageError(str(exc)) from None
    for item_id, reason in sorted(report.unreadable.items()):
        print(f"skipped {item_id}: item.json does not parse: {reason}", file=sys.stderr)
    print(report.summary())
    print(f"wrote {report.index}")
    return 0


def cmd_contact_sheet(args: argparse.Namespace) -> int:
    from .contact_sheet import contact_sheet
    from .gallery import GalleryError, parse_filters

    try:
        sheet = contact_sheet(Path(args.out), n=args.n, columns=args.columns, family=args.family,
                              filters=parse_filters(args.filter), thumb_width=args.thumb_width)
    except GalleryError as exc:
        raise UsageError(str(exc)) from None
    sheet.save(Path(args.output))
    print(f"contact sheet: {len(sheet.cells)} items ({sheet.columns} x {sheet.rows}) of {sheet.available}, "
          f"{sheet.image.width}x{sheet.image.height} px")
    print(f"wrote {args.output}")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from scenes.sweep import SweepError

    from .sweep import parse_levels, run_occlusion_sweep

    def progress(done: int, total: int, label: str, status: str) -> None:
        if not args.quiet:
            print(f"[{done}/{total}] {label} {status}", file=sys.stderr, flush=True)

    try:
        levels = parse_levels(args.levels)
        scores = Path(args.scores) if args.scores else None
        if scores is not None and not scores.is_file():
            raise UsageError(f"--scores {scores}: no such file (write it with 'stim3d score ... --out')")
        report = run_occlusion_sweep(Path(args.source), levels, Path(args.out), target_id=args.target,
                                     occluder_id=args.occluder, engine=args.engine, samples=args.samples,
                                     plot=args.plot, scores=scores, progress=progress)
    except SweepError as exc:
        raise UsageError(str(exc)) from None
    for line in report.summary_lines():
        print(line)
    for path in report.outputs:
        print(f"wrote {path}")
    return 1 if report.failed else 0


def cmd_addon_build(args: argparse.Namespace) -> int:
    from .addon_build import PLATFORMS, AddonBuildError, build_addon

    platforms = list(PLATFORMS) if "all" in args.platform or not args.platform else args.platform
    try:
        build_addon(Path(args.out), platforms, with_dependencies=not args.without_dependencies,
                    progress=lambda message: print(message, file=sys.stderr, flush=True))
    except AddonBuildError as exc:
        raise UsageError(str(exc)) from None
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
    p.add_argument("--quiet", action="store_true",
                   help="no live bar or per-item lines: failures and a status line every 30 s (for logs)")
    p.add_argument("--workers", type=_positive, metavar="N",
                   help="worker processes (Ray: actors), each owning one Blender; Cycles threads = cores / N "
                        "unless render.threads is set (default: 1 local; Ray: enough to fill the cluster)")
    p.add_argument("--shard", metavar="k/n", help="render only the k-th of n slices of the items (1-based); "
                                                   "combine the shard folders with `stim3d merge`")
    p.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="local worker processes (default) or a Ray cluster (needs the ray extra)")
    p.add_argument("--address", help="Ray cluster address (with --executor ray; default: start a local Ray)")
    p.add_argument("--recycle-after", type=_positive, default=50, metavar="N",
                   help="replace a worker process after N items so Blender memory cannot creep (default 50)")
    p.add_argument("--scoring-core", metavar="NAME|MODULE:FUNCTION",
                   help="scoring core that receives the records when the batch finishes: a name registered in the "
                        "entry-point group stim3d.scoring_cores, or module:function (default: builtin)")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("merge", help="combine shard folders into one batch: item folders, records.jsonl, summary")
    p.add_argument("shard_dirs", nargs="+", metavar="SHARD_DIR", help="batch folders written with --shard k/n")
    p.add_argument("--out", required=True, help="merged batch folder (may be one of the shard folders)")
    p.add_argument("--scoring-core", metavar="NAME|MODULE:FUNCTION",
                   help="scoring core that receives the merged records (as for render; default: builtin)")
    p.set_defaults(func=cmd_merge)

    p = sub.add_parser("show", help="print an item's ground truth and questions")
    p.add_argument("item", help="item folder (or its item.json)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("score", help="score model predictions against a batch's records")
    p.add_argument("records", help="records.jsonl, or the batch folder holding it")
    p.add_argument("predictions", help='JSONL, one {"question_id": ..., "response": ...} per line')
    p.add_argument("--by", action="append", default=[], metavar="KEY[:WIDTH]",
                   help="also break down by this difficulty key (e.g. min_visibility; least_visibility:0.1 bins "
                        "a number); answer_type, split and subject.NAME work too; repeatable")
    p.add_argument("--out", help="JSON file for the same report (default: PREDICTIONS with .scores.json)")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("export", help="export batches as a Hugging Face imagefolder or COCO instances")
    p.add_argument("format", choices=["imagefolder", "coco"])
    p.add_argument("batches", nargs="+", metavar="OUT", help="batch folder(s); several are merged")
    p.add_argument("--to", help="destination folder, new or empty (default: OUT/exports/FORMAT for one batch)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("schema", help="print the JSON Schema of a hand-off record")
    p.add_argument("--out", help="write it to this file (render/schema/record.schema.json is the checked-in copy)")
    p.set_defaults(func=cmd_schema)

    filter_help = "only items whose difficulty (or parameter) KEY equals VALUE, e.g. min_visibility=0.7; repeatable"
    p = sub.add_parser("gallery", help="write OUT/gallery/index.html: thumbnails, filters, ground-truth overlays")
    p.add_argument("out", help="batch folder")
    p.add_argument("--family", help="only this family")
    p.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE", help=filter_help)
    p.set_defaults(func=cmd_gallery)

    p = sub.add_parser("contact-sheet", help="one PNG of N captioned thumbnails, spread evenly over the batch")
    p.add_argument("out", help="batch folder")
    p.add_argument("-o", "--output", required=True, help="PNG file to write")
    p.add_argument("--n", type=int, default=24, help="number of items (default 24)")
    p.add_argument("--columns", type=int, default=6, help="columns (default 6)")
    p.add_argument("--thumb-width", type=int, default=256, help="width of each image in pixels (default 256)")
    p.add_argument("--family", help="only this family")
    p.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE", help=filter_help)
    p.set_defaults(func=cmd_contact_sheet)

    p = sub.add_parser("sweep", help="the same scene at graded visibility levels of one object")
    sweeps = p.add_subparsers(dest="sweep_kind", required=True, parser_class=_Parser)
    p = sweeps.add_parser("occlusion", help="slide one occluder sideways in front of a target; one item per level",
                          description="Exit code: 0 when every level of every item was rendered, 1 when some "
                                      "level was unreachable or some item could not be made, 2 for bad input.")
    p.add_argument("source", help="an item folder, or a config (then every item it plans gets its sweep)")
    p.add_argument("--levels", required=True, metavar="LIST|A:B:STEP",
                   help="target visibility levels: 0.2,0.4,0.6 or a range 0.1:1.0:0.1 (end included when a step lands on it)")
    p.add_argument("--out", required=True, help="folder for the level items, records.jsonl and sweeps.json")
    p.add_argument("--target", type=int, help="object id to hide (default: a central object the question asks about that some object can "
                        "hide down to the lowest level)")
    p.add_argument("--occluder", type=int, help="object id that moves (default: of the objects that hide the most of the target, "
                        "the one that reaches the most levels)")
    p.add_argument("--engine", choices=["cycles", "workbench", "raster"], help="override the render engine")
    p.add_argument("--samples", type=int, help="override the render samples")
    p.add_argument("--plot", action="store_true", help="also write sweep_plot.png and a strip of the images per sweep")
    p.add_argument("--scores", metavar="SCORES_JSON",
                   help="the JSON 'stim3d score' wrote for these records: adds accuracy vs visibility to the plot")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_sweep)
    p = sub.add_parser("addon", help="the Blender extension (add-on): build its installable zip")
    addon = p.add_subparsers(dest="addon_command", required=True, parser_class=_Parser)
    p = addon.add_parser("build", help="write the extension zip(s) with the wheels Blender's Python 3.11 needs")
    p.add_argument("--out", default="dist", help="folder for the zip(s) (default: dist)")
    p.add_argument("--platform", action="append", default=[], choices=["linux-x64", "windows-x64", "macos-arm64", "all"],
                   help="Blender platform to bundle wheels for, one zip each; repeatable (default: all)")
    p.add_argument("--without-dependencies", action="store_true",
                   help="only stim3d's own wheel, no download: for a Blender whose Python already has trimesh, "
                        "embreex, python-fcl, pydantic, PyYAML, Pillow and OpenEXR")
    p.set_defaults(func=cmd_addon_build)
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
    except BrokenPipeError:  # `stim3d score ... | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
