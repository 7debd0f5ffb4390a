"""report.html and its figures for one model's scores on a batch, and the side-by-side page of several models.

What the page holds (each table is also a PNG beside it):
- accuracy per family and per question type (family and answer type), with 95 %
  Wilson intervals (stats.py), and per look when the records hold several, in the
  realism ladder's order (clevr, studio, photoreal_raw, photoreal: docs/looks.md), so a
  batch of one scene set on every rung says what realism costs the model;
- accuracy against each difficulty axis the records vary (numeric `difficulty`
  keys with two or more values);
- over occlusion sweeps (records with `sweep_level`), the psychometric curve:
  accuracy against the requested visibility level, a fitted logistic and its 50 %
  threshold;
- ROSE's perception-to-action gap (scoring/rose_report.py): each task's PASS on
  scenes whose global count (T1) was right versus wrong.
- at the top: the score (accuracy with its interval, the partial-credit score, the
  parse rate), the baselines on the same records (constant, random, oracle), the
  run's settings (endpoint, model, sampling, system prompt, extra body, image
  scale, seed, stim3d version) and any warning, and a sample of the wrong and of
  the unparsed answers beside their images (thumbnails linking to the images).
The page is static (no scripts, no external assets) and names its figures and
images relatively, so the batch folder can be moved or zipped whole.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from stim3d.eval import figures
from stim3d.eval.baselines import NAMES, PREFIX, baseline_answers, question_type
from stim3d.eval.stats import SWEEP_LEVEL, Cell, axis_cells, fit_logistic, grouped, varied_axes
from stim3d.files import write_text_atomic
from stim3d.scenes.model import LADDER
from stim3d.scoring.records import Record
from stim3d.scoring.report import QuestionResult, ScoreReport, score
from stim3d.scoring.rose_report import paired_rows

MAX_AXES = 16
STYLE = ("body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;margin:1em 0}"
         "td,th{border:1px solid #bbb;padding:2px 8px;text-align:right}td:first-child,th:first-child{text-align:left}"
         "img{max-width:100%}figure{display:inline-block;vertical-align:top;width:14em;margin:0 1em 1em 0}"
         "figure img{width:100%;image-rendering:pixelated}figcaption{font-size:80%;overflow-wrap:anywhere}")
SAMPLE = 12  # wrong answers, and unparsed ones, shown with their images


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], shown: Any = None) -> str:
    shown = shown or _fmt
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(shown(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _fmt(value: Any) -> str:
    """A proportion to three decimals; a count as the integer it is."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _plain(value: Any) -> str:
    """A setting as given: numbers in their shortest form (`0`, `0.5`, `120`), mappings as JSON."""
    if isinstance(value, float):
        return f"{value:g}"
    return _fmt(value)


