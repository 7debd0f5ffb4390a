"""`stim3d eval` against a hostile or broken server: the key never leaks, a hopeless run stops early, a bad
answer costs one question, every setting is bounded, and the run's settings are recorded.

The server (tests/eval_server.py) listens on 127.0.0.1 only; what it does per question is scripted.
"""

from __future__ import annotations

import json
import math
import socket
from pathlib import Path

import pytest

import stim3d
from stim3d.cli import main
from stim3d.eval.options import MAX_TIMEOUT, EvalOptions, default
from stim3d.eval.run import EvalError, evaluate
from stim3d.eval.store import RESPONSES, eval_folder
from stim3d.scoring.records import read_records
from tests.eval_server import FakeModel

pytestmark = pytest.mark.bpy  # the batch is rendered once with Workbench
SECRET = "sk-live-7f3a9c2e41d84b6f-do-not-leak"
FAST = ["--timeout", "5", "--retries", "1"]


@pytest.fixture
def batch(eval_batch: Path) -> Path:
    return eval_batch


@pytest.fixture
def server(fake_model):
    return fake_model


def _qids(batch: Path) -> list[str]:
    return [r.question_id for r in read_records(batch / "records.jsonl")]


def _eval(batch: Path, server: FakeModel, *extra: str, model: str = "toy-vlm") -> list[str]:
    return ["eval", str(batch), "--model", model, "--base-url", server.url, *FAST, *extra]


def test_a_key_the_server_echoes_is_in_no_file_and_no_output(batch, server, capsys, monkeypatch):
    qids = _qids(batch)
    monkeypatch.setenv("TOY_API_KEY", SECRET)
    server.echo_header = True  # every response repeats the header
    server.script = {qids[0]: ["echo400"], qids[1]: ["echo"], qids[2]: ["echo"]}  # a 4xx body and 2xx bodies
    code = main(_eval(batch, server, "--api-key-env", "TOY_API_KEY", "--concurrency", "1"))
    captured = capsys.readouterr()
    assert code == 1  # qids[0] failed (a 400 is not retried); the rest were answered
    assert set(server.authorization) == {f"Bearer {SECRET}"}  # the key was sent, as a Bearer token
    assert f"failed {qids[0]}: HTTP 400: invalid key [redacted]" in captured.err  # the server's message, redacted
    rows = {json.loads(line)["question_id"]: json.loads(line)
            for line in (eval_folder(batch, "toy-vlm") / RESPONSES).read_text().splitlines()}
    assert "[redacted]" in rows[qids[1]]["response"] and "[redacted]" in rows[qids[1]]["raw"]["system_fingerprint"]
    assert SECRET not in captured.out + captured.err and SECRET[:12] not in captured.err
    written = [p for p in (batch / "eval").rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {RESPONSES, "scores.json", "report.html"}
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path


def test_a_key_given_as_the_variable_name_is_refused_without_being_echoed(batch, server, capsys):
    for value in (SECRET, "hf_AbCdEfGh1234567890XyZw", "Bearer abc"):
        code = main(_eval(batch, server, "--api-key-env", value))
        err = capsys.readouterr().err
        assert code == 2 and "--api-key-env" in err and "NAME" in err and len(err.strip().splitlines()) == 1
        assert value not in err and value[4:12] not in err
    assert server.received == 0 and not (batch / "eval").exists()


def test_identical_client_errors_stop_the_run_after_three(batch, server, capsys):
    code = main(_eval(batch, server, "--concurrency", "1", model="bad-request-model"))
    lines = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in lines if line.startswith("stim3d: error:")]
    assert code == 2 and errors == lines[-1:]  # the progress lines of the two failures, then the one stop line
    assert "HTTP 400 3 times: model bad-request-model not found" in errors[0] and "stopped" in errors[0]
    assert server.received == 3  # not one request for each of the 10 questions


def test_a_server_that_is_not_running_stops_the_run_after_three_questions(batch, capsys):
    with socket.socket() as probe:  # a loopback port nothing listens on once the probe closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = main(["eval", str(batch), "--model", "toy-vlm", "--base-url", f"http://127.0.0.1:{port}/v1", *FAST,
                 "--concurrency", "1"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and lines[-1].startswith("stim3d: error:") and "Traceback" not in "".join(lines)
    assert "cannot connect" in lines[-1] and "3 questions in a row" in lines[-1] and "--base-url" in lines[-1]
    assert len(lines) == 3  # two questions' progress lines, then the stop: not one line for each of the 10


def test_client_errors_that_differ_per_question_fail_only_those_questions(batch, server):
    qids = _qids(batch)
    server.script = {q: [f"400:prompt of {q} too long"] for q in qids[:4]}
    result = evaluate(batch, "toy-vlm", server.url, concurrency=1, timeout=5, retries=1, report=False)
    assert sorted(result.failed) == sorted(qids[:4]) and result.asked == 6
    assert sum(server.counts.values()) == 10  # a 400 is not retried


