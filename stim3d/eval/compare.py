"""`stim3d score BATCH --compare eval/*/`: several models' answers on one batch, scored and tabled side by side.

People's folders (`human`, `human-<participant>`, written by `stim3d study score`) are scored on the questions
they were shown, every response counted (eval/people.py); a model on every record, a missing answer wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stim3d.eval.people import people_folder, score_folder
from stim3d.eval.report import write_compare
from stim3d.eval.run import EvalError
from stim3d.eval.store import RESPONSES, latest_responses
from stim3d.scoring.records import Record
from stim3d.scoring.report import ScoreReport, score
from stim3d.scoring.report import read_predictions as read_prediction_file


def model_answers(source: Path) -> tuple[str, dict[str, str | None]]:
    """(name, {question_id: response}) of an eval folder (its responses.jsonl) or a predictions JSONL file."""
    source = Path(source)
    if source.is_dir():
        if not (source / RESPONSES).is_file():
            raise EvalError(f"no {RESPONSES} in it (an eval/<model>/ folder of `stim3d eval`)", field="compare",
                            value=source)
        return source.name, latest_responses(source)
    if source.is_file():
        return source.stem, read_prediction_file(source)[0]
    raise EvalError("no such file or folder", field="compare", value=source)


def compare(records: Sequence[Record], sources: Sequence[Path], out: Path, title: str) -> tuple[Path, dict[str, ScoreReport]]:
    """Score each source on `records` and write the page `out`; (the page, {name: report})."""
    reports: dict[str, ScoreReport] = {}
    for source in sources:
        if Path(source).is_dir() and people_folder(source):  # `stim3d study score`'s human folders
            name, report = Path(source).name, score_folder(records, Path(source))[1]
        else:
            name, answers = model_answers(source)
            report = score(records, answers)
        if name in reports:
            raise EvalError(f"two sources are named {name!r}; give each model its own folder name", field="compare")
        reports[name] = report
    return write_compare(out, records, reports, title), reports
