"""`stim3d render all`: every seed preset into one root, a folder per preset, one suite.json (render/batch/suite.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stim3d.render.batch.config import load_config
from stim3d.render.batch.plan import expand
from stim3d.render.batch.suite import SUITE_PRESETS, SUITE_SUMMARY
from stim3d.scenes.presets import preset_names, preset_path
from tests.batch_support import complete_items, start_stim3d, wait_until

ROOT = Path(__file__).resolve().parents[1]
SHARD = 1000  # every 1000th item of each preset: 9 items in all
TINY = ["--engine", "raster", "--width", "320", "--height", "240", "--shard", f"1/{SHARD}", "--quiet"]


def stim3d(*argv: str) -> subprocess.CompletedProcess:
    """The command line as a user runs it, from the repository's root."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "stim3d", *argv], capture_output=True, text=True, env=env,
                          timeout=900, cwd=ROOT)


def shard_ids(name: str) -> set[str]:
    """The item ids `--shard 1/SHARD` selects, from the preset's plan: every SHARD-th item."""
    path = preset_path(name)
    assert path is not None
    return {plan.item_id for i, plan in enumerate(expand(load_config(path))) if i % SHARD == 0}


def test_the_suite_is_every_seed_preset():
    assert set(SUITE_PRESETS) == set(preset_names()) - {"demo"}


@pytest.mark.raster
def test_render_all_writes_a_folder_per_preset_and_one_summary_and_resumes(tmp_path):
    out = tmp_path / "suite"
    first = stim3d("render", "all", "--out", str(out), *TINY)
    assert first.returncode == 0, first.stderr[-2000:]
    summary = json.loads((out / SUITE_SUMMARY).read_text())
    assert [p["preset"] for p in summary["presets"]] == list(SUITE_PRESETS)
    expected = {name: shard_ids(name) for name in SUITE_PRESETS}
    for row in summary["presets"]:
        name = row["preset"]
        folders = {p.name for p in (out / name / "items").iterdir()}
        assert folders == expected[name], name
        assert (row["items"], row["rendered"], row["failed"]) == (len(expected[name]), len(expected[name]), {})
        assert row["wall_seconds"] > 0
        manifest = json.loads((out / name / "batch.json").read_text())
        assert manifest["config"]["render"]["engine"] == "raster"  # the overrides reached every preset
    assert summary["total"]["items"] == sum(map(len, expected.values())) == 9
    assert summary["total"]["failed"] == 0 and summary["shard"] == f"1/{SHARD}"
    assert summary["code"]["git_commit"]
    assert "total      items     9  rendered     9" in first.stdout
    again = stim3d("render", "all", "--out", str(out), *TINY)  # a rerun resumes every preset: nothing to render
    assert again.returncode == 0, again.stderr[-2000:]
    totals = json.loads((out / SUITE_SUMMARY).read_text())["total"]
    assert (totals["rendered"], totals["skipped"]) == (0, 9)


@pytest.mark.raster
def test_an_interrupted_suite_says_in_suite_json_how_far_it_got_and_a_rerun_finishes(tmp_path):
    out = tmp_path / "suite"
    # 10 dysm3d items, then 32 of oddgrid3d: time to stop inside the second. At the presets' own 640x480, as
    # the labelled 7x7 OddGrid boards need; at 320x240 one of them cannot keep its smallest object 10 px across.
    tiny = ["--engine", "raster", "--width", "640", "--height", "480", "--shard", "1/50"]
    run = start_stim3d("render", "all", "--out", str(out), *tiny, "--quiet")
    assert wait_until(lambda: len(complete_items(out / "oddgrid3d")) >= 1 or run.poll() is not None, timeout=600)
    run.send_signal(signal.SIGTERM)
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 130, stderr[-2000:]
    assert "stim3d: oddgrid3d: interrupted after" in stderr and "Traceback" not in stderr
    stopped = json.loads((out / SUITE_SUMMARY).read_text())
    assert stopped["interrupted"] == "oddgrid3d"
    assert [p["preset"] for p in stopped["presets"]] == ["dysm3d", "oddgrid3d"]  # the later presets never started
    dysm, odd = stopped["presets"]
    assert dysm["rendered"] == len(complete_items(out / "dysm3d")) == 10
    assert 1 <= odd["rendered"] == len(complete_items(out / "oddgrid3d")) < odd["items"] == 32
    assert odd["wall_seconds"] > 0

    rerun = stim3d("render", "all", "--out", str(out), *tiny)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    finished = json.loads((out / SUITE_SUMMARY).read_text())
    assert finished["interrupted"] is None
    rows = {p["preset"]: p for p in finished["presets"]}
    assert list(rows) == list(SUITE_PRESETS)
    assert (rows["oddgrid3d"]["skipped"], rows["oddgrid3d"]["rendered"]) == (odd["rendered"], 32 - odd["rendered"])


def test_render_all_refuses_a_linked_preset_folder_and_a_bad_shard_in_one_line(tmp_path):
    out = tmp_path / "suite"
    out.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (out / "dysm3d").symlink_to(tmp_path / "elsewhere")
    refused = stim3d("render", "all", "--out", str(out), *TINY)
    assert refused.returncode == 2 and "symbolic link" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not list((tmp_path / "elsewhere").iterdir())
    bad = stim3d("render", "all", "--out", str(tmp_path / "other"), "--shard", "0/3")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "stim3d: error: shard 0/3: expected k/n with 1 <= k <= n"]


def test_validate_all_checks_every_seed_preset():
    done = stim3d("validate", "all")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == list(SUITE_PRESETS)
    for name, line in zip(SUITE_PRESETS, lines):
        path = preset_path(name)
        assert path is not None
        assert f"valid; {len(expand(load_config(path)))} items" in line


@pytest.mark.raster
def test_render_all_presets_renders_only_the_named_presets_in_suite_order(tmp_path):
    out = tmp_path / "suite"
    done = stim3d("render", "all", "--out", str(out), "--presets", "rose3d,dysm3d", *TINY)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / SUITE_SUMMARY).read_text())
    assert [p["preset"] for p in summary["presets"]] == ["dysm3d", "rose3d"]  # the suite's order, not the argument's
    for row in summary["presets"]:
        folders = {p.name for p in (out / row["preset"] / "items").iterdir()}
        assert folders == shard_ids(row["preset"]) and row["rendered"] == len(folders)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["dysm3d", "rose3d"]


@pytest.mark.parametrize("argv, message", [
    (["all", "--presets", "rose"], "stim3d: error: --presets 'rose': 'rose' is not a seed preset (the suite's are "
                                   "dysm3d, oddgrid3d, rose3d, ava3d, rubrics3d)"),
    (["all", "--presets", "ava3d,ava3d"], "stim3d: error: --presets 'ava3d,ava3d': 'ava3d' is named twice"),
    (["all", "--presets", ""], "stim3d: error: --presets '': '' is not a seed preset (the suite's are "
                               "dysm3d, oddgrid3d, rose3d, ava3d, rubrics3d)"),
    (["demo", "--presets", "dysm3d"], "stim3d: error: --presets goes with `stim3d render all`, not with a config (demo)"),
])
def test_a_bad_presets_argument_is_one_line_and_renders_nothing(tmp_path, argv, message):
    bad = stim3d("render", *argv, "--out", str(tmp_path / "out"))
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [message]
    assert not (tmp_path / "out").exists()
