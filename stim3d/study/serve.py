"""`stim3d study serve`: the study's page over HTTP, and each session stored under STUDY/data/.

The only server in stim3d (stdlib `http.server`, loopback unless the owner says it is behind a
TLS reverse proxy). It serves the study folder's files read-only and takes two kinds of write:
`POST /api/session`, which starts a session, and `PUT /api/session`, the whole session so far,
which it checks against the study (folder.py: study id, the
participant's plan, every trial in its place with its role; a staircase study's steps after
the plan replayed by staircase.py `session_steps`), merges with the stored
copy (stored trials win, `complete` is sticky) and writes atomically to
`data/<participant>/<session>.json`. Nothing else is ever written, and never outside
data/: both ids are single safe path components, the target must resolve inside
data/, and a data/ that is a symbolic link is refused. Files are the owner's only (0600).
What any one client may ask (quotas, connections, the Host header) is quotas.py's.

One server per study folder: each server holds an exclusive lock on STUDY/.stim3d-serve.lock
(`flock`, released by the kernel when the process ends however it ends, so a killed server
leaves no stale lock) for as long as it is open. Why: a server serialises the
read-merge-write of a session with a lock of its own process, and two servers on one folder
would each write their own merge over the other's (trials lost while every PUT got 200).

Sessions need their token. `POST /api/session` starts a session and answers its token (secrets.token_urlsafe,
shown once; the server keeps only its SHA-256 in data/<participant>/<session>.token); every later read or write
of that session sends it as `Authorization: Bearer <token>`. Why: the ids are in the page's link (a Prolific id,
a name), so anyone who knows or guesses them could otherwise read a session or finish someone else's. One
session per participant: a participant id that already started is refused (409), so a participant who comes back
in another browser (no token there) is told to go on where they started; nothing lists the sessions.

The API (docs/study_collect.md):
- `GET /api/ping` -> `{"study": "<study_id>"}`
- `POST /api/session` `{"participant": P, "session": S}` -> 201 `{"token": T}`; 409 when P already started
- `GET /api/session?participant=P&session=S` with the token -> the stored session, or `null` when nothing is
  stored yet; 403 `{"error": ...}` without the right token (the same answer whether the session exists or not)
- `PUT /api/session` with the token -> `{"stored": <trials>, "complete": <bool>}`; 403 without the right token,
  400 `{"error": "<one line>"}` for a body that is not a session of this study, 411 without Content-Length, 413
  over MAX_BODY_BYTES (the body is not read)
- any other `GET` or `HEAD`: one of the page's files (package.is_public: index.html, consent.html, study.json,
  trials.json, js/, css/, lib/, stimuli/); never data/, a hidden file, a path leading outside (`..`, a symbolic
  link out), any other file of the folder or a folder listing (403 or 404).
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import mimetypes
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath
from typing import IO, Any
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError

from stim3d.render.files import atomic_path, remove_temporaries
from stim3d.study.contract import DATA_DIR, MAX_BODY_BYTES, ParticipantId, Session, SessionId
from stim3d.study.errors import StudyError
from stim3d.study.folder import StudyFolder, first_line, merge_sessions
from stim3d.study.package import is_public
from stim3d.study.quotas import Limits, OverQuota, Quotas, host_allowed, host_name, is_loopback

REQUEST_TIMEOUT = 30.0  # seconds a client may take to send its request; a stalled one cannot hold a thread longer
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".json": "application/json", ".png": "image/png", ".txt": "text/plain; charset=utf-8"}
LogFn = Callable[[str], None]
LOCK = ".stim3d-serve.lock"  # hidden: never served, packed or counted (package.study_files, static_file)
HOST_NAME = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*")
TOKEN_SUFFIX = ".token"  # data/<participant>/<session>.token: the SHA-256 of the session's token
TOKEN_BYTES = 32  # secrets.token_urlsafe(32): 256 bits, 43 characters
FORBIDDEN = "no session of yours here: send the token this session was started with (Authorization: Bearer ...)"


def _quiet(line: str) -> None:
    """The library's default log: nothing (the CLI passes one that prints to stderr)."""


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

    def __init__(self, study: StudyFolder, host: str, port: int, log: LogFn = _quiet,
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


def remove_data_temporaries(study: StudyFolder) -> int:
    """Delete the temporary files (render/files.py atomic_path's) in data/ and each participant's folder there;
    how many. Only a server holding the folder lock calls it, so none is being written."""
    try:
        data = study.data_dir
    except StudyError:
        return 0  # a data/ that is a link is refused anyway; nothing of it is touched
    if not data.is_dir():
        return 0
    folders = [data, *(p for p in data.iterdir() if p.is_dir() and not p.is_symlink())]
    return sum(remove_temporaries(folder) for folder in folders)


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


class StudyHandler(BaseHTTPRequestHandler):
    """One request: the API under /api/, else a file of the study folder."""

    server: StudyServer
    timeout = REQUEST_TIMEOUT
    server_version = "stim3d-study"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        """Quiet: stored sessions and refusals are logged by the handlers themselves."""

    def _send(self, status: int, body: bytes, content_type: str, head_only: bool = False,
              retry_after: int | None = None) -> None:
        self.send_response(status)
        if retry_after is not None:
            self.send_header("Retry-After", str(retry_after))
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if not head_only:
            self.wfile.write(body)

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), "application/json")

    def _error(self, status: int, message: str, retry_after: int | None = None) -> None:
        body = json.dumps({"error": message.splitlines()[0] if message else "error"}).encode("utf-8")
        self._send(status, body, "application/json", retry_after=retry_after)

    def _over(self, exc: OverQuota) -> None:
        self.server.log(f"refused {self.address()}: {exc}")
        self._error(429, str(exc), exc.retry_after)

    def address(self) -> str:
        """The client's address: the peer's, or behind a proxy the last X-Forwarded-For entry (the proxy's own)."""
        if self.server.exposure.behind_proxy:
            forwarded = ",".join(self.headers.get_all("X-Forwarded-For") or []).split(",")[-1].strip()
            if forwarded:
                return forwarded
        return str(self.client_address[0])

    def parse_request(self) -> bool:
        """The stdlib's parsing, then the Host check: 421 for a host name this server was not told it has."""
        if not super().parse_request():
            return False
        if not host_allowed(self.headers.get("Host"), self.server.hosts):
            self.close_connection = True
            self._error(421, f"this server does not serve host {host_name(self.headers.get('Host'))!r} "
                             "(a loopback name or one the owner allowed)")
            return False
        return True

    def _token(self) -> str | None:
        """The bearer token of `Authorization: Bearer <token>`, or None."""
        scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
        return token.strip() or None if scheme.lower() == "bearer" else None

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self._get(head_only=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._get(head_only=True)

    def _session_body(self) -> bytes | None:
        """The body of a request to the session API (POST starts, PUT stores); None when it was answered already:
        another path, a body refused, or the server stopping."""
        if urlsplit(self.path).path != "/api/session":
            self._refuse_method()
            return None
        body = self._body()
        return None if body is None or self._closing() else body

    def do_POST(self) -> None:  # noqa: N802
        body = self._session_body()
        if body is None:
            return
        try:
            start = SessionStart.model_validate_json(body)
            self.server.quotas.start(self.address())
            token = start_session(self.server.study, start.participant, start.session, self.server.lock)
        except OverQuota as exc:
            self._over(exc)
        except ValidationError as exc:
            self._error(400, f"not a session start: {first_line(exc)}")
        except SessionConflict as exc:
            self.server.log(f"refused a second session: {exc}")
            self._error(409, str(exc))
        except StudyError as exc:
            self._error(400, str(exc))
        except OSError as exc:
            self.server.log(f"could not start a session: {exc}")
            self._error(500, f"the server could not start the session ({first_line(exc)})")
        else:
            self.server.log(f"started {start.participant}/{start.session}")
            self._json(201, {"token": token})

    def _closing(self) -> bool:
        """True after answering 503 while the server stops (the page keeps the session and saves it again)."""
        if self.server.closing:
            self._error(503, "the server is stopping: nothing more is stored", retry_after=5)
        return self.server.closing

    def _refuse_method(self) -> None:
        self._error(405, "method not allowed: the study takes POST, GET and PUT /api/session only")

    do_DELETE = do_PATCH = _refuse_method  # noqa: N815

    def do_PUT(self) -> None:  # noqa: N802
        body = self._session_body()
        if body is None:
            return
        try:
            data = json.loads(body.decode("utf-8"))
            stored, complete = store_session(self.server.study, data, self._token(), self.server.lock, self.server.log,
                                             self.server.quotas)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._error(400, f"the body is not JSON ({first_line(exc)})")
        except NotYours:
            self._error(403, FORBIDDEN)
        except OverQuota as exc:
            self._over(exc)
        except StudyError as exc:
            self.server.log(f"refused a session: {exc}")
            self._error(400, str(exc))
        except OSError as exc:
            self.server.log(f"could not store a session: {exc}")
            self._error(500, f"the server could not store the session ({first_line(exc)})")
        else:
            self._json(200, {"stored": stored, "complete": complete})

    def _body(self) -> bytes | None:
        """The request's body, or None after answering 411 (no length), 400 (a bad one) or 413 (over the limit)."""
        if self.headers.get("Transfer-Encoding") or self.headers.get("Content-Length") is None:
            self.close_connection = True
            self._error(411, "send the body with a Content-Length (no chunked bodies)")
            return None
        try:
            length = int(self.headers["Content-Length"])
            if length < 0:
                raise ValueError
        except ValueError:
            self.close_connection = True
            self._error(400, f"Content-Length {self.headers['Content-Length']!r} is not a length")
            return None
        if length > MAX_BODY_BYTES:
            self.close_connection = True  # the body stays unread: the connection ends with this answer
            self._error(413, f"a body of {length} bytes is over the limit of {MAX_BODY_BYTES}")
            self.server.log(f"refused a body of {length} bytes (over {MAX_BODY_BYTES})")
            return None
        return self.rfile.read(length)

    def _get(self, head_only: bool) -> None:
        url = urlsplit(self.path)
        if url.path == "/api/ping":
            self._json(200, {"study": self.server.study.study_id})
        elif url.path == "/api/session":
            self._get_session(url.query)
        elif url.path.startswith("/api/"):
            self._error(404, f"no such API: {url.path}")
        else:
            self._static(url.path, head_only)

    def _static(self, raw: str, head_only: bool) -> None:
        path = static_file(self.server.root, raw)
        if isinstance(path, int):
            self._error(path, "not found" if path == 404 else "forbidden: not a file of the study's page")
            return
        kind = TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        self._send(200, path.read_bytes(), kind, head_only)

    def _get_session(self, query: str) -> None:
        params = parse_qs(query, keep_blank_values=True)
        ids = [params.get(k, []) for k in ("participant", "session")]
        if any(len(v) != 1 for v in ids):
            self._error(400, "give ?participant=ID&session=ID, each once")
            return
        if not authorised(self.server.study, ids[0][0], ids[1][0], self._token()):
            self._error(403, FORBIDDEN)
            return
        path = self.server.study.session_path(ids[0][0], ids[1][0])
        self._send(200, path.read_bytes() if path.is_file() else b"null", "application/json")


def static_file(root: Path, raw: str) -> Path | int:
    """The file a URL path names under `root` (resolved), or 403 (not one of the page's files, package.is_public:
    data/, hidden, outside, anything else the folder holds) / 404 (a page file that is missing, a folder)."""
    text = unquote(raw)
    if text in ("", "/"):
        text = "/index.html"
    parts = PurePosixPath(text).parts[1:]
    if not parts or any(p.startswith(".") or "\\" in p or "\x00" in p for p in parts) or parts[0].lower() == DATA_DIR:
        return 403
    target = root.joinpath(*parts)
    try:
        resolved = target.resolve()
        inner = resolved.relative_to(root)
    except (ValueError, OSError):
        return 403
    if inner.parts and (inner.parts[0].lower() == DATA_DIR or any(p.startswith(".") for p in inner.parts)):
        return 403
    if not is_public(PurePosixPath(*parts)) or not is_public(PurePosixPath(inner.as_posix())):
        return 403
    return resolved if resolved.is_file() else 404


class SessionStart(BaseModel):
    """The body of `POST /api/session`: the ids the page chose (checked as a session's ids are)."""

    model_config = ConfigDict(extra="forbid")
    participant: ParticipantId
    session: SessionId


class SessionConflict(StudyError):
    """The participant already started a session (in another browser, or a page that lost its token)."""


class NotYours(StudyError):
    """A read or write of a session without its token (or with another one)."""


def token_path(study: StudyFolder, participant: str, session: str) -> Path:
    """data/<participant>/<session>.token, beside the session it guards."""
    return study.session_path(participant, session).with_suffix(TOKEN_SUFFIX)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def write_private(path: Path, data: bytes) -> None:
    """Write `path` atomically, readable and writable by its owner only (0600 whatever the umask): sessions and
    token digests are the participants' data, not the machine's other users'."""
    with atomic_path(path) as tmp:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o600)


