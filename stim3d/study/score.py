"""`stim3d study score`: the collected sessions scored like a model, per participant and pooled.

Reads every session file under STUDY/data/ (`data/<participant>/<session>.json` as the
server writes them, and any downloaded session file dropped into data/ or a folder in
it: same format), checks each against the study (a broken or foreign file is listed and
skipped, never fatal), merges two copies of one session, picks each participant's
session and applies the exclusion rules of exclusions.py. Then, for the batch the study
was built from (study.json's, or `--batch`, whose identity must match):

- `BATCH/eval/human-<participant>/` per included participant: responses.jsonl in
  store.py's format (model `human:<participant>`), scored by `scoring.report.score` on the
  questions that person saw and written by `eval.report.write_report`, the code path of
  `stim3d eval`;
- `BATCH/eval/human/` pooled (model `human`): one line per response, every response
  counted (eval/people.py);
- `BATCH/eval/people-vs-models.html`: people beside every model scored in BATCH/eval/
  (versus.py);
- `BATCH/eval/people-exclusions.json`: every participant with the session used, included or
  the reasons not, the rules and thresholds, the files skipped; in a `--staircase` study each
  included participant's threshold and the pooled one (thresholds.py). Beside the scores,
  not in the study folder: it names every participant and session, and the study folder is
  what a server publishes.
A staircase study's steps are scored as responses too (a question asked twice counts
twice, as in the pooled folder).
Practice and catch trials are never scored as questions. A rerun rewrites these from
data/ (the source of truth), and removes the folder of a participant now excluded.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stim3d.eval.people import PEOPLE, response_rows, score_responses
from stim3d.eval.report import write_report
from stim3d.eval.stats import wilson
from stim3d.eval.store import EVAL_DIR, RESPONSES, eval_folder
from stim3d.files import write_json_atomic, write_text_atomic
from stim3d.render.batch.config import ConfigError
from stim3d.render.batch.folder import BatchFolder
from stim3d.render.batch.reading import Batch, load_batch
from stim3d.scoring.report import score
from stim3d.study.contract import Session
from stim3d.study.errors import StudyError
from stim3d.study.exclusions import FAST_MEDIAN_MS, FAST_SHARE, FAST_TRIAL_MS, RULES, choose_sessions, reasons
from stim3d.study.folder import StudyFolder, first_line, merge_sessions
from stim3d.study.thresholds import Threshold, estimate_text, participant_threshold, pooled_line
from stim3d.study.thresholds import pooled as thresholds_pooled

EXCLUSIONS = "people-exclusions.json"  # in BATCH/eval/, never in the study folder a server publishes
MAX_SESSION_BYTES = 8 << 20  # a session file larger than this is not one the server or the page wrote
SCORED = ("main", "staircase")  # the roles scored as questions (practice and catch never are)


@dataclass
class Participant:
    """One participant's outcome: the session used, included or why not, and (included) their accuracy."""

    participant: str
    session: str
    source: str
    reasons: list[str]
    main_trials: int
    correct: int = 0
    unused_sessions: list[str] = field(default_factory=list)
    threshold: Threshold | None = None  # a staircase study: the replayed staircase

    @property
    def included(self) -> bool:
        return not self.reasons

    def line(self) -> str:
        if not self.included:
            return f"{self.participant}: excluded ({'; '.join(self.reasons)})"
        lo, hi = wilson(self.correct, self.main_trials)
        line = (f"{self.participant}: included, {self.correct} of {self.main_trials} right, accuracy "
                f"{self.correct / self.main_trials:.3f} [{lo:.3f}, {hi:.3f}]")
        if self.threshold is not None:
            line += f"; staircase {estimate_text(self.threshold.estimate.as_dict())}"
        return line


@dataclass
class StudyScore:
    """What `score_study` read, decided and wrote."""

    study: Path
    batch: Path
    participants: list[Participant] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # file (relative to the study) -> why it was not read
    files: list[Path] = field(default_factory=list)
    pooled: tuple[int, int, int] | None = None  # (responses, right, questions) of the pooled `human`
    staircase: dict[str, Any] | None = None  # thresholds.py pooled(): the people's pooled threshold

    def summary_lines(self) -> list[str]:
        included = sum(p.included for p in self.participants)
        n = len(self.participants)
        lines = [f"{n} participant{'s' * (n != 1)}: {included} included, "
                 f"{len(self.participants) - included} excluded; {len(self.skipped)} session files skipped"]
        lines += [f"  {p.line()}" for p in self.participants]
        lines += [f"  skipped {name}: {why}" for name, why in sorted(self.skipped.items())]
        if self.pooled is not None:
            n, right, questions = self.pooled
            lo, hi = wilson(right, n)
            lines.append(f"{PEOPLE} (pooled): {n} responses to {questions} questions, accuracy {right / n:.3f} "
                         f"[{lo:.3f}, {hi:.3f}]")
        else:
            lines.append("no participant included: nothing scored")
        if self.staircase is not None:
            lines.append(pooled_line(self.staircase))
        return lines + [f"wrote {path}" for path in self.files]


