"""lmms-eval export: the imagefolder dataset plus a task YAML and `utils.py` wired to stim3d's scoring.

lmms-eval registers a task from a YAML file (`task`, `dataset_path`, `test_split`,
`output_type: generate_until`, `doc_to_visual`, `doc_to_text`, `doc_to_target`,
`process_results` as `!function utils.NAME`, `metric_list`, `generation_kwargs`).
The layout written here:

    DEST/dataset/        `stim3d export imagefolder` of the batches (one row per question)
    DEST/records.jsonl   the records, with `question_id` as the dataset's (batch-prefixed) id
    DEST/<task>.yaml     the task: dataset_path imagefolder, data_dir DEST/dataset (absolute), test_split
                         the batches' split; batches made with `splits:` hold several: one task per
                         split then, DEST/<task>_<split>.yaml (or one split's, `split`)
    DEST/utils.py        doc_to_visual (the image), doc_to_text (the record's prompt),
                         doc_to_target (the gold as text), process_results (stim3d's
                         `score_record` on the record of that row: exact_match and score)

Copy DEST into lmms-eval's tasks folder (or pass `--include_path DEST`); utils.py
needs `stim3d` importable (its light `stim3d.scoring` part only): the command that
installs it is in utils.py's docstring (stim3d/install_hint.py; stim3d is not on a package index).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from stim3d.export.common import ExportError, ExportReport, export_folder, exportable_items
from stim3d.export.imagefolder import export_imagefolder
from stim3d.install_hint import install_hint
from stim3d.scenes.names import check_name

DATASET_DIR = "dataset"
RECORDS_FILE = "records.jsonl"


class Function(str):
    """A `!function utils.NAME` reference, as lmms-eval's YAML loader reads it."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(Function, lambda dumper, value: dumper.represent_scalar("!function", str(value)))


def task_yaml(task: str, data_dir: Path, split: str) -> str:
    """The task YAML text, with the hooks as `!function` tags."""
    body = {
        "task": task,
        "dataset_path": "imagefolder",
        "dataset_kwargs": {"data_dir": str(data_dir)},
        "test_split": split,
        "output_type": "generate_until",
        "doc_to_visual": Function("utils.doc_to_visual"),
        "doc_to_text": Function("utils.doc_to_text"),
        "doc_to_target": Function("utils.doc_to_target"),
        "process_results": Function("utils.process_results"),
        "generation_kwargs": {"max_new_tokens": 256, "temperature": 0, "do_sample": False, "until": []},
        "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True},
                        {"metric": "score", "aggregation": "mean", "higher_is_better": True}],
        "metadata": {"version": 1, "source": "stim3d export lmms-eval"},
    }
    return yaml.dump(body, Dumper=_Dumper, sort_keys=False)


def export_lmms_eval(batches: Sequence[Path], dest: Path, task: str = "stim3d", split: str | None = None) -> ExportReport:
    """Write the dataset, records, task YAML(s) and utils.py into DEST (new or empty): `split`'s only when given.

    An lmms-eval task reads one split (`test_split`), so batches holding several get one task per split, named
    `<task>_<split>`, over the one dataset: each split is evaluated as it is, none is picked for the user."""
    try:
        check_name(task, "task name")
    except ValueError as exc:
        raise ExportError(str(exc)) from None
    # The same items as the dataset export_imagefolder writes below: torn ones are skipped by the one shared rule.
    items = [entry for entry, _ in exportable_items(batches, ExportReport(Path(dest), batches=len(batches)), split)]
    splits = sorted({r.split for e in items for r in e.records})
    if not splits:
        raise ExportError("the batches hold no exportable item; an lmms-eval task needs at least one question")
    tasks = {task: splits[0]} if len(splits) == 1 else {f"{task}_{name}": name for name in splits}
    dest = Path(dest)
    with export_folder(dest) as tmp:
        report = export_imagefolder(batches, tmp / DATASET_DIR, split)
        report.dest = dest
        with (tmp / RECORDS_FILE).open("w", encoding="utf-8") as f:
            for entry in items:
                for record in entry.records:  # the dataset's id for a question: "<batch>-<question_id>"
                    f.write(record.model_copy(update={"question_id": f"{entry.batch}-{record.question_id}"})
                            .model_dump_json() + "\n")
        for name, task_split in tasks.items():
            (tmp / f"{name}.yaml").write_text(task_yaml(name, dest.resolve() / DATASET_DIR, task_split), encoding="utf-8")
        (tmp / "utils.py").write_text(UTILS.replace("{install}", install_hint()), encoding="utf-8")
    return report


UTILS = '''\
"""lmms-eval hooks for a stim3d task (made by `stim3d export lmms-eval`): the prompt is the record's own, and
answers are scored by stim3d's scoring core, so the numbers equal `stim3d score` on the same answers.
stim3d must be importable here: {install} (as the copy of stim3d that wrote this file would be installed)."""

import json
from functools import lru_cache
from pathlib import Path

RECORDS = Path(__file__).with_name("records.jsonl")


@lru_cache(maxsize=1)
def _records():
    from stim3d.scoring.records import parse_record

    lines = RECORDS.read_text(encoding="utf-8").splitlines()
    return {r.question_id: r for r in (parse_record(json.loads(line)) for line in lines if line.strip())}


def doc_to_visual(doc):
    return [doc["image"].convert("RGB")]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['prompt']}{kwargs.get('post_prompt', '')}"


def doc_to_target(doc):
    return doc["answer"]


def process_results(doc, results):
    from stim3d.scoring.report import score_record

    result = score_record(_records()[doc["question_id"]], results[0] if results else None)
    return {"exact_match": float(result.correct), "score": float(result.score)}
'''
