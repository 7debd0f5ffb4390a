"""Plug-ins cannot break stim3d (issue 25.3): a clash, a crash at import, sys.exit, a malformed item.

One site folder holds every misbehaving plug-in at once, as a user's environment might: each
test checks that stim3d still works for everything else and names the broken one in one line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.plugin_support import family_module, install, python, stim3d

CONFIG = "seed: 1\nrender: {{engine: raster, width: 32, height: 24, samples: 1}}\ntasks:\n  - family: {family}\n    count: 2\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("plugins") / "site"
    families = "stim3d.families"
    install(site, "clash-plugin", {"clash_family": family_module("shape_count", gold="99")},
            {families: {"shape_count": "clash_family"}})
    install(site, "twin-a", {"twin_a": family_module("twin")}, {families: {"twin": "twin_a"}})
    install(site, "twin-b", {"twin_b": family_module("twin")}, {families: {"twin": "twin_b"}})
    install(site, "exit-plugin", {"exiting": family_module("exiting", prelude="import sys\nsys.exit(0)\n")},
            {families: {"exiting": "exiting"}})
    install(site, "base-exception-plugin",
            {"base_raiser": family_module("base_raiser", prelude="raise BaseException('no')\n")},
            {families: {"base_raiser": "base_raiser"}})
    install(site, "broken-plugin", {"broken": family_module("broken", prelude="raise RuntimeError('missing licence')\n")},
            {families: {"broken": "broken"}})
    install(site, "liar-plugin", {"liar": family_module("liar", gold="'many'")}, {families: {"liar": "liar"}})
    install(site, "raiser-plugin", {"raiser": family_module("raiser", gold="1 // 0")}, {families: {"raiser": "raiser"}})
    install(site, "good-plugin", {"good_row": family_module("good_row")}, {families: {"good_row": "good_row"}})
    return site


def validate(site: Path, tmp_path: Path, family: str):
    (tmp_path / "c.yaml").write_text(CONFIG.format(family=family))
    return stim3d("validate", "c.yaml", site=site, cwd=tmp_path)


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def test_families_lists_every_refused_plugin_as_not_loaded_and_keeps_the_others(site, tmp_path):
    result = stim3d("families", site=site, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "shape_count [clash-plugin]: NOT LOADED (clash_family): the name is a built-in stim3d family" in out
    assert "shape_count [stim3d]:" in out  # the built-in still listed and loaded
    assert "twin [twin-a]: NOT LOADED" in out and "twin [twin-b]: NOT LOADED" in out
    assert "exiting [exit-plugin]: NOT LOADED (exiting): it called sys.exit(0) while being imported" in out
    assert "base_raiser [base-exception-plugin]: NOT LOADED (base_raiser): BaseException: no" in out
    assert "broken [broken-plugin]: NOT LOADED (broken): RuntimeError: missing licence" in out
    assert "good_row [good-plugin]: N red spheres in a row" in out


def test_a_plugin_cannot_replace_a_builtin_family(site, tmp_path):
    result = validate(site, tmp_path, "shape_count")
    assert result.returncode == 0, result.stderr
    assert "valid; 2 items (2 shape_count)" in result.stdout
    code = ("import stim3d; item = stim3d.compose('shape_count', {}, seed=1); "
            "print(item.questions[0].gold)")  # the clash plug-in's gold would be 99; the built-in's at most 3
    done = python("-c", code, site=site, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) <= 3


@pytest.mark.parametrize("family, expected", [
    ("twin", "family 'twin' (from twin-a, twin_a) could not be loaded: the name is also registered by twin-b; "
             "neither is loaded"),
    ("exiting", "could not be loaded: it called sys.exit(0) while being imported"),
    ("base_raiser", "could not be loaded: BaseException: no"),
    ("broken", "family 'broken' (from broken-plugin, broken) could not be loaded: RuntimeError: missing licence"),
])
def test_a_family_that_failed_to_load_is_named_with_its_load_error(site, tmp_path, family, expected):
    result = validate(site, tmp_path, family)
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert expected in line and "unknown family" not in line, line


def test_a_plugin_exiting_at_import_does_not_stop_other_commands(site, tmp_path):
    result = validate(site, tmp_path, "good_row")
    assert result.returncode == 0, result.stderr
    assert "valid; 2 items (2 good_row)" in result.stdout


def test_validate_refuses_an_item_whose_gold_does_not_fit_its_answer_type(site, tmp_path):
    result = validate(site, tmp_path, "liar")
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert "liar-t0-00000 (tasks[0]) is malformed: family liar: question q0 (integer) has gold 'many': " \
        "gold 'many' is not a valid integer answer" in line, line


def test_validate_names_the_family_and_exception_when_compose_raises(site, tmp_path):
    result = validate(site, tmp_path, "raiser")
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert "raiser-t0-00000 (tasks[0]): family raiser's compose raised ZeroDivisionError" in line, line


def test_render_of_a_malformed_item_writes_nothing_and_fails_every_time(site, tmp_path):
    (tmp_path / "c.yaml").write_text(CONFIG.format(family="liar"))
    for _ in range(2):  # a rerun must not skip a "complete" folder and crash again
        result = stim3d("render", "c.yaml", "--out", "out", "--quiet", site=site, cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr
        assert "has gold 'many'" in result.stderr
        assert not list((tmp_path / "out" / "items").glob("liar-*")), "a malformed item must not be written"
