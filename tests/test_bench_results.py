"""The committed benchmark results: every file is either quoted (and re-measurable by one command) or a study,
and none names a folder of the machine that measured it."""

from __future__ import annotations

import json
import re

from bench.common import path_label
from bench.quoted import QUOTED, RESULTS, STUDIES, command

ABSOLUTE = re.compile(r"(?<![\w.])/(?:work|tmp|root|home|Users|var|mnt)/")


def test_every_result_file_is_quoted_or_a_study_and_each_quoted_one_has_a_command():
    names = {path.stem for path in RESULTS.glob("*.json")}
    assert names == set(QUOTED) | set(STUDIES), sorted(names ^ (set(QUOTED) | set(STUDIES)))
    for name in QUOTED:
        assert command(name).startswith("python -m bench."), name


def test_no_result_file_names_a_folder_of_the_measuring_machine():
    for path in RESULTS.glob("*.json"):
        text = path.read_text()
        assert not ABSOLUTE.search(text), f"{path.name}: {ABSOLUTE.search(text)}"
        json.loads(text)


def test_an_absolute_path_in_a_command_is_recorded_as_its_label():
    assert [path_label(a) for a in ["--root", "/work/suite_root2", "--out", "x.json", "--sizes", "1,2"]] == \
        ["--root", "suite_root2", "--out", "x.json", "--sizes", "1,2"]
