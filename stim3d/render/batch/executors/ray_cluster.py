"""Ray actors as workers: each renders into its own scratch folder and returns the item's files.

Multi-node behaviour (tests/test_ray_cluster.py): actors reserve as many Ray CPUs as
they run Cycles threads, so Ray spreads them over nodes by cores; a node that dies
takes its actor and the item in flight with it, and that item is retried once in a
fresh actor wherever Ray has room (the policy in schedule.py); nodes that join later
get actors as soon as the scheduler starts new ones.

A loopback address (127.0.0.1, localhost, ::1) means a cluster on this machine bound
to loopback only. Ray would rewrite it to the machine's network address before
connecting (so that other machines could reach the same address) and then wait for
minutes on a port nobody listens on; `ray_cluster` keeps loopback addresses as they are.
"""

from __future__ import annotations

import logging
import shutil
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stim3d.render.batch.executors.jobs import (
    REASON_LIMIT,
    ExecutorUnavailable,
    Job,
    JobContext,
    Outcome,
    Worker,
    import_backend,
    threads_per_worker,
)
from stim3d.render.batch.executors.schedule import WorkerEvent, schedule

# -- Ray ------------------------------------------------------------------------------------------

class RenderActor:
    """A Ray actor owning one bpy: renders into its own scratch folder and returns the item's files."""

    def __init__(self, context: JobContext):
        self._context = context
        import_backend(context.settings)
        self._scratch = Path(tempfile.mkdtemp(prefix="stim3d-actor-"))
        self._out = self._scratch / "out"
        self._worker = Worker(context, self._out, self._scratch / "work")

    def ready(self) -> None:
        return None

    def render(self, job: Job) -> Outcome:
        outcome = self._worker.run(job)
        if outcome.status == "rendered":
            from stim3d.render.batch.folder import BatchFolder, item_file_names

            folder = BatchFolder(self._out).item_dir(job.item_id)
            outcome.files = {name: (folder / name).read_bytes() for name in item_file_names(folder)}
            shutil.rmtree(folder, ignore_errors=True)
        return outcome


def _import_ray():
    try:
        import ray
    except ImportError:
        from stim3d.install_hint import install_hint

        raise ExecutorUnavailable(f"needs Ray: {install_hint('ray')} (or pip install 'ray>=2.40,<3')", field="executor",
                                  value="ray") from None
    return ray


class RayPool:
    """Ray actors as workers; one in-flight call per actor, so an actor's death names its item."""

    def __init__(self, ray: Any, context: JobContext, cpus_per_actor: int):
        self._ray = ray
        self._context = context
        self._actor_class = ray.remote(num_cpus=cpus_per_actor, max_restarts=0, max_task_retries=0)(RenderActor)
        self._actors: dict[int, Any] = {}
        self._inflight: dict[Any, tuple[int, str]] = {}
        self._next = 0

    def start(self) -> int:
        actor = self._actor_class.remote(self._context)
        handle, self._next = self._next, self._next + 1
        self._actors[handle] = actor
        self._inflight[actor.ready.remote()] = (handle, "ready")
        return handle

    def submit(self, handle: int, job: Job) -> None:
        self._inflight[self._actors[handle].render.remote(job)] = (handle, "done")

    def wait(self, timeout: float | None = None) -> list[WorkerEvent]:
        ray = self._ray
        refs = list(self._inflight)
        ready, _ = ray.wait(refs, num_returns=1, timeout=timeout)
        if not ready:
            return []
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0) if len(refs) > 1 else (ready, None)
        events = []
        for ref in ready:
            handle, kind = self._inflight.pop(ref)
            try:
                value = ray.get(ref)
                events.append(WorkerEvent(handle, kind, value if kind == "done" else None))  # type: ignore[arg-type]
            except ray.exceptions.RayActorError as exc:
                events.append(WorkerEvent(handle, "died", reason=f"Ray actor died: {str(exc).splitlines()[0][:300]}"))
                self._forget(handle)
            except ray.exceptions.RayError as exc:
                job_outcome = Outcome("", "error", reason=str(exc)[:REASON_LIMIT])
                events.append(WorkerEvent(handle, "done", job_outcome) if kind == "done"
                              else WorkerEvent(handle, "died", reason=str(exc)[:300]))
        return events

    def stop(self, handle: int) -> None:
        self._forget(handle)

    def kill(self, handle: int) -> None:
        self._forget(handle)  # ray.kill ends the actor at once, a render in progress too

    def _forget(self, handle: int) -> None:
        actor = self._actors.pop(handle, None)
        if actor is not None:
            self._ray.kill(actor)
        for ref, (h, _) in list(self._inflight.items()):
            if h == handle:
                del self._inflight[ref]

    def shutdown(self) -> None:
        for handle in list(self._actors):
            self._forget(handle)


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a HOST:PORT nobody listens on (Ray itself retries for minutes)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "://" in address:
        return  # "auto", "ray://...": let Ray interpret it
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ExecutorUnavailable(f"no Ray cluster reachable at {address!r}: {exc.strerror or exc}") from None


