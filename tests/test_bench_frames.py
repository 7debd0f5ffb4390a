"""bench.photoreal_frames' --per-task: the docs' sample (5 per task, 7 for AVA-3D) is one command."""

import pytest

from bench.photoreal_frames import per_task_counts

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
