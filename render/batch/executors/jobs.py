"""What workers exchange with the scheduler (jobs, outcomes) and how one job runs inside a worker."""

from __future__ import annotations

import os
import shutil
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from stim3d.render.batch.config import ItemPlan
from stim3d.scenes.model import Item, RenderSettings

FAULT_ENV = "STIM3D_FAULT_ITEM"
MAX_ATTEMPTS = 2  # the first try and one retry in a fresh worker
ABORT_AFTER_FIRST_FAILURES = 3
STARTUP_DEATHS_ALLOWED = 3
REASON_LIMIT = 2000


class BatchAborted(RuntimeError):
    """The run stopped because workers cannot render anything (a broken setup, not a bad item)."""


class ExecutorUnavailable(RuntimeError):
    """The requested executor cannot run here (e.g. Ray is not installed or its address is unreachable)."""


@dataclass(frozen=True)
class JobContext:
    """What every job of a batch shares; pickled once per worker."""

    batch_seed: int
    settings: RenderSettings  # with `threads` already resolved for one worker
    out: Path


@dataclass(frozen=True)
class Job:
    """One item to render: a plan to compose in the worker, or an already composed item (sweep levels, edits)."""

    plan: ItemPlan | None
    key: str
    item: Item | None = None

    @property
    def item_id(self) -> str:
        if self.item is not None:
            return self.item.item_id
        assert self.plan is not None
        return self.plan.item_id


@dataclass
class Outcome:
    """An item's result: what a worker reports for one attempt; `schedule` sets `attempts` on the final one."""

    item_id: str
    status: Literal["rendered", "infeasible", "error", "crashed"]
    reason: str = ""
    seconds: float = 0.0
    attempts: int = 1
    files: dict[str, bytes] | None = None  # Ray only: the item folder's files, to install on the driver


def available_cpus() -> int:
    """CPUs this process may use (respects container cpusets and taskset)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def threads_per_worker(settings: RenderSettings, cpus: int, workers: int) -> int:
    """Cycles threads for one worker: the config's `threads` if set, else an equal share of the CPUs."""
    return settings.threads if settings.threads else max(1, cpus // max(1, workers))


# -- one item inside a worker -------------------------------------------------------------------

def run_job(job: Job, context: JobContext, out: Path, scratch: Path) -> Outcome:
    """Render one job in this process into `out`; never raises for a bad item (but see the fault hook)."""
    from stim3d.render.batch.produce import produce_item, render_item
    from stim3d.scenes.placement import InfeasibleError

    if job.item_id in os.environ.get(FAULT_ENV, "").split(","):  # test-only, see the package docstring
        os.abort()
    started = time.perf_counter()
    workdir = scratch / job.item_id
    try:
        if job.item is not None:
            render_item(job.item, context.settings, out, workdir, job.key)
        else:
            assert job.plan is not None
            produce_item(job.plan, context.batch_seed, context.settings, out, workdir, job.key)
        return Outcome(job.item_id, "rendered", seconds=time.perf_counter() - started)
    except InfeasibleError as exc:
        return Outcome(job.item_id, "infeasible", reason=str(exc))
    except Exception as exc:  # noqa: BLE001 - any other failure is reported, retried once, never fatal
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return Outcome(job.item_id, "error", reason=detail[:REASON_LIMIT])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def import_backend(settings: RenderSettings) -> None:
    """Import the heavy backend once, at worker start, so item timings do not include it."""
    from stim3d.render.batch import produce  # noqa: F401

    if settings.engine == "raster":
        from stim3d.render.backends import raster  # noqa: F401
    else:
        from stim3d.render.backends import blender  # noqa: F401


