"""The study server's HTTP handler: one request, answered from the session API or the study's page files.

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
Every refusal is `{"error": "<one line>"}`; the token travels as `Authorization: Bearer <token>`. What is stored
and how is sessions.py's; what one client may ask is quotas.py's; the server it runs in is serve.py's.
"""

from __future__ import annotations

import json
import mimetypes
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path, PurePosixPath
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import ValidationError

from stim3d.study.contract import DATA_DIR, MAX_BODY_BYTES
from stim3d.study.errors import StudyError
from stim3d.study.folder import StudyFolder, first_line
from stim3d.study.package import is_public
from stim3d.study.quotas import OverQuota, Quotas, host_allowed, host_name
from stim3d.study.sessions import (
    FORBIDDEN,
    LogFn,
    NotYours,
    SessionConflict,
    SessionStart,
    authorised,
    start_session,
    store_session,
)


class Proxied(Protocol):
    """How the server faces the network, as far as a request needs it (serve.py Exposure)."""

    @property
    def behind_proxy(self) -> bool: ...


class Served(Protocol):
    """What a request needs of the server that runs it (serve.py StudyServer): the study, its lock and quotas, the
    host names it answers to, its log, and whether it is closing. A protocol, so this module never imports the
    server that imports it."""

    study: StudyFolder
    root: Path
    lock: threading.Lock
    log: LogFn
    quotas: Quotas
    hosts: frozenset[str]
    closing: bool

    @property
    def exposure(self) -> Proxied: ...

REQUEST_TIMEOUT = 30.0  # seconds a client may take to send its request; a stalled one cannot hold a thread longer
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".json": "application/json", ".png": "image/png", ".txt": "text/plain; charset=utf-8"}


class StudyHandler(BaseHTTPRequestHandler):
    """One request: the API under /api/, else a file of the study folder."""

    server: Served  # type: ignore[assignment]  # a BaseServer to socketserver; to a request, what Served names
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
