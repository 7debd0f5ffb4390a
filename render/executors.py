"""Where items are rendered: N local worker processes, or actors on a Ray cluster.

Both executors share one scheduling policy (`schedule`) over a small transport
interface (`_Pool`), so a crash, a retry or a recycle means the same thing on a
laptop and on a cluster:

- every worker is a long-lived process that imports the backend (bpy) once and
  renders one item at a time; the parent sends an item only to an idle worker, so
  it always knows which item a worker was holding when it died;
- a worker that dies (segfault, abort, out-of-memory kill) or raises an unexpected
  exception costs only its current item: the item is retried once in a *fresh*
  worker and, if that fails too, reported failed with the reason; the batch goes on;
- an item whose constraints cannot be met (`InfeasibleError`) is deterministic, so
  it is reported failed at once, naming the constraint;
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

Test-only fault hook: when the environment variable `STIM3D_FAULT_ITEM` equals an
item id, the worker that receives that item calls `os.abort()` before rendering
it. It exists so tests can prove that a dying worker costs only its item; never
set it outside tests.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Protocol

from scenes.model import RenderSettings

from .config import ItemPlan

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
    plan: ItemPlan
    key: str

    @property
    def item_id(self) -> str:
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
    from scenes.placement import InfeasibleError

    from .produce import produce_item

    if os.environ.get(FAULT_ENV) == job.item_id:  # test-only, see the module docstring
        os.abort()
    started = time.perf_counter()
    workdir = scratch / job.item_id
    try:
        produce_item(job.plan, context.batch_seed, context.settings, out, workdir, job.key)
        return Outcome(job.item_id, "rendered", seconds=time.perf_counter() - started)
    except InfeasibleError as exc:
        return Outcome(job.item_id, "infeasible", reason=str(exc))
    except Exception as exc:  # noqa: BLE001 - any other failure is reported, retried once, never fatal
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return Outcome(job.item_id, "error", reason=detail[:REASON_LIMIT])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _import_backend(settings: RenderSettings) -> None:
    """Import the heavy backend once, at worker start, so item timings do not include it."""
    from . import produce  # noqa: F401

    if settings.engine == "raster":
        from . import raster  # noqa: F401
    else:
        from . import blender  # noqa: F401


# -- the scheduling policy ----------------------------------------------------------------------

@dataclass
class _Event:
    handle: int
    kind: Literal["ready", "done", "died"]
    outcome: Outcome | None = None
    reason: str = ""


class _Pool(Protocol):
    """A transport for workers: start, send one job, wait for events, stop."""

    def start(self) -> int: ...
    def submit(self, handle: int, job: Job) -> None: ...
    def wait(self) -> list[_Event]: ...
    def stop(self, handle: int) -> None: ...
    def shutdown(self) -> None: ...


@dataclass
class _Slot:
    state: Literal["starting", "idle", "busy"] = "starting"
    job: Job | None = None
    bound: Job | None = None  # a retry that must run in this fresh worker
    done: int = 0


@dataclass
class _Schedule:
    pool: _Pool
    workers: int
    recycle_after: int
    on_outcome: Callable[[Outcome], None]
    pending: deque[Job] = field(default_factory=deque)
    slots: dict[int, _Slot] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    ever_ready: bool = False
    startup_deaths: int = 0
    rendered: int = 0
    early_failures: list[str] = field(default_factory=list)

    def spawn(self, bound: Job | None = None) -> None:
        self.slots[self.pool.start()] = _Slot(bound=bound)

    def retire(self, handle: int) -> None:
        self.pool.stop(handle)
        del self.slots[handle]

    def outstanding(self) -> bool:
        return bool(self.pending) or any(s.state == "busy" or s.bound for s in self.slots.values())

    def finish(self, outcome: Outcome) -> None:
        outcome.attempts = self.attempts.get(outcome.item_id, 1)
        self.on_outcome(outcome)
        if outcome.status == "rendered":
            self.rendered += 1
        elif outcome.status != "infeasible" and not self.rendered:
            self.early_failures.append(f"{outcome.item_id}: {outcome.reason}")
            if len(self.early_failures) >= ABORT_AFTER_FIRST_FAILURES:
                raise BatchAborted(
                    f"the first {len(self.early_failures)} items all failed and none rendered; "
                    f"stopping (last: {self.early_failures[-1]})"
                )

    def attempt_failed(self, job: Job, outcome: Outcome) -> None:
        """A crash or an unexpected error: retry once in a fresh worker, else report."""
        if self.attempts.get(job.item_id, 1) < MAX_ATTEMPTS:
            self.attempts[job.item_id] = self.attempts.get(job.item_id, 1) + 1
            self.spawn(bound=job)
        else:
            if outcome.status == "crashed":
                outcome.reason = f"worker died while rendering it, {MAX_ATTEMPTS} times ({outcome.reason})"
            self.finish(outcome)

    def handle(self, event: _Event) -> None:
        slot = self.slots.get(event.handle)
        if slot is None:
            return
        if event.kind == "ready":
            slot.state = "idle"
            self.ever_ready = True
            self.startup_deaths = 0
        elif event.kind == "done":
            job, outcome = slot.job, event.outcome
            assert job is not None and outcome is not None
            outcome.item_id = job.item_id
            slot.state, slot.job = "idle", None
            slot.done += 1
            if outcome.status == "error":
                self.retire(event.handle)  # its Blender state may be what failed
                self.attempt_failed(job, outcome)
            else:
                self.finish(outcome)
        else:  # died
            del self.slots[event.handle]
            if slot.state == "starting":
                self.startup_deaths += 1
                if not self.ever_ready or self.startup_deaths >= STARTUP_DEATHS_ALLOWED:
                    raise BatchAborted(f"a worker process could not start: {event.reason}")
                if slot.bound:
                    self.spawn(bound=slot.bound)
            elif slot.state == "busy" and slot.job is not None:
                self.attempt_failed(slot.job, Outcome(slot.job.item_id, "crashed", reason=event.reason))

    def assign(self) -> None:
        for handle, slot in list(self.slots.items()):
            if slot.state != "idle":
                continue
            job = slot.bound
            if job is None and self.pending and slot.done >= self.recycle_after:
                self.retire(handle)
                self.spawn()
                continue
            if job is None and self.pending:
                job = self.pending.popleft()
            if job is None:
                self.retire(handle)
                continue
            slot.state, slot.job, slot.bound = "busy", job, None
            self.pool.submit(handle, job)
        unbound = sum(1 for s in self.slots.values() if not s.bound)
        while self.pending and unbound < self.workers:
            self.spawn()
            unbound += 1

    def run(self, jobs: Iterable[Job]) -> None:
        self.pending.extend(jobs)
        try:
            self.assign()
            while self.outstanding():
                for event in self.pool.wait():
                    self.handle(event)
                self.assign()
        finally:
            self.pool.shutdown()


def schedule(pool: _Pool, jobs: Iterable[Job], workers: int, recycle_after: int,
             on_outcome: Callable[[Outcome], None]) -> None:
    """Run `jobs` on `pool` with the policy in the module docstring; `on_outcome` gets each item's final result."""
    _Schedule(pool, max(1, workers), max(1, recycle_after), on_outcome).run(jobs)


