"""`stim3d eval BATCH --staircase`: a model's threshold on each sweep, asking one level at a time.

A sweep folder (`stim3d sweep occlusion`) holds one question at graded levels; the
records of one sweep share `difficulty.sweep_id` and each names its `sweep_level`. A
*track* is one question of one sweep (its id without the level's item prefix, e.g.
`q0`) across the levels. Per track the staircase of stim3d/study/staircase.py picks a
level, the model is asked that level's question (the same request `stim3d eval` sends),
the answer is scored by the scoring core's exact rule and folded in; after `trials`
steps the threshold, its posterior SD and 95 % credible interval are reported.

Answers go to the same `BATCH/eval/<model>/responses.jsonl` as `stim3d eval`: the first
time a track asks a question it is the plain request (so answers a full `eval` already
stored are reused, and vice versa); the n-th repeat of that question within the track is
stored under the request hash with `.rN` appended (marked `staircase_repeat: N`), so a
model sampled at temperature > 0 gives a fresh answer per step and a rerun finds every
step stored and asks nothing. At temperature 0 a repeat usually returns the same answer:
then the posterior is narrower than the model's real uncertainty (the staircase assumes
independent answers); the step list in staircase.json shows it.
"""

from __future__ import annotations

import json
import random
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stim3d.eval.adaptive import DEFAULT_TRIALS, MAX_TRIALS, Staircase, StaircaseError, guess_rate, make_spec
from stim3d.eval.baselines import baseline_answers
from stim3d.eval.client import PermanentError, TransientError, message_content, post_json
from stim3d.eval.options import EvalOptions
from stim3d.eval.redact import api_key
from stim3d.eval.request import RequestOptions, image_data_url, request_body, request_hash
from stim3d.eval.run import FATAL_STATUS, MAX_WAIT, EvalError, RetryPolicy, endpoint_of, select_records
from stim3d.eval.store import Key, ResponseStore, eval_folder
from stim3d.files import write_text_atomic
from stim3d.render.batch.reading import load_batch
from stim3d.scoring.records import Record
from stim3d.scoring.report import score_record

RESULT = "staircase.json"
FORMAT = "stim3d-staircase-eval/1"
Answerer = Callable[[Record, int], tuple[str | None, dict[str, Any]]]  # (record, attempt seed) -> (text, row fields)


@dataclass
class Track:
    """One question of one sweep across its levels."""

    sweep_id: str
    question: str  # the question id's suffix after the level's item id (q0, q1, ...)
    by_level: dict[float, Record]

    @property
    def name(self) -> str:
        return f"{self.sweep_id}/{self.question}"


@dataclass
class StaircaseRun:
    """What one run did: per track its steps and estimate (or why it stopped), where the result is."""

    model: str
    path: Path
    tracks: list[dict[str, Any]] = field(default_factory=list)
    asked: int = 0
    reused: int = 0
    failed: dict[str, str] = field(default_factory=dict)

    def summary_lines(self) -> list[str]:
        lines = []
        for track in self.tracks:
            est = track.get("estimate")
            if est is None:
                lines.append(f"{track['track']}: {track['status']}")
                continue
            right = sum(step["correct"] for step in track["steps"])
            lines.append(f"{track['track']}: threshold {est['threshold']:.3f} (SD {est['sd']:.3f}, 95% CI "
                         f"{est['ci'][0]:.3f}-{est['ci'][1]:.3f}) from {est['trials']} trials, {right} correct, "
                         f"levels {track['levels'][0]:g}-{track['levels'][-1]:g}")
        lines.append(f"staircase {self.model}: {len(self.tracks)} sweeps; asked {self.asked}, reused {self.reused}, "
                     f"failed {len(self.failed)}")
        return lines


def sweep_tracks(records: list[Record]) -> list[Track]:
    """The batch's sweep questions grouped by (sweep_id, question), levels ascending; EvalError when there are none."""
    grouped: dict[tuple[str, str], dict[float, Record]] = defaultdict(dict)
    for record in records:
        sweep_id, level = record.difficulty.get("sweep_id"), record.difficulty.get("sweep_level")
        if not isinstance(sweep_id, str) or not isinstance(level, (int, float)) or isinstance(level, bool):
            continue
        question = record.question_id.removeprefix(f"{record.item_id}-")
        grouped[(sweep_id, question)][float(level)] = record
    if not grouped:
        raise EvalError("no sweep in this batch (no record has difficulty.sweep_id and sweep_level); "
                        "make one with `stim3d sweep occlusion`")
    return [Track(sweep_id, question, dict(sorted(levels.items()))) for (sweep_id, question), levels in sorted(grouped.items())]


