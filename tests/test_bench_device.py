"""GPU discipline: every benchmark that renders with Cycles takes `--device gpu` and its result file says which
device it used (docs/performance.md, "On a GPU")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.common import Run

ROOT = Path(__file__).resolve().parents[1]
# Every bench that renders with Cycles (render_settings and throughput had --device before this list).
RENDERING = ["batch_memory", "batch_throughput", "full_preset", "full_suite", "item_overhead", "looks_settings", "mask_agreement",
             "pipeline_overhead", "render_quality", "render_settings", "rose_finish", "throughput", "visibility_speed"]


@pytest.mark.parametrize("name", RENDERING)
def test_every_rendering_bench_takes_device_gpu(name):
    done = subprocess.run([sys.executable, "-m", f"bench.{name}", "--help"], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == 0, done.stderr[-1000:]
    assert "--device {cpu,gpu}" in done.stdout


def test_the_result_file_records_the_device(tmp_path):
    path = Run("probe", quick=True, out=tmp_path / "probe.json", device="gpu").finish({})
    assert json.loads(path.read_text())["device"] == "gpu"
    path = Run("probe", quick=True, out=tmp_path / "none.json").finish({})  # a bench that renders nothing
    assert "device" not in json.loads(path.read_text())
