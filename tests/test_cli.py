"""The command line: clear one-line errors with exit code 2, and the read-only commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def stim3d(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stim3d", *args], cwd=cwd, capture_output=True, text=True)


BAD_CONFIGS = {
    "unknown_family": ("tasks:\n  - {family: hexagons, count: 2}\n", "unknown family 'hexagons'"),
    "out_of_range": ("tasks:\n  - family: shape_count\n    count: 2\n    grid: {min_visibility: [0.7, 1.4]}\n",
                     "tasks[0].grid.min_visibility = 1.4"),
    "wrong_type": ("tasks:\n  - {family: shape_count, count: two}\n", "tasks[0].count = 'two'"),
    "unknown_parameter": ("tasks:\n  - {family: shape_count, count: 1, params: {colour: red}}\n", "tasks[0].params.colour"),
    "bad_engine": ("render: {engine: povray}\ntasks:\n  - {family: shape_count, count: 1}\n", "render.engine = 'povray'"),
    "not_yaml": ("tasks: [\n", "not valid YAML"),
    "control_character": ("\x00tasks: []\n", "not valid YAML"),  # the reader's own error spans two lines
    "grid_of_unknown_parameter": ("tasks:\n  - {family: shape_count, count: 1, grid: {colour: [red, blue]}}\n",
                                  "tasks[0].grid.colour: not a parameter of shape_count"),
    "missing_mesh_root": ("mesh_roots: [no_such_meshes]\ntasks:\n  - {family: shape_count, count: 1}\n",
                          "mesh_roots[0] = 'no_such_meshes': no such folder"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_config_gives_one_clear_line_and_exit_2(case, tmp_path):
    text, expected = BAD_CONFIGS[case]
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    for command in (["validate", str(config)], ["render", str(config), "--out", str(tmp_path / "out")]):
        result = stim3d(*command)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
        assert expected in lines[0], lines[0]
    assert not (tmp_path / "out" / "items").exists()  # failed before any rendering


def test_missing_config_file_is_named(tmp_path):
    result = stim3d("validate", str(tmp_path / "nope.yaml"))
    assert result.returncode == 2 and "nope.yaml: no such config file" in result.stderr


def test_bad_arguments_exit_2_without_traceback(tmp_path):
    for args in (["render"], ["render", "x.yaml", "--out", "o", "--engine", "povray"], ["frobnicate"],
                 ["show", str(tmp_path)]):
        result = stim3d(*args)
        assert result.returncode == 2 and "Traceback" not in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, (args, result.stderr)


def test_validate_and_families_describe_the_demo_preset():
    result = stim3d("validate", "scenes/presets/demo.yaml")
    assert result.returncode == 0 and "valid" in result.stdout
    families = stim3d("families").stdout
    assert "shape_count" in families and "min_visibility" in families and "<= 5" in families
