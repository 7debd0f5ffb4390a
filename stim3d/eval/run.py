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
from stim3d.eval.errors import EvalError
from stim3d.eval.options import EvalOptions
from stim3d.eval.redact import api_key
from stim3d.eval.request import RequestOptions, image_data_url, request_body, request_hash, shown_request
from stim3d.eval.store import Key, ResponseStore, eval_folder
from stim3d.render.batch.reading import Batch, load_batch
from stim3d.render.batch.selection import SelectionError, selected_records
from stim3d.scoring.records import Record
from stim3d.version import __version__

__all__ = ["EvalError", "EvalOptions", "EvalResult", "FATAL_STATUS", "MAX_WAIT", "Plan", "ProgressFn", "RetryPolicy",
           "endpoint_of", "evaluate", "plan", "run_eval", "score_and_report", "select_records"]


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


def select_records(batch: Batch, filters: Mapping[str, str] | None, limit: int | None) -> list[Record]:
    """The batch's records whose item matches `filters` (render/batch/selection.py's KEY=VALUE rule), the first
    `limit` of them."""
    if not batch.records:
        raise EvalError(f"{batch.folder}: no records.jsonl records to evaluate (render the batch first)")
    try:
        records = selected_records(batch, filters)
    except SelectionError as exc:
        raise EvalError(exc.reason, field=exc.field, value=exc.value) from None
    if limit is not None:
        if limit < 1:
            raise EvalError("must be at least 1", field="limit", value=limit)
        records = records[:limit]
    return records


def evaluate(batch: str | Path, model: str, base_url: str | None = None, *, progress: ProgressFn | None = None,
             **settings: Any) -> EvalResult:
    """Ask `model` every (selected) question of the batch folder `batch`, then score and write the report.

    Parameters
    ----------
    batch : str or Path
        A rendered batch folder (read through `load_batch`, render/batch/reading.py).
    model : str
        The model name the server knows, or `baseline:constant`, `baseline:random`, `baseline:oracle`.
    base_url : str
        The server's OpenAI-compatible root, e.g. ``http://127.0.0.1:8000/v1`` (not needed for baselines).
    progress : callable, optional
        Called as ``progress(done, total, message)`` after each question.
    **settings
        Any other field of `EvalOptions` (options.py: `temperature`, `max_tokens`, `system`, `extra_body`,
        `image_scale`, `limit`, `filters`, `concurrency`, `timeout`, `retries`, `backoff`, `api_key_env`, `seed`,
        `dry_run`, `report`), which states what each does, its default and its bounds; `run_eval` takes the
        `EvalOptions` itself.

    Returns
    -------
    EvalResult

    Raises
    ------
    EvalError
        A bad or unknown setting (naming it), an unset key variable, nothing to evaluate, or a run stopped early
        because every request would fail (one line each).
    """
    return run_eval(batch, EvalOptions.build(model=model, base_url=base_url, **settings), progress)


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
    key = None if planned.is_baseline else api_key(options.api_key_env)
    tally = Tally()
    asker = Asker(planned.batch, planned.request, ResponseStore(planned.out), tally, planned.endpoint,
                  {"Authorization": f"Bearer {key}"} if key else {},
                  RetryPolicy.of(options), planned.answer_of)
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
    request = options.request()
    endpoint = endpoint_of(options)
    answer_of = baseline_answers(options.model, records, options.seed) if endpoint is None else None
    out = eval_folder(batch, options.model)
    todo = []
    if not options.dry_run:
        store = ResponseStore(out)
        todo = [(r, digest) for r in records
                if store.get(Key(r.question_id, options.model, digest := request_hash(r, request))) is None]
    return Plan(batch, options, request, records, todo, out, endpoint, answer_of)


def endpoint_of(options: EvalOptions) -> Endpoint | None:
    """Where the requests go: None for a baseline (it answers here); EvalError when a model has no `base_url` or a
    bad one."""
    if options.model.startswith(PREFIX):
        return None
    if not options.base_url:
        raise EvalError("give `base_url`, e.g. http://127.0.0.1:8000/v1 (baselines need none)", field="model",
                        value=options.model)
    return Endpoint.parse(options.base_url)


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
