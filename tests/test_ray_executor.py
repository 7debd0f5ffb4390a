"""The Ray executor: a local Ray renders the same batch, byte for byte, as the local worker processes.

Needs the `ray` extra; skipped (with the reason) where Ray is not installed.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("ray", reason="Ray is not installed: the Ray executor needs the ray extra "
                                  "(pip install 'stim3d[ray]', or scripts/install.sh --ray)")

from tests.batch_support import assert_same_batch, reference_batch, stim3d, temporaries, write_config  # noqa: E402


@pytest.mark.bpy
def test_ray_executor_output_equals_the_local_executor(tmp_path_factory, tmp_path):
    config, expected = reference_batch(tmp_path_factory)
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
