"""A small OpenAI-compatible chat-completions server for the `stim3d eval` tests, on 127.0.0.1 only.

It finds the record a request is about by the image's sha256 and the prompt text,
answers with the record's gold written as the protocol asks (or a wrong or
unparseable answer when told), and misbehaves on a script: per question id, a list
of actions for its successive requests (`"429:SECONDS"` with Retry-After,
`"500"`, `"malformed"` (200 with a body that is not JSON), `"noschema"` (JSON
without choices), `"delay:SECONDS"` then answer, `"hang"` (never answers within
the test), `"drip"` (the body one byte at a time), `"driphead"` (the status line and headers one byte at a
time, never finishing within a test), `"ok"`; and for the hardening tests `"400:MESSAGE"` (a
client error with that JSON error message), `"echo400"` (a 400 whose message repeats the Authorization header),
`"echo"` (the right answer with the Authorization header and its token repeated in the content and in other
fields), `"deep:N"` (a 200 body nested N levels deep), `"objectcontent"` (a content that is an object, not
text), `"as:NAME"` (the right answer, naming model NAME)). With `echo_header` set, every response carries the
Authorization header back in `X-Echo-Authorization`. It counts requests per question and keeps every
Authorization header and body it was sent.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from stim3d.scoring.records import Record, answer_text


class FakeModel:
    def __init__(self, records: Iterable[Record]) -> None:
        self.by_request = {(r.image.sha256, r.prompt): r for r in records}
        self.script: dict[str, list[str]] = {}
        self.wrong: set[str] = set()
        self.unparseable: set[str] = set()
        self.counts: Counter = Counter()
        self.received = 0  # every POST, answered or refused
        self.authorization: list[str | None] = []
        self.lock = threading.Lock()
        self.release = threading.Event()  # set at teardown so "hang" handlers end
        self.url = ""  # the base URL, once started
        self.echo_header = False  # every response repeats the Authorization header in a header of its own

    def answer(self, record: Record) -> str:
        if record.question_id in self.unparseable:
            return "I cannot tell from this picture."
        if record.question_id in self.wrong:
            return "99"  # no batch here holds 99 of anything
        return answer_text(record.answer.type, record.answer.model_dump(mode="json")["gold"])

    def start(self) -> tuple[ThreadingHTTPServer, str]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                with model.lock:
                    model.received += 1
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                content = body["messages"][-1]["content"]
                url = next(p["image_url"]["url"] for p in content if p["type"] == "image_url")
                prompt = next(p["text"] for p in content if p["type"] == "text")
                digest = hashlib.sha256(base64.b64decode(url.split(",", 1)[1])).hexdigest()
                record = model.by_request.get((digest, prompt))
                auth = self.headers.get("Authorization") or ""
                if self.path != "/v1/chat/completions" or record is None or body["model"] == "no-such-model":
                    self._send(404, b'{"error": "unknown"}')
                    return
                if body["model"] == "bad-request-model":  # what some servers say for an unknown model: 400
                    self._send(400, json.dumps({"error": {"message": f"model {body['model']} not found"}}).encode())
                    return
                with model.lock:
                    model.authorization.append(self.headers.get("Authorization"))
                    n = model.counts[record.question_id]
                    model.counts[record.question_id] += 1
                    steps = model.script.get(record.question_id, [])
                    action = steps[n] if n < len(steps) else "ok"
                kind, _, arg = action.partition(":")
                if kind == "429":
                    self._send(429, b'{"error": "slow down"}', {"Retry-After": arg or "0"})
                elif kind == "500":
                    self._send(500, b'{"error": "boom"}')
                elif kind == "malformed":
                    self._send(200, b'{"choices": [')
                elif kind == "noschema":
                    self._send(200, b'{"id": "x"}')
                elif kind == "400":
                    self._send(400, json.dumps({"error": {"message": arg}}).encode())
                elif kind == "echo400":
                    self._send(400, json.dumps({"error": {"message": f"invalid key {auth} ({auth.split()[-1]})"}}).encode())
                elif kind == "deep":
                    self._send(200, b'{"a": ' * int(arg) + b"1" + b"}" * int(arg))
                elif kind == "objectcontent":
                    self._send(200, json.dumps({"choices": [{"message": {"content": {"text": "3"}}}]}).encode())
                elif kind == "hang":
                    model.release.wait(30)
                elif kind == "drip":  # headers at once, then one byte of the body every 0.2 s (bounded: 50 bytes)
                    self.send_response(200)
                    self.send_header("Content-Length", "50")
                    self.end_headers()
                    for _ in range(50):
                        if model.release.wait(0.2):
                            break
                        try:
                            self.wfile.write(b" ")
                            self.wfile.flush()
                        except OSError:
                            break
                elif kind == "driphead":  # one byte of the head every 0.05 s (bounded: 600 bytes, 30 s)
                    head = b"HTTP/1.1 200 OK\r\nX-Padding: " + b"x" * 600
                    for byte in head[:600]:
                        if model.release.wait(0.05):
                            break
                        try:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                        except OSError:  # the client gave up and closed: stop
                            break
                    self.close_connection = True
                else:
                    if kind == "delay":
                        time.sleep(float(arg))
                    content = model.answer(record)
                    answer = {"id": f"cmpl-{record.question_id}", "object": "chat.completion",
                              "model": arg if kind == "as" else body["model"],
                              "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                           "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": 100, "completion_tokens": 3, "total_tokens": 103}}
                    if kind == "echo":
                        answer["choices"][0]["message"]["content"] = f"{content} (you sent {auth})"
                        answer["system_fingerprint"] = auth.split()[-1]
                        answer[auth] = [{"token": auth.split()[-1]}]
                    self._send(200, json.dumps(answer).encode())

            def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                if model.echo_header:
                    self.send_header("X-Echo-Authorization", self.headers.get("Authorization") or "")
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        return server, self.url


TINY_EVAL_CONFIG = """\
seed: 3
render: {engine: workbench, width: 64, height: 48}
tasks:
  - family: shape_count
    count: 6
    grid: {min_visibility: [0.6, 0.9]}
    params: {n_shape_types: 2, max_instances: 3}
  - family: shape_color_count
    count: 4
    params: {n_shape_types: 2, max_instances: 2}
"""


@contextmanager
def running(model: FakeModel) -> Iterator[FakeModel]:
    """Serve `model` on 127.0.0.1 for the block; afterwards release its hung handlers and close the server."""
    httpd, _ = model.start()
    try:
        yield model
    finally:
        model.release.set()
        httpd.shutdown()
        httpd.server_close()


def render_tiny_batch(folder: Any) -> Any:
    """A 10-item Workbench batch at 64x48 (two counting families): the session fixture `tiny_batch`."""
    from tests.batch_support import stim3d

    (folder / "batch.yaml").write_text(TINY_EVAL_CONFIG)
    result = stim3d("render", str(folder / "batch.yaml"), "--out", str(folder / "out"), "--quiet")
    assert result.returncode == 0, result.stderr
    return folder / "out"
