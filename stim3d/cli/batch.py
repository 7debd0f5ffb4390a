"""Batch commands: families, validate, render, merge, show."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from stim3d.cli.common import (
    UsageError,
    deliver_records,
    load_scoring_core,
    pixels,
    samples,
    seconds,
    whole,
    workers,
)
from stim3d.cli.rendering import require_renderer, run_batch_call, with_overrides
from stim3d.render.batch.folder import ITEM_JSON
from stim3d.scenes.model import LOOK_NAMES

if TYPE_CHECKING:
    from stim3d.render.batch.config import BatchConfig
    from stim3d.render.batch.plan import ItemPlan
    from stim3d.render.batch.summary import BatchReport



def cmd_families(args: argparse.Namespace) -> int:
    """Every family with its parameters and the distribution that registered it (plug-ins included)."""
    from stim3d.scenes.families import FAMILIES, plugins

    if args.json:
        print(json.dumps([family_row(plugin, FAMILIES) for plugin in plugins()], indent=2))
        return 0
    for plugin in plugins():
        if plugin.error:
            print(f"{plugin.name} [{plugin.distribution}]: NOT LOADED ({plugin.target}): {plugin.error}\n")
            continue
        family = FAMILIES[plugin.name]
        print(f"{plugin.name} [{plugin.distribution}]: {family.description}")
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


def family_row(plugin, families) -> dict[str, object]:
    """One family for `families --json`: where it came from, its revision, each parameter's default and schema."""
    if plugin.error:
        return {"name": plugin.name, "distribution": plugin.distribution, "target": plugin.target, "error": plugin.error}
    from stim3d.render.batch.config_schema import NotDescribed, params_schema

    family = families[plugin.name]
    row = {"name": plugin.name, "distribution": plugin.distribution, "description": family.description,
           "revision": family.revision, "answer_types": list(family.answer_types)}
    try:
        return {**row, "params": params_schema(family.params_model).get("properties", {})}
    except NotDescribed as exc:  # the family works; only its parameters cannot be written as JSON Schema
        return {**row, "params": None, "params_error": f"NOT DESCRIBED: {exc}"}


TRIAL_WIDTH = 320  # `validate` composes one item per task at most this wide: enough to catch what cannot be built


