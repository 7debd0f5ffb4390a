"""`BATCH/eval/people-vs-models.html`: the study's participants beside every model scored on the batch.

On the main questions at least one included participant answered (so both sides face the
same questions): people pooled (`human`, every response counted, eval/people.py) and each
model folder of BATCH/eval/ (its latest answer per question, a missing one wrong, as
`stim3d score --compare` scores it). The page holds:
- accuracy overall and per question type, and per difficulty axis the questions vary,
  with 95 % Wilson intervals (eval/stats.py);
- per axis, a logistic fitted to each column's accuracy and its 50 % point (the
  psychometric fit of report.html), drawn in one figure;
- each participant's accuracy; agreement between participants (agreement.py);
- in a `--staircase` study, each participant's threshold, the pooled one and every
  model's `stim3d eval --staircase` threshold (thresholds.py);
- the questions most people got wrong, each linked to the gallery's detail view of its
  item (`gallery/index.html#item=<id>`, stim3d/views/assets/gallery.js): candidates for
  broken stimuli.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from stim3d.eval.compare import model_answers
from stim3d.eval.people import PEOPLE, people_folder, score_responses
from stim3d.eval.report import CELL_HEADER, STYLE
from stim3d.eval.stats import Cell, Logistic, axis_cells, fit_logistic, grouped, varied_axes
from stim3d.eval.store import EVAL_DIR, RESPONSES
from stim3d.files import write_text_atomic
from stim3d.render.batch.reading import Batch
from stim3d.scoring.records import Record, answer_text
from stim3d.scoring.report import QuestionResult, score
from stim3d.study.agreement import fleiss_kappa, pairwise_agreement
from stim3d.study.thresholds import Threshold, versus_section

PAGE = "people-vs-models.html"
MAX_AXES = 16
MAX_FAILED = 50  # questions listed as most failed
Column = tuple[list[Record], list[QuestionResult]]  # aligned: the record of each scored result


def _columns(batch: Batch, pooled: list[dict[str, Any]], questions: list[Record]) -> dict[str, Column]:
    """{name: (records, results)}: people pooled first, then each model folder in name order."""
    scored, report = score_responses(questions, pooled)
    columns: dict[str, Column] = {PEOPLE: (scored, report.questions)}
    for folder in sorted((batch.folder / EVAL_DIR).glob("*/")):
        if not (folder / RESPONSES).is_file() or people_folder(folder):
            continue
        name, answers = model_answers(folder)
        columns[name] = (list(questions), score(questions, answers).questions)
    return columns


def _table(header: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _cell_text(cell: Cell | None) -> str:
    return "-" if cell is None else f"{cell.accuracy:.3f} [{cell.interval[0]:.2f}, {cell.interval[1]:.2f}] n={cell.n}"


def _side_by_side(title: str, per_column: Mapping[str, list[Cell]]) -> str:
    """One table: a row per group, a column per person/model, each cell accuracy, interval and n."""
    cells = {name: {c.label: c for c in found} for name, found in per_column.items()}
    groups = sorted({g for found in cells.values() for g in found}, key=lambda v: (isinstance(v, str), v))
    rows = [[g, *(_cell_text(cells[name].get(g)) for name in cells)] for g in groups]
    return f"<h2>{html.escape(title)}</h2>" + _table(("", *cells), rows)


def _curves(axis: str, per_column: Mapping[str, list[Cell]], fits: Mapping[str, Logistic | None], path: Path) -> Path:
    """Accuracy against `axis` for every column (points with Wilson intervals) and its fitted logistic."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    for k, (name, cells) in enumerate(per_column.items()):
        if not cells:
            continue
        colour = f"C{k % 10}"
        x = np.array([float(c.label) for c in cells])
        below = [max(0.0, c.accuracy - c.interval[0]) for c in cells]
        above = [max(0.0, c.interval[1] - c.accuracy) for c in cells]
        ax.errorbar(x + 0.004 * k * (x.max() - x.min() or 1), [c.accuracy for c in cells], yerr=[below, above],
                    fmt="o" if name == PEOPLE else "s", color=colour, capsize=3, label=name)
        fit = fits.get(name)
        if fit is not None:
            grid = np.linspace(x.min(), x.max(), 200)
            ax.plot(grid, fit(grid), color=colour, linestyle="-" if name == PEOPLE else "--")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(axis)
    ax.set_ylabel("accuracy")
    ax.set_title(f"people and models by {axis}")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _threshold(fit: Logistic | None, cells: Sequence[Cell]) -> str:
    """The fit's 50 % point when it lies within the levels tested (outside them it is an extrapolation, not shown)."""
    if fit is None or fit.threshold is None:
        return "-"
    low, high = min(float(c.label) for c in cells), max(float(c.label) for c in cells)
    return f"{fit.threshold:.4g}" if low <= fit.threshold <= high else f"outside [{low:g}, {high:g}]"


