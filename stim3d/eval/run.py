"""`evaluate`: send a batch's records to a model (or a baseline), store every answer, score, report.

The loop: pick the records (`filters` as the gallery reads them, then `limit`),
skip those already answered under the same request hash (store.py), send the rest
through a bounded pool of threads, each request retried on transient failures with
exponential backoff and full jitter, waiting at least what a 429 or 503's Retry-After
asks (capped at `MAX_WAIT`). Every attempt has a hard timeout (client.py). A
question that still fails is reported and scored as missing; a rerun asks it again.
The API key is read from the environment variable the caller names and goes only
into the Authorization header: it is never stored or printed.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stim3d.errors import Stim3dError
from stim3d.eval.baselines import PREFIX, baseline_answers
from stim3d.eval.client import Endpoint, PermanentError, TransientError, message_content, post_json
from stim3d.eval.request import RequestOptions, image_data_url, request_body, request_hash, shown_request
from stim3d.eval.store import Key, ResponseStore, eval_folder
from stim3d.render.batch.reading import load_batch
from stim3d.scoring.records import Record

MAX_WAIT = 120.0  # longest single wait between attempts, whatever Retry-After says
FATAL_STATUS = (401, 403, 404)  # a bad key or a model the server does not have: stop instead of failing every question
ProgressFn = Callable[[int, int, str], None]  # (done, total, message)


class EvalError(Stim3dError, ValueError):
    """A caller's mistake (bad URL, unknown baseline, unset key variable, no records): one line naming it."""


@dataclass
class EvalResult:
    """What one `evaluate` call did: counts, failures, where the files are, and the score report."""

    folder: Path
    model: str
    selected: int = 0
    asked: int = 0
    reused: int = 0
    attempts: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0  # the whole call: reading the batch, asking, scoring, the report
    ask_seconds: float = 0.0  # asking only (what answers per second are measured over)
    report: Any = None  # scoring.report.ScoreReport
    files: list[Path] = field(default_factory=list)
    dry_run_request: dict[str, Any] | None = None

    def summary(self) -> str:
        rate = self.asked / self.ask_seconds if self.ask_seconds > 0 else 0.0
        return (f"eval {self.model}: {self.selected} questions; asked {self.asked} ({self.attempts} requests, "
                f"{rate:.1f} answers/s), reused {self.reused}, failed {len(self.failed)}")


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 5  # attempts after the first
    backoff: float = 0.5  # seconds before the first retry; doubles each time (full jitter)
    timeout: float = 120.0  # hard limit on one attempt, seconds


def select_records(batch: Any, filters: Mapping[str, str] | None, limit: int | None) -> list[Record]:
    """The batch's records whose item matches `filters` (the gallery's KEY=VALUE rule), the first `limit` of them."""
    from stim3d.render.views.gallery import GalleryError, select_items

    records = list(batch.records)
    if not records:
        raise EvalError(f"{batch.folder}: no records.jsonl records to evaluate (render the batch first)")
    if filters:
        try:
            chosen = {item.item_id for item in select_items(list(batch.items), None, dict(filters))}
        except GalleryError as exc:
            raise EvalError(str(exc)) from None
        records = [r for r in records if r.item_id in chosen]
    if limit is not None:
        if limit < 1:
            raise EvalError(f"--limit {limit}: must be at least 1")
        records = records[:limit]
    return records


def _api_key(name: str | None) -> str | None:
    if name is None:
        return None
    if not name.replace("_", "").isalnum():
        raise EvalError(f"--api-key-env {name!r}: give the NAME of an environment variable, not the key")
    value = os.environ.get(name)
    if not value:
        raise EvalError(f"--api-key-env {name}: that environment variable is not set")
    return value


def _ask(endpoint: Endpoint, body: dict[str, Any], headers: dict[str, str], policy: RetryPolicy,
         stop: threading.Event, rng: random.Random) -> tuple[dict[str, Any], str, int]:
    """(answer JSON, content, attempts) after retries; the last TransientError or a PermanentError otherwise."""
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


