"""Resume: a batch killed at any moment and rerun ends with exactly the files of an uninterrupted run.

Also: a rerun refuses a changed config unless --force, and SIGTERM stops the workers promptly.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from tests.batch_support import (
    alive,
    assert_same_batch,
    children_of,
    complete_items,
    start_stim3d,
    stim3d,
    temporaries,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.bpy

ITEMS = 9  # TINY_CONFIG with count=6: 6 shape_count + 3 shape_color_count


@pytest.fixture(scope="module")
def reference(reference_batch):
    config, out = reference_batch
    assert len(complete_items(out)) == ITEMS
    return config, out


def test_resumed_batch_equals_uninterrupted(reference, tmp_path):
    config, expected = reference
    out = tmp_path / "out"
    run = start_stim3d("render", str(config), "--out", str(out), "--workers", "2", "--quiet")
    assert wait_until(lambda: len(complete_items(out)) >= 2 or run.poll() is not None, timeout=120)
    workers = children_of(run.pid)
    os.kill(run.pid, signal.SIGKILL)
    run.wait()
    done_at_kill = len(complete_items(out))
    assert done_at_kill < ITEMS, "the batch finished before it could be killed; the test proves nothing"
    # The workers die with the parent: no orphan keeps writing into the folder.
    assert workers and wait_until(lambda: not any(alive(pid) for pid in workers), timeout=10)
    # What a kill during a write leaves behind: a half-written temporary item folder.
    stale = out / "items" / ".shape_count-t0-00005.tmp-otherhost-999999"  # stim3d/files.py temporary_sibling
    stale.mkdir(parents=True, exist_ok=True)
    (stale / "image.png").write_bytes(b"half")

    rerun = stim3d("render", str(config), "--out", str(out), "--workers", "2", "--quiet")
    assert rerun.returncode == 0, rerun.stderr
    assert f"skipped (already done): {done_at_kill}" in rerun.stdout
    assert_same_batch(out, expected)
    assert temporaries(out) == []


def test_sigterm_stops_workers_promptly_and_says_how_to_resume(reference, tmp_path):
    config, expected = reference
    out = tmp_path / "out"
    run = start_stim3d("render", str(config), "--out", str(out), "--workers", "2")
    assert wait_until(lambda: len(complete_items(out)) >= 1 or run.poll() is not None, timeout=120)
    workers = children_of(run.pid)
    run.send_signal(signal.SIGTERM)
    _, stderr = run.communicate(timeout=15)
    assert run.returncode == 130, stderr
    assert "Rerun the same command to resume" in stderr and "Traceback" not in stderr
    assert workers and wait_until(lambda: not any(alive(pid) for pid in workers), timeout=5)
    assert temporaries(out) == []
    assert not (out / "records.jsonl").exists()  # batch-level files are written by a finished run only


def test_changed_config_is_refused_unless_forced(reference, tmp_path):
    config, expected = reference
    out = tmp_path / "out"
    first = write_config(tmp_path, "first.yaml", count=1)
    assert stim3d("render", str(first), "--out", str(out), "--quiet").returncode == 0
    before = (out / "items" / "shape_count-t0-00000" / "item.json").read_bytes()

    changed = write_config(tmp_path, "changed.yaml", seed=12, count=1)
    refused = stim3d("render", str(changed), "--out", str(out), "--quiet")
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "different config" in lines[0] and "--force" in lines[0], refused.stderr
    assert (out / "items" / "shape_count-t0-00000" / "item.json").read_bytes() == before  # nothing touched

    forced = stim3d("render", str(changed), "--out", str(out), "--quiet", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "[1/" not in forced.stderr  # --quiet: no per-item lines
    after = json.loads((out / "items" / "shape_count-t0-00000" / "item.json").read_text())
    assert after["seed_entropy"][0] == 12  # re-rendered from the new config
    assert json.loads((out / "batch.json").read_text())["config"]["seed"] == 12
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert {r["item_id"] for r in records} == set(complete_items(out))
    # Rerunning the new config now resumes (skips everything) instead of refusing.
    again = stim3d("render", str(changed), "--out", str(out), "--quiet")
    assert again.returncode == 0 and "rendered: 0" in again.stdout
