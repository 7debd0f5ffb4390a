"""What `render` and `render all` share: the command line's overrides, the renderer check, one way to run a batch.

Its own module so that both commands (cli/batch.py, cli/suite.py) import it and neither imports the other.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from stim3d.cli.common import UsageError
from stim3d.cli.flags import flag

if TYPE_CHECKING:
    from stim3d.render.batch.config import BatchConfig, TaskRender
    from stim3d.scenes.model import LookName

R = TypeVar("R")


def run_batch_call(run: Callable[[], R]) -> R | int:
    """`run()`'s report, or the exit code its stop means: 130 interrupted (finished items are kept), 1 aborted.

    One place for `render` and `render all`: SIGTERM stops the workers as Ctrl-C does (a missing executor is
    bad input, a Stim3dError: exit 2 as every other).
    """
    from stim3d.render.batch.driver import BatchInterrupted
    from stim3d.render.batch.executors.jobs import BatchAborted

    signal.signal(signal.SIGTERM, _interrupt)
    try:
        return run()
    except BatchInterrupted as stop:
        print(f"stim3d: {stop}; workers stopped, finished items are kept. Rerun the same command to resume.",
              file=sys.stderr)
        return 130
    except BatchAborted as exc:
        print(f"stim3d: error: {exc}", file=sys.stderr)
        return 1


def with_overrides(config: BatchConfig, args: argparse.Namespace) -> BatchConfig:
    """The config with `render`'s command-line overrides (--engine, --samples, --width, ...) applied."""
    overrides = {k: v for k, v in {"engine": args.engine, "samples": args.samples, "width": args.width,
                                   "height": args.height, "depth": True if args.depth else None,
                                   "normals": True if args.normals else None,
                                   "look": args.look, "device": args.device}.items() if v is not None}
    if not overrides:
        return config
    try:
        render = config.render.model_validate({**config.render.model_dump(), **overrides})
    except ValidationError as exc:
        error = exc.errors()[0]
        raise UsageError(f"{flag(str(error['loc'][0]), repr(error['input']))}: {error['msg']}") from None
    return config.model_copy(update={"render": render, "looks": looks_without(config.looks, overrides),
                                     "tasks": [task.model_copy(update={"render": without_sampling(task.render, overrides),
                                                                       "looks": looks_without(task.looks, overrides)})
                                               for task in config.tasks]})


def looks_without(looks: Mapping[LookName, TaskRender], overrides: dict[str, Any]) -> dict[LookName, TaskRender]:
    """Each look's own sampling without the overridden fields (a look left with none is dropped)."""
    return {name: kept for name, own in looks.items() if (kept := without_sampling(own, overrides))}


def without_sampling(render: TaskRender | None, overrides: dict[str, Any]) -> TaskRender | None:
    """A task's or look's own sampling without the overridden fields: `--samples 4` means every item, whatever a
    task or a look sets (None when nothing is left)."""
    if render is None or not set(render.overrides()) & set(overrides):
        return render
    kept = {k: v for k, v in render.overrides().items() if k not in overrides}
    return render.model_validate(kept) if kept else None


def require_renderer(engine: str) -> None:
    """RendererMissing (one line, exit 2) when this install cannot render with `engine` (the light core has no
    Blender), before any work starts."""
    from stim3d.render.backends.availability import require_engine

    require_engine(engine)

def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
