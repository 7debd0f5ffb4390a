"""Local worker processes: spawned, one bpy each, dying with their parent."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import re
import shutil
import signal
import socket
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from stim3d.files import log_tail
from stim3d.render.batch.executors.jobs import Job, JobContext, Outcome, Worker, import_backend
from stim3d.render.batch.executors.schedule import WorkerEvent, schedule

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
    scratch space, its temporary folder (TMPDIR, where Blender makes its own temp
    folder, which `os._exit` would otherwise leave behind in /tmp) and `worker.log`,
    which takes its stdout and stderr (Blender's chatter, a crash backtrace) and whose
    tail the parent quotes when the worker dies.
    """
    _die_with_parent(parent_pid)
    tmp = os.path.join(home, "tmp")
    os.makedirs(tmp, exist_ok=True)
    os.environ["TMPDIR"] = tempfile.tempdir = tmp
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    log_fd = os.open(os.path.join(home, "worker.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    _forget_blender_script_paths()
    import_backend(context.settings)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # again: importing Blender may install its own handlers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    worker = Worker(context, context.out, Path(home) / "scratch")
    try:
        conn.send(("ready", None))
        while True:
            job = conn.recv()
            if job is None:
                break
            conn.send(("done", worker.run(job)))
    except (EOFError, BrokenPipeError):
        pass  # the parent is gone
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)  # skip Blender's exit-time cleanup, which can crash after the work is done


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


SCRATCH_PREFIX = "stim3d-workers-"


def remove_dead_scratch() -> int:
    """Delete the workers' scratch folders that runs killed with -9 left in $TMPDIR (their process is gone).

    Only folders named by this host, owned by this user, and not links; a live run's folder is left alone.
    """
    pattern = re.compile(rf"{re.escape(SCRATCH_PREFIX)}{re.escape(socket.gethostname())}-(\d+)-")
    removed = 0
    for path in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*"):
        match = pattern.match(path.name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not match or info.st_uid != os.getuid() or not stat.S_ISDIR(info.st_mode) or _alive(int(match[1])):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LocalPool:
    """Worker processes on this machine, each with a pipe; deaths are seen through process sentinels."""

    def __init__(self, context: JobContext):
        self._context = context
        self._mp = multiprocessing.get_context("spawn")
        self._procs: dict[int, Any] = {}
        self._conns: dict[int, Connection] = {}
        self._next = 0
        remove_dead_scratch()
        self._tmp = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{socket.gethostname()}-{os.getpid()}-"))

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

    def wait(self, timeout: float | None = None) -> list[WorkerEvent]:
        conn_of = {conn: h for h, conn in self._conns.items()}
        sentinel_of = {self._procs[h].sentinel: h for h in self._procs}
        ready = wait([*conn_of, *sentinel_of], timeout)
        events: list[WorkerEvent] = []
        touched = sorted({conn_of.get(r, sentinel_of.get(r)) for r in ready})  # type: ignore[call-overload]
        for handle in touched:
            conn, proc = self._conns[handle], self._procs[handle]
            alive = True
            while alive and conn.poll():
                try:
                    kind, outcome = conn.recv()
                    events.append(WorkerEvent(handle, kind, outcome))
                except (EOFError, OSError):
                    alive = False
            if not alive or proc.sentinel in ready:
                proc.join(timeout=5)
                reason = describe_exit(proc.exitcode)
                lines = log_tail(self._home(handle) / "worker.log", 6, lambda line: bool(line.strip()))
                tail = " | ".join(line.strip() for line in lines)[-600:]
                events.append(WorkerEvent(handle, "died", reason=f"{reason}; its last output: {tail}" if tail else reason))
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

    def kill(self, handle: int) -> None:
        proc = self._procs[handle]
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
              on_outcome: Callable[[Outcome], None], item_timeout: float | None = None) -> None:
    """Render `jobs` on `workers` local processes (see the package docstring)."""
    schedule(LocalPool(context), jobs, workers, recycle_after, on_outcome, item_timeout)


