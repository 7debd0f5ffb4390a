"""The Ray executor: a local Ray renders the same batch, byte for byte, as the local worker processes.

Needs the `ray` extra; skipped (with the reason) where Ray is not installed.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("ray", reason="Ray is not installed: the Ray executor needs the ray extra "
                                  "(scripts/install.sh --ray, or pip install -e '.[ray]' in a checkout)")

from tests.batch_support import (  # noqa: E402
    ITEM_TIMEOUT,
    assert_same_batch,
    stim3d,
    temporaries,
    write_config,
)
from tests.worker_faults import fault_env


@pytest.mark.bpy
def test_ray_executor_output_equals_the_local_executor(reference_batch, tmp_path):
    config, expected = reference_batch
    out = tmp_path / "out"
    # No --address: stim3d starts a local Ray with this machine's CPUs (2 on CI) and stops it afterwards.
    result = stim3d("render", str(config), "--out", str(out), "--executor", "ray", "--workers", "2", "--quiet")
    assert result.returncode == 0, result.stderr
    assert "[ray, 2 worker(s)]" in result.stdout
    assert_same_batch(out, expected)
    assert temporaries(out) == []
    assert json.loads((out / "summary.json").read_text())["executor"] == "ray"


def test_an_unreachable_ray_address_is_one_clear_line(tmp_path):
    config = write_config(tmp_path)
    result = stim3d("render", str(config), "--out", str(tmp_path / "out"), "--executor", "ray", "--address", "127.0.0.1:1")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "no Ray cluster reachable at '127.0.0.1:1'" in lines[0], result.stderr
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_a_hung_ray_actor_is_killed_at_the_item_timeout(tmp_path):
    config = tmp_path / "batch.yaml"
    config.write_text("seed: 5\nrender: {engine: raster, width: 64, height: 48}\n"
                      "tasks:\n  - {family: shape_count, count: 4, params: {max_instances: 2}}\n")
    hung = "shape_count-t0-00001"  # the actor sleeps as a hung render would (tests/worker_faults.py, through the environment Ray inherits)
    result = stim3d("render", str(config), "--out", str(tmp_path / "out"), "--executor", "ray", "--workers", "2",
                    "--item-timeout", str(ITEM_TIMEOUT), "--quiet", env=fault_env(hang=hung), timeout=240)
    assert result.returncode == 1, result.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert list(summary["failed"]) == [hung] and summary["rendered"] == 3
    assert summary["failed"][hung]["reason"].startswith(f"took longer than the item timeout ({ITEM_TIMEOUT} s)")