def test_one_bad_answer_costs_one_question(batch, server, capsys):
    qids = _qids(batch)
    server.script = {qids[0]: ["deep:100000"], qids[1]: ["deep:200"], qids[2]: ["objectcontent"]}
    code = main(_eval(batch, server, "--concurrency", "2"))
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert f"failed {qids[0]}: HTTP 200 with a JSON body nested too deeply to read" in err
    assert f"failed {qids[1]}: HTTP 200 with a JSON body nested deeper than 64 levels" in err
    assert f"failed {qids[2]}: choices[0].message.content is a dict, not text" in err
    assert [server.counts[q] for q in qids[:3]] == [1, 1, 1]  # asking again would get the same: not retried
    scores = json.loads((eval_folder(batch, "toy-vlm") / "scores.json").read_text())
    assert scores["missing"] == 3 and scores["run"]["asked"] == 7


def test_an_answer_from_another_model_is_a_warning_on_stderr_and_in_scores(batch, server, capsys):
    qids = _qids(batch)
    server.script = {qids[0]: ["as:tiny-fallback"], qids[5]: ["as:tiny-fallback"]}
    assert main(_eval(batch, server)) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "'tiny-fallback' (2)" in warnings[0] and "'toy-vlm'" in warnings[0]
    scores = json.loads((eval_folder(batch, "toy-vlm") / "scores.json").read_text())
    assert scores["run"]["warnings"] == [warnings[0].removeprefix("stim3d: warning: ")]


def test_the_settings_baselines_and_samples_are_recorded_and_shown(batch, server):
    qids = _qids(batch)
    server.wrong, server.unparseable = {qids[1]}, {qids[2]}
    evaluate(batch, "toy-vlm", server.url, temperature=0.25, max_tokens=64, system="Be brief.",
             extra_body={"top_p": 0.5}, seed=7, timeout=5)  # (a downscaled image is one this server does not know)
    folder = eval_folder(batch, "toy-vlm")
    scores = json.loads((folder / "scores.json").read_text())
    settings = scores["run"]["settings"]
    assert (settings["endpoint"], settings["model"], settings["temperature"], settings["max_tokens"]) == (
        server.url, "toy-vlm", 0.25, 64)
    assert (settings["system"], settings["extra_body"], settings["image_scale"], settings["seed"]) == (
        "Be brief.", {"top_p": 0.5}, 1.0, 7)
    assert scores["run"]["stim3d_version"] == stim3d.__version__
    assert scores["baselines"]["baseline:oracle"]["accuracy"] == 1.0
    page = (folder / "report.html").read_text()
    for shown in ("Settings", "Be brief.", "top_p", "Baselines", "baseline:constant", "parse rate 0.900",
                  "partial-credit score", "Wrong answers (1)", "Unparsed answers (1)", "I cannot tell"):
        assert shown in page, shown
    record = next(r for r in read_records(batch / "records.jsonl") if r.question_id == qids[1])
    link = f"../../{record.image.path}"
    assert f"src='{link}'" in page and (folder / link).resolve().is_file()  # relative, and it resolves
    assert "<td>64</td>" in page and "<td>64.000</td>" not in page  # a whole number is printed as one


@pytest.mark.parametrize("setting, value, words", [
    ("timeout", 1e308, "timeout 1e+308: must be less than or equal to 3600"),
    ("timeout", math.nan, "timeout nan: must be a finite number"),
    ("timeout", 0, "timeout 0: must be greater than 0"),
    ("temperature", math.inf, "temperature inf: must be a finite number"),
    ("temperature", 2.5, "temperature 2.5: must be less than or equal to 2"),
    ("max_tokens", 10**9, "max_tokens 1000000000"),
    ("concurrency", 0, "concurrency 0"),
    ("retries", -1, "retries -1"),
    ("image_scale", 0.0, "image_scale 0"),
    ("seed", True, "seed True: must be a number"),
    ("extra_body", {"top_p": math.nan}, "extra_body"),
    ("extra_body", {"messages": []}, "extra_body {'messages': []}: may not set 'messages'"),
    ("temprature", 0.5, "temprature: unknown setting; settings: model, "),
])
def test_every_setting_is_bounded_with_one_line_naming_it(tmp_path, setting, value, words):
    with pytest.raises(EvalError) as caught:
        evaluate(tmp_path, "baseline:oracle", **{setting: value})
    assert str(caught.value).startswith(words) and "\n" not in str(caught.value)
    assert caught.value.field == setting  # the fact a caller decides by, whatever the wording


def test_the_command_and_the_library_ask_the_same_request_by_default(batch, capsys):
    """The defaults are EvalOptions' alone: `stim3d eval` without settings sends what `evaluate` sends."""
    library = evaluate(batch, "baseline:oracle", dry_run=True).dry_run_request
    assert main(["eval", str(batch), "--model", "baseline:oracle", "--dry-run"]) == 0
    assert json.loads(capsys.readouterr().out) == library
    assert (library["temperature"], library["max_tokens"]) == (default("temperature"), default("max_tokens"))
    assert EvalOptions(model="m").timeout <= MAX_TIMEOUT


def test_a_key_pasted_as_the_variable_name_stays_out_of_the_log_file(batch, tmp_path, capsys):
    log = tmp_path / "eval.log"
    code = main(["eval", str(batch), "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--log-file", str(log),
                 "--api-key-env", SECRET])
    assert code == 2 and SECRET not in capsys.readouterr().err
    text = log.read_text()
    assert "--api-key-env [redacted]" in text and SECRET not in text
