"""The HTTP client of `stim3d eval`: the only code in stim3d that talks to a network.

One POST of a JSON body to an OpenAI-compatible endpoint, with the standard library
only (`http.client`), so evaluation needs no extra dependency. The per-request
timeout is hard: it bounds the whole exchange, not each socket read. A socket timeout
alone bounds one read, and `http.client` reads the status line and headers in many
reads, so a server that drips them a byte at a time would hold a worker for as long as
it likes. A watchdog (`Deadline`) therefore shuts the socket down when the time is up,
whatever read is waiting on it, and the exchange then fails as timed out; before every
step the socket is also given only what is left, so an idle server times out at once
without the watchdog. Failures are typed so the caller can decide what to retry
(`TransientError`: 408, 429, 5xx, timeouts, dropped connections, a body that is not
the expected JSON), what not (`PermanentError`: any other 4xx) and what costs only
its own question (`AnswerError`: a 2xx answer that cannot be used, such as JSON
nested too deeply to read or a content that is not text).

Whatever the server sends back passes through a `Redactor` made from the request's
own Authorization header (redact.py) before it leaves this module, in an error's
message or in the decoded answer: a server that echoes the key cannot make stim3d
store or print it.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from stim3d.eval.errors import EvalError
from stim3d.eval.redact import MAX_DEPTH, Redactor

CHUNK = 65536
MAX_BODY = 64 * 1024 * 1024  # a chat response is kilobytes; refuse to buffer a runaway one
SHOWN = 200  # characters of a server's error message kept in a failure's line
RETRIED_STATUS = (408, 429)  # the 4xx worth another attempt: the server timed out, or asks to slow down


class ClientError(Exception):
    """A request that did not produce a usable response; `status` is the HTTP status when there was one."""

    def __init__(self, message: str, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class TransientError(ClientError):
    """Worth retrying: 429, 5xx, a timeout, a dropped connection or a malformed body."""


class UnreachableError(TransientError):
    """The connection itself could not be made (refused, no such host): nothing answered at all."""


class PermanentError(ClientError):
    """Not worth retrying: a 4xx other than 408 and 429 (bad model name, bad key, request too large).

    `server_message` is the server's own explanation (its JSON `error.message`, or the body), redacted and clipped.
    """

    def __init__(self, message: str, status: int | None = None, server_message: str = "") -> None:
        super().__init__(message, status)
        self.server_message = server_message


class AnswerError(ClientError):
    """A 2xx answer that cannot be used (nested too deeply, content not text): that question fails, nothing retries."""


@dataclass(frozen=True)
class Endpoint:
    """A parsed base URL: where `/chat/completions` is posted."""

    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def parse(cls, base_url: str) -> Endpoint:
        """`http(s)://host[:port]/prefix`; EvalError on `base_url` naming what is wrong otherwise, without repeating
        the URL: a refused URL may hold a key (`https://user:KEY@host`, `?key=KEY`), and a refusal is printed and
        logged."""
        try:
            parts = urlsplit(base_url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise EvalError("the port is not a number from 1 to 65535 (the URL is not repeated here: it may hold a "
                            "key)", field="base_url") from None
        if parts.username is not None or parts.password is not None:
            raise EvalError("a user name or password in the URL is not sent (not repeated here: it may be a key); "
                            "name the variable holding the key with `api_key_env`", field="base_url")
        if parts.query or parts.fragment:
            raise EvalError("no query or fragment (not repeated here: it may hold a key); name the variable holding "
                            "the key with `api_key_env`", field="base_url")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EvalError("expected http://HOST[:PORT]/PATH, e.g. http://127.0.0.1:8000/v1 (what was given is not "
                            "repeated here: it may hold a key)", field="base_url")
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/") + "/chat/completions")


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds (the delta form; an HTTP date is ignored: servers in this field send seconds)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def post_json(endpoint: Endpoint, body: dict[str, Any], headers: dict[str, str], timeout: float) -> dict[str, Any]:
    """POST `body` as JSON and return the decoded JSON answer (redacted), within `timeout` seconds overall.

    Raises TransientError, PermanentError or AnswerError (never returns a non-2xx answer).
    """
    redactor = Redactor.of_headers(headers)
    status, data, retry_after = _exchange(endpoint, json.dumps(body).encode(), headers, timeout)
    if status in RETRIED_STATUS or status >= 500:
        raise TransientError(f"HTTP {status}", status, retry_after)
    if status >= 400 or status < 200:
        message = server_message(data, redactor)
        raise PermanentError(f"HTTP {status}: {message}", status, message)
    return decode_answer(data, status, redactor)


class Deadline:
    """Ends one connection's exchange at `seconds` after it starts, whatever it is waiting for.

    At the deadline it shuts the connection's socket down (both ways), which wakes a blocked read with end of file
    or an error; `expired` then tells the exchange that this was the deadline, not the server. `stop` (before the
    connection is closed) takes the lock the shutdown holds, so a late watchdog never touches a closed socket."""

    def __init__(self, conn: http.client.HTTPConnection, seconds: float) -> None:
        self.expired = False
        self._conn = conn
        self._stopped = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True  # a stuck exchange never keeps the process alive
        self._timer.start()

    def _expire(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self.expired = True
            sock = self._conn.sock
            if sock is not None:
                try:  # the plain socket's shutdown: an SSL socket's own would drop its SSL object under the reader
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)
                except OSError:  # already shut or closed by the peer: nothing is waiting on it
                    pass

    def stop(self) -> None:
        """No shutdown from now on (the exchange is over, its connection about to close)."""
        with self._lock:
            self._stopped = True
        self._timer.cancel()


def _exchange(endpoint: Endpoint, payload: bytes, headers: dict[str, str],
              timeout: float) -> tuple[int, bytes, float | None]:
    """(status, body, Retry-After seconds) of one POST, the whole of it within `timeout` (Deadline)."""
    deadline = time.monotonic() + timeout
    factory = http.client.HTTPSConnection if endpoint.scheme == "https" else http.client.HTTPConnection
    conn = factory(endpoint.host, endpoint.port, timeout=timeout)
    watchdog = Deadline(conn, timeout)
    late = TransientError(f"no complete response within {timeout:g} s")
    try:
        try:
            conn.connect()
        except TimeoutError:
            raise
        except OSError as exc:
            raise UnreachableError(f"cannot connect: {type(exc).__name__}: {exc}") from None
        _remaining(conn, deadline)
        conn.request("POST", endpoint.path, body=payload,
                     headers={"Content-Type": "application/json", "Accept": "application/json", **headers})
        _remaining(conn, deadline)
        response = conn.getresponse()
        data = bytearray()
        while True:
            _remaining(conn, deadline)
            chunk = response.read1(CHUNK)  # one socket read: read() would loop until CHUNK bytes or EOF
            if not chunk:
                break
            data += chunk
            if len(data) > MAX_BODY:
                raise TransientError(f"response body over {MAX_BODY} bytes", response.status)
    except TimeoutError:
        raise late from None
    except (ConnectionError, http.client.HTTPException, OSError) as exc:
        if watchdog.expired:  # the watchdog's shutdown, seen by the reader as a dropped connection
            raise late from None
        raise TransientError(f"connection failed: {type(exc).__name__}: {exc}") from None
    finally:
        watchdog.stop()
        conn.close()
    if watchdog.expired:  # a body cut short by the shutdown reads as one that ended
        raise late
    return response.status, bytes(data), retry_after_seconds(response.getheader("Retry-After"))


def server_message(data: bytes, redactor: Redactor) -> str:
    """The server's explanation of a refusal: its JSON `error.message` (or `error`, `message`, `detail`), else the
    body; redacted first, then clipped to SHOWN characters on one line."""
    text = data[:MAX_BODY].decode(errors="replace")
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):
        decoded = None
    if isinstance(decoded, dict):
        error = decoded.get("error")
        found = error.get("message") if isinstance(error, dict) else error
        found = found or decoded.get("message") or decoded.get("detail")
        if isinstance(found, str) and found.strip():
            text = found
    text = " ".join(redactor.text(text).split())
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def decode_answer(data: bytes, status: int, redactor: Redactor) -> dict[str, Any]:
    """A 2xx body as a redacted JSON object. Not JSON, or not an object: TransientError (a cut-off body is worth
    another try); nested deeper than MAX_DEPTH: AnswerError (asking again would get the same)."""
    try:
        decoded = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise TransientError(f"HTTP {status} with a body that is not JSON", status) from None
    except RecursionError:
        raise AnswerError(f"HTTP {status} with a JSON body nested too deeply to read", status) from None
    if not isinstance(decoded, dict):
        raise TransientError(f"HTTP {status} with a JSON body that is not an object", status)
    if nesting(decoded) > MAX_DEPTH:
        raise AnswerError(f"HTTP {status} with a JSON body nested deeper than {MAX_DEPTH} levels", status)
    return redactor.json(decoded)


def nesting(value: Any) -> int:
    """How deeply lists and objects nest in decoded JSON, counted without recursion (a hostile answer may be deep)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if depth <= MAX_DEPTH:  # past the limit the answer is refused anyway: stop walking
                stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _remaining(conn: http.client.HTTPConnection, deadline: float) -> None:
    """Shrink the socket timeout to what is left of the request's deadline (TimeoutError when none is)."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    if conn.sock is not None:
        conn.sock.settimeout(left)


def message_content(answer: dict[str, Any]) -> str:
    """`choices[0].message.content` of a chat-completions answer; TransientError when it is not there.

    Content given as a list of text parts (some servers do) is joined.
    """
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise TransientError("the answer has no choices[0].message.content") from None
    if isinstance(content, list):
        content = "".join(part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str))
    if content is None:
        return ""
    if not isinstance(content, str):
        raise AnswerError(f"choices[0].message.content is a {type(content).__name__}, not text")
    return content