def _private_folder(path: Path) -> None:
    """Create `path` (and its parent up to data/) owner-only, 0700."""
    for folder in (path.parent, path):
        folder.mkdir(mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)


def start_session(study: StudyFolder, participant: str, session: str, lock: threading.Lock) -> str:
    """Start `session` of `participant` and return its token (the server keeps only its digest).

    One session per participant: SessionConflict when the participant's folder already holds a session or a
    token, whichever browser started it (docs/study_collect.md: a participant who returns in another browser is
    refused, and told to go on where they started)."""
    path = token_path(study, participant, session)
    with lock:
        folder = path.parent
        if folder.is_dir() and any(not p.name.startswith(".") for p in folder.iterdir()):
            raise SessionConflict(f"participant {participant!r} has already started this study (one session per "
                                  "participant: go on in the browser it started in)")
        _private_folder(folder)
        token = secrets.token_urlsafe(TOKEN_BYTES)
        write_private(path, (_digest(token) + "\n").encode("ascii"))
    return token


def authorised(study: StudyFolder, participant: str, session: str, token: str | None) -> bool:
    """Whether `token` is the one `session` of `participant` was started with (False for any id that is not a
    started session: a client learns nothing about which sessions exist)."""
    if not token:
        return False
    try:
        stored = token_path(study, participant, session).read_text(encoding="ascii").strip()
    except (StudyError, OSError, UnicodeDecodeError):
        return False
    return hmac.compare_digest(stored, _digest(token))


