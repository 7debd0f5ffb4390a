"""What workers exchange with the scheduler (jobs, outcomes) and how one job runs inside a worker."""

from __future__ import annotations

import os
import shutil
import time
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from stim3d.errors import Stim3dError
from stim3d.render.batch.plan import ItemPlan
from stim3d.render.settings import RenderSettings
from stim3d.scenes.model import Item

if TYPE_CHECKING:
    from stim3d.render.batch.produce import Composed

WORKER_HOOK_ENV = "STIM3D_WORKER_HOOK"  # "FILE.py:function", called once in every new worker (run_worker_hook)
STARTUP_TIMEOUT = 600.0  # seconds a worker may take to get ready; importing bpy takes about 2 s here
MAX_ATTEMPTS = 2  # the first try and one retry in a fresh worker
ABORT_AFTER_FIRST_FAILURES = 3
STARTUP_DEATHS_ALLOWED = 3
REASON_LIMIT = 2000


class BatchAborted(RuntimeError):
    """The run stopped because workers cannot render anything (a broken setup, not a bad item)."""


class ExecutorUnavailable(Stim3dError, RuntimeError):
    """The requested executor cannot run here (e.g. Ray is not installed or its address is unreachable)."""


@dataclass(frozen=True)
class JobContext:
    """What every job of a batch shares; pickled once per worker."""

    batch_seed: int | None  # None when every job is an already composed item (nothing to compose)
    settings: RenderSettings  # with `threads` already resolved for one worker
    out: Path


@dataclass(frozen=True)
class Job:
    """One item to render: a plan to compose in the worker, or an already composed item (sweep levels, edits).

    `ahead` is the plan the scheduler has reserved for this worker's next job: the worker composes it on
    a thread while this one renders (Worker). It is a hint; the scheduler may still give that item to
    another worker, and the composition is then thrown away.
    """

    plan: ItemPlan | None
    key: str
    item: Item | None = None
    ahead: ItemPlan | None = None
    settings: RenderSettings | None = None  # a composed item's own settings (the worker's Cycles threads kept)

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

class Worker:
    """Runs one worker's jobs in order, composing the next planned item while the current one renders.

    Composition and its ray casting are pure Python and Embree (never bpy), and Cycles releases the GIL
    for the whole render call, so a thread composes `job.ahead` during the render: the next item's
    composition then costs the worker no wall time (bench/pipeline_overhead.py measures it). Composition
    is a pure function of the plan and the batch seed, so the files are the same either way.
    """

    def __init__(self, context: JobContext, out: Path, scratch: Path):
        self._context, self._out, self._scratch = context, out, scratch
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stim3d-compose")
        self._ahead: tuple[str, Future[Composed]] | None = None

    def run(self, job: Job) -> Outcome:
        """Render one job into `out`; never raises for a bad item (but see the fault hook)."""
        from stim3d.render.batch.produce import compose_item, produce_item, render_item
        from stim3d.scenes.placement import InfeasibleError

        started = time.perf_counter()
        workdir = self._scratch / job.item_id
        try:
            if job.item is not None:
                self._take_ahead(None)
                self._compose_ahead(job.ahead)
                settings = self._context.settings
                if job.settings is not None:
                    settings = job.settings.model_copy(update={"threads": settings.threads})
                render_item(job.item, settings, self._out, workdir, job.key)
            else:
                assert job.plan is not None and self._context.batch_seed is not None
                seed, settings = self._context.batch_seed, self._context.settings
                # Composed before the next one starts, so InfeasibleError is raised here as before.
                composed = self._take_ahead(job.plan.item_id) or compose_item(job.plan, seed, settings)
                self._compose_ahead(job.ahead)
                produce_item(job.plan, seed, settings, self._out, workdir, job.key, composed)
            return Outcome(job.item_id, "rendered", seconds=time.perf_counter() - started)
        except InfeasibleError as exc:
            return Outcome(job.item_id, "infeasible", reason=str(exc))
        except Exception as exc:  # noqa: BLE001 - any other failure is reported, retried once, never fatal
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            return Outcome(job.item_id, "error", reason=detail[:REASON_LIMIT])
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _take_ahead(self, item_id: str | None) -> Composed | None:
        """The composition made ahead if it is `item_id`'s; any other is waited for and dropped, so that two
        compositions never run at once (another worker took that item)."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return None
        made_for, future = ahead
        if made_for == item_id:
            return future.result()
        future.exception()
        return None

    def _compose_ahead(self, plan: ItemPlan | None) -> None:
        from stim3d.render.batch.produce import compose_item

        if plan is not None and self._context.batch_seed is not None:  # only planned jobs have a plan ahead
            future = self._thread.submit(compose_item, plan, self._context.batch_seed, self._context.settings)
            self._ahead = (plan.item_id, future)


def import_backend(settings: RenderSettings) -> None:
    """Load the backend and every extension module a render loads, once, at worker start, before any thread.

    Item timings then exclude it, and, more important, no extension module is first loaded
    while the other thread works (Worker composes ahead with Embree during the render): a
    worker whose first render loaded bpy while Embree cast rays hung for good in the dynamic
    loader, once in about 130 worker starts of a whole-suite run.
    """
    from stim3d.render.batch import produce  # noqa: F401

    run_worker_hook()
    if settings.engine == "raster":
        from stim3d.render.backends import raster

        raster.preload()
    else:
        from stim3d.render.backends import blender

        blender.preload()


def run_worker_hook() -> None:
    """Call the function `STIM3D_WORKER_HOOK` names ("path/to/file.py:function") in a new worker, before its backend.

    An extension point for instrumenting workers from outside: the tests inject crashing,
    hanging and never-ready workers through it (tests/worker_faults.py), so no fault of
    theirs lives in this code. A file path rather than a module name, so that local
    processes and Ray actors on this machine find it whatever their sys.path. Unset, it
    does nothing; a hook that fails to load fails the worker's start, like any broken setup.
    """
    spec = os.environ.get(WORKER_HOOK_ENV)
    if not spec:
        return
    import importlib.util

    path, _, name = spec.rpartition(":")
    loader = importlib.util.spec_from_file_location("stim3d_worker_hook", path)
    if loader is None or loader.loader is None:
        raise RuntimeError(f"{WORKER_HOOK_ENV}={spec!r}: not a Python file")
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    getattr(module, name)()
