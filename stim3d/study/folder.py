"""A study folder read back: its manifest, its trials, each participant's plan, and the sessions under data/.

What `serve` and `score` share, so the server refuses exactly what scoring would
refuse: a session is checked against the study it claims (study id, the plan that
participant must have, every trial at its place in that plan with its role), and
two copies of one session merge the same way everywhere (stored trials win).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from stim3d.files import OutsideDestination, inside
from stim3d.scenes.names import check_name
from stim3d.study.contract import (
    DATA_DIR,
    MANIFEST,
    PRIVATE,
    STUDY_FORMAT,
    TRIALS,
    Session,
    Trial,
    check_participant,
    participant_plan,
)
from stim3d.study.errors import StudyError


class ManifestOptions(BaseModel):
    """The options of study.json that the plan depends on (the rest is build's business)."""

    model_config = ConfigDict(extra="ignore")
    per_participant: int | None = None
    seed: int = 0


class ManifestBatch(BaseModel):
    model_config = ConfigDict(extra="ignore")
    path: str | None = None  # a study built before the path moved to PRIVATE (contract.py)
    identity: dict[str, Any] = {}


class Manifest(BaseModel):
    """The part of study.json serve and score read."""

    model_config = ConfigDict(extra="ignore")
    format: str
    study_id: str
    batch: ManifestBatch
    options: ManifestOptions = ManifestOptions()
    staircase: dict[str, Any] | None = None  # staircase.py staircase_manifest, in a study built with --staircase


def first_line(exc: Exception) -> str:
    """One line of a pydantic or JSON error: the first problem and where it is."""
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "(top level)"
        return f"{where}: {error['msg']}" + (f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else "")
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def _read_json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise StudyError(f"{path.parent}: not a study folder (no {path.name}; write one with `stim3d study build`)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StudyError(f"{path}: {what} is not JSON ({first_line(exc)})") from None


@dataclass
class StudyFolder:
    """One study folder (written by `stim3d study build`), checked when opened."""

    root: Path
    manifest: Manifest
    trials: list[Trial]
    _plans: dict[str, list[str]] = field(default_factory=dict, repr=False)

    @classmethod
    def open(cls, study: str | Path) -> StudyFolder:
        """Read study.json and trials.json; StudyError (one line) when either is missing or malformed."""
        root = Path(study)
        if not root.is_dir():
            raise StudyError(f"{root}: no such study folder")
        raw = _read_json(root / MANIFEST, MANIFEST)
        if not isinstance(raw, dict) or raw.get("format") != STUDY_FORMAT:
            raise StudyError(f"{root / MANIFEST}: not a stim3d study manifest (format must be {STUDY_FORMAT!r})")
        try:
            manifest = Manifest.model_validate(raw)
            listed = _read_json(root / TRIALS, TRIALS)
            trials = [Trial.model_validate(t) for t in (listed.get("trials") if isinstance(listed, dict) else None) or []]
        except ValidationError as exc:
            raise StudyError(f"{root}: {MANIFEST} or {TRIALS} is malformed: {first_line(exc)}") from None
        if not trials:
            raise StudyError(f"{root / TRIALS}: lists no trials")
        ids = [t.trial_id for t in trials]
        if len(set(ids)) != len(ids):
            raise StudyError(f"{root / TRIALS}: a trial id is listed twice")
        return cls(root=root, manifest=manifest, trials=trials)

    @property
    def study_id(self) -> str:
        return self.manifest.study_id

    def batch_path(self) -> Path | None:
        """The batch folder `study build` recorded on this machine (contract.PRIVATE), or an older study.json's path;
        None when neither says (a study folder copied without its private file)."""
        private = self.root / PRIVATE
        if private.is_file():
            try:
                recorded = json.loads(private.read_text(encoding="utf-8")).get("batch")
            except (ValueError, AttributeError):
                raise StudyError(f"{private}: malformed; rebuild the study with `force=True` or give `batch`") from None
            if isinstance(recorded, str):
                return Path(recorded)
        return Path(self.manifest.batch.path) if self.manifest.batch.path else None

    @cached_property
    def by_id(self) -> dict[str, Trial]:
        return {t.trial_id: t for t in self.trials}

    def plan(self, participant: str) -> list[str]:
        """The trial ids `participant` must see, in order (contract.participant_plan with the study's options)."""
        if participant not in self._plans:
            options = self.manifest.options
            self._plans[participant] = participant_plan(self.trials, options.seed, participant, options.per_participant)
        return self._plans[participant]

    @property
    def data_dir(self) -> Path:
        """STUDY/data, refused when it is a symlink or resolves anywhere but inside the study folder."""
        data = self.root / DATA_DIR
        if data.is_symlink():
            raise StudyError(f"{data}: is a symbolic link; sessions are stored only in the study folder's own data/")
        try:
            return inside(self.root, data)
        except OutsideDestination as exc:
            raise StudyError(first_line(exc)) from None

    def session_path(self, participant: str, session: str) -> Path:
        """data/<participant>/<session>.json, both names checked, the result inside data/ (symlinks followed)."""
        try:
            check_participant(participant)
            check_name(session, "session id")
        except ValueError as exc:
            raise StudyError(str(exc)) from None
        data = self.data_dir
        try:
            return inside(data, data / participant / f"{session}.json")
        except OutsideDestination as exc:
            raise StudyError(first_line(exc)) from None

    def check_session(self, session: Session) -> None:
        """StudyError (one line) unless `session` belongs to this study: its id, its plan, each trial in place."""
        if session.study != self.study_id:
            raise StudyError(f"session is for study {session.study!r}, this study is {self.study_id!r}")
        plan = self.plan(session.participant)
        if session.plan != plan:
            raise StudyError(f"plan is not participant {session.participant!r}'s plan in this study "
                             f"({len(session.plan)} trials sent, {len(plan)} expected)")
        seen: set[int] = set()
        for trial in session.trials:
            if trial.index >= len(plan) and self.manifest.staircase is not None:
                continue  # a staircase step: staircase_answers checks them all, in order
            if trial.index >= len(plan):
                raise StudyError(f"trial index {trial.index} is past the plan's {len(plan)} trials")
            if plan[trial.index] != trial.trial_id:
                raise StudyError(f"trial {trial.index} is {trial.trial_id!r}; the plan has {plan[trial.index]!r} there")
            if trial.role != self.by_id[trial.trial_id].role:
                raise StudyError(f"trial {trial.trial_id!r} has role {trial.role!r}; trials.json says "
                                 f"{self.by_id[trial.trial_id].role!r}")
            if trial.index in seen:
                raise StudyError(f"trial index {trial.index} is given twice")
            seen.add(trial.index)
        self.staircase_answers(session)

    def staircase_answers(self, session: Session) -> list[tuple[float, bool]]:
        """The session's staircase steps as (level, correct), checked: step k at index len(plan) + k, role
        `staircase`, the trial the staircase picks there (staircase.py session_steps), at its recorded level."""
        from stim3d.study.staircase import session_steps

        stairs = self.manifest.staircase
        start = len(self.plan(session.participant))
        steps = sorted((t for t in session.trials if t.index >= start), key=lambda t: t.index)
        if stairs is None:
            return []
        for k, step in enumerate(steps):
            if step.index != start + k:
                raise StudyError(f"staircase step {k} is missing (trial index {start + k}; index {step.index} "
                                 "follows)")
            if step.role != "staircase":
                raise StudyError(f"staircase step {k} has role {step.role!r}, not 'staircase'")
        if len(steps) > stairs["spec"]["trials"]:
            raise StudyError(f"{len(steps)} staircase steps; the staircase has {stairs['spec']['trials']}")
        gold = {t.trial_id: t.gold_text for t in self.trials if t.role == "staircase" and t.gold_text is not None}
        try:
            answers = session_steps(stairs, self.manifest.options.seed, session.participant,
                                    [(t.trial_id, t.response) for t in steps], gold)
        except (KeyError, TypeError, IndexError, ValueError) as exc:
            raise StudyError(f"{MANIFEST}'s staircase is malformed ({type(exc).__name__}: {exc}); rebuild the study") from None
        for k, (step, (level, _)) in enumerate(zip(steps, answers)):
            if step.level is not None and step.level != level:
                raise StudyError(f"staircase step {k} says level {step.level}; the staircase asked {level}")
        return answers

    def parse_session(self, data: Any) -> Session:
        """A session from parsed JSON, checked against this study; StudyError (one line) otherwise."""
        try:
            session = Session.model_validate(data)
        except ValidationError as exc:
            raise StudyError(f"not a session: {first_line(exc)}") from None
        self.check_session(session)
        return session


def merge_sessions(stored: Session | None, new: Session) -> Session:
    """`new` with the trials of `stored` kept: a stored index is never replaced, new indices are added, and
    `complete` once true stays true (a reloaded page that resends an older state loses nothing)."""
    if stored is None:
        return new.model_copy(update={"trials": sorted(new.trials, key=lambda t: t.index)})
    trials = {t.index: t for t in new.trials}
    trials.update({t.index: t for t in stored.trials})
    return new.model_copy(update={"trials": [trials[i] for i in sorted(trials)],
                                  "complete": stored.complete or new.complete,
                                  "prolific": new.prolific or stored.prolific})


def answered_all(session: Session) -> bool:
    """Every position of the plan has a stored trial."""
    return {t.index for t in session.trials} >= set(range(len(session.plan)))
