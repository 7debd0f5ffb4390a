"""What a batch reports: counts, seconds per item, failures, and the best constant answer per question type."""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from stim3d.scenes.look_contrast import FLOOR_DE
from stim3d.scoring.records import Record


@dataclass(frozen=True)
class ConstantBaseline:
    """Accuracy of always giving the most frequent gold answer, for one question type."""

    question_type: str
    questions: int
    best_answer: str
    accuracy: float
    distinct_answers: int
    per_cell_accuracy: float = 0.0  # always answering each grid cell's most frequent gold
    cells: int = 0


@dataclass
class BatchReport:
    total: int = 0
    rendered: int = 0
    skipped: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)  # items that needed more than one attempt
    redone: dict[str, str] = field(default_factory=dict)  # items found on disk but not intact: why they were redone
    seconds: list[float] = field(default_factory=list)
    records: int = 0
    baselines: list[ConstantBaseline] = field(default_factory=list)
    shard: str | None = None
    executor: str = "local"
    workers: int = 1
    looks: dict[str, dict[str, int]] = field(default_factory=dict)  # look_counts of the records

    @property
    def done(self) -> int:
        return self.rendered + len(self.failed)

    @property
    def retries(self) -> int:
        """Extra attempts this run needed: each is an item tried again after its worker died or raised."""
        return sum(n - 1 for n in self.attempts.values())

    def summary_lines(self) -> list[str]:
        where = f" (shard {self.shard})" if self.shard else ""
        lines = [f"items{where}: {self.total}  rendered: {self.rendered}  skipped (already done): {self.skipped}  "
                 f"failed: {len(self.failed)}   [{self.executor}, {self.workers} worker(s)]"]
        for item_id, problem in sorted(self.redone.items()):
            lines.append(f"redone {item_id}: the folder on disk did not verify ({problem})")
        if self.retries:
            lines.append(f"retried after a worker died or raised: {self.retries} attempt(s) of "
                         f"{len(self.attempts)} item(s)")
        lines += seconds_lines(self.seconds)
        lines += failure_lines(self.failed, self.attempts)
        lines += baseline_lines(self.baselines)
        lines += look_lines(self.looks)
        if self.shard:
            lines.append("records: not written for a shard; run `stim3d merge` over the shard folders")
        else:
            lines.append(f"records: {self.records}")
        return lines

    def to_json(self) -> dict:
        return {
            "items": self.total, "rendered": self.rendered, "skipped": self.skipped,
            "failed": {k: {"reason": v, "attempts": self.attempts.get(k, 1)} for k, v in sorted(self.failed.items())},
            "retries": self.retries, "attempts": dict(sorted(self.attempts.items())),
            "redone": dict(sorted(self.redone.items())),
            "seconds_per_item": seconds_stats(self.seconds), "records": self.records,
            "constant_baseline": [asdict(b) for b in self.baselines],
            "executor": self.executor, "workers": self.workers, "looks": self.looks,
        }


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def seconds_stats(seconds: list[float]) -> dict[str, float | int] | None:
    if not seconds:
        return None
    return {"n": len(seconds), "median": round(statistics.median(seconds), 3), "p95": round(percentile(seconds, 95), 3),
            "max": round(max(seconds), 3)}


def seconds_lines(seconds: list[float]) -> list[str]:
    stats = seconds_stats(seconds)
    if not stats:
        return []
    return [f"seconds per rendered item: median {stats['median']:.2f}, p95 {stats['p95']:.2f}, max {stats['max']:.2f} "
            f"({stats['n']} items)"]


def failure_lines(failed: dict[str, str], attempts: dict[str, int]) -> list[str]:
    lines = []
    for item_id, reason in sorted(failed.items()):
        tries = attempts.get(item_id, 1)
        lines.append(f"failed {item_id}{f' after {tries} attempts' if tries > 1 else ''}: {reason.splitlines()[0]}")
    return lines


def look_counts(records: Iterable[Record]) -> dict[str, dict[str, int]]:
    """Per look, over the batch's items: how many there are, how many needed a redraw (a named colour was not the
    nearest palette colour in the image, scenes/look_colours.py, or an object stood out from its surroundings by
    less than the contrast floor, scenes/look_contrast.py), how many still fail the colour check after the last
    redraw and how many still hold an object under the contrast floor. Read from the records' difficulty (`look`,
    `look_redraws`, `look_colour_failures`, `min_contrast_de`, render/batch/records.py); an item without `look` is
    studio, whose redraw keys are there only when it was redrawn (its ground's grey for contrast, its re-exposures
    for colour: scenes/look_redraws.py)."""
    items: dict[str, dict[str, Any]] = {}
    for record in records:
        items.setdefault(record.item_id, record.difficulty)
    counts: dict[str, dict[str, int]] = {}
    for difficulty in items.values():
        look = str(difficulty.get("look", "studio"))
        row = counts.setdefault(look, {"items": 0, "redrawn": 0, "redraws": 0, "still_failing": 0,
                                       "under_contrast_floor": 0})
        redraws = int(difficulty.get("look_redraws") or 0)
        least = difficulty.get("min_contrast_de")
        row["items"] += 1
        row["redrawn"] += redraws > 0
        row["redraws"] += redraws
        row["still_failing"] += bool(difficulty.get("look_colour_failures"))
        row["under_contrast_floor"] += isinstance(least, (int, float)) and least < FLOOR_DE
    return dict(sorted(counts.items()))


