"""`stim3d study serve`: the study's page over HTTP, and each session stored under STUDY/data/.

The only server in stim3d (stdlib `http.server`, loopback by default). It serves the
study folder's files read-only and takes one kind of write: `PUT /api/session`, the
whole session so far, which it checks against the study (folder.py: study id, the
participant's plan, every trial in its place with its role; a staircase study's steps after
the plan replayed by staircase.py `session_steps`), merges with the stored
copy (stored trials win, `complete` is sticky) and writes atomically to
`data/<participant>/<session>.json`. Nothing else is ever written, and never outside
data/: both ids are single safe path components, the target must resolve inside
data/, and a data/ that is a symbolic link is refused.

The API (docs/study_collect.md):
- `GET /api/ping` -> `{"study": "<study_id>"}`
- `GET /api/session?participant=P&session=S` -> the stored session, or 404 `{"error": ...}`
- `PUT /api/session` -> `{"stored": <trials>, "complete": <bool>}`; 400 `{"error": "<one line>"}` for a body
  that is not a session of this study, 411 without Content-Length, 413 over MAX_BODY_BYTES (the body is not read)
- any other `GET` or `HEAD`: a file of the study folder; never data/, a hidden file, a path leading outside
  (`..`, a symbolic link out) or a folder listing (403 or 404).
"""

from __future__ import annotations

import json
import mimetypes
import signal
import socket
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath
from types import FrameType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from stim3d.render.files import atomic_path
from stim3d.study.contract import DATA_DIR, MAX_BODY_BYTES, Session
from stim3d.study.errors import StudyError
from stim3d.study.folder import StudyFolder, first_line, merge_sessions

REQUEST_TIMEOUT = 30.0  # seconds a client may take to send its request; a stalled one cannot hold a thread longer
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".json": "application/json", ".png": "image/png", ".txt": "text/plain; charset=utf-8"}
LogFn = Callable[[str], None]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class StudyServer(ThreadingHTTPServer):
    """A threading HTTP server bound to one study folder; `lock` serialises the read-merge-write of sessions."""

    daemon_threads = True

    def __init__(self, study: StudyFolder, host: str, port: int, log: LogFn = _stderr) -> None:
        self.study = study
        self.root = study.root.resolve()
        self.lock = threading.Lock()
        self.log = log
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, port), StudyHandler)

    @property
    def url(self) -> str:
        """The page's address as a browser on this machine reaches it (the real port when 0 was asked)."""
        host, port = str(self.server_address[0]), int(self.server_address[1])
        if host in ("0.0.0.0", ""):
            host = "127.0.0.1"
        elif host == "::":
            host = "::1"
        return f"http://{f'[{host}]' if ':' in host else host}:{port}/index.html"


