"""Every numeric option of every command is bounded at parse time: one line, exit 2, no traceback, nothing done.

The bounds live in stim3d/cli/common.py (and, for `eval`, stim3d/eval/options.py); docs/hardening.md lists
them. A bad value must be refused before any work starts: a `--core-timeout 1e308` that is only noticed when
the scoring core is called would come after the whole batch had rendered.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

from stim3d.cli import main
from stim3d.cli.common import number, seconds, whole
from tests.batch_support import ROOT

# (command line, the words the one line must hold); paths need not exist: parsing comes first
CASES = [
    (["render", "demo", "--out", "o", "--item-timeout", "3000000"], "--item-timeout: '3000000': must be at most 86400"),
    (["render", "demo", "--out", "o", "--item-timeout", "nan"], "--item-timeout: 'nan': must be a finite number"),
    (["render", "demo", "--out", "o", "--core-timeout", "1e308"], "--core-timeout: '1e308': must be at most 86400"),
    (["render", "demo", "--out", "o", "--core-timeout", "inf"], "--core-timeout: 'inf': must be a finite number"),
    (["render", "demo", "--out", "o", "--item-timeout", "-1"], "give a positive number of seconds"),
    (["render", "demo", "--out", "o", "--samples", "0"], "--samples: '0': must be at least 1"),
    (["render", "demo", "--out", "o", "--samples", "1e9"], "--samples: '1e9' is not a whole number"),
    (["render", "demo", "--out", "o", "--width", "100000"], "--width: '100000': must be at most 8192 pixels"),
    (["render", "demo", "--out", "o", "--height", "2"], "--height: '2': must be at least 8 pixels"),
    (["render", "demo", "--out", "o", "--workers", "0"], "--workers: '0': must be at least 1"),
    (["render", "demo", "--out", "o", "--workers", "99999999"], "--workers: '99999999': must be at most 4096"),
    (["render", "demo", "--out", "o", "--recycle-after", "-5"], "--recycle-after: '-5': must be at least 1"),
    (["merge", "a", "--out", "o", "--core-timeout", "1e308"], "--core-timeout: '1e308': must be at most 86400"),
    (["score", "r", "p", "--judge-timeout", "1e308"], "--judge-timeout: '1e308': must be at most 86400"),
    (["score", "r", "p", "--by", "x:1e-300"], "--by: x:'1e-300': must be at least 1e-06"),
    (["score", "r", "p", "--by", "x:inf"], "--by: x:'inf': must be a finite number"),
    (["eval", "b", "--model", "m", "--timeout", "1e308"], "--timeout: '1e308': must be at most 3600 seconds"),
    (["eval", "b", "--model", "m", "--timeout", "nan"], "--timeout: 'nan': must be a finite number"),
    (["eval", "b", "--model", "m", "--timeout", "0"], "--timeout: '0': give a positive number of seconds"),
    (["eval", "b", "--model", "m", "--temperature", "nan"], "--temperature: 'nan': must be a finite number"),
    (["eval", "b", "--model", "m", "--temperature", "3"], "--temperature: '3': must be at most 2"),
    (["eval", "b", "--model", "m", "--max-tokens", "0"], "--max-tokens: '0': must be at least 1"),
    (["eval", "b", "--model", "m", "--max-tokens", "99999999999"], "--max-tokens: '99999999999': must be at most"),
    (["eval", "b", "--model", "m", "--downscale", "0"], "--downscale: '0': must be above 0"),
    (["eval", "b", "--model", "m", "--downscale", "1.5"], "--downscale: '1.5': must be at most 1"),
    (["eval", "b", "--model", "m", "--concurrency", "1000"], "--concurrency: '1000': must be at most 64"),
    (["eval", "b", "--model", "m", "--retries", "-1"], "--retries: '-1': must be at least 0"),
    (["eval", "b", "--model", "m", "--seed", "-1"], "--seed: '-1': must be at least 0"),
    (["eval", "b", "--model", "m", "--limit", "0"], "--limit: '0': must be at least 1"),
    (["study", "build", "b", "--out", "s", "--practice", "-1"], "--practice: '-1': must be at least 0"),
    (["study", "build", "b", "--out", "s", "--catch", "1e308"], "--catch: '1e308' is not a whole number"),
    (["study", "build", "b", "--out", "s", "--present-ms", "1e9"], "--present-ms: '1e9' is not a whole number"),
    (["study", "build", "b", "--out", "s", "--seed", "-3"], "--seed: '-3': must be at least 0"),
    (["study", "serve", "s", "--port", "70000"], "--port: '70000': must be at most 65535"),
    (["sweep", "occlusion", "i", "--levels", "0:1:1e-9", "--out", "o"], "more than 1001 levels"),
    (["sweep", "occlusion", "i", "--levels", "0.5", "--out", "o", "--target", "-2"], "--target: '-2': must be at least 0"),
    (["sweep", "occlusion", "i", "--levels", "0.5", "--out", "o", "--samples", "0"], "--samples: '0': must be at least 1"),
    (["sweep", "look", "i", "--out", "o", "--workers", "0"], "--workers: '0': must be at least 1"),
    (["contact-sheet", "b", "-o", "s.png", "--n", "0"], "--n: '0': must be at least 1"),
    (["contact-sheet", "b", "-o", "s.png", "--columns", "100000"], "--columns: '100000': must be at most 1000"),
    (["contact-sheet", "b", "-o", "s.png", "--thumb-width", "10"], "--thumb-width: '10': must be at least 32 pixels"),
]


@pytest.mark.parametrize("argv, words", CASES, ids=[" ".join(c[0][:1] + c[0][-2:]) for c in CASES])
def test_a_bad_number_is_one_line_and_exit_2_before_anything_runs(argv, words, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:  # argparse: refused while parsing, before the command runs
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and words in err, err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_huge_timeout_in_a_fresh_process_is_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "stim3d", "render", "demo", "--out", str(tmp_path / "o"),
                             "--core-timeout", "1e308"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "o").exists()


def test_the_bounds_themselves_are_accepted():
    assert seconds("86400") == 86400.0 and seconds("0.001") == 0.001
    assert whole(0, 5)("0") == 0 and whole(0, 5)(" 5 ") == 5
    assert number(0, 1, above_low=True)("1") == 1.0
    for bad in ("0", "86400.5", "-inf", "1e999", "ten"):
        with pytest.raises(argparse.ArgumentTypeError):
            seconds(bad)
