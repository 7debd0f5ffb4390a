"""`stim3d render all`: the seed suite from the command line (render/batch/suite.py does the work)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stim3d.cli.common import UsageError, deliver_records
from stim3d.cli.rendering import require_renderer, run_batch_call, with_overrides


def cmd_render_suite(args: argparse.Namespace, core_name: str, core) -> int:
    """Render every seed preset (or --presets) into OUT/<preset>/ with the command's overrides; print one table; exit 1 on failures."""
    from stim3d.render.batch.config import load_config
    from stim3d.render.batch.driver import Shard
    from stim3d.render.batch.progress import BatchProgress
    from stim3d.render.batch.suite import render_suite, select_presets
    from stim3d.scenes.presets import preset_path

    try:
        names = select_presets(args.presets)
    except ValueError as exc:
        raise UsageError(f"--presets {args.presets!r}: {exc}") from None
    presets = []
    for name in names:
        path = preset_path(name)
        if path is None:  # an install that lacks a seed preset is broken: say which
            raise UsageError(f"render all: the seed preset {name} is not installed")
        presets.append((name, with_overrides(load_config(path), args)))
    for engine in sorted({config.render.engine for _, config in presets}):
        require_renderer(engine)
    shard = Shard.parse(args.shard) if args.shard else None
    out = Path(args.out)

    @contextmanager
    def progress_for(name: str) -> Iterator[BatchProgress]:
        print(f"preset {name} -> {out / name}", file=sys.stderr, flush=True)
        with BatchProgress(quiet=args.quiet) as progress:
            yield progress

    report = run_batch_call(lambda: render_suite(presets, out, shard=shard, progress_for=progress_for, force=args.force,
                                                  workers=args.workers, executor=args.executor, address=args.address,
                                                  recycle_after=args.recycle_after, item_timeout=args.item_timeout))
    if isinstance(report, int):
        return report
    for line in report.summary_lines():
        print(line)
    print(f"wrote {out / 'suite.json'}")
    delivered = True
    if shard is None:  # shards: the scoring core runs after `stim3d merge`, per preset folder
        for result in report.presets:
            delivered = deliver_records(out / result.name, core_name, core, args.core_timeout) and delivered
    return 1 if report.failed or not delivered else 0
