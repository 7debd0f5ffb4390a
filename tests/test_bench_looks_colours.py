"""bench/looks_colours.py's figures (bench/results/looks_NOTES.md, "White balance per environment"): the share of items still
failing, dE statistics over judged objects, and the before/after comparison over items drawn alike."""

from __future__ import annotations

import json

import pytest

from bench.looks_colours import compare, summary


def _object(item: str, environment: str, delta_e: float, material: str = "plastic") -> dict:
    return {"look": "photoreal", "family": "ava_color", "item": item, "colour": "red", "material": material,
            "environment": environment, "measured_srgb": [0.8, 0.2, 0.2], "delta_e": delta_e}


def test_summary_counts_items_and_takes_the_error_statistics_over_objects():
    items = [{"redraws": 0, "still_failing": False}, {"redraws": 2, "still_failing": True, "exposure_correction_ev": -0.5},
             {"redraws": 1, "still_failing": False, "under_contrast_floor": True}, {"redraws": 0, "still_failing": False}]
    objects = [_object("a", "city", float(v)) for v in range(1, 21)]
    row = summary(items, objects)
    assert (row["items"], row["redrawn"], row["redraws"], row["still_failing"]) == (4, 2, 3, 1)
    assert row["failing_share"] == 0.25 and row["judged_objects"] == 20
    assert (row["exposure_corrected"], row["under_contrast_floor"]) == (1, 1)
    assert row["delta_e_median"] == 10.5 and row["delta_e_p95"] == pytest.approx(19.05)
    assert summary([], [])["delta_e_median"] is None  # a look with no items says so, it does not divide by 0


def test_compare_keeps_only_the_items_whose_final_environment_is_the_same_in_both(tmp_path, capsys):
    before = [_object("a", "city", 4.0), _object("b", "sunset", 20.0)]
    after = [_object("a", "city", 2.0), _object("b", "night", 1.0)]  # b was redrawn into another map: not paired
    paths = []
    for name, objects in (("before.json", before), ("after.json", after)):
        (tmp_path / name).write_text(json.dumps({"figures": {"objects": objects}}))
        paths.append(tmp_path / name)
    compare(*paths)
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    paired = next(r for r in rows if r[:2] == ["photoreal", "all"])
    assert [float(v) for v in paired[2:]] == [1, 1, 4.0, 4.0, 2.0, 2.0]
    assert not any("sunset" in r or "night" in r for r in rows[:rows.index(paired)])


def test_a_preset_sample_keeps_the_presets_own_tasks_and_settings_in_the_asked_look():
    """`--preset`: the measurement at the presets' settings renders the preset's tasks of the colour families with
    their own size, sampling and parameters, in the look asked for; the other families' tasks are left out."""
    from bench.looks_colours import _preset_config
    from stim3d.render.batch.config import load_config
    from stim3d.scenes.presets import preset_path

    preset = load_config(preset_path("dysm3d"))
    config = _preset_config("dysm3d", ("shape_color_count", "odd_grid"), "clevr")
    assert {task["family"] for task in config["tasks"]} == {"shape_color_count"}
    assert config["render"]["look"] == "clevr"
    assert (config["render"]["width"], config["render"]["samples"]) == (preset.render.width, preset.render.samples)
    kept = next(t for t in preset.tasks if t.family == "shape_color_count")
    assert config["tasks"][0]["count"] == kept.count
    with pytest.raises(SystemExit, match="not a preset"):
        _preset_config("dysm4d", ("shape_color_count",), "clevr")
    with pytest.raises(SystemExit, match="has no task of"):
        _preset_config("rose3d", ("ava_color",), "clevr")


def test_the_failing_share_bound_is_the_exact_binomial_one():
    """0 failures in n items bound the share at about 3/n (the rule of three): 200 clean items do not yet show a
    share under 1 %; 1 in 200 gives Clopper-Pearson's one-sided 95 % bound 2.35 %."""
    from bench.looks_colours import failing_bound

    assert failing_bound(0, 200) == pytest.approx(1 - 0.05 ** (1 / 200), rel=1e-6)
    assert failing_bound(0, 200) > 0.01 > failing_bound(0, 300)
    assert failing_bound(1, 200) == pytest.approx(0.0235, abs=5e-4)
    assert failing_bound(0, 0) == 1.0


def test_the_rounds_of_a_preset_sample_together_take_every_step_th_item_and_each_round_a_uniform_share():
    """bench.looks_colours_presets: round r's shard selects index % (step * ROUNDS) == step * (r - 1), so the rounds
    are disjoint, together every step-th item, and each spread over the whole plan (both variants of a scene when
    the step is odd)."""
    from bench.looks_colours_presets import ROUNDS, STEPS, shard
    from stim3d.render.batch.driver import Shard

    plans = list(range(2000))
    for step in STEPS.values():
        rounds = [Shard.parse(shard(step, r)).select(plans) for r in range(1, ROUNDS + 1)]
        assert sorted(i for chosen in rounds for i in chosen) == plans[::step]
        assert all(max(chosen) > 1900 for chosen in rounds)  # each round reaches the end of the plan
    odd = Shard.parse(shard(STEPS["rose3d"], 1)).select(plans)
    assert {i % 2 for i in odd} == {0, 1}  # rose3d alternates base and cue variants: both are sampled