# -- local worker processes ---------------------------------------------------------------------

def _die_with_parent(parent_pid: int) -> None:
    """Have the kernel SIGKILL this worker when the parent dies (Linux); exit now if it already has."""
    if sys.platform.startswith("linux"):
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != parent_pid:
        os._exit(1)


_BLENDER_SCRIPT_PATH = re.compile(r"[\\/]bpy[\\/]\d+\.\d+[\\/]scripts([\\/]|$)")


def _forget_blender_script_paths() -> None:
    """Drop Blender's script folders that a spawned worker inherited from a parent that imported bpy.

    `import bpy` puts `<site-packages>/bpy/<version>/scripts/{startup,modules}` first on sys.path, and
    spawn starts the child with the parent's sys.path, where `import bpy` would then find Blender's
    pure-Python `bpy` package instead of the module ("No module named '_bpy'"). Importing bpy in the
    worker adds them back.
    """
    sys.path[:] = [p for p in sys.path if not _BLENDER_SCRIPT_PATH.search(p)]


def _worker_main(conn: Connection, context: JobContext, parent_pid: int, home: str) -> None:
    """A local worker: import the backend once, then render the jobs the parent sends until told to stop.

    `home` is a folder the parent owns (and removes, even after a crash): the worker's
    scratch space and `worker.log`, which takes its stdout and stderr (Blender's chatter,
    a crash backtrace) and whose tail the parent quotes when the worker dies.
    """
    _die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    log_fd = os.open(os.path.join(home, "worker.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    _forget_blender_script_paths()
    _import_backend(context.settings)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # again: importing Blender may install its own handlers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    scratch = Path(home) / "scratch"
    try:
        conn.send(("ready", None))
        while True:
            job = conn.recv()
            if job is None:
                break
            conn.send(("done", run_job(job, context, context.out, scratch)))
    except (EOFError, BrokenPipeError):
        pass  # the parent is gone
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)  # skip Blender's exit-time cleanup, which can crash after the work is done


def _log_tail(path: Path, lines: int = 6, limit: int = 600) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    return " | ".join(tail)[-limit:]


def describe_exit(exitcode: int | None) -> str:
    """A worker's exit in words: the signal name for a kill (SIGKILL often means out of memory)."""
    if exitcode is None:
        return "worker vanished"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = ", possibly out of memory" if -exitcode == signal.SIGKILL else ""
        return f"worker process killed by {name}{hint}"
    return f"worker process exited with code {exitcode}"


class LocalPool:
    """Worker processes on this machine, each with a pipe; deaths are seen through process sentinels."""

    def __init__(self, context: JobContext):
        self._context = context
        self._mp = multiprocessing.get_context("spawn")
        self._procs: dict[int, Any] = {}
        self._conns: dict[int, Connection] = {}
        self._next = 0
        self._tmp = Path(tempfile.mkdtemp(prefix="stim3d-workers-"))

    def _home(self, handle: int) -> Path:
        return self._tmp / f"worker-{handle}"

    def start(self) -> int:
        parent_end, child_end = self._mp.Pipe()
        home = self._home(self._next)
        home.mkdir()
        proc = self._mp.Process(target=_worker_main, args=(child_end, self._context, os.getpid(), str(home)),
                                name="stim3d-worker", daemon=True)
        proc.start()
        child_end.close()
        handle, self._next = self._next, self._next + 1
        self._procs[handle], self._conns[handle] = proc, parent_end
        return handle

    def submit(self, handle: int, job: Job) -> None:
        try:
            self._conns[handle].send(job)
        except (BrokenPipeError, OSError):
            pass  # its sentinel fires next and the job counts as a crash of that worker

    def wait(self) -> list[_Event]:
        conn_of = {conn: h for h, conn in self._conns.items()}
        sentinel_of = {self._procs[h].sentinel: h for h in self._procs}
        ready = wait([*conn_of, *sentinel_of])
        events: list[_Event] = []
        touched = sorted({conn_of.get(r, sentinel_of.get(r)) for r in ready})  # type: ignore[arg-type]
        for handle in touched:
            conn, proc = self._conns[handle], self._procs[handle]
            alive = True
            while alive and conn.poll():
                try:
                    kind, outcome = conn.recv()
                    events.append(_Event(handle, kind, outcome))
                except (EOFError, OSError):
                    alive = False
            if not alive or proc.sentinel in ready:
                proc.join(timeout=5)
                reason = describe_exit(proc.exitcode)
                tail = _log_tail(self._home(handle) / "worker.log")
                events.append(_Event(handle, "died", reason=f"{reason}; its last output: {tail}" if tail else reason))
                self._forget(handle)
        return events

    def stop(self, handle: int) -> None:
        proc, conn = self._procs[handle], self._conns[handle]
        try:
            conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        proc.join(timeout=10)
        if proc.is_alive():
            proc.kill()
            proc.join()
        self._forget(handle)

    def _forget(self, handle: int) -> None:
        self._conns.pop(handle).close()
        self._procs.pop(handle)
        shutil.rmtree(self._home(handle), ignore_errors=True)

    def shutdown(self) -> None:
        """Stop every worker now (SIGTERM, then SIGKILL after a grace second)."""
        for proc in self._procs.values():
            if proc.is_alive():
                proc.terminate()
        deadline = time.monotonic() + 3
        for proc in self._procs.values():
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()
                proc.join()
        for handle in list(self._procs):
            self._forget(handle)
        shutil.rmtree(self._tmp, ignore_errors=True)


def run_local(jobs: list[Job], context: JobContext, workers: int, recycle_after: int,
              on_outcome: Callable[[Outcome], None]) -> None:
    """Render `jobs` on `workers` local processes (see the module docstring)."""
    schedule(LocalPool(context), jobs, workers, recycle_after, on_outcome)


# -- Ray ------------------------------------------------------------------------------------------

class RenderActor:
    """A Ray actor owning one bpy: renders into its own scratch folder and returns the item's files."""

    def __init__(self, context: JobContext):
        self._context = context
        _import_backend(context.settings)
        self._scratch = Path(tempfile.mkdtemp(prefix="stim3d-actor-"))

    def ready(self) -> None:
        return None

    def render(self, job: Job) -> Outcome:
        out = self._scratch / "out"
        outcome = run_job(job, self._context, out, self._scratch / "work")
        if outcome.status == "rendered":
            from .item_folder import item_dir

            folder = item_dir(out, job.item_id)
            outcome.files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
            shutil.rmtree(folder, ignore_errors=True)
        return outcome


def _import_ray():
    try:
        import ray
    except ImportError:
        raise ExecutorUnavailable("--executor ray needs Ray: pip install 'stim3d[ray]' (or 'ray>=2.9')") from None
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

    def wait(self) -> list[_Event]:
        ray = self._ray
        refs = list(self._inflight)
        ready, _ = ray.wait(refs, num_returns=1)
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0) if len(refs) > 1 else (ready, None)
        events = []
        for ref in ready:
            handle, kind = self._inflight.pop(ref)
            try:
                value = ray.get(ref)
                events.append(_Event(handle, kind, value if kind == "done" else None))  # type: ignore[arg-type]
            except ray.exceptions.RayActorError as exc:
                events.append(_Event(handle, "died", reason=f"Ray actor died: {str(exc).splitlines()[0][:300]}"))
                self._forget(handle)
            except ray.exceptions.RayError as exc:
                job_outcome = Outcome("", "error", reason=str(exc)[:REASON_LIMIT])
                events.append(_Event(handle, "done", job_outcome) if kind == "done"
                              else _Event(handle, "died", reason=str(exc)[:300]))
        return events

    def stop(self, handle: int) -> None:
        self._forget(handle)

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


def ray_cluster(address: str | None) -> tuple[Any, bool]:
    """Connect to Ray at `address`, or start a local Ray; returns (ray module, whether we started it)."""
    ray = _import_ray()
    if ray.is_initialized():
        return ray, False
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
            on_outcome: Callable[[Outcome], None], address: str | None = None) -> int:
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
        schedule(pool, jobs, workers, recycle_after, on_outcome)
        return workers
    finally:
        if started:
            ray.shutdown()