def store_session(study: StudyFolder, data: Any, token: str | None, lock: threading.Lock,
                  log: LogFn = _quiet, quotas: Quotas | None = None) -> tuple[int, bool]:
    """Check `data` as a session of `study` sent with its `token` (NotYours otherwise), merge it with the stored
    copy, write it; (trials stored, complete). With `quotas`, OverQuota past the session's saves or bytes."""
    try:
        ids = Session.model_validate(data)
    except ValidationError as exc:
        raise StudyError(f"not a session: {first_line(exc)}") from None
    if not authorised(study, ids.participant, ids.session, token):
        raise NotYours(FORBIDDEN)
    session = study.parse_session(data)
    if quotas is not None:
        steps = study.manifest.staircase["spec"]["trials"] if study.manifest.staircase else 0
        quotas.save(session.participant, session.session, len(session.plan) + steps)
    with lock:
        path = study.session_path(session.participant, session.session)
        stored = None
        if path.is_file():
            try:
                stored = Session.model_validate_json(path.read_bytes())
            except ValueError as exc:
                raise OSError(f"{path}: the stored session is unreadable ({first_line(exc)}); move it aside") from None
        merged = merge_sessions(stored, session)
        if study.manifest.staircase is not None:
            study.check_session(merged)  # a step sent after a different stored answer would break the chain
        text = (merged.model_dump_json(indent=2) + "\n").encode("utf-8")
        if quotas is not None:
            quotas.check_bytes(session.session, len(text))
        write_private(path, text)
    log(f"stored {session.participant}/{session.session}: {len(merged.trials)} of {len(merged.plan)} trials"
        + (", complete" if merged.complete else ""))
    return len(merged.trials), merged.complete


def make_server(study: str | Path | StudyFolder, host: str = "127.0.0.1", port: int = 0,
                log: LogFn = _quiet, exposure: Exposure = Exposure(), limits: Limits = Limits()) -> StudyServer:
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
    (stim3d/cli/study.py) is seen within `poll_s` however busy the server is; an exception raised from a handler
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
