"""Which items a model got wrong: the gallery's `--filter wrong=MODEL` (stim3d/views/gallery.py) reads it here."""

from __future__ import annotations

import json
from pathlib import Path

from stim3d.eval.errors import EvalError
from stim3d.eval.store import EVAL_DIR, SCORES, eval_folder

FILTER_KEY = "wrong"


def wrong_item_ids(batch: Path, model: str) -> set[str]:
    """Item ids with at least one question not answered right in `batch/eval/<model>/scores.json`.

    `model` is the model name or its folder name. EvalError (one line) when that model was not scored here.
    """
    path = eval_folder(batch, model) / SCORES
    if not path.is_file():
        models = sorted(p.parent.name for p in (Path(batch) / EVAL_DIR).glob(f"*/{SCORES}"))
        raise EvalError(f"no {path}; models scored here: {', '.join(models) or 'none'} (run `stim3d eval` first)",
                        field="filters", value=f"{FILTER_KEY}={model}")
    questions = json.loads(path.read_text(encoding="utf-8")).get("questions", [])
    return {q["item_id"] for q in questions if not q.get("correct")}
