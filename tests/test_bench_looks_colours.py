"""bench/looks_colours.py's figures (docs/looks.md, "White balance per environment"): the share of items still
failing, dE statistics over judged objects, and the before/after comparison over items drawn alike."""

from __future__ import annotations

import json

import pytest

from bench.looks_colours import compare, summary


def _object(item: str, environment: str, delta_e: float, material: str = "plastic") -> dict:
    return {"look": "photoreal", "family": "ava_color", "item": item, "colour": "red", "material": material,
            "environment": environment, "measured_srgb": [0.8, 0.2, 0.2], "delta_e": delta_e}


def test_summary_counts_items_and_takes_the_error_statistics_over_objects():
    items = [{"redraws": 0, "still_failing": False}, {"redraws": 2, "still_failing": True},
             {"redraws": 1, "still_failing": False}, {"redraws": 0, "still_failing": False}]
    objects = [_object("a", "city", float(v)) for v in range(1, 21)]
    row = summary(items, objects)
    assert (row["items"], row["redrawn"], row["redraws"], row["still_failing"]) == (4, 2, 3, 1)
    assert row["failing_share"] == 0.25 and row["judged_objects"] == 20
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
