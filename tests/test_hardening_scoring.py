"""Judges and scoring cores are isolated (issue 25.5): whatever they raise, return or however long they hang,
the command prints one line naming the plug-in, never a traceback, and a finished batch still exits."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.plugin_support import install, stim3d

CONFIG = """\
seed: 3
render: {engine: raster, width: 32, height: 24, samples: 1}
tasks:
  - family: shape_count
    count: 2
    questions: [default, describe]
"""

CORES = '''
import sys
import time
from pathlib import Path


def boom(records, batch_dir):
    raise RuntimeError("the scoring server is down")


def number(records, batch_dir):
    return 3


def leaves(records, batch_dir):
    sys.exit(4)


def hangs(records, batch_dir):
    Path(batch_dir, "core_started").write_text("")
    time.sleep(3600)
'''

JUDGES = '''
import time


def boom(response, item):
    raise KeyError("no model")


def nothing(response, item):
    return None


def hangs(response, item):
    time.sleep(3600)
'''


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("scoring")
    site = root / "site"
    install(site, "odd-plugins", {"odd_cores": CORES, "odd_judges": JUDGES, "broken_syntax": "def f(:\n",
                                  "crashes_on_import": "raise RuntimeError('no GPU')\n"},
            {"stim3d.scoring_cores": {"boom": "odd_cores:boom", "number": "odd_cores:number", "leaves": "odd_cores:leaves",
                                      "hangs": "odd_cores:hangs", "syntax": "broken_syntax:receive",
                                      "crash": "crashes_on_import:receive"},
             "stim3d.judges": {"boom": "odd_judges:boom", "nothing": "odd_judges:nothing", "hangs": "odd_judges:hangs",
                               "syntax": "broken_syntax:judge"}})
    (root / "c.yaml").write_text(CONFIG)
    result = stim3d("render", "c.yaml", "--out", "out", "--quiet", site=site, cwd=root)
    assert result.returncode == 0, result.stderr
    (root / "p.jsonl").write_text("".join(
        f'{{"question_id": "shape_count-t0-0000{i}-{q}", "response": "There are two red cubes."}}\n'
        for i in range(2) for q in ("q0", "describe")))
    return root, site


def one_line(stderr: str) -> str:
    """The one error line (`render --quiet` also prints its 'rendering 0 items' status line)."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.strip().splitlines() if not line.startswith("rendering ")]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("core, expected", [
    ("boom", "stim3d: scoring core boom (on 4 records) failed: RuntimeError: the scoring server is down"),
    ("number", "stim3d: scoring core number (on 4 records) returned 3; a core returns a list of lines to print, or None"),
    ("leaves", "stim3d: scoring core leaves (on 4 records) failed: it called sys.exit(4)"),
])
def test_a_failing_scoring_core_is_one_line_and_exit_code_1(batch, core, expected):
    root, site = batch
    result = stim3d("render", "c.yaml", "--out", "out", "--quiet", "--scoring-core", core, site=site, cwd=root)
    assert result.returncode == 1
    assert one_line(result.stderr) == expected


@pytest.mark.parametrize("core, expected", [
    ("syntax", "scoring core syntax (broken_syntax:receive): cannot import 'broken_syntax': SyntaxError: "),
    ("crash", "scoring core crash (crashes_on_import:receive): cannot import 'crashes_on_import': RuntimeError: no GPU"),
])
def test_a_scoring_core_that_cannot_be_imported_fails_before_rendering(batch, tmp_path, core, expected):
    root, site = batch
    result = stim3d("render", str(root / "c.yaml"), "--out", "new", "--scoring-core", core, site=site, cwd=tmp_path)
    assert result.returncode == 2
    assert expected in one_line(result.stderr)
    assert not (tmp_path / "new").exists()


def test_a_hanging_scoring_core_is_abandoned_after_its_timeout(batch):
    root, site = batch
    started = time.monotonic()
    result = stim3d("render", "c.yaml", "--out", "out", "--quiet", "--scoring-core", "hangs", "--core-timeout", "2",
                    site=site, cwd=root, timeout=120)
    assert result.returncode == 1
    assert one_line(result.stderr) == ("stim3d: scoring core hangs (on 4 records) did not return within 2 s; it was "
                                       "abandoned (raise the timeout if it needs longer)")
    assert time.monotonic() - started < 60


def test_sigterm_while_the_core_runs_does_not_ask_to_resume(batch):
    root, site = batch
    marker = root / "out" / "core_started"
    marker.unlink(missing_ok=True)
    env = {"PYTHONPATH": f"{site}:{Path(__file__).resolve().parents[1]}"}
    process = subprocess.Popen([sys.executable, "-m", "stim3d", "render", "c.yaml", "--out", "out", "--quiet",
                                "--scoring-core", "hangs"], cwd=root, env={**__import__("os").environ, **env},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
        assert marker.exists(), "the core never started"
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130
    line = one_line(stderr)
    assert "interrupted while scoring core hangs ran; the batch in out is complete (nothing left to render)" in line
    assert "resume" not in line


@pytest.mark.parametrize("judge, extra, expected", [
    ("boom", (), ") failed: KeyError: 'no model'"),
    ("nothing", (), "returned None; a judge returns (True, False or None, evidence text)"),
    ("hangs", ("--judge-timeout", "1"), "did not return within 1 s"),
    ("syntax", (), "judge syntax (broken_syntax:judge): cannot import 'broken_syntax': SyntaxError: "),
])
def test_a_misbehaving_judge_is_one_line_and_exit_code_2(batch, judge, extra, expected):
    root, site = batch
    result = stim3d("score", "out", "p.jsonl", "--judge", judge, *extra, site=site, cwd=root, timeout=120)
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert line.startswith(f"stim3d: error: judge {judge} (") and expected in line, line