def request_hash(study_id: str, session: Session, index: int) -> str:
    """16 hex digits naming one response: the study, participant, session and plan position (distinct per line)."""
    text = f"{study_id}|{session.participant}|{session.session}|{index}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def open_batch(study: StudyFolder, batch: Path | None) -> Batch:
    """The study's batch (where build recorded it, StudyFolder.batch_path, unless `batch` is given), checked to be
    the one the study was built from."""
    folder = Path(batch) if batch is not None else study.batch_path()
    if folder is None:
        raise StudyError(f"{study.root}: no record of the batch this study was built from; give `batch`")
    try:
        loaded = load_batch(folder)
    except ConfigError as exc:
        raise StudyError(f"the study's batch: {first_line(exc)}" + ("" if batch else "; give `batch`")) from None
    try:
        manifest = BatchFolder(folder).manifest() or {}  # load_batch read it already: it is readable
    except ConfigError as exc:
        raise StudyError(f"the study's batch: {first_line(exc)}") from None
    for key, value in study.manifest.batch.identity.items():
        if key in manifest and manifest[key] != value:
            raise StudyError(f"{folder}: not the batch this study was built from ({key} differs from study.json's)")
    known = {r.question_id for r in loaded.records}
    missing = [t.trial_id for t in study.trials if t.role in (*SCORED, "catch") and t.trial_id not in known]
    if missing:
        raise StudyError(f"{folder}: not the batch this study was built from (it has no question {missing[0]!r}, "
                         f"and {len(missing) - 1} more of the study's are missing)")
    return loaded


def read_sessions(study: StudyFolder) -> tuple[list[tuple[Session, str]], dict[str, str]]:
    """(every valid session, merged per (participant, session), with the file it came from; {file: why skipped})."""
    data = study.data_dir
    files = sorted({*data.glob("*.json"), *data.glob("*/*.json")}) if data.is_dir() else []
    if not files:
        raise StudyError(f"{data}: no session files (serve the study with `stim3d study serve`, or drop downloaded "
                         "session files into it)")
    skipped: dict[str, str] = {}
    merged: dict[tuple[str, str], tuple[Session, str]] = {}
    for path in files:
        name = str(path.relative_to(study.root))
        try:
            if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_SESSION_BYTES:
                raise StudyError("not a regular session file (a link, a folder or too large)")
            session = study.parse_session(json.loads(path.read_text(encoding="utf-8")))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            skipped[name] = f"not JSON ({first_line(exc)})"
            continue
        except (StudyError, ValueError, OSError) as exc:
            skipped[name] = first_line(exc)
            continue
        key = (session.participant, session.session)
        if key in merged:
            merged[key] = (merge_sessions(merged[key][0], session), merged[key][1])
        else:
            merged[key] = (session, name)
    return list(merged.values()), skipped


def _rows(study: StudyFolder, session: Session, model: str) -> list[dict[str, Any]]:
    """The response lines of one session's main trials, in plan order (store.py's format)."""
    return [{"question_id": t.trial_id, "model": model, "request_hash": request_hash(study.study_id, session, t.index),
             "response": t.response, "usage": None, "latency_s": round(t.rt_ms / 1000, 3), "attempts": 1,
             "image_scale": 1.0,
             "raw": {"study": study.study_id, "participant": session.participant, "session": session.session,
                     "index": t.index, "rt_ms": t.rt_ms, "focus_losses": t.focus_losses,
                     "presented_ms": t.presented_ms, **({"level": t.level} if t.role == "staircase" else {})}}
            for t in sorted(session.trials, key=lambda t: t.index) if t.role in SCORED]


def _write_responses(folder: Path, rows: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / RESPONSES, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows))


