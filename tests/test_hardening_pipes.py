"""A closed output pipe never hides a failure (issue 25.4): `stim3d render ... 2>&1 | head -1`, `score ... | true`.

The reader's end of the pipe is closed before stim3d starts, so every write to the terminal
fails (the worst case of `| head -1`, which closes it after one line): the exit code must be
the one an unpiped run gives, the scoring core must still be called and every file written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.plugin_support import TOY_CORE, family_module, install, stim3d

CONFIG = """\
seed: 1
render: {engine: raster, width: 32, height: 24, samples: 1}
tasks:
  - family: good_row
    count: 2
  - family: liar
    count: 1
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("pipes") / "site"
    install(site, "rows", {"good_row": family_module("good_row"), "liar": family_module("liar", gold="'many'")},
            {"stim3d.families": {"good_row": "good_row", "liar": "liar"}})
    install(site, "toy-core", {"toy_core": TOY_CORE}, {"stim3d.scoring_cores": {"toy": "toy_core:receive"}})
    return site


def closed_pipe() -> int:
    """The write end of a pipe whose reader has already gone."""
    read, write = os.pipe()
    os.close(read)
    return write


def test_render_into_a_closed_pipe_exits_as_unpiped_and_still_calls_the_scoring_core(site, tmp_path):
    (tmp_path / "c.yaml").write_text(CONFIG)
    plain = stim3d("render", "c.yaml", "--out", "plain", "--scoring-core", "toy", site=site, cwd=tmp_path)
    assert plain.returncode == 1, plain.stderr  # the liar item fails
    for unbuffered in ("", "1"):
        out = f"piped{unbuffered}"
        pipe = closed_pipe()
        try:
            piped = stim3d("render", "c.yaml", "--out", out, "--scoring-core", "toy", site=site, cwd=tmp_path,
                           output=pipe, env={"PYTHONUNBUFFERED": unbuffered} if unbuffered else None)
        finally:
            os.close(pipe)
        assert piped.returncode == 1
        received = json.loads((tmp_path / out / "core_received.json").read_text())
        assert received == ["good_row-t0-00000-q0", "good_row-t0-00001-q0"]
        assert (tmp_path / out / "records.jsonl").read_bytes() == (tmp_path / "plain" / "records.jsonl").read_bytes()


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_score_into_a_closed_pipe_writes_its_report(site, tmp_path, unbuffered):
    (tmp_path / "c.yaml").write_text(CONFIG.split("  - family: liar")[0])
    assert stim3d("render", "c.yaml", "--out", "out", "--quiet", site=site, cwd=tmp_path).returncode == 0
    (tmp_path / "p.jsonl").write_text('{"question_id": "good_row-t0-00000-q0", "response": "2"}\n')
    pipe = closed_pipe()
    try:
        result = stim3d("score", "out", "p.jsonl", "--out", "s.json", site=site, cwd=tmp_path, output=pipe,
                        env={"PYTHONUNBUFFERED": unbuffered} if unbuffered else None)
    finally:
        os.close(pipe)
    assert result.returncode == 0
    report = json.loads((tmp_path / "s.json").read_text())
    assert report["missing"] == 1  # two questions, one answered (n defaults to 2: "2" is right)
