"""bench.full_suite's bookkeeping over runs: a suite longer than a session, rendered preset by preset in several roots."""

from __future__ import annotations

import json

from bench.full_suite import earlier_runs, per_preset

SETTINGS = {"device": "cpu", "workers": 1, "sample_every": 1, "overrides": {"engine": None, "width": None, "height": None}}


def run(root: str, commit: str, **presets: tuple[int, float, int]) -> dict:
    """A run entry: preset -> (items, wall seconds, rendered)."""
    return {"commit": commit, "root": root, "presets": {
        name: {"items": items, "wall_seconds": wall, "rendered": rendered, "failures": 0}
        for name, (items, wall, rendered) in presets.items()}}


def test_a_preset_restarted_in_a_new_root_counts_only_that_root():
    runs = [run("/lost", "a", dysm3d=(496, 1000.0, 496), rose3d=(2000, 480.0, 193)),
            run("/new", "b", rose3d=(2000, 3000.0, 1500)),
            run("/new", "c", rose3d=(2000, 1000.0, 500), ava3d=(1360, 100.0, 60))]
    rows = {r["preset"]: r for r in per_preset(runs)}
    assert list(rows) == ["dysm3d", "rose3d", "ava3d"]  # the suite's order
    rose = rows["rose3d"]
    assert (rose["root"], rose["rendered"], rose["wall_seconds"], rose["runs"]) == ("/new", 2000, 4000.0, 2)
    assert rose["complete"] and rose["commits"] == ["b", "c"] and rose["seconds_per_item"] == 2.0
    assert rows["dysm3d"]["complete"] and not rows["ava3d"]["complete"]


def test_runs_from_a_file_written_before_runs_named_their_root_take_the_files_root(tmp_path):
    results = tmp_path / "full_suite.json"
    results.write_text(json.dumps({
        "settings": {**SETTINGS, "root": "/work/suite_root"}, "load_average": {"start": 1.0, "max_sampled": 2.0},
        "figures": {"presets": [{"preset": "dysm3d", "items": 496, "failures": 0}],
                    "runs": [{"commit": "a", "presets": {"dysm3d": {"wall_seconds": 900.0, "rendered": 496}}}]}}))
    [earlier] = earlier_runs(results, SETTINGS)
    assert earlier["root"] == "/work/suite_root" and earlier["load_average"]["max_sampled"] == 2.0
    assert earlier["presets"]["dysm3d"] == {"items": 496, "failures": 0, "wall_seconds": 900.0, "rendered": 496}
    assert earlier_runs(results, {**SETTINGS, "sample_every": 100}) == []  # a sample never adds to a full run
    assert earlier_runs(results, {**SETTINGS, "workers": 2}) == []


def test_earlier_runs_of_presets_the_last_run_did_not_render_are_read_back(tmp_path):
    # The file's top-level rows are only the last run's presets; runs that name their items keep them.
    results = tmp_path / "full_suite.json"
    earlier = run("/lost", "a", dysm3d=(496, 900.0, 496))
    last = run("/new", "b", rubrics3d=(1038, 300.0, 228))
    results.write_text(json.dumps({
        "settings": {**SETTINGS, "root": "/new"}, "load_average": {"start": 1.0, "max_sampled": 2.0},
        "figures": {"presets": [{"preset": "rubrics3d", "items": 1038, "failures": 0}], "runs": [earlier, last]}}))
    runs = earlier_runs(results, SETTINGS)
    assert [r["root"] for r in runs] == ["/lost", "/new"]
    assert runs[0]["presets"]["dysm3d"]["items"] == 496 and runs[1]["presets"]["rubrics3d"]["rendered"] == 228
