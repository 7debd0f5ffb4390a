"""bench.photoreal_frames' --per-task: the docs' sample (5 per task, 7 for AVA-3D) is one command; --seconds prints
the docs' seconds table from the results file alone."""

import json

import pytest

from bench.photoreal_frames import per_task_counts, seconds_table

PRESETS = ("dysm3d", "ava3d", "oddgrid3d", "rose3d")


def test_a_preset_takes_its_own_count_over_the_default():
    assert per_task_counts("5,ava3d=7", PRESETS) == {"dysm3d": 5, "ava3d": 7, "oddgrid3d": 5, "rose3d": 5}
    assert per_task_counts("2", PRESETS) == dict.fromkeys(PRESETS, 2)


@pytest.mark.parametrize("text", ["0", "five", "5,ava=7", "5,ava3d=0", "5,ava3d=", "ava3d=7", ""])
def test_a_bad_count_is_one_line_naming_it(text):
    with pytest.raises(SystemExit) as err:
        per_task_counts(text, PRESETS)
    message = str(err.value)
    assert "--per-task" in message and "\n" not in message


def test_the_seconds_table_is_the_median_of_each_preset_and_look(tmp_path, capsys):
    frames = [{"preset": p, "look": look, "item": f"{p}-{i}", "seconds": s}
              for p, times in (("dysm3d", (1.0, 3.0, 2.0)), ("ava3d", (4.0, 6.0)))
              for i, base in enumerate(times) for look, s in (("studio", base), ("photoreal", 10 * base))]
    results = tmp_path / "r.json"
    results.write_text(json.dumps({"figures": {"frames": frames}}))
    seconds_table(results)
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "| preset | studio | photoreal |"
    assert rows[2:] == ["| dysm3d | 2.0 | 20.0 |", "| ava3d | 5.0 | 50.0 |", "| all 5 items | 3.0 | 30.0 |"]
