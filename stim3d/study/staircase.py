"""A staircase study: the QUEST-style staircase of eval/adaptive.py over a sweep folder's trials, for people.

`staircase_manifest` puts the levels and the trials of each level into study.json;
`pick_trial` chooses which trial of a level a participant sees at a step (with
contract.fnv1a32, as js/staircase.js does); `session_steps` checks a session's steps and
judges each answer against its trial's gold text, as the page does (docs/study_staircase.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stim3d.eval.adaptive import (  # noqa: F401  (re-exported: the study's modules and tests take them from here)
    CREDIBLE,
    DEFAULT_SLOPE,
    DEFAULT_TRIALS,
    GRID_POINTS,
    MAX_TRIALS,
    OPEN_GUESS,
    PAGE_JUDGED,
    Estimate,
    Staircase,
    StaircaseError,
    StaircaseSpec,
    guess_rate,
    make_spec,
    nearest_level,
    replay,
)
from stim3d.study.contract import Trial, fnv1a32


def level_key(level: float) -> str:
    """How a level is written in the manifest and in the trial-pick hash (sweep levels are thousandths)."""
    return f"{level:.3f}"


def staircase_manifest(trials: Sequence[Trial], spec: StaircaseSpec | dict[str, Any]) -> dict[str, Any]:
    """What study.json's `staircase` key holds: the spec, and per level its key and the ids of its trials.

    The trials are the study's staircase (or main) trials that carry `difficulty.sweep_level`; every
    level of the spec must have at least one, each with `gold_text` (the page judges the
    answer by it) and an answer type the page can judge (`PAGE_JUDGED`).
    """
    spec = make_spec(spec)
    by_key: dict[str, list[str]] = {level_key(level): [] for level in spec.levels}
    sweeps: set[str] = set()
    for trial in trials:
        level = trial.difficulty.get("sweep_level")
        if trial.role not in ("main", "staircase") or not isinstance(level, (int, float)):
            continue
        key = level_key(float(level))
        if key not in by_key:
            continue
        if trial.answer_type not in PAGE_JUDGED:
            raise StaircaseError(f"trial {trial.trial_id}: answer type {trial.answer_type!r} cannot be judged by "
                                 f"the page; staircases take {', '.join(PAGE_JUDGED)}")
        if trial.gold_text is None:
            raise StaircaseError(f"trial {trial.trial_id}: a staircase trial needs its gold_text (the page judges by it)")
        by_key[key].append(trial.trial_id)
        sweeps.add(str(trial.difficulty.get("sweep_id", "")))
    empty = [k for k, ids in by_key.items() if not ids]
    if empty:
        raise StaircaseError(f"staircase level {empty[0]} has no main trial with that difficulty.sweep_level")
    return {
        "spec": spec.model_dump(mode="json"),
        "levels": list(spec.levels),
        "keys": list(by_key),
        "trial_ids": [sorted(ids) for ids in by_key.values()],
        "sweeps": sorted(sweeps),
        "grid_points": GRID_POINTS,
    }


def pick_trial(manifest: dict[str, Any], seed: int, participant: str, step: int, level: float) -> str:
    """The trial shown at `step` (from 0) for `level`: index fnv1a32(seed|participant|step|key) among the level's trials."""
    index = manifest["levels"].index(level)
    ids = manifest["trial_ids"][index]
    return ids[fnv1a32(f"{seed}|{participant}|{step}|{manifest['keys'][index]}") % len(ids)]


def session_steps(manifest: dict[str, Any], seed: int, participant: str, results: Sequence[tuple[str, str]],
                  gold_text: Mapping[str, str]) -> list[tuple[float, bool]]:
    """A session's staircase steps, (trial_id, response) in the order shown, checked and judged as the page did.

    Step k must show `pick_trial(manifest, seed, participant, k, level)` for the level the
    staircase picks after the steps before it; the answer is right when the response is
    exactly the trial's `gold_text` (the page's rule, js/staircase.js's caller). Returns the
    (level, correct) pairs `replay` takes; StaircaseError names the first step that differs,
    so the server can refuse a forged session and `stim3d study score` never scores one.
    """
    staircase = Staircase(manifest["spec"])
    answers: list[tuple[float, bool]] = []
    for step, (trial_id, response) in enumerate(results):
        level = staircase.next()
        expected = pick_trial(manifest, seed, participant, step, level)
        if trial_id != expected:
            raise StaircaseError(f"staircase step {step}: the session shows trial {trial_id}, "
                                 f"the staircase picks {expected} (level {level_key(level)})")
        if trial_id not in gold_text:
            raise StaircaseError(f"staircase step {step}: trial {trial_id} has no gold_text")
        correct = response == gold_text[trial_id]
        staircase.update(level, correct)
        answers.append((level, correct))
    return answers