def _axis_sections(columns: Mapping[str, Column], axes: Sequence[str], folder: Path) -> list[str]:
    parts = []
    for axis in axes[:MAX_AXES]:
        per_column = {name: axis_cells(recs, results, axis) for name, (recs, results) in columns.items()}
        fits = {name: fit_logistic([float(c.label) for c in cells], [c.correct for c in cells], [c.n for c in cells])
                for name, cells in per_column.items()}
        png = _curves(axis, per_column, fits, folder / f"people-vs-models-{re.sub(r'[^A-Za-z0-9_-]', '_', axis)}.png")
        rows = [[name, "-" if fit is None else f"{fit.slope:.3f}", _threshold(fit, per_column[name])]
                for name, fit in fits.items()]
        parts.append(_side_by_side(f"Accuracy by {axis}", per_column)
                     + f"<p>Logistic fits (accuracy against {html.escape(axis)}): slope and the 50 % point.</p>"
                     + _table(("", "slope", "50 % threshold"), rows) + f"<img src='{png.name}'>")
    return parts


def _answer_key(result: QuestionResult) -> str:
    return json.dumps(result.parsed, sort_keys=True) if result.valid else "(no valid answer)"


def _people_sections(per_person: Mapping[str, list[dict[str, Any]]], records: Mapping[str, Record]) -> tuple[
        list[str], dict[str, list[QuestionResult]]]:
    """Each participant's accuracy and the agreement tables; also {question: every person's result}."""
    by_question: dict[str, list[QuestionResult]] = defaultdict(list)
    people_cells = []
    for person, rows in per_person.items():
        _, report = score_responses([records[r["question_id"]] for r in rows], rows)
        people_cells.append(Cell(f"{PEOPLE}:{person}", len(report.questions), sum(q.correct for q in report.questions)))
        for result in report.questions:
            by_question[result.question_id].append(result)
    shared = [results for results in by_question.values() if len(results) >= 2]
    answers = [[_answer_key(r) for r in results] for results in shared]
    rightness = [[str(r.correct) for r in results] for results in shared]

    def num(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    agreement = _table(("agreement over questions seen by two or more people", "on the answer", "on right/wrong"), [
        ["mean pairwise agreement", num(pairwise_agreement(answers)), num(pairwise_agreement(rightness))],
        ["Fleiss' kappa", num(fleiss_kappa(answers)), num(fleiss_kappa(rightness))]])
    table = _table(CELL_HEADER, [[c.label, c.n, c.correct, f"{c.accuracy:.3f}",
                                  f"[{c.interval[0]:.3f}, {c.interval[1]:.3f}]"] for c in people_cells])
    parts = [f"<h2>Participants</h2>{table}",
             f"<h2>Agreement between participants</h2><p>{len(shared)} questions were seen by two or more included "
             f"participants. The answer is compared as the scoring core parsed it.</p>{agreement}"]
    return parts, by_question


def _failed_section(by_question: Mapping[str, list[QuestionResult]], records: Mapping[str, Record],
                    columns: Mapping[str, Column], gallery: bool) -> str:
    """The questions a majority of their two or more participants got wrong, hardest first."""
    model_right = {name: {q.question_id for q in results if q.correct} for name, (_, results) in columns.items()
                   if name != PEOPLE}
    failed = [(qid, results) for qid, results in by_question.items()
              if len(results) >= 2 and sum(not r.correct for r in results) * 2 > len(results)]
    failed.sort(key=lambda kv: (-sum(not r.correct for r in kv[1]) / len(kv[1]), -len(kv[1]), kv[0]))
    rows = []
    for qid, results in failed[:MAX_FAILED]:
        record = records[qid]
        link = f"../gallery/index.html#item={quote(record.item_id, safe='')}"
        item = f"<a href='{html.escape(link)}'>{html.escape(record.item_id)}</a>" if gallery else html.escape(record.item_id)
        common, times = Counter(r.response or "" for r in results).most_common(1)[0]
        cells = [item, qid, record.question, len(results), sum(not r.correct for r in results),
                 answer_text(record.answer.type, record.answer.gold), f"{common} ({times})",
                 ", ".join(name for name, right in model_right.items() if qid in right) or "none"]
        rows.append("<tr>" + "".join(f"<td>{c if i == 0 else html.escape(str(c))}</td>" for i, c in enumerate(cells))
                    + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("item", "question", "text", "people", "wrong", "gold",
                                             "most common answer", "models right"))
    note = ("Each item links to its detail view in the batch's gallery." if gallery else
            "Build the gallery (<code>stim3d gallery BATCH</code>) to link each item to its detail view.")
    if not rows:
        return "<h2>Questions most people got wrong</h2><p>None: no question seen by two or more was failed by most.</p>"
    return (f"<h2>Questions most people got wrong</h2><p>Seen by two or more participants and failed by more than half: "
            f"candidates for broken stimuli. {note}</p><table><tr>{head}</tr>{''.join(rows)}</table>")


def write_versus(batch: Batch, per_person: Mapping[str, list[dict[str, Any]]], study_id: str,
                 thresholds: Mapping[str, Threshold] | None = None, staircase: Mapping[str, Any] | None = None,
                 levels: Sequence[float] | None = None) -> Path:
    """Write BATCH/eval/people-vs-models.html (and its PNGs) for the included participants' response lines;
    in a staircase study (`levels` given) with the thresholds beside the models' (thresholds.py)."""
    folder = batch.folder / EVAL_DIR
    folder.mkdir(parents=True, exist_ok=True)
    records = {r.question_id: r for r in batch.records}
    answered = {row["question_id"] for rows in per_person.values() for row in rows}
    questions = [r for r in batch.records if r.question_id in answered]
    pooled = [{**row, "model": PEOPLE} for rows in per_person.values() for row in rows]
    columns = _columns(batch, pooled, questions)
    included = f"{len(per_person)} included participant{'s' * (len(per_person) != 1)}"
    body = [f"<p>Study {html.escape(study_id)}: {included}, {len(pooled)} responses to "
            f"{len(questions)} questions. People are pooled (every response counts once); each model is scored on "
            "the same questions (a missing answer counts as wrong). Intervals are 95 % Wilson.</p>"]
    for title, label in (("Accuracy", lambda q: "all"), ("Accuracy by question type",
                                                           lambda q: f"{q.family} ({q.answer_type})")):
        body.append(_side_by_side(title, {name: grouped([label(q) for q in results], results)
                                          for name, (_, results) in columns.items()}))
    if levels:
        body.append(versus_section(folder, levels, thresholds or {}, staircase))
    body += _axis_sections(columns, varied_axes(questions), folder)
    people, by_question = _people_sections(per_person, records)
    body += people
    body.append(_failed_section(by_question, records, columns, (batch.folder / "gallery" / "index.html").is_file()))
    title = f"people vs models on {batch.folder.resolve().name}"
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>{''.join(body)}</body></html>\n")
    write_text_atomic(folder / PAGE, page)
    return folder / PAGE
