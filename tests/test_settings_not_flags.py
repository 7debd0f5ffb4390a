"""The library names settings, the command names flags.

A script calling `stim3d.evaluate(..., timeout=0)` typed no `--timeout`, and a user of
`stim3d eval` typed no `timeout=`: a library error carries the setting at fault as its
field and points to any other in backticks (stim3d/errors.py), and stim3d/cli/flags.py
alone shows each as the flag that sets it. Read from the sources with ast: no `raise`
outside stim3d/cli/ writes a flag, and the scan is shown to catch a planted one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from stim3d.cli import main
from stim3d.cli.flags import error_text
from stim3d.errors import Stim3dError
from stim3d.eval.errors import EvalError
from stim3d.eval.options import EvalOptions

PACKAGE = Path(__file__).resolve().parents[1] / "stim3d"
FLAG = re.compile(r"--[a-z{]")  # `--timeout`, or `--{name}` with the name formatted in


def _literal(node: ast.AST) -> str | None:
    """A string literal's text; an f-string's with each formatted value as `{`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "{" for part in node.values)
    return None


def flag_raises(source: str, name: str) -> list[str]:
    """`name:line` of every `raise` whose message holds a string literal that writes a flag."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            texts = (_literal(part) for part in ast.walk(node.exc))
            if any(text is not None and FLAG.search(text) for text in texts):
                found.append(f"{name}:{node.lineno}")
    return found


def test_no_raise_outside_the_command_writes_a_flag():
    library = [path for path in sorted(PACKAGE.rglob("*.py")) if path.relative_to(PACKAGE).parts[0] != "cli"]
    assert len(library) > 100  # the whole package was read, not an empty glob
    found = [hit for path in library for hit in flag_raises(path.read_text(encoding="utf-8"), str(path))]
    assert found == [], "a library error names a flag; name the setting (field=, or `name` in backticks): " + \
        ", ".join(found)


@pytest.mark.parametrize("source", [
    'raise EvalError("--timeout must be above 0")',
    'raise EvalError(f"--limit {limit}: must be at least 1")',
    'raise SweepError(f"--{error[\'loc\'][0]} {value!r}: {message}") from None',
    'if out.is_file():\n    raise ConfigError(\n        f"{out} exists; "\n        "use another --out")',
])
def test_the_scan_catches_a_planted_flag(source):
    assert flag_raises(source, "planted.py")


@pytest.mark.parametrize("source", [
    'raise EvalError("must be above 0", field="timeout")',
    'raise ConfigError(f"{out} exists; use another `out`, or `force=True`")',
    'command = ["pip", "download", "--quiet"]',  # a flag of another program, not in an error
    'raise ValueError("---")',
])
def test_the_scan_passes_what_names_no_flag(source):
    assert flag_raises(source, "clean.py") == []


@pytest.mark.parametrize(("error", "library", "command"), [
    (EvalError("must be at most 3600", field="timeout", value="1e+308"),
     "timeout 1e+308: must be at most 3600", "--timeout 1e+308: must be at most 3600"),
    (EvalError("the port is not a number", field="base_url"), "base_url: the port is not a number",
     "--base-url: the port is not a number"),
    (EvalError("must be in (0, 1]", field="image_scale", value=2), "image_scale 2: must be in (0, 1]",
     "--downscale 2: must be in (0, 1]"),
    (Stim3dError("already a study; `force=True` rebuilds it", field="out", value="s"),
     "out s: already a study; `force=True` rebuilds it", "--out s: already a study; --force rebuilds it"),
    (Stim3dError("no item left: all went to `practice=3` and `catch=2`"),
     "no item left: all went to `practice=3` and `catch=2`", "no item left: all went to --practice 3 and --catch 2"),
    (Stim3dError("no items match `family=shape_count` `filters=colour=light gray`"),
     "no items match `family=shape_count` `filters=colour=light gray`",
     "no items match --family shape_count --filter colour=light gray"),
    (Stim3dError("x exists; choose another `dest`; `with_dependencies=False` builds without them"),
     "x exists; choose another `dest`; `with_dependencies=False` builds without them",
     "x exists; choose another --to; --without-dependencies builds without them"),
    (Stim3dError("make one with `stim3d sweep occlusion`"), "make one with `stim3d sweep occlusion`",
     "make one with `stim3d sweep occlusion`"),  # a command in backticks is no setting
])
def test_an_error_names_the_setting_and_the_command_shows_its_flag(error, library, command):
    assert str(error) == library
    assert error_text(error) == command


def test_an_error_keeps_its_type_and_its_field():
    with pytest.raises(EvalError) as caught:
        EvalOptions.build(model="m", timeout=0)
    assert isinstance(caught.value, ValueError) and caught.value.field == "timeout" and caught.value.value == "0"
    assert str(caught.value) == "timeout 0: must be greater than 0"


@pytest.mark.parametrize(("argv", "config", "line"), [
    (["--config", "e.yaml"], "model: m\ndownscale: 2\n", "--downscale 2: must be less than or equal to 1"),
    (["--config", "e.yaml", "--model", "m"], "timeout: 0\n",
     "--timeout 0: must be greater than 0"),
    (["--model", "baseline:oracle", "--staircase", "--limit", "3"], None,
     "--limit: does not apply: a staircase picks its own questions"),
    (["--model", "m", "--filter", "min_visibility"], None, "--filter 'min_visibility': expected KEY=VALUE"),
])
def test_eval_names_the_flag_of_a_bad_setting_in_one_line_before_reading_the_batch(tmp_path, monkeypatch, capsys,
                                                                                    argv, config, line):
    monkeypatch.chdir(tmp_path)
    if config is not None:
        (tmp_path / "e.yaml").write_text(config)
    assert main(["eval", "no-such-batch", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"stim3d: error: {line}"), err


def test_a_library_summary_line_reads_with_flags_on_the_command_line():
    """study build's summary names settings in backticks (`include_describe=True`); the command prints flags."""
    from stim3d.cli.flags import as_flags

    line = "left out 1 describe question(s) (`include_describe=True` keeps them); build without `pilot=True`"
    assert as_flags(line) == "left out 1 describe question(s) (--include-describe keeps them); build without --pilot"
