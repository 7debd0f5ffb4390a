"""`evaluate`: send a batch's records to a model (or a baseline), store every answer, score, report.

Four steps, each its own function: the settings are validated (`EvalOptions`,
options.py), the run is planned (`plan`: which records, which of them already have
an answer under the same request hash in store.py, the endpoint and the key), the
rest are asked (ask.py: a bounded pool of threads, retries, the early stop), and the
answers are scored and reported (`score_and_report`: scores.json, report.html).
The API key is read from the environment variable the caller names and goes only
into the Authorization header: it is never stored or printed, even when a server
echoes it (redact.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stim3d.eval.ask import FATAL_STATUS, MAX_WAIT, Asker, ProgressFn, RetryPolicy, Tally, ask_all
from stim3d.eval.baselines import PREFIX, baseline_answers
from stim3d.eval.client import Endpoint
from stim3d.eval.options import EvalError, EvalOptions
from stim3d.eval.redact import ApiKeyError, api_key
from stim3d.eval.request import RequestOptions, image_data_url, request_body, request_hash, shown_request
from stim3d.eval.store import Key, ResponseStore, eval_folder
from stim3d.render.batch.reading import load_batch
from stim3d.scoring.records import Record
from stim3d.version import __version__

__all__ = ["EvalError", "EvalOptions", "EvalResult", "FATAL_STATUS", "MAX_WAIT", "Plan", "ProgressFn", "RetryPolicy",
           "evaluate", "plan", "run_eval", "score_and_report", "select_records"]


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
    warnings: list[str] = field(default_factory=list)  # one line each (printed on stderr, kept in scores.json)

    def summary(self) -> str:
        rate = self.asked / self.ask_seconds if self.ask_seconds > 0 else 0.0
        return (f"eval {self.model}: {self.selected} questions; asked {self.asked} ({self.attempts} requests, "
                f"{rate:.1f} answers/s), reused {self.reused}, failed {len(self.failed)}")


@dataclass
class Plan:
    """What a run will do: every selected record, the ones still to ask (with their request hash), and how."""

    batch: Path
    options: EvalOptions
    request: RequestOptions
    records: list[Record]
    todo: list[tuple[Record, str]]
    out: Path
    endpoint: Endpoint | None
    answer_of: Callable[[Record], str] | None

    @property
    def is_baseline(self) -> bool:
        return self.answer_of is not None


def select_records(batch: Any, filters: Mapping[str, str] | None, limit: int | None) -> list[Record]:
    """The batch's records whose item matches `filters` (the gallery's KEY=VALUE rule), the first `limit` of them."""
    from stim3d.views.gallery import GalleryError, select_items

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

    Every setting is checked by `EvalOptions` (options.py), which states its bounds.

    Parameters
    ----------
    batch : str or Path
        A rendered batch folder (read through `load_batch`, render/batch/reading.py).
    model : str
        The model name the server knows, or `baseline:constant`, `baseline:random`, `baseline:oracle`.
    base_url : str
        The server's OpenAI-compatible root, e.g. ``http://127.0.0.1:8000/v1`` (not needed for baselines).
    temperature, max_tokens, system, extra_body
        Request settings (temperature 0..2); `extra_body` fields are added to the JSON body as given.
    image_scale : float
        Downscale factor in (0, 1] applied to each image before sending (recorded with each answer).
    limit, filters
        Only the first `limit` records of the items matching `filters` (``{"min_visibility": "0.7"}``).
    concurrency, timeout, retries, backoff
        Requests in flight; hard seconds per attempt (at most 3600); retries after the first attempt;
        first backoff in seconds.
    api_key_env : str, optional
        The NAME of the environment variable holding the API key (sent as a Bearer token, never stored).
    seed : int
        Seed of `baseline:random`.
    dry_run : bool
        Build the first request and return it (`dry_run_request`, image shortened) without sending or writing.
    report : bool
        Write scores.json and report.html (with figures) into ``batch/eval/<model-slug>/``.
    progress : callable, optional
        Called as ``progress(done, total, message)`` after each question.

    Returns
    -------
    EvalResult

    Raises
    ------
    EvalError
        A bad setting, an unset key variable, nothing to evaluate, or a run stopped early because every
        request would fail (one line each).
    """
    options = EvalOptions.build(
        model=model, base_url=base_url, temperature=temperature, max_tokens=max_tokens, system=system,
        extra_body={} if extra_body is None else extra_body, image_scale=image_scale, limit=limit,
        filters=filters or None, concurrency=concurrency, timeout=timeout, retries=retries, backoff=backoff, api_key_env=api_key_env, seed=seed, dry_run=dry_run, report=report)
    return run_eval(batch, options, progress)


