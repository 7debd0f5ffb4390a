"""Where items are rendered: N local worker processes, or actors on a Ray cluster.

Both executors share one scheduling policy (`schedule`) over a small transport
interface (`WorkerPool`), so a crash, a retry or a recycle means the same thing on a
laptop and on a cluster:

- every worker is a long-lived process that imports the backend (bpy) once and
  renders one item at a time; the parent sends an item only to an idle worker, so
  it always knows which item a worker was holding when it died;
- with each item the parent reserves the next pending one for the same worker and
  sends its plan along (`Job.ahead`): the worker composes it on a thread while
  Cycles renders (`Worker`). A reservation is only a hint: it goes back to the front
  of the queue when that worker dies, is recycled or another worker runs dry;
- a worker that dies (segfault, abort, out-of-memory kill) or raises an unexpected
  exception costs only its current item: the item is retried once in a *fresh*
  worker and, if that fails too, reported failed with the reason; the batch goes on;
  the fresh worker takes the place of the one that died: never more than `workers`
  processes exist at once (a retry waits for a free place);
- one worker dying while it starts up is not fatal while others start fine;
  several start-up deaths in a row stop the run (`BatchAborted`); a worker not
  ready after `STARTUP_TIMEOUT` seconds (a hang while loading bpy) is killed and
  counts as a start-up death;
- an item whose constraints cannot be met (`InfeasibleError`) is deterministic, so
  it is reported failed at once, naming the constraint;
- with an item timeout, a worker whose item runs longer is killed and the item
  counts as a failed attempt (retried once in a fresh worker, then reported), so a
  hung render cannot hold the batch;
- a worker is recycled (stopped, replaced) after `recycle_after` items, so Blender
  memory cannot creep over a long batch;
- if the first items of a run all fail by a crash or an error and none renders,
  the run stops (`BatchAborted`): the setup is broken, not the items.

Local workers use the "spawn" start method (bpy is not fork-safe), ignore Ctrl-C
(the parent stops them with SIGTERM, which they obey at once even inside a render)
and ask the kernel to kill them when the parent dies (Linux `PR_SET_PDEATHSIG`),
so a `kill -9` of the batch leaves no orphan rendering into the output folder.

Ray actors cannot assume the driver's output folder is on their filesystem: an
actor renders into its own scratch folder and returns the item folder's files as
bytes; the driver installs them with the same temporary-name-then-rename step as
a local worker. The bytes are the files `produce_item` wrote, so the output is
identical to the local executor's.

A worker hook (`STIM3D_WORKER_HOOK=FILE.py:function`, jobs.py `run_worker_hook`) is
called once in every new worker before its backend loads; the tests use it to make
workers abort, hang on an item or never get ready (tests/worker_faults.py), proving
that a dying or hung worker costs only its item and a hung start-up cannot hold a batch.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from stim3d.render.batch.executors.jobs import (
                                                BatchAborted,
                                                ExecutorUnavailable,
                                                Job,
                                                JobContext,
                                                Outcome,
                                                Worker,
                                                available_cpus,
                                                threads_per_worker,
)
from stim3d.render.batch.executors.local import run_local
from stim3d.render.batch.executors.ray_cluster import check_ray, run_ray
from stim3d.render.batch.executors.schedule import schedule
from stim3d.render.settings import RenderSettings

__all__ = ["DEFAULT_RECYCLE_AFTER", "BatchAborted", "Executor", "ExecutorUnavailable", "Job", "JobContext", "Outcome",
           "Worker", "available_cpus", "check_ray", "run_jobs", "run_local", "run_ray", "schedule",
           "threads_per_worker"]

DEFAULT_RECYCLE_AFTER = 50
Executor = Literal["local", "ray"]


def run_jobs(jobs: list[Job], settings: RenderSettings, out: Path, on_outcome: Callable[[Outcome], None], *,
             seed: int | None = None, workers: int | None = None, executor: Executor = "local",
             address: str | None = None, recycle_after: int = DEFAULT_RECYCLE_AFTER,
             item_timeout: float | None = None) -> int:
    """Render `jobs` into `out` on the chosen executor; returns the number of workers used (the one dispatch).

    Local: min(`workers` (default 1), jobs) processes, each with cores / workers Cycles
    threads unless `settings.threads` is set. Ray: `workers` actors (default: as many as fit).
    `seed` is the batch seed planned jobs compose with; runs of composed items have none.
    """
    if not jobs:
        return 0
    if executor == "ray":
        return run_ray(jobs, JobContext(seed, settings, out), workers, recycle_after, on_outcome, address=address,
                       item_timeout=item_timeout)
    count = min(workers or 1, len(jobs))
    threads = threads_per_worker(settings, available_cpus(), count)
    run_local(jobs, JobContext(seed, settings.model_copy(update={"threads": threads}), out), count, recycle_after,
              on_outcome, item_timeout)
    return count
