"""A batch folder made by an earlier stim3d resumes without a re-render (issue 24: the item key's bytes are kept).

tests/fixtures/batch_70581f6/ was rendered by commit 70581f6 (before `render/batch/folder.py`
owned the batch folder): `stim3d render config.yaml --out batch`, two Workbench items at
32x24. A resume with today's code must find both items done, render nothing and leave every
item file and records.jsonl byte for byte as they were.

If a change to the shape_count generator revision, RenderSettings or the stim3d version is
intended, this folder is rightly refused or re-rendered: regenerate it with the commit that
makes the change and say so in that commit.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from stim3d.api import load_batch, render_batch

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "batch_70581f6"


def _files(folder: Path) -> dict[str, bytes]:
    """Every file of the folder but those a run rewrites with its own times or commit (summary, timing, batch.json)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name not in ("summary.json", "timing.json", "batch.json")}


def test_a_folder_from_commit_70581f6_resumes_with_nothing_rendered(tmp_path):
    out = tmp_path / "batch"
    shutil.copytree(FIXTURE / "batch", out)
    before = _files(out)
    assert len([k for k in before if k.endswith("image.png")]) == 2

    report = render_batch(FIXTURE / "config.yaml", out)

    assert (report.rendered, report.skipped, report.failed, report.redone) == (0, 2, {}, {})
    assert _files(out) == before  # item files and records.jsonl: byte for byte
    assert json.loads((out / "batch.json").read_text())["config_hash"] == "8c9e0fc15a630eac"
    batch = load_batch(out)
    assert [item.item_id for item in batch.items] == ["shape_count-t0-00000", "shape_count-t0-00001"]
    assert len(batch.records) == 2
