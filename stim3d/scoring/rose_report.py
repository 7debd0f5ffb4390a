"""ROSE's tables: metrics per task and region case, and tasks paired on one scene (the bridge analysis).

ROSE asks five questions of one scene (rose_grid's `subject.task` T1..T5, with
`subject.case` none / some / all), so two views matter beyond the generic report
(report.py, which already scores every record):

- `task_case_rows`: per task and case, PASS (exact), VALID (the answer parsed,
  i.e. the strict grammar held), SOFT (the record's own rule: count SOFT, strict set
  F1, or click-and-submit SOFT), C-F1 (strict set F1, click records only) and R-OK
  (`region_ok`, click records only); a metric that does not apply is None.
- `paired_rows`: ROSE's counting-to-action gap on the *same* scene: for each task,
  its PASS on the scenes whose anchor task (T1, the global count) was answered
  right, and on those where it was not. Scenes are joined by the records'
  `scene_id`, so the cue image's T4 pairs with the base image's T1.

Both take the records and the `QuestionResult`s of `report.score` in record order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from .records import Record
from .report import QuestionResult

TASK_KEY = "task"
CASE_KEY = "case"


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class TaskCaseRow:
    task: str
    case: str
    n: int
    pass_rate: float
    valid: float
    soft: float
    c_f1: float | None
    r_ok: float | None


@dataclass(frozen=True)
class PairRow:
    task: str
    anchor: str
    n_anchor_right: int
    pass_anchor_right: float | None
    n_anchor_wrong: int
    pass_anchor_wrong: float | None


def task_case_rows(records: Sequence[Record], results: Sequence[QuestionResult]) -> list[TaskCaseRow]:
    """Per task: one row per case (none, some, all), then one over all its cases (case "all cases")."""
    groups: dict[tuple[str, str], list[QuestionResult]] = defaultdict(list)
    for record, result in zip(records, results):
        task = record.subject.get(TASK_KEY)
        if task is None:
            continue
        groups[(str(task), str(record.subject.get(CASE_KEY, "")))].append(result)
        groups[(str(task), "all cases")].append(result)
    rows = []
    order = {case: i for i, case in enumerate(("none", "some", "all", "all cases"))}
    for (task, case), members in sorted(groups.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], -1), kv[0][1])):
        rows.append(TaskCaseRow(
            task=task, case=case, n=len(members),
            pass_rate=sum(r.correct for r in members) / len(members),
            valid=sum(r.valid for r in members) / len(members),
            soft=sum(r.score for r in members) / len(members),
            c_f1=_mean([r.rules["set_f1"] for r in members if "set_f1" in r.rules]),
            r_ok=_mean([r.rules["region_ok"] for r in members if "region_ok" in r.rules]),
        ))
    return rows


def paired_rows(records: Sequence[Record], results: Sequence[QuestionResult], anchor: str = "T1") -> list[PairRow]:
    """Each other task's PASS on scenes where `anchor` was right vs wrong (scenes without the anchor are left out)."""
    scenes: dict[str, dict[str, list[QuestionResult]]] = defaultdict(lambda: defaultdict(list))
    for record, result in zip(records, results):
        task = record.subject.get(TASK_KEY)
        if task is not None:
            scenes[record.scene_id][str(task)].append(result)
    split: dict[str, dict[bool, list[bool]]] = defaultdict(lambda: {True: [], False: []})
    for tasks in scenes.values():
        if anchor not in tasks:
            continue
        right = all(r.correct for r in tasks[anchor])
        for task, members in tasks.items():
            if task != anchor:
                split[task][right].extend(r.correct for r in members)
    return [PairRow(task, anchor, len(by[True]), _mean([float(v) for v in by[True]]),
                    len(by[False]), _mean([float(v) for v in by[False]]))
            for task, by in sorted(split.items())]


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def format_rose(records: Sequence[Record], results: Sequence[QuestionResult], anchor: str = "T1") -> list[str]:
    """Both tables as printed lines (empty when no record names a task)."""
    rows = task_case_rows(records, results)
    if not rows:
        return []
    lines = [f"{'task':<5} {'case':<10} {'n':>5} {'PASS':>6} {'VALID':>6} {'SOFT':>6} {'C-F1':>6} {'R-OK':>6}"]
    for row in rows:
        lines.append(f"{row.task:<5} {row.case:<10} {row.n:>5} {row.pass_rate:>6.3f} {row.valid:>6.3f} {row.soft:>6.3f} "
                     f"{_num(row.c_f1):>6} {_num(row.r_ok):>6}")
    for pair in paired_rows(records, results, anchor):
        lines.append(f"{pair.task} PASS on scenes where {anchor} was right: {_num(pair.pass_anchor_right)} "
                     f"(n={pair.n_anchor_right}); where it was wrong: {_num(pair.pass_anchor_wrong)} "
                     f"(n={pair.n_anchor_wrong})")
    return lines
