"""Precise messages and odd-but-valid input (issue 25.8, the parts outside the batch folder): a config read from
/dev/stdin, a folder where a file is expected, a missing sweep source, an OSError without an errno, and the
AVA box parser's minus signs."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stim3d.cli.common import error_line
from stim3d.scoring.parsers_actions import parse_box
from tests.helpers import run_cli
from tests.plugin_support import stim3d

CONFIG = "seed: 2\nrender: {engine: raster, width: 32, height: 24, samples: 1}\ntasks:\n  - family: shape_count\n    count: 1\n"
ROOT = Path(__file__).resolve().parents[1]


def test_a_config_piped_to_dev_stdin_is_read(tmp_path):
    result = subprocess.run([sys.executable, "-m", "stim3d", "validate", "/dev/stdin"], input=CONFIG, text=True,
                            capture_output=True, cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("/dev/stdin: valid; 1 items (1 shape_count)")


@pytest.mark.parametrize("argv, expected", [
    (["validate", "."], ".: is a folder; give the config's YAML file"),
    (["score", "records.jsonl", "."], ".: is a folder; give the JSONL file"),
    (["sweep", "occlusion", "no_such_item", "--levels", "0.5", "--out", "sweep"],
     "no_such_item: no such item folder or config file"),
])
def test_a_wrong_kind_of_path_is_named_for_what_it_is(tmp_path, argv, expected):
    (tmp_path / "records.jsonl").write_text("")
    result = stim3d(*argv, site=tmp_path, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == f"stim3d: error: {expected}"
    assert not (tmp_path / "sweep").exists()


def test_an_oserror_without_an_errno_keeps_its_message():
    assert error_line(OSError("image file is truncated (5 bytes not processed)")) == \
        "OSError: image file is truncated (5 bytes not processed)"
    assert error_line(OSError(errno.ELOOP, "Too many levels of symbolic links", "out/items")).startswith(
        "out/items: a symbolic link loops")


@pytest.mark.parametrize("response, box", [
    ("[-\n10, 20, 30, 40]", (-10.0, 20.0, 30.0, 40.0)),  # a wrapped minus sign is still a minus sign
    ("[-10, 20, 30, 40]", (-10.0, 20.0, 30.0, 40.0)),
    ("[10, - 20, 30, 40]", (10.0, -20.0, 30.0, 40.0)),
    ("xmin: -\n5, ymin: 2, xmax: 7, ymax: 9", (-5.0, 2.0, 7.0, 9.0)),
    ("10 - 20 - 30 - 40", (10.0, 20.0, 30.0, 40.0)),  # dashes between numbers separate them
    ("(10,20)-(30,40)", (10.0, 20.0, 30.0, 40.0)),
])
def test_the_box_parser_keeps_minus_signs(response, box):
    assert parse_box(response).value == box


def test_a_negative_max_makes_the_box_invalid_instead_of_positive():
    parsed = parse_box("[10, 20,\n-\n30, 40]")
    assert parsed.value is None and "is not a box" in parsed.reason


@pytest.mark.parametrize("name, shown", [
    ("dysm3d\n", "'dysm3d\\n'"),  # a preset's name and a newline: not the preset, and the newline shown
    ("demo\x1b[2K", "'demo\\x1b[2K'"),  # a terminal escape is shown, not run
])
def test_a_config_name_with_a_control_character_is_shown_quoted(name, shown):
    """The command prints an error's first line: a newline in the name must not cut it to the bare preset name."""
    code, out, err = run_cli("validate", name)
    assert (code, out) == (2, "")
    assert err.startswith(f"stim3d: error: {shown}: no such config file and no preset of that name (presets: ")
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("where, reason", [
    ("/proc/version", "Invalid argument" if os.geteuid() == 0  # root opens it, but cannot append: no file named
     else "permission denied: choose a folder you may write to"),
    ("{tmp}", "it is a folder, not a file"),
    ("{tmp}/missing/run.log", "no such file or folder"),
])
def test_a_log_file_that_cannot_be_appended_to_is_named(tmp_path, where, reason):
    path = where.format(tmp=tmp_path)
    if not Path(path.split("/missing")[0]).exists():
        pytest.skip(f"{path} is not on this system")
    code, out, err = run_cli("--log-file", path, "families")
    assert (code, out) == (2, "")
    assert err == f"stim3d: error: --log-file {path}: cannot append log records to it: {reason}\n"
