"""`BATCH/eval/<model-slug>/responses.jsonl`: every answer a model gave, append-only, one JSON line each.

A line is written (and fsynced) as soon as its answer arrives, so a run killed at
any moment loses at most the requests in flight; a half-written last line (the
kill came mid-write) is skipped on reading and closed off before the next append.
A response is found again by (question_id, model, request_hash): a rerun asks only
what has no line under the current hash, and a changed prompt or setting asks
again (the old line stays; the file is never rewritten).

A line: question_id, model, request_hash, response (the text the model returned),
usage (the server's token counts), latency_s, attempts, image_scale, raw (the
server's whole JSON answer). Nothing about the request's credentials is stored.
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stim3d.files import inside
from stim3d.scenes.names import NAME_LIMIT, check_name

EVAL_DIR = "eval"
RESPONSES = "responses.jsonl"
SCORES = "scores.json"
REPORT = "report.html"


def model_slug(model: str) -> str:
    """The folder name of a model: `Qwen/Qwen2.5-VL-7B` -> `Qwen_Qwen2.5-VL-7B`, `baseline:oracle` -> `baseline-oracle`."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", model.replace(":", "-")).strip("._-")[:NAME_LIMIT].replace("..", "_")
    return check_name(slug or "model", "model name")


def eval_folder(batch: Path, model: str) -> Path:
    """`batch/eval/<slug>`, refused if a symlink would take it outside the batch folder."""
    return inside(Path(batch), Path(batch) / EVAL_DIR / model_slug(model))


@dataclass(frozen=True)
class Key:
    question_id: str
    model: str
    request_hash: str


class ResponseStore:
    """The responses of one model on one batch; `add` may be called from several threads."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / RESPONSES
        self._lock = threading.Lock()
        self._rows: dict[Key, dict[str, Any]] = {}
        self.skipped_lines = 0
        if self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                row = _row(line)
                if row is None:
                    self.skipped_lines += line.strip() != ""
                    continue
                self._rows[Key(row["question_id"], row["model"], row["request_hash"])] = row

    def get(self, key: Key) -> dict[str, Any] | None:
        return self._rows.get(key)

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, row: dict[str, Any]) -> None:
        """Append one response line and make it durable before returning."""
        key = Key(row["question_id"], row["model"], row["request_hash"])
        line = json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a+b") as f:
                f.seek(0, os.SEEK_END)
                if f.tell() > 0:  # a run killed mid-write leaves a line without its newline: close it off
                    f.seek(-1, os.SEEK_END)
                    if f.read(1) != b"\n":
                        f.write(b"\n")
                f.write(line.encode("utf-8"))
                f.flush()
                os.fsync(f.fileno())
            self._rows[key] = row


def latest_responses(folder: Path) -> dict[str, str | None]:
    """{question_id: response} of a responses.jsonl in `folder`, the last line per question winning
    (what `stim3d score --compare` reads: whatever each model last answered)."""
    predictions: dict[str, str | None] = {}
    for line in (Path(folder) / RESPONSES).read_text(encoding="utf-8").splitlines():
        row = _row(line)
        if row is not None:
            predictions[row["question_id"]] = row.get("response")
    return predictions


def _row(line: str) -> dict[str, Any] | None:
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in ("question_id", "model", "request_hash")):
        return None
    return row
