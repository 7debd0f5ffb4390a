"""Asking: each planned question sent through a bounded pool of threads, retried, stored as its answer arrives.

Each request is retried on transient failures (client.py) with exponential backoff
and full jitter, waiting at least what a 408, 429 or 503's Retry-After asks (capped
at `MAX_WAIT`). A question that still fails is that question's failure: reported,
scored as missing, asked again by a rerun. So is an answer that cannot be used (JSON
nested too deeply, a content that is not text, anything that cannot be read or
stored): one bad answer costs one question, never the run.

The run stops early, with one line, when going on could only fail the same way:
at once on 401, 403 or 404 (a bad key or a model the server does not have), and
after `SAME_ERRORS` identical client errors (the same 4xx other than 408 and 429,
with the same server message), e.g. a 400 for an unknown model. A 400 that differs
per question (a prompt too long) fails only that question. So does a server that
cannot be reached, until `SAME_ERRORS` questions in a row (each after its retries)
found no one listening: a server that is not running, or a wrong `base_url`.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stim3d.eval.client import (
    AnswerError,
    ClientError,
    Endpoint,
    PermanentError,
    TransientError,
    UnreachableError,
    message_content,
    post_json,
)
from stim3d.eval.errors import EvalError
from stim3d.eval.options import EvalOptions
from stim3d.eval.request import RequestOptions, image_data_url, request_body
from stim3d.eval.store import ResponseStore
from stim3d.scoring.records import Record

MAX_WAIT = 120.0  # longest single wait between attempts, whatever Retry-After says
FATAL_STATUS = (401, 403, 404)  # a bad key or a model the server does not have: stop at the first
SAME_ERRORS = 3  # identical client errors (same status and message) that stop the run
ProgressFn = Callable[[int, int, str], None]  # (done, total, message)


@dataclass(frozen=True)
class RetryPolicy:
    """How hard one question is tried: `EvalOptions`' settings (their defaults and bounds are there)."""

    retries: int  # attempts after the first
    backoff: float  # seconds before the first retry; doubles each time (full jitter)
    timeout: float  # hard limit on one attempt, seconds

    @classmethod
    def of(cls, options: EvalOptions) -> RetryPolicy:
        return cls(options.retries, options.backoff, options.timeout)


@dataclass
class Tally:
    """What the asking did, filled from the worker threads under `lock`."""

    asked: int = 0
    attempts: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    answered_as: Counter = field(default_factory=Counter)  # the `model` each answer named, when the server says
    lock: threading.Lock = field(default_factory=threading.Lock)


def ask_with_retries(endpoint: Endpoint, body: dict[str, Any], headers: dict[str, str], policy: RetryPolicy,
                     stop: threading.Event, rng: random.Random) -> tuple[dict[str, Any], str, int]:
    """(answer JSON, content, attempts) after retries; the last TransientError, or another ClientError, otherwise."""
    for attempt in range(policy.retries + 1):
        try:
            answer = post_json(endpoint, body, headers, policy.timeout)
            return answer, message_content(answer), attempt + 1
        except TransientError as exc:
            if attempt == policy.retries or stop.is_set():
                raise
            wait_s = rng.uniform(0, policy.backoff * 2 ** attempt)
            if exc.retry_after is not None:
                wait_s = max(wait_s, exc.retry_after)
            if stop.wait(min(wait_s, MAX_WAIT)):
                raise
    raise AssertionError("unreachable")  # the loop returns or raises


