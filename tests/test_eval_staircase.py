"""`stim3d eval BATCH --staircase` on a real occlusion sweep (Workbench, 8 levels, rendered once per module).

The oracle is always right, so its threshold sits at the easiest end it can be pushed to,
the lowest level; a model that is always wrong ends at the top; a model that fails below
a known visibility (the loopback server answers wrong on those levels) gets a threshold
between the levels around it. Answers go to the eval store, so a rerun asks nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stim3d.cli import main
from stim3d.eval.options import EvalOptions
from stim3d.eval.staircase import RESULT, run_staircases, sweep_tracks
from stim3d.eval.store import RESPONSES, eval_folder
from stim3d.scoring.records import read_records
from tests.batch_support import render_cone_sweep
from tests.eval_server import FakeModel, running

pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")
pytestmark = pytest.mark.bpy
ROOT = Path(__file__).resolve().parents[1]
LEVELS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
FAST = {"backoff": 0.01, "timeout": 10.0}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    return render_cone_sweep(tmp_path_factory.mktemp("staircase"))


@pytest.fixture
def sweep(rendered, tmp_path) -> Path:
    """A fresh copy of the sweep folder (each test writes its own eval/ folder)."""
    shutil.copytree(rendered, tmp_path / "sweep")
    return tmp_path / "sweep"


@pytest.fixture
def server(sweep):
    with running(FakeModel(read_records(sweep / "records.jsonl"))) as model:
        yield model


def _result(sweep: Path, model: str) -> dict:
    return json.loads((eval_folder(sweep, model) / RESULT).read_text())


def test_the_sweep_is_one_track_over_its_levels(sweep):
    (track,) = sweep_tracks(read_records(sweep / "records.jsonl"))
    assert list(track.by_level) == LEVELS and track.question == "q0"


def test_oracle_threshold_sits_at_the_lowest_level_and_the_file_is_deterministic(sweep, capsys):
    assert main(["eval", str(sweep), "--model", "baseline:oracle", "--staircase", "--staircase-trials", "15"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("sweep-hand-t1-o2/q0: threshold 0.3") and "from 15 trials, 15 correct" in out[0]
    (track,) = _result(sweep, "baseline:oracle")["sweeps"]
    est = track["estimate"]
    assert est["ci"][0] == LEVELS[0] and est["threshold"] < LEVELS[0] + 0.05 and est["trials"] == 15
    assert [s["level"] for s in track["steps"]][-5:] == [LEVELS[0]] * 5  # it stays at the easiest level it has
    first = (eval_folder(sweep, "baseline:oracle") / RESULT).read_bytes()
    assert main(["eval", str(sweep), "--model", "baseline:oracle", "--staircase", "--staircase-trials", "15"]) == 0
    assert "asked 0, reused 15" in capsys.readouterr().out  # every step found in responses.jsonl
    assert (eval_folder(sweep, "baseline:oracle") / RESULT).read_bytes() == first


def test_constant_baseline_is_always_right_on_a_sweep_whose_answer_never_changes(sweep):
    # The count does not depend on visibility (answer_depends_on_visibility: false), so the most
    # frequent gold IS the gold at every level: a blind answer passes this sweep, as the threshold shows.
    run = run_staircases(sweep, EvalOptions(model="baseline:constant"), trials=10)
    (track,) = run.tracks
    assert all(step["correct"] for step in track["steps"])
    assert track["estimate"]["ci"][0] == LEVELS[0]


def test_always_wrong_model_ends_at_the_top_with_a_broad_posterior(sweep, server):
    server.wrong = set(server.by_request[k].question_id for k in server.by_request)
    run = run_staircases(sweep, EvalOptions(model="fake", base_url=server.url, **FAST), trials=12)
    (track,) = run.tracks
    est = track["estimate"]
    assert not any(step["correct"] for step in track["steps"])
    assert est["ci"][1] == LEVELS[-1] and est["threshold"] > 0.9
    assert track["steps"][-1]["level"] == LEVELS[-1]


def test_a_model_failing_below_055_gets_a_threshold_between_050_and_060(sweep, server):
    records = read_records(sweep / "records.jsonl")
    server.wrong = {r.question_id for r in records if r.difficulty["sweep_level"] < 0.55}
    run = run_staircases(sweep, EvalOptions(model="fake", base_url=server.url, **FAST), trials=20)
    (track,) = run.tracks
    est = track["estimate"]
    assert 0.45 <= est["threshold"] <= 0.65 and est["ci"][0] >= 0.4 and est["ci"][1] <= 0.7, est
    assert {step["level"] for step in track["steps"][-6:]} <= {0.5, 0.6}  # it works where the answer changes
    repeats = [s for s in track["steps"] if s["repeat"] > 0]
    assert repeats and server.received == 20  # each step one request, repeats asked again, not reused
    lines = [json.loads(x) for x in (eval_folder(sweep, "fake") / RESPONSES).read_text().splitlines()]
    assert len({(x["question_id"], x["request_hash"]) for x in lines}) == 20
    assert all(x["staircase_repeat"] > 0 for x in lines if "." in x["request_hash"])


def test_a_longer_rerun_resumes_and_asks_only_the_new_steps(sweep, server):
    first = run_staircases(sweep, EvalOptions(model="fake", base_url=server.url, **FAST), trials=6)
    assert first.asked == 6 and server.received == 6
    second = run_staircases(sweep, EvalOptions(model="fake", base_url=server.url, **FAST), trials=10)
    assert second.reused == 6 and second.asked == 4 and server.received == 10
    assert second.tracks[0]["steps"][:6] == first.tracks[0]["steps"]


def test_a_question_that_keeps_failing_stops_its_track_and_exits_1(sweep, server, capsys):
    server.script = {qid: ["500"] * 10 for qid in {r.question_id for r in server.by_request.values()}}
    code = main(["eval", str(sweep), "--model", "fake", "--base-url", server.url, "--staircase",
                 "--staircase-trials", "5", "--retries", "1"])
    assert code == 1
    assert "stopped after 0 trials" in capsys.readouterr().out
    assert _result(sweep, "fake")["sweeps"][0]["estimate"] is None


@pytest.mark.parametrize(("extra", "words"), [
    (["--staircase", "--staircase-trials", "0"], "--staircase-trials: '0': must be at least 1"),
    (["--staircase", "--staircase-trials", "x"], "'x' is not a whole number"),
    (["--staircase-trials", "5"], "--staircase-trials needs --staircase"),
    (["--staircase", "--limit", "3"], "--limit: does not apply: a staircase picks its own questions"),
    (["--staircase", "--dry-run"], "--dry-run: does not apply"),
    (["--staircase", "--filter", "no_such_key=1"], "no_such_key"),
])
def test_bad_staircase_arguments_are_one_line_and_exit_2(sweep, capsys, extra, words):
    try:
        code = main(["eval", str(sweep), "--model", "baseline:oracle", *extra])
    except SystemExit as exc:  # argparse's own refusal of a bad value
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not (sweep / "eval").exists()


def test_a_batch_without_sweeps_is_one_line_and_exit_2(tiny_batch, tmp_path, capsys):
    batch = shutil.copytree(tiny_batch, tmp_path / "batch")
    assert main(["eval", str(batch), "--model", "baseline:oracle", "--staircase"]) == 2
    err = capsys.readouterr().err
    assert "no sweep in this batch" in err and len(err.strip().splitlines()) == 1
    assert not (batch / "eval").exists()