def _label(value: Any) -> Any:
    """A group's label: a whole-numbered level (3 objects, read as 3.0) as `3`, a fraction in its shortest form."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:g}"
    return value


def _cell_rows(cells: Sequence[Cell]) -> list[list[Any]]:
    return [[_label(c.label), c.n, c.correct, c.accuracy, f"[{c.interval[0]:.3f}, {c.interval[1]:.3f}]"]
            for c in cells]


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
    looks = [str(r.difficulty.get("look", "studio")) for r in records]  # studio items record no look
    if len(set(looks)) > 1:
        rung = {name: index for index, name in enumerate(LADDER)}
        cells = sorted(grouped(looks, results), key=lambda cell: (rung.get(cell.label, len(LADDER)), str(cell.label)))
        png = figures.bars(cells, "accuracy by look (the realism ladder)", folder / "accuracy_by_look.png")
        files.append(png)
        parts.append("<h2>Accuracy by look: the realism ladder</h2><p>The looks in the ladder's order, least to most "
                     "photographic; rendered from one scene set (variants over looks, or <code>stim3d sweep "
                     "look</code>), they differ in appearance only.</p>"
                     f"{_table(CELL_HEADER, _cell_rows(cells))}<img src='{png.name}'>")
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


def baseline_scores(records: Sequence[Record], seed: int = 0) -> dict[str, dict[str, float]]:
    """Accuracy and partial-credit score of each baseline on `records`: the floor and ceiling beside the model.

    Each question counts once (people's pooled reports repeat a question's record once per response).
    """
    records = list({record.question_id: record for record in records}.values())
    scores = {}
    for name in NAMES:
        answer = baseline_answers(PREFIX + name, records, seed)
        row = score(records, {r.question_id: answer(r) for r in records}).rows[0].to_dict()
        scores[PREFIX + name] = {"accuracy": row["accuracy"], "score": row["score"]}
    return scores


def _head(records: Sequence[Record], report: ScoreReport, run: Mapping[str, Any] | None,
          baselines: Mapping[str, Mapping[str, float]]) -> list[str]:
    """The top of the page: the score, the baselines, any warning, the settings and the run's counts."""
    overall = grouped(["all"] * len(records), report.questions)[0]
    lo, hi = overall.interval
    row = report.rows[0].to_dict() if report.rows else {"score": 0.0, "valid_rate": 0.0}
    head = [f"<p>{overall.n} questions, {overall.correct} right: accuracy {overall.accuracy:.3f} "
            f"(95 % interval [{lo:.3f}, {hi:.3f}]); partial-credit score {row['score']:.3f}; "
            f"parse rate {row['valid_rate']:.3f}; missing {len(report.missing_ids)}.</p>"]
    if baselines:
        rows = [["this model", row.get("accuracy", overall.accuracy), row["score"]]]
        rows += [[name, value["accuracy"], value["score"]] for name, value in baselines.items()]
        head.append("<h2>Baselines</h2>" + _table(("answers", "accuracy", "partial-credit score"), rows))
    run = dict(run or {})
    head += [f"<p><strong>warning:</strong> {html.escape(str(w))}</p>" for w in run.pop("warnings", None) or []]
    settings = run.pop("settings", None)
    if settings is not None:
        rows = [[k, v] for k, v in settings.items()] + [["stim3d version", run.pop("stim3d_version", "")]]
        head.append("<h2>Settings</h2>" + _table(("setting", "value"), rows, _plain))
    if run:
        head.append(_table(("run", "value"), [[k, v] for k, v in run.items()], _plain))
    return head


def _samples(folder: Path, records: Sequence[Record], results: Sequence[QuestionResult], images: Path) -> list[str]:
    """Up to SAMPLE wrong answers and SAMPLE unparsed ones, each under its image (linked relatively)."""
    wrong = [(r, q) for r, q in zip(records, results) if q.answered and q.valid and not q.correct]
    unparsed = [(r, q) for r, q in zip(records, results) if q.answered and not q.valid]
    parts = []
    for title, chosen in (("Wrong answers", wrong), ("Unparsed answers", unparsed)):
        if not chosen:
            continue
        figures_html = []
        for record, result in chosen[:SAMPLE]:
            link = quote(Path(os.path.relpath(Path(images) / record.image.path, folder)).as_posix())
            response = (result.response or "")[:200]
            caption = (f"{record.question_id}<br>gold: {html.escape(json.dumps(result.gold))}<br>"
                       f"answer: {html.escape(response)}")
            figures_html.append(f"<figure><a href='{link}'><img src='{link}' alt='{html.escape(record.question_id)}'>"
                                f"</a><figcaption>{caption}</figcaption></figure>")
        more = f" (the first {SAMPLE} of {len(chosen)})" if len(chosen) > SAMPLE else f" ({len(chosen)})"
        parts.append(f"<h2>{title}{more}</h2><div>{''.join(figures_html)}</div>")
    return parts


def write_report(folder: Path, records: Sequence[Record], report: ScoreReport, title: str,
                 run: Mapping[str, Any] | None = None, images: Path | None = None, seed: int = 0) -> list[Path]:
    """Write scores.json, report.html and its PNGs into `folder`; the files written.

    `images`: the batch folder the records' image paths are relative to (for the sample of wrong and unparsed
    answers; none without it). `seed`: of the random baseline.
    """
    from stim3d.eval.store import REPORT, SCORES

    folder.mkdir(parents=True, exist_ok=True)
    baselines = baseline_scores(records, seed) if records else {}
    head = _head(records, report, run, baselines)
    if images is not None:
        head += _samples(folder, records, report.questions, Path(images))
    parts, files = sections(folder, records, report)
    data = {**report.to_dict(), **({"run": dict(run)} if run else {}), "baselines": baselines}
    write_text_atomic(folder / SCORES, json.dumps(data, indent=2) + "\n")
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