class StudyHandler(BaseHTTPRequestHandler):
    """One request: the API under /api/, else a file of the study folder."""

    server: StudyServer
    timeout = REQUEST_TIMEOUT
    server_version = "stim3d-study"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        """Quiet: stored sessions and refusals are logged by the handlers themselves."""

    def _send(self, status: int, body: bytes, content_type: str, head_only: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if not head_only:
            self.wfile.write(body)

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message.splitlines()[0] if message else "error"})

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self._get(head_only=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._get(head_only=True)

    def do_POST(self) -> None:  # noqa: N802
        self._error(405, "method not allowed: the study takes PUT /api/session only")

    do_DELETE = do_PATCH = do_POST  # noqa: N815

    def do_PUT(self) -> None:  # noqa: N802
        if urlsplit(self.path).path != "/api/session":
            self._error(405, "method not allowed: the study takes PUT /api/session only")
            return
        self._put_session()

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
        try:
            path = self.server.study.session_path(ids[0][0], ids[1][0])
        except StudyError as exc:
            self._error(400, str(exc))
            return
        if not path.is_file():
            self._error(404, f"no session {ids[1][0]!r} stored for participant {ids[0][0]!r}")
            return
        self._send(200, path.read_bytes(), "application/json")

    def _put_session(self) -> None:
        if self.headers.get("Transfer-Encoding") or self.headers.get("Content-Length") is None:
            self.close_connection = True
            self._error(411, "send the session with a Content-Length (no chunked bodies)")
            return
        try:
            length = int(self.headers["Content-Length"])
            if length < 0:
                raise ValueError
        except ValueError:
            self.close_connection = True
            self._error(400, f"Content-Length {self.headers['Content-Length']!r} is not a length")
            return
        if length > MAX_BODY_BYTES:
            self.close_connection = True  # the body stays unread: the connection ends with this answer
            self._error(413, f"session of {length} bytes is over the limit of {MAX_BODY_BYTES}")
            self.server.log(f"refused a session of {length} bytes (over {MAX_BODY_BYTES})")
            return
        body = self.rfile.read(length)
        try:
            data = json.loads(body.decode("utf-8"))
            stored, complete = store_session(self.server.study, data, self.server.lock, self.server.log)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._error(400, f"the body is not JSON ({first_line(exc)})")
        except StudyError as exc:
            self.server.log(f"refused a session: {exc}")
            self._error(400, str(exc))
        except OSError as exc:
            self.server.log(f"could not store a session: {exc}")
            self._error(500, f"the server could not store the session ({first_line(exc)})")
        else:
            self._json(200, {"stored": stored, "complete": complete})


def static_file(root: Path, raw: str) -> Path | int:
    """The file a URL path names under `root` (resolved), or 403 (data/, hidden, outside) / 404 (missing, a folder)."""
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
    return resolved if resolved.is_file() else 404


def store_session(study: StudyFolder, data: Any, lock: threading.Lock, log: LogFn = _stderr) -> tuple[int, bool]:
    """Check `data` as a session of `study`, merge it with the stored copy, write it; (trials stored, complete)."""
    session = study.parse_session(data)
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
        path.parent.mkdir(parents=True, exist_ok=True)
        path = study.session_path(session.participant, session.session)  # again, now that the folder exists
        with atomic_path(path) as tmp:
            tmp.write_text(merged.model_dump_json(indent=2) + "\n", encoding="utf-8")
    log(f"stored {session.participant}/{session.session}: {len(merged.trials)} of {len(merged.plan)} trials"
        + (", complete" if merged.complete else ""))
    return len(merged.trials), merged.complete


def make_server(study: str | Path | StudyFolder, host: str = "127.0.0.1", port: int = 0,
                log: LogFn = _stderr) -> StudyServer:
    """A bound server for `study` (not yet serving): call `serve_forever()` in a thread, `shutdown()` to stop."""
    folder = study if isinstance(study, StudyFolder) else StudyFolder.open(study)
    if not 0 <= port <= 65535:
        raise StudyError(f"--port {port}: must be 0-65535 (0 picks a free port)")
    try:
        return StudyServer(folder, host, port, log)
    except OSError as exc:
        raise StudyError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


class _Terminated(Exception):
    """SIGTERM arrived: stop serving and exit 0."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


def serve_study(study: str | Path, host: str = "127.0.0.1", port: int = 8000) -> int:
    """Serve `study` until Ctrl-C (exit 130, as every stim3d command) or SIGTERM (exit 0).

    The first line on stdout is the page's URL (with the real port when `port` is 0),
    flushed at once so a script can read it; each stored session is one line on stderr.
    """
    server = make_server(study, host, port)
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if main else None  # before the URL: a script may stop us then
    print(server.url, flush=True)
    where = "this machine only" if host in ("127.0.0.1", "localhost", "::1") else f"every address of {host}"
    _stderr(f"serving {server.study.root} to {where}; sessions go to {server.study.root / DATA_DIR}; Ctrl-C stops")
    try:
        server.serve_forever(poll_interval=0.25)
    except KeyboardInterrupt:
        _stderr("stopped")
        return 130
    except _Terminated:
        _stderr("stopped")
        return 0
    finally:
        server.server_close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0