def run_eval(batch: str | Path, options: EvalOptions, progress: ProgressFn | None = None) -> EvalResult:
    """`evaluate` with its settings already validated: plan, ask, score and report."""
    start = time.monotonic()
    planned = plan(Path(batch), options)
    result = EvalResult(folder=planned.out, model=options.model, selected=len(planned.records))
    if options.dry_run:
        record = planned.records[0]
        url = image_data_url(planned.batch / record.image.path, planned.request.image_scale)
        result.dry_run_request = shown_request(request_body(record, planned.request, url))
        return result
    try:
        key = None if planned.is_baseline else api_key(options.api_key_env)
    except ApiKeyError as exc:
        raise EvalError(str(exc)) from None
    tally = Tally()
    asker = Asker(planned.batch, planned.request, ResponseStore(planned.out), tally, planned.endpoint,
                  {"Authorization": f"Bearer {key}"} if key else {},
                  RetryPolicy(options.retries, options.backoff, options.timeout), planned.answer_of)
    result.reused = len(planned.records) - len(planned.todo)
    asking = time.monotonic()
    ask_all(planned.todo, asker, options.concurrency, tally, f"{options.base_url}", progress)
    result.ask_seconds = time.monotonic() - asking
    result.asked, result.attempts, result.failed = tally.asked, tally.attempts, tally.failed
    result.warnings = model_warnings(options.model, tally)
    return score_and_report(planned, asker.store, result, start)


def plan(batch: Path, options: EvalOptions) -> Plan:
    """Which records, which of them still need an answer, and how to get one; EvalError for what cannot work."""
    loaded = load_batch(batch)
    records = select_records(loaded, options.filters, options.limit)
    try:
        request = RequestOptions(model=options.model, temperature=options.temperature, max_tokens=options.max_tokens,
                                 system=options.system, extra_body=dict(options.extra_body),
                                 image_scale=float(options.image_scale))
    except ValueError as exc:
        raise EvalError(str(exc)) from None
    is_baseline = options.model.startswith(PREFIX)
    if not is_baseline and not options.base_url:
        raise EvalError(f"--model {options.model}: give --base-url, e.g. http://127.0.0.1:8000/v1 "
                        "(baselines need none)")
    try:
        answer_of = baseline_answers(options.model, records, options.seed) if is_baseline else None
        endpoint = None if is_baseline else Endpoint.parse(options.base_url or "")
    except ValueError as exc:
        raise EvalError(str(exc)) from None
    out = eval_folder(batch, options.model)
    todo = []
    if not options.dry_run:
        store = ResponseStore(out)
        todo = [(r, digest) for r in records
                if store.get(Key(r.question_id, options.model, digest := request_hash(r, request))) is None]
    return Plan(batch, options, request, records, todo, out, endpoint, answer_of)


def model_warnings(model: str, tally: Tally) -> list[str]:
    """One line when the answers name another model than the one asked for (a server serving whatever it has)."""
    others = sorted(name for name in tally.answered_as if name != model)
    if not others:
        return []
    counts = ", ".join(f"{name!r} ({tally.answered_as[name]})" for name in others[:3])
    return [f"the server answered as {counts}, not the requested {model!r}; the answers are filed under {model!r}"]


def score_and_report(planned: Plan, store: ResponseStore, result: EvalResult, start: float) -> EvalResult:
    """Score every selected record's stored answer (missing when none) and, unless told not to, write the report."""
    from stim3d.scoring.report import score

    predictions = {}
    for record in planned.records:
        row = store.get(Key(record.question_id, planned.options.model, request_hash(record, planned.request)))
        if row is not None:
            predictions[record.question_id] = row.get("response")
    result.report = score(planned.records, predictions)
    result.seconds = time.monotonic() - start
    if planned.options.report:
        from stim3d.eval.report import write_report

        result.files = write_report(planned.out, planned.records, result.report,
                                    title=f"{planned.options.model} on {planned.batch.resolve().name}",
                                    run=run_facts(planned, result), images=planned.batch,
                                    seed=planned.options.seed)
    return result


def run_facts(planned: Plan, result: EvalResult) -> dict[str, Any]:
    """What scores.json's `run` records: the settings (what decides the answers), the version, the counts.

    No date: scores.json is rewritten by every rerun, which may ask nothing new; a clock there would say when
    it was scored, not when the answers were given, and would make two scorings of the same answers differ.
    """
    return {"model": result.model, "settings": planned.options.settings(), "stim3d_version": __version__,
            "questions": result.selected, "asked": result.asked, "reused": result.reused,
            "requests": result.attempts, "failed": len(result.failed), "asking_seconds": round(result.ask_seconds, 3),
            "warnings": list(result.warnings)}
