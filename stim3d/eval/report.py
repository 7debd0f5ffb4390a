"""report.html and its figures for one model's scores on a batch, and the side-by-side page of several models.

What the page holds (each table is also a PNG beside it):
- accuracy per family and per question type (family and answer type), with 95 %
  Wilson intervals (stats.py);
- accuracy against each difficulty axis the records vary (numeric `difficulty`
  keys with two or more values);
- over occlusion sweeps (records with `sweep_level`), the psychometric curve:
  accuracy against the requested visibility level, a fitted logistic and its 50 %
  threshold;
- ROSE's perception-to-action gap (scoring/rose_report.py): each task's PASS on
  scenes whose global count (T1) was right versus wrong.
The page is static (no scripts, no external assets) and names its figures relatively.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stim3d.eval import figures
from stim3d.eval.baselines import question_type
from stim3d.eval.stats import SWEEP_LEVEL, Cell, axis_cells, fit_logistic, grouped, varied_axes
from stim3d.render.files import write_text_atomic
from stim3d.scoring.records import Record
from stim3d.scoring.report import ScoreReport
from stim3d.scoring.rose_report import paired_rows

MAX_AXES = 16
STYLE = ("body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;margin:1em 0}"
         "td,th{border:1px solid #bbb;padding:2px 8px;text-align:right}td:first-child,th:first-child{text-align:left}"
         "img{max-width:100%}")


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _cell_rows(cells: Sequence[Cell]) -> list[list[Any]]:
    return [[c.label, c.n, c.correct, c.accuracy, f"[{c.interval[0]:.3f}, {c.interval[1]:.3f}]"] for c in cells]


CELL_HEADER = ("group", "n", "correct", "accuracy", "95 % interval")


def sections(folder: Path, records: Sequence[Record], report: ScoreReport) -> tuple[list[str], list[Path]]:
    """The HTML sections of one model's report and the PNGs written for them into `folder`."""
    results = report.questions
    parts: list[str] = []
    files: list[Path] = []
    for name, labels in (("family", [r.family for r in records]), ("question type", [question_type(r) for r in records])):
        cells = grouped(labels, results)
        png = figures.bars(cells, f"accuracy by {name}", folder / f"accuracy_by_{name.replace(' ', '_')}.png")
        files.append(png)
        parts.append(f"<h2>Accuracy by {name}</h2>{_table(CELL_HEADER, _cell_rows(cells))}<img src='{png.name}'>")
    for axis in varied_axes(records)[:MAX_AXES]:
        cells = axis_cells(records, results, axis)
        fit = None
        title = f"accuracy by {axis}"
        if axis == SWEEP_LEVEL:
            fit = fit_logistic([float(c.label) for c in cells], [c.correct for c in cells], [c.n for c in cells])
            title = "psychometric curve over occlusion sweeps"
        png = figures.curve(cells, axis, folder / f"axis_{re.sub(r'[^A-Za-z0-9_-]', '_', axis)}.png", fit, title)
        files.append(png)
        note = ""
        if fit is not None:
            threshold = fit.threshold
            note = (f"<p>Logistic fit: intercept {fit.intercept:.3f}, slope {fit.slope:.3f}; 50 % threshold at "
                    f"{axis} = {_fmt(threshold)}.</p>")
        parts.append(f"<h2>{html.escape(title)}</h2>{note}{_table(CELL_HEADER, _cell_rows(cells))}<img src='{png.name}'>")
    pairs = paired_rows(records, results)
    if pairs:
        rows = [[p.task, p.n_anchor_right, p.pass_anchor_right, p.n_anchor_wrong, p.pass_anchor_wrong,
                 None if p.pass_anchor_right is None or p.pass_anchor_wrong is None
                 else p.pass_anchor_right - p.pass_anchor_wrong] for p in pairs]
        parts.append("<h2>ROSE: perception-to-action gap</h2><p>Each task's PASS on scenes whose global count (T1) "
                     "was answered right, and where it was wrong.</p>" + _table(
                         ("task", "n (T1 right)", "PASS", "n (T1 wrong)", "PASS", "gap"), rows))
    return parts, files


def _page(title: str, body: Sequence[str]) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>{''.join(body)}</body></html>\n")


def write_report(folder: Path, records: Sequence[Record], report: ScoreReport, title: str,
                 run: Mapping[str, Any] | None = None) -> list[Path]:
    """Write scores.json, report.html and its PNGs into `folder`; the files written."""
    from stim3d.eval.store import REPORT, SCORES

    folder.mkdir(parents=True, exist_ok=True)
    overall = grouped(["all"] * len(records), report.questions)[0]
    lo, hi = overall.interval
    head = [f"<p>{overall.n} questions, {overall.correct} right: accuracy {overall.accuracy:.3f} "
            f"(95 % interval [{lo:.3f}, {hi:.3f}]); missing {len(report.missing_ids)}.</p>"]
    if run:
        head.append(_table(("run", "value"), [[k, v] for k, v in run.items()]))
    parts, files = sections(folder, records, report)
    write_text_atomic(folder / SCORES, json.dumps({**report.to_dict(), **({"run": dict(run)} if run else {})},
                                                  indent=2) + "\n")
    write_text_atomic(folder / REPORT, _page(title, head + parts))
    return [folder / SCORES, folder / REPORT, *files]


def write_compare(path: Path, records: Sequence[Record], reports: Mapping[str, ScoreReport], title: str) -> Path:
    """One page (`path`) of every model side by side: overall, per family, per question type."""
    path.parent.mkdir(parents=True, exist_ok=True)
    names = list(reports)
    body = []
    # labels from each report's own results: people are scored on the questions they saw, one result per response
    # (eval/people.py), so a report's results need not line up with `records`
    for name, label in (("all", lambda q: "all"), ("family", lambda q: q.family),
                        ("question type", lambda q: f"{q.family} ({q.answer_type})")):
        per_model = {m: {c.label: c for c in grouped([label(q) for q in reports[m].questions], reports[m].questions)}
                     for m in names}
        groups = sorted({g for cells in per_model.values() for g in cells}, key=str)
        rows = []
        for group in groups:
            row: list[Any] = [group]
            for m in names:
                cell = per_model[m].get(group)
                row.append("-" if cell is None else
                           f"{cell.accuracy:.3f} [{cell.interval[0]:.2f}, {cell.interval[1]:.2f}] n={cell.n}")
            rows.append(row)
        body.append(f"<h2>Accuracy: {name}</h2>" + _table((name, *names), rows))
    write_text_atomic(path, _page(title, body))
    return path
