"""`stim3d study serve`: the server's life, one study folder, its lock, and how it stops.

The only server in stim3d (stdlib `http.server`, loopback unless the owner says it is behind a TLS reverse
proxy). It serves the study folder's page files read-only and takes the session API's writes, which go only
into data/ (handler.py answers each request; sessions.py stores sessions; quotas.py says what any one client
may ask: quotas, connections, the Host header).

One server per study folder: each server holds an exclusive lock on STUDY/.stim3d-serve.lock
(`flock`, released by the kernel when the process ends however it ends, so a killed server
leaves no stale lock) for as long as it is open. Why: a server serialises the
read-merge-write of a session with a lock of its own process, and two servers on one folder
would each write their own merge over the other's (trials lost while every PUT got 200).

The library neither prints nor exits: it logs through the `log` it is given and raises StudyError; the CLI
(the `stim3d study serve` command) prints, handles signals and chooses the exit code, and `serve_until` stops when the
caller's `stopped()` says so.
"""

from __future__ import annotations

import fcntl
import os
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any

from stim3d.study.errors import StudyError
from stim3d.study.folder import StudyFolder
from stim3d.study.handler import StudyHandler
from stim3d.study.quotas import Limits, Quotas, is_loopback
from stim3d.study.sessions import LogFn, quiet, remove_data_temporaries

LOCK = ".stim3d-serve.lock"  # hidden: never served, packed or counted (package.study_files, handler.static_file)
HOST_NAME = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*")


@dataclass(frozen=True)
class Exposure:
    """Who may reach the server: whether it is behind a TLS reverse proxy (then the client's address is the last
    `X-Forwarded-For` entry, the one the proxy appended) and the host names it answers besides loopback."""

    behind_proxy: bool = False
    allowed_hosts: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        for name in self.allowed_hosts:
            if not HOST_NAME.fullmatch(name):
                raise StudyError(f"allowed_hosts: {name!r} is not a host name (lower case, no port, e.g. "
                                 "study.example.org)")


_BUSY_BODY = b'{"error": "the server is busy: try again in a second"}'
BUSY = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
        b"Connection: close\r\nContent-Length: " + str(len(_BUSY_BODY)).encode() + b"\r\n\r\n" + _BUSY_BODY)


class StudyServer(ThreadingHTTPServer):
    """A threading HTTP server bound to one study folder; `lock` serialises the read-merge-write of sessions,
    `quotas` counts what each client asked and the connections served at once."""

    daemon_threads = True

    def __init__(self, study: StudyFolder, host: str, port: int, log: LogFn = quiet,
                 exposure: Exposure = Exposure(), limits: Limits = Limits()) -> None:
        self.study = study
        self.root = study.root.resolve()
        self.lock = threading.Lock()
        self.log = log
        self.exposure = exposure
        self.quotas = Quotas(limits)
        bound = host.strip("[]").lower()
        self.hosts = exposure.allowed_hosts | ({bound} if bound not in ("0.0.0.0", "::", "") else set())
        if ":" in host:
            self.address_family = socket.AF_INET6
        self.folder_lock = hold_folder_lock(self.root)
        try:
            super().__init__((host, port), StudyHandler)
        except BaseException:
            self.folder_lock.close()
            raise
        self.folder_lock.write(f"process {os.getpid()} at {self.url}\n")
        self.folder_lock.flush()
        self.closing = False
        remove_data_temporaries(study)  # a killed server's half-written files: nobody else writes here now

    def _peer(self, client_address: Any) -> str | None:
        """The address connections are counted under: the peer's, or None behind a proxy (every client's)."""
        return None if self.exposure.behind_proxy else str(client_address[0])

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection in a thread while a slot is free (quotas.Quotas.connect); else answer 503 at once
        (without blocking the accept loop on a client that does not read) and close it: a flood gets refusals,
        not a thread each."""
        if not self.quotas.connect(self._peer(client_address)):
            try:
                request.setblocking(False)
                request.send(BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.quotas.disconnect(self._peer(client_address))
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.quotas.disconnect(self._peer(client_address))

    def close(self, wait_s: float = 5.0) -> None:
        """After `shutdown()`: let a write in progress finish (up to `wait_s`), keep the session lock so no other
        starts, delete temporary files left in data/, close the socket and release the folder. Why keep the
        lock: handler threads are daemons, and a write begun after the clean-up would leave a temporary file
        when the process exits."""
        self.closing = True
        self.lock.acquire(timeout=wait_s)
        remove_data_temporaries(self.study)
        self.server_close()

    def server_close(self) -> None:
        """Close the socket and let the next server have the folder (closing the lock file releases the flock)."""
        super().server_close()
        self.folder_lock.close()

    @property
    def url(self) -> str:
        """The page's address as a browser on this machine reaches it (the real port when 0 was asked)."""
        host, port = str(self.server_address[0]), int(self.server_address[1])
        if host in ("0.0.0.0", ""):
            host = "127.0.0.1"
        elif host == "::":
            host = "::1"
        return f"http://{f'[{host}]' if ':' in host else host}:{port}/index.html"


def hold_folder_lock(root: Path) -> IO[str]:
    """STUDY/.stim3d-serve.lock opened and exclusively locked (emptied, for the holder to describe itself);
    StudyError naming the holder when another server has it."""
    try:
        handle = open(root / LOCK, "a+", encoding="utf-8")  # held open for the server's life
    except OSError as exc:
        raise StudyError(f"{root}: cannot create {LOCK} ({exc.strerror or exc}); the study folder must be "
                         "writable") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise StudyError(f"{root}: already served ({holder}); one server per study folder: stop that one "
                         "first") from None
    handle.seek(0)
    handle.truncate()
    return handle


def make_server(study: str | Path | StudyFolder, host: str = "127.0.0.1", port: int = 0,
                log: LogFn = quiet, exposure: Exposure = Exposure(), limits: Limits = Limits()) -> StudyServer:
    """A bound server for `study` (not yet serving): call `serve_forever()` in a thread, `shutdown()` to stop.

    StudyError for a `host` that is not loopback unless `exposure.behind_proxy`: the server speaks plain HTTP,
    so outside this machine it belongs behind a reverse proxy with TLS (docs/study_collect.md)."""
    folder = study if isinstance(study, StudyFolder) else StudyFolder.open(study)
    if not 0 <= port <= 65535:
        raise StudyError(f"port {port}: must be 0-65535 (0 picks a free port)")
    if not is_loopback(host) and not exposure.behind_proxy:
        raise StudyError(f"host {host!r} is not a loopback address and the server speaks plain HTTP: serve it "
                         "behind a reverse proxy with TLS and say so (behind_proxy)")
    try:
        return StudyServer(folder, host, port, log, exposure, limits)
    except OSError as exc:
        raise StudyError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def serve_until(server: StudyServer, stopped: Callable[[], bool], poll_s: float = 0.1) -> None:
    """Serve in a thread until `stopped()` is true (polled every `poll_s`), then close: see `StudyServer.close`.

    Why a thread: the caller's main thread only polls, so a signal handler that merely records the signal
    (the `stim3d study serve` command's) is seen within `poll_s` however busy the server is; an exception raised from a handler
    inside `serve_forever` would be caught by socketserver's per-request error handling (a SIGTERM swallowed
    under load) and an Event set from one could deadlock."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": poll_s}, daemon=True,
                              name="stim3d-study-serve")
    thread.start()
    try:
        while not stopped() and thread.is_alive():
            time.sleep(poll_s)
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.close()
