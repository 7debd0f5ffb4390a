"""`stim3d eval` against a local OpenAI-compatible server: scores, retries, timeouts, resume, secrecy, loopback.

The server (tests/eval_server.py) listens on 127.0.0.1 and answers from each record's
gold unless told otherwise, so every expected score below is counted by hand from the
sets of questions it was told to answer wrong or unparseably.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import stim3d
from stim3d.cli import main
from stim3d.eval.client import Endpoint
from stim3d.eval.run import EvalError
from stim3d.eval.store import RESPONSES, eval_folder
from stim3d.scoring.records import read_records

pytestmark = pytest.mark.bpy  # the batch is rendered once with Workbench
ROOT = Path(__file__).resolve().parents[1]
FAST = {"backoff": 0.01, "timeout": 5.0}


@pytest.fixture
def batch(eval_batch: Path) -> Path:
    return eval_batch


@pytest.fixture
def server(fake_model):
    return fake_model


def _lines(batch: Path, model: str) -> list[dict]:
    return [json.loads(line) for line in (eval_folder(batch, model) / RESPONSES).read_text().splitlines()]


def test_scores_equal_the_hand_count(batch, server):
    qids = [r.question_id for r in read_records(batch / "records.jsonl")]
    server.wrong = {qids[0], qids[3]}
    server.unparseable = {qids[5]}
    result = stim3d.evaluate(batch, "toy-vlm", server.url, concurrency=3, **FAST)
    all_row = result.report.rows[0].to_dict()
    assert (result.selected, result.asked, result.reused, result.failed) == (10, 10, 0, {})
    assert all_row["accuracy"] == pytest.approx(7 / 10)  # 10 questions, 3 not answered right
    assert all_row["valid_rate"] == pytest.approx(9 / 10)  # one answer does not parse
    assert sum(server.counts.values()) == 10
    rows = _lines(batch, "toy-vlm")
    assert {r["question_id"] for r in rows} == set(qids)
    first = next(r for r in rows if r["question_id"] == qids[0])
    assert first["response"] == "99" and first["usage"]["total_tokens"] == 103 and first["latency_s"] > 0
    assert first["raw"]["choices"][0]["message"]["content"] == "99"
    scores = json.loads((eval_folder(batch, "toy-vlm") / "scores.json").read_text())
    assert scores["rows"][0]["accuracy"] == pytest.approx(0.7)
    assert (eval_folder(batch, "toy-vlm") / "report.html").is_file()


def test_transient_failures_are_retried_and_retry_after_is_honoured(batch, server):
    qids = [r.question_id for r in read_records(batch / "records.jsonl")]
    server.script = {qids[0]: ["429:0.6", "ok"], qids[1]: ["500", "500", "ok"], qids[2]: ["malformed", "ok"],
                     qids[3]: ["noschema", "ok"]}
    began = time.monotonic()
    result = stim3d.evaluate(batch, "toy-vlm", server.url, concurrency=1, **FAST)
    assert time.monotonic() - began >= 0.6  # the 429 asked for 0.6 s and the backoff alone is ~0.01 s
    assert result.failed == {} and result.report.rows[0].to_dict()["accuracy"] == 1.0
    assert [server.counts[q] for q in qids[:5]] == [2, 3, 2, 2, 1]
    assert result.attempts == 10 + 1 + 2 + 1 + 1
    attempts = {r["question_id"]: r["attempts"] for r in _lines(batch, "toy-vlm")}
    assert attempts[qids[1]] == 3


def test_exhausted_retries_count_as_missing_and_a_rerun_asks_only_those(batch, server):
    qids = [r.question_id for r in read_records(batch / "records.jsonl")]
    server.script = {qids[2]: ["500"] * 3}
    result = stim3d.evaluate(batch, "toy-vlm", server.url, retries=2, **FAST)
    assert list(result.failed) == [qids[2]] and "HTTP 500" in result.failed[qids[2]]
    assert result.report.missing_ids == [qids[2]]
    assert result.report.rows[0].to_dict()["accuracy"] == pytest.approx(0.9)
    again = stim3d.evaluate(batch, "toy-vlm", server.url, retries=2, **FAST)
    assert (again.asked, again.reused, again.failed) == (1, 9, {})
    assert server.counts[qids[2]] == 4 and sum(server.counts.values()) == 13


def test_a_model_the_server_does_not_have_stops_the_run_with_one_line(batch, server, capsys):
    code = main(["eval", str(batch), "--model", "no-such-model", "--base-url", server.url, "--concurrency", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "HTTP 404" in err and "stopped" in err and len(err.strip().splitlines()) == 1
    assert server.received == 1  # one question in flight (concurrency 1): the run stopped at its 404
    assert not (eval_folder(batch, "no-such-model") / RESPONSES).exists()


def test_the_timeout_is_hard_even_against_a_slow_server(batch, server):
    qids = [r.question_id for r in read_records(batch / "records.jsonl")]
    server.script = {qids[0]: ["delay:5"]}
    result = stim3d.evaluate(batch, "toy-vlm", server.url, limit=1, retries=0, timeout=0.5, backoff=0.01, report=False)
    assert result.ask_seconds < 1.5  # the server would answer after 5 s
    assert "within 0.5 s" in result.failed[qids[0]]


def test_the_timeout_bounds_a_body_that_arrives_one_byte_at_a_time(batch, server):
    qids = [r.question_id for r in read_records(batch / "records.jsonl")]
    server.script = {qids[0]: ["drip"]}  # every read gets a byte within 0.2 s: only a deadline on the whole ends it
    result = stim3d.evaluate(batch, "toy-vlm", server.url, limit=1, retries=0, timeout=1.0, backoff=0.01, report=False)
    assert result.ask_seconds < 2.0  # 1 s, plus at most one 0.2 s read; the whole body would take 10 s
    assert "within 1 s" in result.failed[qids[0]]


def test_one_deadline_bounds_headers_that_arrive_one_byte_at_a_time(batch, server, capsys):
    """`eval --timeout 3` against a server dripping its status line and headers (a byte every 0.05 s, 30 s in all):
    the question fails after about 3 s, saying so, instead of waiting for the headers to end."""
    qids = [r.question_id for r in read_records(batch / "records.jsonl")]
    server.script = {qids[0]: ["driphead"]}
    began = time.monotonic()
    code = main(["eval", str(batch), "--model", "toy-vlm", "--base-url", server.url, "--limit", "1",
                 "--retries", "0", "--timeout", "3"])
    took = time.monotonic() - began
    assert 3.0 <= took < 5.0, took
    answers = _lines(batch, "toy-vlm") if (eval_folder(batch, "toy-vlm") / RESPONSES).exists() else []
    assert answers == []
    assert code == 1 and f"failed {qids[0]}: no complete response within 3 s" in capsys.readouterr().err


def test_a_changed_prompt_is_asked_again_and_nothing_else(batch, server):
    stim3d.evaluate(batch, "toy-vlm", server.url, **FAST)
    assert sum(server.counts.values()) == 10
    same = stim3d.evaluate(batch, "toy-vlm", server.url, **FAST)
    assert (same.asked, same.reused) == (0, 10) and sum(server.counts.values()) == 10
    lines = (batch / "records.jsonl").read_text().splitlines()
    edited = json.loads(lines[4])
    edited["prompt"] = edited["prompt"].replace("Answer with", "Reply with")
    (batch / "records.jsonl").write_text("\n".join([*lines[:4], json.dumps(edited), *lines[5:]]) + "\n")
    server.by_request = {(r.image.sha256, r.prompt): r for r in read_records(batch / "records.jsonl")}
    changed = stim3d.evaluate(batch, "toy-vlm", server.url, **FAST)
    assert (changed.asked, changed.reused) == (1, 9)
    assert server.counts[edited["question_id"]] == 2 and sum(server.counts.values()) == 11
    system = stim3d.evaluate(batch, "toy-vlm", server.url, system="Be brief.", **FAST)  # another request entirely
    assert (system.asked, system.reused) == (10, 0)


def test_a_killed_run_resumes_without_asking_any_answered_question_again(batch, server):
    qids = [r.question_id for r in read_records(batch / "records.jsonl")]
    server.script = {qids[4]: ["hang"]}  # the fifth request never answers: the run is killed while it waits
    command = [sys.executable, "-m", "stim3d", "eval", str(batch), "--model", "toy-vlm", "--base-url", server.url,
               "--concurrency", "1", "--timeout", "60"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    responses = eval_folder(batch, "toy-vlm") / RESPONSES
    deadline = time.monotonic() + 60
    while server.counts[qids[4]] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    answered = [json.loads(line)["question_id"] for line in responses.read_text().splitlines()]
    assert answered == qids[:4]
    server.script = {}
    result = stim3d.evaluate(batch, "toy-vlm", server.url, **FAST)
    assert (result.asked, result.reused, result.failed) == (6, 4, {})
    assert all(server.counts[q] == 1 for q in qids if q != qids[4])  # no answered question was asked again
    assert server.counts[qids[4]] == 2  # the one in flight at the kill, and its retry
    assert result.report.rows[0].to_dict()["accuracy"] == 1.0


def test_a_half_written_last_line_is_skipped_and_closed_off(batch, server):
    stim3d.evaluate(batch, "toy-vlm", server.url, limit=2, **FAST)
    responses = eval_folder(batch, "toy-vlm") / RESPONSES
    with responses.open("a") as f:
        f.write('{"question_id": "shape_co')  # a kill in the middle of a write
    result = stim3d.evaluate(batch, "toy-vlm", server.url, limit=3, **FAST)
    assert (result.asked, result.reused) == (1, 2)
    lines = responses.read_text().splitlines()
    assert len(lines) == 4 and json.loads(lines[3])["question_id"] == result.report.questions[2].question_id


def test_the_api_key_is_sent_but_never_written_or_printed(batch, server, capsys, monkeypatch):
    secret = "sk-test-0123456789abcdef-do-not-store"
    monkeypatch.setenv("TOY_API_KEY", secret)
    code = main(["eval", str(batch), "--model", "toy-vlm", "--base-url", server.url, "--api-key-env", "TOY_API_KEY",
                 "--timeout", "5"])
    captured = capsys.readouterr()
    assert code == 0
    assert set(server.authorization) == {f"Bearer {secret}"}
    assert "[10/10]" in captured.err and "[10/10]" not in captured.out  # progress goes to stderr
    assert secret not in captured.out + captured.err
    written = [p for p in batch.rglob("*") if p.is_file()]
    assert any(p.name == RESPONSES for p in written)
    for path in written:
        assert secret.encode() not in path.read_bytes(), path


def test_requests_go_only_to_the_loopback_server(batch, server, monkeypatch):
    connected = []
    real_connect = socket.socket.connect

    def recording_connect(sock, address):
        connected.append(address)
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", recording_connect)
    stim3d.evaluate(batch, "toy-vlm", server.url, concurrency=2, **FAST)
    assert len(connected) == 10
    assert {host for host, _ in connected} == {"127.0.0.1"}


def test_bad_arguments_are_one_line_and_exit_2(batch, capsys, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    cases = [
        (["--model", "m", "--base-url", "ftp://127.0.0.1/v1"], "--base-url"),
        (["--model", "m", "--base-url", "http://user:pw@127.0.0.1/v1"], "--api-key-env"),
        (["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "NO_SUCH_KEY_VAR"], "not set"),
        (["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--extra-body", "{bad"], "not JSON"),
        (["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--extra-body", '{"messages": []}'], "messages"),
        (["--model", "baseline:median"], "unknown baseline"),
        (["--model", "baseline:oracle", "--filter", "no_such_key=1"], "no_such_key"),
        (["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--downscale", "2"], "--downscale"),
    ]
    for extra, words in cases:
        with pytest.raises(SystemExit) if "{bad" in extra or "--downscale" in extra else _returns():  # argparse
            code = main(["eval", str(batch), *extra])
            assert code == 2, extra
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (extra, err)
    assert not (batch / "eval").exists()  # nothing was written for any of them


class _returns:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


def test_dry_run_prints_one_request_with_the_image_cut_short(batch, capsys):
    code = main(["eval", str(batch), "--model", "toy-vlm", "--base-url", "http://127.0.0.1:9/v1", "--dry-run",
                 "--system", "Be brief.", "--extra-body", '{"top_p": 0.5}', "--downscale", "0.5"])
    out = capsys.readouterr().out
    body = json.loads(out)
    first = read_records(batch / "records.jsonl")[0]
    assert code == 0 and body["model"] == "toy-vlm" and body["top_p"] == 0.5
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    image, text = body["messages"][1]["content"]
    assert text == {"type": "text", "text": first.prompt}
    assert image["image_url"]["url"].startswith("data:image/png;base64,") and "characters)" in image["image_url"]["url"]
    assert len(out) < 2000 and not (batch / "eval").exists()


def test_endpoint_refuses_what_is_not_an_http_url():
    assert Endpoint.parse("http://127.0.0.1:8000/v1").path == "/v1/chat/completions"
    for bad in ("127.0.0.1:8000", "file:///etc/passwd", "http://127.0.0.1:99999/v1"):
        with pytest.raises(ValueError):
            Endpoint.parse(bad)


def test_a_batch_without_records_is_an_eval_error(tmp_path):
    (tmp_path / "items").mkdir()
    (tmp_path / "records.jsonl").write_text("")
    with pytest.raises(EvalError, match="no records"):
        stim3d.evaluate(tmp_path, "baseline:oracle")


def test_settings_come_from_a_yaml_file_and_a_flag_wins(batch, tmp_path, capsys):
    config = tmp_path / "eval.yaml"
    config.write_text("model: file-model\nbase_url: http://127.0.0.1:9/v1\nsystem: From the file.\ntemperature: 0.3\n"
                      "extra_body: {top_k: 5}\n")
    assert main(["eval", str(batch), "--config", str(config), "--temperature", "0.7", "--dry-run"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert (body["model"], body["temperature"], body["top_k"]) == ("file-model", 0.7, 5)
    assert body["messages"][0]["content"] == "From the file."
    config.write_text("model: m\ntemprature: 0.3\n")
    assert main(["eval", str(batch), "--config", str(config), "--dry-run"]) == 2
    assert "unknown setting 'temprature'" in capsys.readouterr().err


def test_downscale_sends_a_smaller_image_and_asks_again(batch):
    import base64
    import io

    from PIL import Image

    from stim3d.eval.options import EvalOptions
    from stim3d.eval.request import image_data_url, request_hash

    record = read_records(batch / "records.jsonl")[0]
    url = image_data_url(batch / record.image.path, 0.5)
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as image:
        assert image.size == (32, 24)  # the batch renders 64x48
    full, half = EvalOptions(model="m").request(), EvalOptions(model="m", image_scale=0.5).request()
    assert request_hash(record, full) != request_hash(record, half)
    assert request_hash(record, full) == request_hash(record, EvalOptions(model="m").request())