@dataclass
class Asker:
    """Turns one record into one stored response line: from a baseline, or from the server."""

    folder: Path  # the batch folder (images are read from it)
    options: RequestOptions
    store: ResponseStore
    tally: Tally
    endpoint: Endpoint | None  # None for a baseline
    headers: dict[str, str]
    policy: RetryPolicy
    answer_of: Callable[[Record], str] | None  # a baseline
    stop: threading.Event = field(default_factory=threading.Event)

    def __call__(self, record: Record, digest: str) -> None:
        began = time.monotonic()
        row: dict[str, Any] = {"question_id": record.question_id, "model": self.options.model, "request_hash": digest,
                               "image_scale": self.options.image_scale}
        if self.answer_of is not None:
            row.update(response=self.answer_of(record), usage=None, latency_s=0.0, attempts=0, raw=None)
        else:
            assert self.endpoint is not None
            url = image_data_url(self.folder / record.image.path, self.options.image_scale)
            answer, content, attempts = ask_with_retries(self.endpoint, request_body(record, self.options, url),
                                                         self.headers, self.policy, self.stop, random.Random())
            row.update(response=content, usage=answer.get("usage"), latency_s=round(time.monotonic() - began, 4),
                       attempts=attempts, raw=answer)
        try:
            self.store.add(row)
        except (RecursionError, ValueError, TypeError) as exc:  # an answer json cannot write back: this question only
            raise AnswerError(f"the answer could not be stored ({type(exc).__name__})") from None
        named = row["raw"].get("model") if isinstance(row["raw"], dict) else None
        with self.tally.lock:
            self.tally.asked += 1
            self.tally.attempts += int(row["attempts"])
            if isinstance(named, str):
                self.tally.answered_as[named] += 1


class EarlyStop:
    """Decides, from each failure, whether the run should stop: `check` returns the one line to stop with."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.seen: Counter = Counter()
        self.unreachable = 0  # questions in a row whose every attempt found no server

    def answered(self) -> None:
        """A question got an answer: the server is there, whatever failed before."""
        self.unreachable = 0

    def check(self, error: BaseException) -> str | None:
        if isinstance(error, UnreachableError):
            self.unreachable += 1
            if self.unreachable < SAME_ERRORS:
                return None
            return (f"{self.where}: {error} on {self.unreachable} questions in a row, each after its retries; "
                    "stopped: is the server running there (check `base_url`)?")
        if not isinstance(error, PermanentError) or error.status is None or not 400 <= error.status < 500:
            return None
        self.seen[(error.status, error.server_message)] += 1
        count = self.seen[(error.status, error.server_message)]
        if error.status not in FATAL_STATUS and count < SAME_ERRORS:
            return None
        times = "" if count == 1 else f" {count} times"
        return (f"{self.where}: HTTP {error.status}{times}: {error.server_message or '(no message)'}; stopped: every "
                "request would fail (check `model`, `base_url` and `api_key_env`)")


def ask_all(todo: Sequence[tuple[Record, str]], asker: Asker, concurrency: int, tally: Tally, where: str,
            progress: ProgressFn | None = None) -> None:
    """Ask every (record, request hash) of `todo`, at most `concurrency` at a time; EvalError when stopped early.

    On any exception (Ctrl-C, an early stop, a bug) nothing more starts and no retry waits; answers already
    stored stay, so a rerun asks only the rest.
    """
    done = 0
    stopper = EarlyStop(where)
    pool = ThreadPoolExecutor(max_workers=1 if asker.answer_of else concurrency)
    pending: dict[Future, Record] = {}
    queue = list(reversed(todo))
    try:
        while queue or pending:
            while queue and len(pending) < concurrency:
                record, digest = queue.pop()
                pending[pool.submit(asker, record, digest)] = record
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                record = pending.pop(future)
                done += 1
                error = future.exception()
                if error is not None:
                    _failed(record, error, stopper, tally)
                else:
                    stopper.answered()
                if progress:
                    progress(done, len(todo), record.question_id if error is None else
                             f"{record.question_id} failed: {tally.failed[record.question_id]}")
    except BaseException:
        asker.stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _failed(record: Record, error: BaseException, stopper: EarlyStop, tally: Tally) -> None:
    """Record one question's failure, or raise: the early stop's EvalError, or the error itself if it is a bug."""
    stop = stopper.check(error)
    if stop is not None:
        raise EvalError(stop)
    if isinstance(error, RecursionError):  # reading the answer went too deep: that answer only
        error = AnswerError("the answer is nested too deeply to read")
    if not isinstance(error, (ClientError, OSError)):
        raise error
    tally.failed[record.question_id] = (str(error).splitlines() or [type(error).__name__])[0]
