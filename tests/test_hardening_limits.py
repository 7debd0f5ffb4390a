"""Resource limits on bad input (issue 25.6): deep nesting, alias bombs, huge plans and huge names are refused
in one short line, quickly, before they cost memory; two crashes on small or odd input are one line too."""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path

import pytest

from stim3d.cli import main
from stim3d.render.batch.config import MAX_ITEMS
from tests.plugin_support import stim3d

SMALL = "seed: 2\nrender: {engine: raster, width: 32, height: 24, samples: 1}\ntasks:\n  - family: shape_count\n    count: 1\n"


def run(*argv: str) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue(), time.monotonic() - started


def refused(*argv: str) -> str:
    """The one error line of a command that must refuse its input, after checking the exit code and its speed."""
    code, _, stderr, seconds = run(*argv)
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr[:2000]
    assert len(lines[0].replace(argv[-1], "")) < 600, lines[0][:700]  # never the whole value
    assert seconds < 60
    return lines[0]


def alias_bomb() -> str:
    lines = ["tasks: [{family: shape_count, count: 1}]", 'x0: &x0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"x{i}: &x{i} [" + ",".join([f"*x{i - 1}"] * 9) + "]" for i in range(1, 10)]  # 9**10 = 3.5e9 leaves
    return "\n".join(lines) + "\nunknown_key: *x9\n"


@pytest.mark.parametrize("name, text, expected", [
    ("deep list", "tasks: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
    ("deep but readable", "tasks: " + "[" * 100 + "]" * 100 + "\n", "nested more than 64 deep"),
    ("alias bomb", alias_bomb(), "more than 1000000 values once its aliases (*name) are expanded"),
    ("alias loop", "tasks: &a [*a]\n", "an alias refers to a list or mapping that contains it"),
    ("plan too large", "tasks:\n" + "  - {family: shape_count, count: 1000000}\n" * 1000,
     f"the tasks plan 1000000000 items in total (counts times variants); at most {MAX_ITEMS} are allowed"),
    ("grid too large", "tasks:\n  - family: shape_count\n    count: 1\n    grid: {"
     + ", ".join(f"k{i}: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]" for i in range(20)) + "}\n",
     "the grid has 100000000000000000000 combinations; at most 100000 are allowed"),
    ("10 MB split", 'tasks: [{family: shape_count, count: 1, split: "' + "s" * 10_000_000 + '"}]\n',
     "tasks[0].split = 'sssss"),
    ("1 MB family", 'tasks: [{family: "' + "f" * 1_000_000 + '", count: 1}]\n', "unknown family 'fffff"),
])
def test_oversized_configs_are_refused_in_one_short_line(tmp_path, name, text, expected):
    (tmp_path / "c.yaml").write_text(text)
    line = refused("validate", str(tmp_path / "c.yaml"))
    assert expected in line, line


def test_the_shipped_presets_are_far_below_the_item_cap():
    from stim3d.render.batch.config import load_config
    from stim3d.render.batch.plan import expand

    presets = sorted((Path(__file__).resolve().parents[1] / "stim3d" / "scenes" / "presets").glob("*.yaml"))
    assert presets and max(len(expand(load_config(p))) for p in presets) * 100 <= MAX_ITEMS


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("limits")
    (root / "c.yaml").write_text(SMALL)
    result = stim3d("render", "c.yaml", "--out", "out", "--quiet", site=root, cwd=root)
    assert result.returncode == 0, result.stderr
    return root


def test_a_deeply_nested_gallery_filter_is_one_line(batch):
    line = refused("gallery", str(batch / "out"), "--filter", "min_visibility=" + "[" * 50_000 + "]" * 50_000)
    assert "--filter: a value nested too deeply to read" in line


def test_show_of_an_item_whose_ground_truth_lacks_an_object_is_one_line(batch, tmp_path):
    folder = next((batch / "out" / "items").iterdir())
    copy = tmp_path / folder.name
    copy.mkdir()
    data = json.loads((folder / "item.json").read_text())
    missing = data["ground_truth"]["objects"].pop()["id"]
    (copy / "item.json").write_text(json.dumps(data))
    line = refused("show", str(copy))
    assert f"its ground truth has no object with id {missing}" in line, line


def test_sweep_with_an_added_occluder_on_a_tiny_image_reports_unreachable_levels(batch):
    result = stim3d("sweep", "occlusion", "c.yaml", "--levels", "0.2,0.5", "--occluder", "add", "--out", "sweep",
                    "--quiet", site=batch, cwd=batch)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1  # documented: 1 when some level was unreachable
    sweeps = json.loads((batch / "sweep" / "sweeps.json").read_text())["sweeps"]
    assert sweeps[0]["occluder_added"] is True
    assert sweeps[0]["occluder_shape"] is None  # no level made: no panel placed
    assert all(level["status"] == "unreachable" for level in sweeps[0]["levels"])