def _remove_stale(batch: Path, study_id: str, keep: set[str]) -> None:
    """Delete eval/human-*/ folders this study wrote for participants no longer included (data/ is the truth)."""
    for folder in sorted((batch / EVAL_DIR).glob(f"{PEOPLE}-*/")):
        if folder.name in keep or folder.is_symlink() or not (folder / RESPONSES).is_file():
            continue
        rows = response_rows(folder)
        if rows and all(r["model"].startswith(PEOPLE + ":") and isinstance(r.get("raw"), dict)
                        and r["raw"].get("study") == study_id for r in rows):
            shutil.rmtree(folder)


def score_study(study: str | Path, batch: str | Path | None = None) -> StudyScore:
    """Score every participant of `study` on its batch; see the module docstring for what is written where."""
    folder = StudyFolder.open(study)
    loaded = open_batch(folder, Path(batch) if batch is not None else None)
    sessions, skipped = read_sessions(folder)
    records = {r.question_id: r for r in loaded.records}
    result = StudyScore(study=folder.root, batch=loaded.folder, skipped=skipped)
    name = loaded.folder.resolve().name
    pooled: list[dict[str, Any]] = []
    kept: set[str] = set()
    per_person: dict[str, list[dict[str, Any]]] = {}
    thresholds: dict[str, Threshold] = {}
    steps = folder.manifest.staircase["spec"]["trials"] if folder.manifest.staircase else 0
    for person, chosen in choose_sessions(sessions).items():
        session = chosen.session
        rows = _rows(folder, session, f"{PEOPLE}:{person}")
        entry = Participant(person, session.session, chosen.source, reasons(session, records, steps),
                            main_trials=len(rows), unused_sessions=list(chosen.unused))
        result.participants.append(entry)
        if not entry.included:
            continue
        entry.threshold = participant_threshold(folder, session)
        if entry.threshold is not None:
            thresholds[person] = entry.threshold
        if steps:  # a question may come back in a staircase: every response counts (eval/people.py)
            seen, report = score_responses([records[r["question_id"]] for r in rows], rows)
        else:
            seen = [records[r["question_id"]] for r in rows]
            report = score(seen, {r["question_id"]: r["response"] for r in rows})
        entry.correct = sum(q.correct for q in report.questions)
        out = eval_folder(loaded.folder, f"{PEOPLE}:{person}")
        kept.add(out.name)
        _write_responses(out, rows)
        write_report(out, seen, report, title=f"{PEOPLE}:{person} on {name}",
                     run={"model": f"{PEOPLE}:{person}", "study": folder.study_id, "session": session.session,
                          "questions": len(rows)})
        result.files.append(out / "report.html")
        pooled += [{**r, "model": PEOPLE} for r in rows]
        per_person[person] = rows
    _remove_stale(loaded.folder, folder.study_id, kept)
    if pooled:
        out = eval_folder(loaded.folder, PEOPLE)
        _write_responses(out, pooled)
        scored, report = score_responses(list(records.values()), pooled)
        write_report(out, scored, report, title=f"{PEOPLE} (pooled, {len(per_person)} participants) on {name}",
                     run={"model": PEOPLE, "study": folder.study_id, "participants": len(per_person),
                          "responses": len(pooled)})
        result.pooled = (len(pooled), sum(q.correct for q in report.questions), len({q.question_id for q in report.questions}))
        result.files.append(out / "report.html")
        from stim3d.study.versus import write_versus

        result.staircase = thresholds_pooled(folder, thresholds)
        result.files.append(write_versus(loaded, per_person, folder.study_id, thresholds, result.staircase,
                                         (folder.manifest.staircase or {}).get("levels")))
    result.files.append(_write_exclusions(folder, result))
    return result


def _write_exclusions(study: StudyFolder, result: StudyScore) -> Path:
    path = result.batch / EVAL_DIR / EXCLUSIONS
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, {
        "study": study.study_id,
        "batch": str(result.batch),
        "rules": RULES,
        "thresholds": {"fast_median_ms": FAST_MEDIAN_MS, "fast_trial_ms": FAST_TRIAL_MS, "fast_share": FAST_SHARE},
        "participants": [{"participant": p.participant, "session": p.session, "file": p.source,
                          "included": p.included, "reasons": p.reasons, "main_trials": p.main_trials,
                          "correct": p.correct if p.included else None, "unused_sessions": p.unused_sessions,
                          **({"staircase": p.threshold.as_dict() if p.threshold else None}
                             if study.manifest.staircase else {})}
                         for p in result.participants],
        **({"staircase": {"spec": study.manifest.staircase["spec"], "pooled": result.staircase}}
           if study.manifest.staircase else {}),
        "skipped_files": result.skipped,
    })
    return path
