"""People's staircase thresholds in a `--staircase` study: per participant, pooled, and beside the models.

Each included participant's staircase steps are replayed (folder.py `staircase_answers`:
the same checks as the server, then staircase.py `replay`), giving the threshold the page
itself would compute, with its posterior SD and 95 % credible interval. Two group numbers:

- **pooled**: one posterior from every included participant's answers together, as if
  they shared one threshold (`replay` without the level check: the levels were chosen by
  each person's own staircase). Its interval is about the group's common threshold and is
  narrower than any person's; when people differ, read it with the spread below.
- **between people**: the mean of the individual thresholds and their SD.

`BATCH/eval/<model>/staircase.json` (`stim3d eval --staircase`) holds a model's threshold
per sweep question; `versus_section` puts those beside the people's in
people-vs-models.html.
"""

from __future__ import annotations

import html
import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stim3d.study.contract import Session
from stim3d.study.folder import StudyFolder
from stim3d.study.staircase import Estimate, replay

MODEL_RESULT = "staircase.json"  # eval/staircase.py RESULT


@dataclass(frozen=True)
class Threshold:
    """One participant's staircase: the (level, correct) steps and the estimate from them."""

    answers: list[tuple[float, bool]]
    estimate: Estimate

    @property
    def correct(self) -> int:
        return sum(right for _, right in self.answers)

    def as_dict(self) -> dict[str, Any]:
        return {**self.estimate.as_dict(), "correct": self.correct,
                "steps": [{"level": level, "correct": right} for level, right in self.answers]}


def estimate_text(est: Mapping[str, Any]) -> str:
    """An estimate (`Estimate.as_dict()`) as `stim3d eval --staircase` prints it."""
    return (f"threshold {est['threshold']:.3f} (SD {est['sd']:.3f}, 95% CI {est['ci'][0]:.3f}-{est['ci'][1]:.3f}) "
            f"from {est['trials']} trials")


def participant_threshold(study: StudyFolder, session: Session) -> Threshold | None:
    """The replayed staircase of `session` (None in a study without one, or before the first step)."""
    if study.manifest.staircase is None:
        return None
    answers = study.staircase_answers(session)
    if not answers:
        return None
    return Threshold(answers, replay(study.manifest.staircase["spec"], answers))


def pooled(study: StudyFolder, people: Mapping[str, Threshold]) -> dict[str, Any] | None:
    """The pooled posterior and the spread of individual thresholds (module docstring), or None without people."""
    if study.manifest.staircase is None or not people:
        return None
    answers = [step for person in people.values() for step in person.answers]
    est = replay(study.manifest.staircase["spec"], answers, check_levels=False)
    thresholds = [p.estimate.threshold for p in people.values()]
    return {"estimate": est.as_dict(), "participants": len(people), "answers": len(answers),
            "individual_mean": statistics.fmean(thresholds),
            "individual_sd": statistics.stdev(thresholds) if len(thresholds) > 1 else None}


def pooled_line(summary: Mapping[str, Any]) -> str:
    line = f"staircase (pooled): {estimate_text(summary['estimate'])} of {summary['participants']} participant(s)"
    if summary["individual_sd"] is not None:
        line += f"; individual thresholds mean {summary['individual_mean']:.3f}, SD {summary['individual_sd']:.3f}"
    return line


def model_thresholds(eval_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    """(model, sweep track) for every `stim3d eval --staircase` result under BATCH/eval/, in folder order."""
    found = []
    for path in sorted(eval_dir.glob(f"*/{MODEL_RESULT}")):
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(document, dict):
            continue
        for track in document.get("sweeps") or []:
            if isinstance(track, dict) and isinstance(track.get("estimate"), dict):
                found.append((str(document.get("model", path.parent.name)), track))
    return found


def _row(name: str, est: Mapping[str, Any], levels: Sequence[float], right: Any) -> list[str]:
    return [name, f"{est['threshold']:.3f}", f"{est['sd']:.3f}", f"{est['ci'][0]:.3f} - {est['ci'][1]:.3f}",
            str(est["trials"]), str(right), f"{min(levels):g} - {max(levels):g}"]


def versus_section(eval_dir: Path, levels: Sequence[float], people: Mapping[str, Threshold],
                   group: Mapping[str, Any] | None) -> str:
    """people-vs-models.html's staircase table: each participant, the pooled people, each model's sweeps."""
    rows = [_row(f"human:{name}", p.estimate.as_dict(), levels, p.correct) for name, p in people.items()]
    if group is not None:
        rows.append(_row(f"human (pooled, {group['participants']} participants)", group["estimate"], levels, "-"))
    for model, track in model_thresholds(eval_dir):
        right = sum(bool(step.get("correct")) for step in track.get("steps") or [])
        rows.append(_row(f"{model} ({track.get('track', '?')})", track["estimate"], track.get("levels") or levels,
                         right))
    head = "".join(f"<th>{h}</th>" for h in ("", "threshold", "SD", "95 % interval", "steps", "right", "levels"))
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    note = ("" if any(True for _ in model_thresholds(eval_dir)) else
            " No model has a staircase result yet: <code>stim3d eval BATCH --model NAME --staircase</code> adds one.")
    return ("<h2>Staircase thresholds</h2><p>The visibility level at which each observer starts to fail (posterior "
            "mean of the QUEST-style staircase, docs/study_staircase.md), its SD and 95 % credible interval. The "
            "pooled row treats all participants' answers as one observer's." + note + "</p>"
            f"<table><tr>{head}</tr>{body}</table>")