def _model_answerer(options: EvalOptions, folder: Path, request: RequestOptions, records: list[Record]) -> Answerer:
    """How one question is answered: a baseline's text, or one request (with `run_eval`'s retries) to the server."""
    endpoint = endpoint_of(options)
    if endpoint is None:
        answer_of = baseline_answers(options.model, records, options.seed)
        return lambda record, _n: (answer_of(record), {"usage": None, "latency_s": 0.0, "attempts": 0, "raw": None})
    key = api_key(options.api_key_env)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    policy = RetryPolicy.of(options)

    def ask(record: Record, n: int) -> tuple[str | None, dict[str, Any]]:
        began = time.monotonic()
        body = request_body(record, request, image_data_url(folder / record.image.path, request.image_scale))
        rng = random.Random(f"{record.question_id}:{n}")  # the jitter only: never part of an answer
        for attempt in range(policy.retries + 1):
            try:
                answer = post_json(endpoint, body, headers, policy.timeout)
            except TransientError as exc:
                if attempt == policy.retries:
                    raise
                wait_s = rng.uniform(0, policy.backoff * 2 ** attempt)
                time.sleep(min(max(wait_s, exc.retry_after or 0.0), MAX_WAIT))
                continue
            return message_content(answer), {"usage": answer.get("usage"), "attempts": attempt + 1, "raw": answer,
                                             "latency_s": round(time.monotonic() - began, 4)}
        raise AssertionError("unreachable")
    return ask


def _run_track(track: Track, spec_trials: int, answer: Answerer, store: ResponseStore, model: str,
               options: RequestOptions, run: StaircaseRun) -> dict[str, Any]:
    """Run one track's staircase to its trial count (or to the first question that could not be answered)."""
    first = next(iter(track.by_level.values()))
    levels = list(track.by_level)
    out: dict[str, Any] = {"track": track.name, "sweep_id": track.sweep_id, "question": track.question,
                           "levels": levels, "steps": []}
    if len(levels) < 2:
        out["status"] = f"skipped: only one level ({levels[0]:g}) was rendered"
        return out
    spec = make_spec({"levels": levels, "guess": guess_rate(first.answer.type, first.answer.options),
                      "trials": spec_trials})
    out["spec"] = spec.model_dump(mode="json")
    staircase = Staircase(spec)
    repeats: dict[str, int] = defaultdict(int)
    while not staircase.done:
        level = staircase.next()
        record = track.by_level[level]
        n = repeats[record.question_id]
        repeats[record.question_id] += 1
        digest = request_hash(record, options) + (f".r{n}" if n else "")
        row = store.get(Key(record.question_id, model, digest))
        if row is None:
            try:
                text, extra = answer(record, n)
            except (TransientError, PermanentError, OSError) as exc:
                if isinstance(exc, PermanentError) and exc.status in FATAL_STATUS:
                    raise EvalError(f"{str(exc).splitlines()[0]}; stopped: every request would fail "
                                    "(check `model`, `base_url` and `api_key_env`)") from None
                run.failed[track.name] = f"{record.question_id}: {str(exc).splitlines()[0]}"
                out["status"] = f"stopped after {len(staircase.history)} trials: {run.failed[track.name]}"
                break
            row = {"question_id": record.question_id, "model": model, "request_hash": digest,
                   "image_scale": options.image_scale, "response": text, **extra}
            if n:
                row["staircase_repeat"] = n
            store.add(row)
            run.asked += 1
        else:
            run.reused += 1
        correct = bool(score_record(record, row.get("response")).correct)
        staircase.update(level, correct)
        out["steps"].append({"step": len(staircase.history) - 1, "level": level, "question_id": record.question_id,
                             "repeat": n, "correct": correct})
    else:
        out["status"] = "complete"
    out["estimate"] = staircase.estimate().as_dict() if staircase.history else None
    return out


def run_staircases(batch: str | Path, options: EvalOptions, *, trials: int = DEFAULT_TRIALS) -> StaircaseRun:
    """Run a staircase of `trials` steps on every sweep question of `batch`; write BATCH/eval/<model>/staircase.json.

    `options` are `run_eval`'s (options.py, with their defaults and bounds): the same request, so stored answers
    are shared. A staircase picks its own questions, so `limit` and `dry_run` do not apply (EvalError naming the
    one given); it asks one question at a time and writes staircase.json, so `concurrency` and `report` are not
    used. `trials`, the steps of each staircase, is its own. Raises EvalError for a bad argument or a batch without
    sweeps.
    """
    if isinstance(trials, bool) or not 1 <= trials <= MAX_TRIALS:
        raise EvalError(f"must be a whole number from 1 to {MAX_TRIALS}", field="trials", value=trials)
    for name in ("limit", "dry_run"):
        if getattr(options, name):
            raise EvalError("does not apply: a staircase picks its own questions", field=name)
    folder = Path(batch)
    records = select_records(load_batch(folder), options.filters, None)
    tracks = sweep_tracks(records)
    request = options.request()
    sweep_records = [r for track in tracks for r in track.by_level.values()]
    answer = _model_answerer(options, folder, request, sweep_records)
    out = eval_folder(folder, options.model)
    run = StaircaseRun(model=options.model, path=out / RESULT)
    store = ResponseStore(out)
    for track in tracks:
        try:
            run.tracks.append(_run_track(track, trials, answer, store, options.model, request, run))
        except StaircaseError as exc:
            raise EvalError(f"{track.name}: {exc}") from None
    document = {"format": FORMAT, "model": options.model, "batch": folder.resolve().name, "trials": trials,
                "request": {"temperature": request.temperature, "max_tokens": request.max_tokens,
                            "image_scale": request.image_scale},
                "sweeps": run.tracks}
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run.path, json.dumps(document, indent=2, sort_keys=True) + "\n")
    return run