def check_ray(address: str | None) -> None:
    """Before anything is written: Ray is installed and, when given, the address answers."""
    _import_ray()
    if address:
        _check_reachable(address)


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


def _keep_loopback(address: str | None) -> None:
    """Stop Ray from rewriting a loopback `address` to this machine's network address (see the module docstring).

    Ray decides that with one module flag (also set by the environment variable
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 before Ray is imported); without the flag this is a no-op.
    """
    host = (address or "").rpartition(":")[0]
    if host in LOOPBACK_HOSTS:
        from ray._private import ray_constants

        if hasattr(ray_constants, "ENABLE_RAY_CLUSTER"):
            ray_constants.ENABLE_RAY_CLUSTER = False


def ray_cluster(address: str | None) -> tuple[Any, bool]:
    """Connect to Ray at `address`, or start a local Ray; returns (ray module, whether we started it)."""
    ray = _import_ray()
    if ray.is_initialized():
        return ray, False
    _keep_loopback(address)
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.ERROR, configure_logging=True)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"at {address!r}" if address else "locally"
        raise ExecutorUnavailable(f"could not start or reach a Ray cluster {where}: {str(exc).splitlines()[0]}") from None
    return ray, True


def ray_capacity(ray: Any) -> tuple[int, int]:
    """(CPUs in the cluster, CPUs of its largest node)."""
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    per_node = [int(n.get("Resources", {}).get("CPU", 0)) for n in nodes] or [1]
    return max(1, sum(per_node)), max(1, max(per_node))


def run_ray(jobs: list[Job], context: JobContext, workers: int | None, recycle_after: int,
            on_outcome: Callable[[Outcome], None], address: str | None = None,
            item_timeout: float | None = None) -> int:
    """Render `jobs` on Ray actors; returns the number of actors used.

    `workers` actors (default: one per node-sized share of `threads` CPUs, i.e. the
    cluster's CPUs divided by the Cycles threads per actor). Each actor reserves as
    many Ray CPUs as it runs Cycles threads, so Ray packs actors onto nodes by cores.
    """
    ray, started = ray_cluster(address)
    try:
        total, largest = ray_capacity(ray)
        if workers is None:
            threads = context.settings.threads or min(largest, 2)
            workers = max(1, total // threads)
        else:
            threads = threads_per_worker(context.settings, total, workers)
        threads = min(threads, largest)
        settings = context.settings.model_copy(update={"threads": threads})
        pool = RayPool(ray, JobContext(context.batch_seed, settings, context.out), cpus_per_actor=threads)
        schedule(pool, jobs, workers, recycle_after, on_outcome, item_timeout)
        return workers
    finally:
        if started:
            ray.shutdown()