def look_lines(looks: dict[str, dict[str, int]]) -> list[str]:
    """One line per look when the batch holds any look but studio, or studio needed a ground redraw."""
    studio = looks.get("studio", {})
    if set(looks) <= {"studio"} and not (studio.get("redrawn") or studio.get("under_contrast_floor")):
        return []
    return [f"look {name}: {row['items']} items, {row['redrawn']} redrawn for colour or contrast "
            f"({row['redraws']} redraws), {row['still_failing']} still failing colour, "
            f"{row.get('under_contrast_floor', 0)} under the contrast floor ({FLOOR_DE:g} dE)"
            for name, row in looks.items()]


def cell_key(record: Record) -> str:
    """The grid cell a record's item came from: its task and every family parameter except the answer.

    The parameters are read back from `difficulty` (which holds every family
    parameter, sequences flattened as name.0, name.1); `answer` is left out because
    a batch schedules it per item, not per cell.
    """
    from stim3d.scenes.families import FAMILIES

    entropy = getattr(getattr(record, "provenance", None), "seed_entropy", [])
    task = entropy[1] if len(entropy) > 1 else 0
    family = FAMILIES.get(record.family)
    fields = set(family.params_model.model_fields) - {"answer"} if family else set()
    difficulty = getattr(record, "difficulty", {})
    values = {k: v for k, v in sorted(difficulty.items()) if k.split(".")[0] in fields}
    return json.dumps([record.family, task, values])


def question_type_of(record: Record) -> str:
    """"family (answer type)", with the question's task when it names one ("rose_grid T2 (strict_count)").

    ROSE asks T1 (global count) and T2 (local count) of one scene in the same answer
    type; their answers are scheduled separately and a constant does differently on
    each, so they are reported apart.
    """
    task = getattr(record, "subject", {}).get("task")
    return f"{record.family} {task} ({record.answer.type})" if task else f"{record.family} ({record.answer.type})"


def constant_baselines(records: Iterable[Record]) -> list[ConstantBaseline]:
    """Per question type (family and answer type; ROSE: and task), the accuracy of always answering the most frequent gold.

    Answers are scheduled over each task (scenes/balance.py), so the marginal figure
    sits near 1 / distinct answers. The per-cell figure is what a model reaches that
    knows each item's grid cell (e.g. max_instances from counting the objects) and
    answers that cell's most frequent gold: an upper bound on answer-prior shortcuts.
    """
    golds: dict[str, Counter] = defaultdict(Counter)
    cell_golds: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for record in records:
        if record.answer.type == "rubric":  # a describe question's gold is a whole rubric: no constant answer
            continue
        question_type = question_type_of(record)
        gold = json.dumps(record.answer.gold)
        golds[question_type][gold] += 1
        cell_golds[question_type][cell_key(record)][gold] += 1
    baselines = []
    for question_type, counts in sorted(golds.items()):
        answer, hits = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        total = sum(counts.values())
        cells = cell_golds[question_type]
        per_cell = sum(max(c.values()) for c in cells.values())
        baselines.append(ConstantBaseline(question_type, total, answer, round(hits / total, 4), len(counts),
                                          round(per_cell / total, 4), len(cells)))
    return baselines


def baseline_lines(baselines: list[ConstantBaseline]) -> list[str]:
    if not baselines:
        return []
    width = max(len("question type"), *(len(b.question_type) for b in baselines))
    lines = ["best constant answer per question type (scheduled answers keep it near 1/distinct; "
             "per cell: the best constant within each grid cell):",
             f"  {'question type':<{width}}  questions  answer  accuracy  distinct  per cell  cells"]
    for b in baselines:
        lines.append(f"  {b.question_type:<{width}}  {b.questions:>9}  {b.best_answer:>6}  {b.accuracy:>8.3f}  "
                     f"{b.distinct_answers:>8}  {b.per_cell_accuracy:>8.3f}  {b.cells:>5}")
    return lines