def evaluate(
    batch: str | Path,
    model: str,
    base_url: str | None = None,
    *,
    temperature: float | None = 0.0,
    max_tokens: int | None = 256,
    system: str | None = None,
    extra_body: Mapping[str, Any] | None = None,
    image_scale: float = 1.0,
    limit: int | None = None,
    filters: Mapping[str, str] | None = None,
    concurrency: int = 4,
    timeout: float = 120.0,
    retries: int = 5,
    backoff: float = 0.5,
    api_key_env: str | None = None,
    seed: int = 0,
    dry_run: bool = False,
    report: bool = True,
    progress: ProgressFn | None = None,
) -> EvalResult:
    """Ask `model` every (selected) question of the batch folder `batch`, then score and write the report.

    Parameters
    ----------
    batch : str or Path
        A rendered batch folder (read through `load_batch`, render/batch/reading.py).
    model : str
        The model name the server knows, or `baseline:constant`, `baseline:random`, `baseline:oracle`.
    base_url : str
        The server's OpenAI-compatible root, e.g. ``http://127.0.0.1:8000/v1`` (not needed for baselines).
    temperature, max_tokens, system, extra_body
        Request settings; `extra_body` fields are added to the JSON body as given.
    image_scale : float
        Downscale factor in (0, 1] applied to each image before sending (recorded with each answer).
    limit, filters
        Only the first `limit` records of the items matching `filters` (``{"min_visibility": "0.7"}``).
    concurrency, timeout, retries, backoff
        Requests in flight; hard seconds per attempt; retries after the first attempt; first backoff in seconds.
    api_key_env : str, optional
        The NAME of the environment variable holding the API key (sent as a Bearer token, never stored).
    seed : int
        Seed of `baseline:random`.
    dry_run : bool
        Build the first request and return it (`dry_run_request`, image shortened) without sending or writing.
    report : bool
        Write scores.json and report.html (with figures) into ``batch/eval/<model-slug>/``.

    Returns
    -------
    EvalResult

    Raises
    ------
    EvalError
        A bad argument, an unset key variable, or nothing to evaluate.
    """
    start = time.monotonic()
    folder = Path(batch)
    loaded = load_batch(folder)
    records = select_records(loaded, filters, limit)
    try:
        options = RequestOptions(model=model, temperature=temperature, max_tokens=max_tokens, system=system,
                                 extra_body=dict(extra_body or {}), image_scale=float(image_scale))
    except ValueError as exc:
        raise EvalError(str(exc)) from None
    is_baseline = model.startswith(PREFIX)
    if not is_baseline and not base_url:
        raise EvalError(f"--model {model}: give --base-url, e.g. http://127.0.0.1:8000/v1 (baselines need none)")
    try:
        answer_of = baseline_answers(model, records, seed) if is_baseline else None
        endpoint = None if is_baseline else Endpoint.parse(base_url or "")
    except ValueError as exc:
        raise EvalError(str(exc)) from None
    if concurrency < 1 or timeout <= 0 or retries < 0:
        raise EvalError("--concurrency must be at least 1, --timeout above 0 and --retries at least 0")
    out = eval_folder(folder, model)
    result = EvalResult(folder=out, model=model, selected=len(records))
    if dry_run:
        record = records[0]
        url = image_data_url(folder / record.image.path, options.image_scale)
        result.dry_run_request = shown_request(request_body(record, options, url))
        return result
    key = None if is_baseline else _api_key(api_key_env)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    store = ResponseStore(out)
    todo = []
    for record in records:
        digest = request_hash(record, options)
        if store.get(_key(record, model, digest)) is None:
            todo.append((record, digest))
    result.reused = len(records) - len(todo)
    lock = threading.Lock()
    stop = threading.Event()

    def one(record: Record, digest: str) -> None:
        began = time.monotonic()
        row: dict[str, Any] = {"question_id": record.question_id, "model": model, "request_hash": digest,
                               "image_scale": options.image_scale}
        if answer_of is not None:
            row.update(response=answer_of(record), usage=None, latency_s=0.0, attempts=0, raw=None)
        else:
            assert endpoint is not None
            body = request_body(record, options, image_data_url(folder / record.image.path, options.image_scale))
            answer, content, attempts = _ask(endpoint, body, headers, RetryPolicy(retries, backoff, timeout), stop,
                                             random.Random())
            row.update(response=content, usage=answer.get("usage"), latency_s=round(time.monotonic() - began, 4),
                       attempts=attempts, raw=answer)
        store.add(row)
        with lock:
            result.asked += 1
            result.attempts += int(row["attempts"])

    done = 0
    asking = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=1 if answer_of else concurrency)
    pending: dict[Future, Record] = {}
    queue = list(reversed(todo))
    try:
        while queue or pending:
            while queue and len(pending) < concurrency:
                record, digest = queue.pop()
                pending[pool.submit(one, record, digest)] = record
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                record = pending.pop(future)
                done += 1
                error = future.exception()
                if error is not None:
                    if isinstance(error, PermanentError) and error.status in FATAL_STATUS:
                        raise EvalError(f"{base_url}: {str(error).splitlines()[0]}; stopped: every request would "
                                        "fail (check --model, --base-url and --api-key-env)")
                    if not isinstance(error, (TransientError, PermanentError, OSError)):
                        raise error
                    result.failed[record.question_id] = str(error).splitlines()[0]
                if progress:
                    progress(done, len(todo), record.question_id if error is None else
                             f"{record.question_id} failed: {result.failed[record.question_id]}")
    except BaseException:  # Ctrl-C or a bug: stop retrying, drop what has not started; answers already stored stay
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    result.ask_seconds = time.monotonic() - asking
    predictions = {}
    for record in records:
        row = store.get(_key(record, model, request_hash(record, options)))
        if row is not None:
            predictions[record.question_id] = row.get("response")
    from stim3d.scoring.report import score

    result.report = score(records, predictions)
    result.seconds = time.monotonic() - start
    if report:
        from stim3d.eval.report import write_report

        result.files = write_report(out, records, result.report, title=f"{model} on {folder.resolve().name}",
                                    run=_run_facts(result))
    return result


def _key(record: Record, model: str, digest: str) -> Key:
    return Key(record.question_id, model, digest)


def _run_facts(result: EvalResult) -> dict[str, Any]:
    return {"model": result.model, "questions": result.selected, "asked": result.asked, "reused": result.reused,
            "requests": result.attempts, "failed": len(result.failed), "asking_seconds": round(result.ask_seconds, 3)}