def compose_one_per_task(config: BatchConfig, plans: list[ItemPlan]) -> None:
    """Compose (no render) the first item of every task, so parameters that cannot be met fail here, not in the batch.

    It composes through render's own path (produce.plan_item) at a trial width, so a config render accepts (mesh
    files beside it, a look) passes, and one render would refuse fails here. A task whose family names its most
    crowded item (`Family.densest`: its limits are in pixels, such as odd_grid's min_object_px) is composed at the
    render's full size, its first item and its most crowded one, since a smaller trial would refuse what fits."""
    from stim3d.render.batch.config import ConfigError
    from stim3d.render.batch.produce import plan_item
    from stim3d.scenes.families import clip
    from stim3d.scenes.items import MalformedItem
    from stim3d.scenes.mesh_files import MeshFileError
    from stim3d.scenes.placement import InfeasibleError

    scale = min(1.0, TRIAL_WIDTH / config.render.width)
    trial = config.render.model_copy(update={"width": max(8, round(config.render.width * scale)),
                                             "height": max(8, round(config.render.height * scale))})
    first: dict[int, ItemPlan] = {}
    for plan in plans:
        first.setdefault(plan.task_index, plan)
    pixels = densest_per_task(plans)  # the tasks of families whose limits are in pixels
    trials = [(t, plan, config.render if t in pixels else trial, f"{plan.item_id} (tasks[{t}], {plan.family})")
              for t, plan in sorted(first.items())]
    trials += [(t, plan, config.render, f"tasks[{t}]'s densest item ({plan.family}, {densest_text(plan)})")
               for t, plan in pixels.items()]
    for t, plan, settings, name in trials:
        try:
            plan_item(plan, config.seed, settings)  # render's own composition (mesh folders, look)
        except InfeasibleError as exc:
            raise ConfigError(f"{name} cannot be composed: {str(exc).splitlines()[0]}") from None
        except MalformedItem as exc:
            raise ConfigError(f"{plan.item_id} (tasks[{t}]) is malformed: {exc}") from None
        except MeshFileError as exc:  # already one line naming the file: render says the same
            raise ConfigError(f"{plan.item_id} (tasks[{t}]): {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a plug-in's compose may raise anything: one line, no traceback
            logging.getLogger(__name__).debug("compose of %s failed", plan.item_id, exc_info=True)  # --verbose
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise ConfigError(f"{plan.item_id} (tasks[{t}]): family {plan.family}'s compose raised "
                              f"{type(exc).__name__}" + (f": {clip(text, 160)}" if text else "")) from None


def densest_text(plan: ItemPlan) -> str:
    """A densest plan's parameters that make it crowded, as a refusal names them: `rows 9, cols 9`."""
    shown = [f"{key} {plan.params[key]}" for key in ("rows", "cols") if key in plan.params]
    return ", ".join(shown) or plan.item_id


def densest_per_task(plans: list[ItemPlan]) -> dict[int, ItemPlan]:
    """Per task whose family says what its most crowded item is (`Family.densest`), that item's plan: the task's
    plan whose densest parameters are the most crowded, with those parameters (the first such plan on a tie)."""
    from dataclasses import replace

    from stim3d.scenes.families import get_family

    found: dict[int, tuple[float, ItemPlan]] = {}
    for plan in plans:
        family = get_family(plan.family)
        if family.densest is None:
            continue
        crowding, params = family.densest(family.params_model.model_validate(plan.params))
        if plan.task_index not in found or crowding > found[plan.task_index][0]:
            found[plan.task_index] = (crowding, replace(plan, params=params))
    return {t: plan for t, (_, plan) in found.items()}


def cmd_validate(args: argparse.Namespace) -> int:
    from stim3d.cli.presets import resolve_config
    from stim3d.render.batch.config import load_config
    from stim3d.render.batch.plan import expand

    if is_suite(args.config):  # every seed preset, one line (or one JSON object per line) each
        from stim3d.render.batch.suite import SUITE_PRESETS

        return max(cmd_validate(argparse.Namespace(**{**vars(args), "config": name})) for name in SUITE_PRESETS)
    config = load_config(resolve_config(args.config))
    plans = expand(config)
    compose_one_per_task(config, plans)
    per_family: dict[str, int] = {}
    for plan in plans:
        per_family[plan.family] = per_family.get(plan.family, 0) + 1
    summary = ", ".join(f"{n} {family}" for family, n in per_family.items())
    if args.json:
        print(json.dumps({"config": args.config, "valid": True, "items": len(plans), "families": per_family,
                          "engine": config.render.engine, "width": config.render.width,
                          "height": config.render.height,
                          "samples": config.render.samples if config.render.engine == "cycles" else None}))
        return 0
    counts = sorted({plan.settings(config.render).samples for plan in plans})  # a task may sample on its own
    span = f"{counts[0]}-{counts[-1]}" if len(counts) > 1 else f"{counts[0]}"
    samples = f", {span} samples" if config.render.engine == "cycles" else ""  # others take none
    print(f"{args.config}: valid; {len(plans)} items ({summary}); engine {config.render.engine} "
          f"{config.render.width}x{config.render.height}{samples}")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from stim3d.cli.presets import resolve_config
    from stim3d.render.batch.config import load_config
    from stim3d.render.batch.driver import Shard, render_batch
    from stim3d.render.batch.progress import BatchProgress

    core_name, core = load_scoring_core(args.scoring_core)  # a bad --scoring-core fails before rendering
    if args.presets is not None and not is_suite(args.config):
        raise UsageError(f"--presets goes with `stim3d render all`, not with a config ({args.config})")
    if is_suite(args.config):
        from stim3d.cli.suite import cmd_render_suite

        return cmd_render_suite(args, core_name, core)
    config = with_overrides(load_config(resolve_config(args.config)), args)
    require_renderer(config.render.engine)
    shard = Shard.parse(args.shard) if args.shard else None
    def run() -> BatchReport:
        with BatchProgress(quiet=args.quiet) as progress:
            return render_batch(config, Path(args.out), force=args.force, progress=progress, workers=args.workers,
                                shard=shard, executor=args.executor, address=args.address,
                                recycle_after=args.recycle_after, item_timeout=args.item_timeout)

    report = run_batch_call(run)
    if isinstance(report, int):
        return report
    for line in report.summary_lines():
        print(line)
    if shard is None:
        print(f"wrote {Path(args.out) / 'records.jsonl'}")
    delivered = deliver_records(Path(args.out), core_name, core, args.core_timeout) if shard is None else True  # shards: after merge
    return 1 if report.failed or not delivered else 0

def is_suite(arg: str) -> bool:
    """`all` names the seed suite (render/batch/suite.py) unless a file of that name is in the way."""
    from stim3d.render.batch.suite import SUITE_NAME

    return arg == SUITE_NAME and not Path(arg).exists()


def cmd_merge(args: argparse.Namespace) -> int:
    from stim3d.render.batch.merge import merge_shards

    core_name, core = load_scoring_core(args.scoring_core)  # a sharded batch is finished when it is merged
    report = merge_shards([Path(d) for d in args.shard_dirs], Path(args.out))
    for line in report.summary_lines():
        print(line)
    print(f"wrote {Path(args.out) / 'records.jsonl'}")
    delivered = deliver_records(Path(args.out), core_name, core, args.core_timeout)
    return 1 if report.failed or report.missing or not delivered else 0

def cmd_show(args: argparse.Namespace) -> int:
    from stim3d.render.batch.item_files import item_problem
    from stim3d.render.batch.item_folder import load_item

    folder = Path(args.item)
    if folder.is_file() and folder.name == ITEM_JSON:
        folder = folder.parent
    if not (folder / ITEM_JSON).is_file():
        raise UsageError(f"{folder}: not an item folder (no item.json)")
    try:
        item = load_item(folder)
    except ValidationError as exc:
        raise UsageError(f"{folder / ITEM_JSON}: not a stim3d item: {item_problem(exc)}") from None
    except ValueError as exc:  # not UTF-8
        raise UsageError(str(exc)) from None
    if args.json:  # the item as item.json holds it (ground truth, questions, provenance)
        print(item.to_json(), end="")
        return 0
    cam = item.scene.camera
    print(f"{item.item_id}  family {item.family}  seed {item.seed}  {cam.width}x{cam.height}")
    if item.provenance:
        p = item.provenance
        agreement = f"  mask agreement {p.mask_agreement:.4f}" if p.mask_agreement is not None else ""
        samples = f"{p.samples} samples, " if p.samples is not None else ""
        print(f"rendered with {p.engine} ({samples}Blender {p.blender_version}){agreement}")
        revision = f", generator revision {p.generator_revision}" if p.generator_revision is not None else ""
        print(f"made by stim3d {p.stim3d_version}{revision}")
    print("difficulty: " + ", ".join(f"{k}={v}" for k, v in item.difficulty.items()))
    header = f"{'id':>3} {'shape':<9} {'colour':<7} {'size':>5} {'visible':>8} {'amodal':>8} {'visib.':>7} {'occl.':>6} {'trunc.':>6}  bbox_visible"
    print(header)
    truths = {t.id: t for t in item.ground_truth.objects}
    lacking = [obj.id for obj in item.scene.objects if obj.id not in truths]
    if lacking:  # a hand-edited or foreign item.json: say which, before printing half a table
        raise UsageError(f"{folder / ITEM_JSON}: its ground truth has no object with id {lacking[0]} "
                         f"(the scene has objects {', '.join(str(o.id) for o in item.scene.objects)[:80]})")
    for obj in item.scene.objects:
        t = truths[obj.id]
        print(f"{obj.id:>3} {obj.shape:<9} {obj.color.name:<7} {obj.size:>5.2f} {t.visible_px:>8.0f} {t.amodal_px:>8.0f} "
              f"{t.visibility:>7.3f} {t.occlusion:>6.3f} {t.truncation:>6.3f}  {t.bbox_visible}")
    for q in item.questions:
        gold = q.gold.caption if q.answer_type == "rubric" else q.gold  # type: ignore[union-attr]
        print(f"Q {q.question_id}: {q.text}  ->  gold: {gold} ({q.answer_type})")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add this group's subcommands to the `stim3d` parser."""
    p = sub.add_parser("families", help="list task families and their parameters")
    p.add_argument("--json", action="store_true", help="one JSON list: name, distribution, revision, params' schemas")
    p.set_defaults(func=cmd_families)
    p = sub.add_parser("validate", help="check a config and compose one item per task, without rendering")
    p.add_argument("config", help="YAML config, a preset's name (stim3d presets), - for standard input, or `all`: "
                                  "every seed preset")
    p.add_argument("--json", action="store_true", help="one JSON object: items, per-family counts, engine, size")
    p.set_defaults(func=cmd_validate)
    p = sub.add_parser("render", help="render a config into item folders and records.jsonl")
    p.add_argument("config", help="YAML config, a preset's name (stim3d presets), - for standard input, or `all`: "
                                  "every seed preset into OUT/<preset>/ with one OUT/suite.json")
    p.add_argument("--out", required=True, help="batch folder (created; rerunning resumes)")
    p.add_argument("--engine", choices=["cycles", "workbench", "raster"], help="override render.engine")
    p.add_argument("--samples", type=samples, help="override render.samples (1 to 65536)")
    p.add_argument("--width", type=pixels, help="override render.width (8 to 8192)")
    p.add_argument("--height", type=pixels, help="override render.height (8 to 8192)")
    p.add_argument("--depth", action="store_true", help="also write depth.npy")
    p.add_argument("--normals", action="store_true", help="also write normals.npy (camera-space normals; Cycles)")
    p.add_argument("--device", choices=["cpu", "gpu"], help="override render.device (Cycles on the CPU or the GPU)")
    p.add_argument("--look", choices=LOOK_NAMES,
                   help="override render.look (a task's or variant's own look still wins; docs/looks.md)")
    p.add_argument("--presets", metavar="NAME,...",
                   help="with `all`: render only these seed presets (comma-separated), each into OUT/<preset>/")
    p.add_argument("--force", action="store_true", help="re-render everything, even into a folder made from another config")
    p.add_argument("--quiet", action="store_true",
                   help="no live bar or per-item lines: failures and a status line every 30 s (for logs)")
    p.add_argument("--workers", type=workers, metavar="N",
                   help="worker processes (Ray: actors), each owning one Blender; Cycles threads = cores / N "
                        "unless render.threads is set (default: 1 local; Ray: enough to fill the cluster)")
    p.add_argument("--shard", metavar="k/n", help="render only the k-th of n slices of the items (1-based); "
                                                   "combine the shard folders with `stim3d merge`")
    p.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="local worker processes (default) or a Ray cluster (needs the ray extra)")
    p.add_argument("--address", help="Ray cluster address (with --executor ray; default: start a local Ray)")
    p.add_argument("--recycle-after", type=whole(1, 1_000_000), default=50, metavar="N",
                   help="replace a worker process after N items so Blender memory cannot creep (default 50)")
    p.add_argument("--item-timeout", type=seconds, metavar="SECONDS",
                   help="kill a worker whose item takes longer and count the item as a failed attempt (retried "
                        "once, then reported), so a hung render cannot hold the batch (default: no limit)")
    p.add_argument("--scoring-core", metavar="NAME|MODULE:FUNCTION",
                   help="scoring core that receives the records when the batch finishes: a name registered in the "
                        "entry-point group stim3d.scoring_cores, or module:function (default: builtin)")
    p.add_argument("--core-timeout", type=seconds, metavar="SECONDS",
                   help="give up on a scoring core that runs longer (default 600; the batch stays complete)")
    p.set_defaults(func=cmd_render)
    p = sub.add_parser("merge", help="combine shard folders into one batch: item folders, records.jsonl, summary")
    p.add_argument("shard_dirs", nargs="+", metavar="SHARD_DIR", help="batch folders written with --shard k/n")
    p.add_argument("--out", required=True, help="merged batch folder (may be one of the shard folders)")
    p.add_argument("--scoring-core", metavar="NAME|MODULE:FUNCTION",
                   help="scoring core that receives the merged records (as for render; default: builtin)")
    p.add_argument("--core-timeout", type=seconds, metavar="SECONDS",
                   help="give up on a scoring core that runs longer (default 600)")
    p.set_defaults(func=cmd_merge)
    p = sub.add_parser("show", help="print an item's ground truth and questions")
    p.add_argument("item", help="item folder (or its item.json)")
    p.add_argument("--json", action="store_true", help="the item as JSON (item.json's content)")
    p.set_defaults(func=cmd_show)
