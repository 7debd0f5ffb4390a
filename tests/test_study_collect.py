"""`stim3d study serve` over real HTTP on 127.0.0.1, and `stim3d study score` on scripted sessions (no browser).

The batch is a tiny Workbench render; the study folder is `build_study`'s (one practice, one catch and
eight main trials), so serve and score are tested on the folder build really writes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import stim3d
from stim3d.cli import main
from stim3d.eval.store import ResponseStore, latest_responses
from stim3d.scoring.records import answer_text, read_records
from stim3d.scoring.report import read_predictions
from stim3d.study.build import BuildOptions, build_study
from stim3d.study.contract import MAX_BODY_BYTES
from stim3d.study.errors import StudyError
from stim3d.study.folder import StudyFolder
from stim3d.study.quotas import SAVE_SLACK, Limits
from stim3d.study.score import score_study
from stim3d.study.serve import Exposure, make_server
from stim3d.study.sessions import FORBIDDEN
from tests.study_widgets_support import running

pytestmark = pytest.mark.bpy
ROOT = Path(__file__).resolve().parents[1]
CONFIG = {"seed": 3, "render": {"engine": "workbench", "width": 64, "height": 48},
          "tasks": [{"family": "shape_count", "count": 10, "grid": {"min_visibility": [0.6, 0.9]},
                     "params": {"n_shape_types": 2, "max_instances": 3}}]}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("study_batch") / "batch"
    report = stim3d.render_batch(CONFIG, out, workers=1)
    assert report.rendered == 10 and not report.failed
    return out


@pytest.fixture
def study(rendered, tmp_path) -> tuple[Path, Path]:
    """(batch, study) in this test's own folder: the batch copied (score writes into it), the study beside it."""
    batch = tmp_path / "batch"
    shutil.copytree(rendered, batch)
    build_study(batch, tmp_path / "study", BuildOptions(pilot=True, practice=1, catch=1))
    return batch, tmp_path / "study"


@pytest.fixture
def served(study) -> Iterator[tuple[str, Path]]:
    server = make_server(study[1], "127.0.0.1", 0, log=lambda line: None)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", study[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def golds(batch: Path) -> dict[str, str]:
    return {r.question_id: answer_text(r.answer.type, r.answer.gold) for r in read_records(batch / "records.jsonl")}


def session(folder: Path, participant: str, batch: Path, wrong: int = 0, wrong_catch: bool = False, rt_ms: int = 1800,
            upto: int | None = None, session_id: str = "s1") -> dict[str, Any]:
    """A session answering the plan of `participant` right, except the first `wrong` main trials (and the catch)."""
    study = StudyFolder.open(folder)
    gold = golds(batch)
    plan = study.plan(participant)
    trials, mains = [], 0
    for index, trial_id in enumerate(plan[:upto]):
        role = study.by_id[trial_id].role
        response = gold[trial_id]
        if (role == "main" and mains < wrong) or (role == "catch" and wrong_catch):
            response = str(int(response) + 1)
        mains += role == "main"
        trials.append({"index": index, "trial_id": trial_id, "role": role, "response": response, "rt_ms": rt_ms})
    return {"study": study.study_id, "participant": participant, "session": session_id, "plan": plan, "trials": trials,
            "complete": upto is None}


def request(url: str, method: str = "GET", body: Any = None, raw: bytes | None = None,
            token: str | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def start(base: str, participant: str, session_id: str = "s1") -> str:
    """Start a session as the page does (POST /api/session) and return its token."""
    status, answer = request(base + "/api/session", "POST", {"participant": participant, "session": session_id})
    assert status == 201, (status, answer)
    return json.loads(answer)["token"]


def raw_http(base: str, text: str, whole: bool = False) -> str:
    """Send `text` as it is (no client normalising the path or the Host) and return the status line (or all)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(text.encode())
        reader = sock.makefile("rb")
        return reader.read().decode() if whole else reader.readline().decode().strip()


@contextlib.contextmanager
def serving(folder: Path, **options: Any) -> Iterator[str]:
    """`make_server` with `options` (exposure, limits) on 127.0.0.1 in a thread; yields the base URL."""
    with running(make_server(folder, "127.0.0.1", 0, log=lambda line: None, **options)) as base:
        yield base


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_ping_put_get_and_resume_without_duplicates(served, study):
    base, folder = served
    study_id = json.loads((folder / "study.json").read_text())["study_id"]
    assert request(base + "/api/ping") == (200, json.dumps({"study": study_id}).encode())
    token = start(base, "alice")
    assert request(base + "/api/session?participant=alice&session=s1", token=token) == (200, b"null")  # none yet
    full = session(folder, "alice", study[0])
    short = {**full, "trials": full["trials"][:3], "complete": False}
    assert json.loads(request(base + "/api/session", "PUT", short, token=token)[1]) == {"stored": 3, "complete": False}
    status, stored = request(base + "/api/session?participant=alice&session=s1", token=token)
    assert status == 200 and json.loads(stored)["trials"] == [{**t, "focus_losses": 0, "presented_ms": None}
                                                              for t in short["trials"]]
    longer = {**full, "trials": full["trials"][:6], "complete": False}
    assert json.loads(request(base + "/api/session", "PUT", longer, token=token)[1]) == {"stored": 6, "complete": False}
    # a stale page resends two trials with other answers and then the whole session: stored trials win, none twice
    stale = {**full, "trials": [{**t, "response": "99"} for t in full["trials"][:2]], "complete": False}
    assert json.loads(request(base + "/api/session", "PUT", stale, token=token)[1]) == {"stored": 6, "complete": False}
    assert json.loads(request(base + "/api/session", "PUT", full, token=token)[1]) == {"stored": 10, "complete": True}
    assert json.loads(request(base + "/api/session", "PUT", {**stale}, token=token)[1]) == {"stored": 10, "complete": True}
    kept = json.loads((folder / "data" / "alice" / "s1.json").read_text())
    assert [t["index"] for t in kept["trials"]] == list(range(10))
    assert [t["response"] for t in kept["trials"]] == [t["response"] for t in full["trials"]]
    assert request(base + "/api/session?participant=..&session=s1", token=token)[0] == 403


def test_a_hostile_client_reads_and_writes_no_session_without_its_token(served, study):
    """No token, a wrong token, another session's token, a guessed id, a second start: refused, and no data."""
    base, folder = served
    alice, bob = start(base, "alice"), start(base, "bob")
    assert len(alice) >= 43 and alice != bob  # secrets.token_urlsafe(32)
    full = session(folder, "alice", study[0])
    assert request(base + "/api/session", "PUT", full, token=alice)[0] == 200
    forbidden = json.dumps({"error": FORBIDDEN}).encode()
    for token in (None, "", "x" * 43, bob, alice[:-1], alice + "x"):
        for query in ("participant=alice&session=s1", "participant=alice&session=s2", "participant=zed&session=s1"):
            assert request(f"{base}/api/session?{query}", token=token) == (403, forbidden), (token, query)
        status, answer = request(base + "/api/session", "PUT", {**full, "complete": False, "trials": []}, token=token)
        assert (status, answer) == (403, forbidden), token
    # bob's token is bob's: it neither reads nor writes alice, and alice's session is unchanged
    assert request(base + "/api/session?participant=bob&session=s1", token=alice)[0] == 403
    assert request(base + "/api/session", "PUT", session(folder, "bob", study[0]), token=alice)[0] == 403
    assert request(base + "/api/session?participant=bob&session=s1", token=bob) == (200, b"null")
    # a second start for alice (another browser, or someone who knows her id) is refused: no new token
    for session_id in ("s1", "s2"):
        status, answer = request(base + "/api/session", "POST", {"participant": "alice", "session": session_id})
        assert status == 409 and "already started" in json.loads(answer)["error"] and b"token" not in answer
    # no listing, anywhere
    for path in ("/api/session", "/api/sessions", "/data/", "/data/alice/s1.json", "/data/alice/s1.token"):
        status, answer = request(base + path, token=alice)
        assert status in (400, 403, 404) and b"trials" not in answer and b"alice" not in answer, (path, answer)
    assert json.loads((folder / "data" / "alice" / "s1.json").read_text())["complete"] is True
    digest = (folder / "data" / "alice" / "s1.token").read_text()
    assert alice not in digest and len(digest.strip()) == 64  # only the token's SHA-256 is kept
    for path in (folder / "data" / "alice" / "s1.json", folder / "data" / "alice" / "s1.token"):
        assert path.stat().st_mode & 0o777 == 0o600, path
    assert (folder / "data").stat().st_mode & 0o777 == 0o700


def test_bad_sessions_are_refused_in_one_line_and_nothing_is_written_but_data(served, study):
    base, folder = served
    good = session(folder, "bob", study[0])
    plan = good["plan"]
    bad: dict[str, Any] = {
        "wrong plan": {**good, "plan": list(reversed(plan))},
        "unknown trial": {**good, "trials": [{**good["trials"][0], "trial_id": "no-such-trial"}]},
        "trial out of place": {**good, "trials": [{**good["trials"][0], "index": 1}]},
        "index past the plan": {**good, "trials": [{**good["trials"][0], "index": len(plan)}]},
        "wrong role": {**good, "trials": [{**good["trials"][1], "role": "catch" if good["trials"][1]["role"] != "catch"
                                          else "main"}]},
        "wrong study": {**good, "study": "another-study"},
        "dot-dot participant": {**good, "participant": "../x"},
        "nested participant": {**good, "participant": "a/b"},
        "absolute participant": {**good, "participant": "/tmp/x"},
        "hidden session": {**good, "session": ".s1"},
        "not a session": [1, 2, 3],
    }
    token = start(base, "bob")
    before = listing(folder.parent)
    for what, body in bad.items():
        status, answer = request(base + "/api/session", "PUT", body, token=token)
        error = json.loads(answer)["error"]
        assert status == 400 and error and "\n" not in error, (what, status, answer)
    for raw in (b"{not json", b"\xff\xfe", b""):
        status, answer = request(base + "/api/session", "PUT", raw=raw, token=token)
        assert status == 400 and "\n" not in json.loads(answer)["error"]
    # over the limit: refused from the header alone, the body never read
    status = raw_http(base, f"PUT /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {MAX_BODY_BYTES + 1}\r\n\r\n{{")
    assert " 413 " in status
    assert listing(folder.parent) == before  # nothing written but the start's token
    assert [p for p in before if "data" in p] == ["study/data", "study/data/bob", "study/data/bob/s1.token"]
    assert request(base + "/api/session", "PUT", good, token=token)[0] == 200
    after = listing(folder.parent)
    assert sorted(set(after) - set(before)) == ["study/data/bob/s1.json"]


def test_only_the_pages_files_are_served(served, study, tmp_path):
    base, folder = served
    assert request(base + "/index.html") == (200, (folder / "index.html").read_bytes())
    assert request(base + "/")[0] == 200 and request(base + "/trials.json")[0] == 200
    request(base + "/api/session", "PUT", session(folder, "carol", study[0]), token=start(base, "carol"))
    assert (folder / "data" / "carol" / "s1.json").is_file()
    (tmp_path / "secret.txt").write_text("outside")
    (folder / "link.txt").symlink_to(tmp_path / "secret.txt")
    (folder / "data-link").symlink_to(folder / "data")
    (folder / ".hidden").write_text("x")
    (folder / "exclusions.json").write_text('{"participants": [{"participant": "carol"}]}')  # an older version's
    (folder / "notes").mkdir()
    (folder / "notes" / "carol.txt").write_text("carol")
    (folder / "stimuli" / "peek").symlink_to(folder / "data")
    for path in ("/data/carol/s1.json", "/DATA/carol/s1.json", "/link.txt", "/data-link/carol/s1.json", "/.hidden",
                 "/.stim3d-serve.lock", "/exclusions.json", "/notes/carol.txt", "/stimuli/peek/carol/s1.json",
                 "/no-such-file", "/stimuli", "/stimuli/",
                 "/%2e%2e/secret.txt", "/stimuli/..%2f..%2fsecret.txt"):
        status, answer = request(base + path)
        assert status == 403 and b"outside" not in answer and b"carol" not in answer, path
    assert request(base + "/stimuli/no-such.png")[0] == 404  # a page file that is missing; a folder is never listed
    assert request(base + "/study.json")[0] == 200 and request(base + "/css/study.css")[0] == 200
    for path in ("/../secret.txt", "/stimuli/../../secret.txt", "/../study/data/carol/s1.json"):
        assert " 403 " in raw_http(base, f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"), path


# `stim3d study serve` in a child whose Ctrl-C is live: a shell that starts a job in the background (CI run
# with `&`) hands it SIGINT ignored, and Python keeps an inherited ignore, so the SIGINT case would wait forever.
_SERVE = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
          "sys.argv = ['stim3d', *sys.argv[1:]]; runpy.run_module('stim3d', run_name='__main__')")


def _serve(folder: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-c", _SERVE, "study", "serve", str(folder), "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    timer = threading.Timer(60, proc.kill)  # a server that never prints its URL cannot hang the test
    timer.start()
    url = proc.stdout.readline().strip() if proc.stdout else ""
    timer.cancel()
    return proc, url


def test_the_serve_command_prints_its_url_first_and_stops_cleanly(study):
    for sig, code in ((signal.SIGTERM, 0), (signal.SIGINT, 130)):
        proc, url = _serve(study[1])
        try:
            assert url.startswith("http://127.0.0.1:") and url.endswith("/index.html"), url
            assert request(url.replace("/index.html", "/api/ping"))[0] == 200
            proc.send_signal(sig)
            proc.communicate(timeout=30)  # drains both pipes: a server blocked writing to a full pipe cannot exit
            assert proc.returncode == code
        finally:
            proc.kill()
            proc.wait(timeout=10)


def _flood(url: str, stop: threading.Event, counts: list[int], requests: int = 20_000, seconds: float = 60) -> None:
    """Ping the server over fresh loopback connections as fast as one thread can, until `stop`, `requests` sent
    or `seconds` passed; counts[0] answers read, counts[1] connections refused or dropped."""
    host, port = url.removeprefix("http://").split("/")[0].split(":")
    deadline = time.monotonic() + seconds
    for _ in range(requests):
        if stop.is_set() or time.monotonic() > deadline:
            return
        try:
            with socket.create_connection((host, int(port)), timeout=2) as sock:
                sock.sendall(b"GET /api/ping HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                counts[0] += bool(sock.recv(64))
        except OSError:
            counts[1] += 1


def test_sigterm_and_sigint_stop_the_server_within_seconds_under_a_flood_and_temporaries_are_cleaned(study):
    """Four threads flood the server and 80 idle connections sit over its 64 slots; the signal still stops it
    within 5 s with its exit code. Temporary files a killed server left in data/ go at start, and at stop."""
    folder = study[1]
    for sig, code in ((signal.SIGTERM, 0), (signal.SIGINT, 130)):
        left = [folder / "data" / "alice" / ".s1.json.tmp-host-1", folder / "data" / ".x.tmp-host-2"]
        for path in left:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("half a session")
        proc, url = _serve(folder)
        stop, counts = threading.Event(), [0, 0]
        idle: list[socket.socket] = []
        floods = [threading.Thread(target=_flood, args=(url, stop, counts), daemon=True) for _ in range(4)]
        try:
            assert url.startswith("http://127.0.0.1:"), url
            assert not any(path.exists() for path in left)  # cleaned at start
            host, port = url.removeprefix("http://").split("/")[0].split(":")
            idle = [socket.create_connection((host, int(port)), timeout=5) for _ in range(80)]
            for thread in floods:
                thread.start()
            deadline = time.monotonic() + 30
            while counts[0] < 200 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert counts[0] >= 200, counts  # answered (200 or 503) while flooded
            during = folder / "data" / "alice" / ".s2.json.tmp-host-3"
            during.write_text("half a session")
            sent = time.monotonic()
            proc.send_signal(sig)
            proc.communicate(timeout=30)
            assert proc.returncode == code and time.monotonic() - sent < 5, (sig, proc.returncode)
            assert not during.exists()  # cleaned at stop
        finally:
            stop.set()
            for thread in floods:
                thread.join(timeout=10)
            for sock in idle:
                sock.close()
            proc.kill()
            proc.wait(timeout=10)


def test_a_second_server_on_the_folder_is_refused_in_one_line_and_a_killed_one_leaves_no_lock(study):
    folder = study[1]
    first, url = _serve(folder)
    try:
        assert url.startswith("http://127.0.0.1:"), url
        second = subprocess.run([sys.executable, "-m", "stim3d", "study", "serve", str(folder), "--port", "0"],
                                cwd=ROOT, capture_output=True, text=True, timeout=60)
        err = second.stderr.strip().splitlines()
        assert second.returncode == 2 and second.stdout == "", second
        assert len(err) == 1 and "already served (process" in err[0] and url in err[0], err
        assert "one server per study folder" in err[0]
        with pytest.raises(StudyError, match="already served"):
            make_server(folder, "127.0.0.1", 0, log=lambda line: None)  # the library refuses it too
        assert request(url.replace("/index.html", "/api/ping"))[0] == 200  # the first one is untouched
        first.kill()  # no clean-up at all: the kernel drops the lock with the process
        first.communicate(timeout=30)
        again, again_url = _serve(folder)
        try:
            assert again_url.startswith("http://127.0.0.1:"), again_url
        finally:
            again.terminate()
            again.communicate(timeout=30)
    finally:
        first.kill()
        first.wait(timeout=10)
    server = make_server(folder, "127.0.0.1", 0, log=lambda line: None)  # closed servers hand the folder on
    server.server_close()
    make_server(folder, "127.0.0.1", 0, log=lambda line: None).server_close()


def test_quotas_answer_429_with_the_limit_and_store_nothing_more(study):
    """Sessions per minute per address (behind a proxy: per X-Forwarded-For), saves and bytes per session."""
    batch, folder = study
    limits = Limits(sessions_per_minute=2, saves_per_trial=1, session_bytes=3000)
    with serving(folder, limits=limits) as base:
        assert start(base, "p1") and start(base, "p2")
        status, answer = request(base + "/api/session", "POST", {"participant": "p3", "session": "s1"})
        error = json.loads(answer)["error"]
        assert status == 429 and "too many sessions started from your address (2 a minute)" in error, answer
        assert not (folder / "data" / "p3").exists()
    shutil.rmtree(folder / "data")
    with serving(folder, limits=limits) as base:
        token = start(base, "alice")
        full = session(folder, "alice", batch)
        small = {**full, "trials": full["trials"][:1], "complete": False}
        allowed = 1 * len(full["plan"]) + SAVE_SLACK
        codes = [request(base + "/api/session", "PUT", small, token=token)[0] for _ in range(allowed + 3)]
        assert codes == [200] * allowed + [429] * 3, codes
        status, answer = request(base + "/api/session", "PUT", small, token=token)
        assert status == 429 and f"saved {allowed} times" in json.loads(answer)["error"]
    shutil.rmtree(folder / "data")
    with serving(folder, limits=limits) as base:
        token = start(base, "bob")
        full = session(folder, "bob", batch)
        full["trials"][-1]["response"] = "7" * 2500  # under the contract's 4000 characters, over this quota
        status, answer = request(base + "/api/session", "PUT", full, token=token)
        assert status == 429 and "over the limit of 3000" in json.loads(answer)["error"], answer
        assert not (folder / "data" / "bob" / "s1.json").exists()
    shutil.rmtree(folder / "data")
    with serving(folder, limits=limits, exposure=Exposure(behind_proxy=True)) as base:
        def start_from(address: str, participant: str) -> int:
            body = json.dumps({"participant": participant, "session": "s1"})
            reply = raw_http(base, f"POST /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 6.6.6.6, "
                                   f"{address}\r\nContent-Length: {len(body)}\r\n\r\n{body}")
            return int(reply.split()[1])
        assert [start_from("192.0.2.1", f"a{k}") for k in range(3)] == [201, 201, 429]
        assert start_from("192.0.2.2", "b0") == 201  # another participant behind the same proxy
        body = json.dumps({"participant": "a9", "session": "s1"})
        reply = raw_http(base, f"POST /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 192.0.2.1\r\n"
                               f"Content-Length: {len(body)}\r\n\r\n{body}", whole=True)
        retry = next(int(line.split(":")[1]) for line in reply.splitlines() if line.startswith("Retry-After:"))
        assert reply.startswith("HTTP/1.0 429 ") and 0 < retry <= 61, reply


def test_the_host_header_is_checked_and_a_public_host_needs_behind_proxy(study, capsys):
    folder = study[1]
    with serving(folder) as base:
        port = base.rsplit(":", 1)[1]
        for host in ("127.0.0.1", f"127.0.0.1:{port}", f"localhost:{port}", "[::1]:8000", "LOCALHOST"):
            assert " 200 " in raw_http(base, f"GET /api/ping HTTP/1.1\r\nHost: {host}\r\n\r\n"), host
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "", None):
            header = "" if host is None else f"Host: {host}\r\n"
            reply = raw_http(base, f"GET /api/ping HTTP/1.1\r\n{header}\r\n", whole=True)
            assert reply.startswith("HTTP/1.0 421 ") and "study_id" not in reply and "\"error\"" in reply, host
        reply = raw_http(base, "GET /api/session?participant=a&session=s1 HTTP/1.1\r\nHost: evil.example\r\n\r\n")
        assert " 421 " in reply
    with serving(folder, exposure=Exposure(behind_proxy=True, allowed_hosts=frozenset({"study.example.org"}))) as base:
        assert " 200 " in raw_http(base, "GET /api/ping HTTP/1.1\r\nHost: study.example.org\r\n\r\n")
        assert " 421 " in raw_http(base, "GET /api/ping HTTP/1.1\r\nHost: other.example.org\r\n\r\n")
    with pytest.raises(StudyError, match="not a loopback address"):
        make_server(folder, "0.0.0.0", 0, log=lambda line: None)  # refused before binding anything
    for args, message in ((["--host", "0.0.0.0"], "--host 0.0.0.0: not a loopback address"),
                          (["--host", "192.0.2.7"], "pass --behind-proxy"),
                          (["--allowed-host", "https://study.example.org"], "--allowed-host"),
                          (["--allowed-host", "study.example.org:443"], "not a host name")):
        assert main(["study", "serve", str(folder), "--port", "0", *args]) == 2, args
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and message in err, (args, err)


def _ping(base: str) -> str:
    return raw_http(base, "GET /api/ping HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", whole=True)


@pytest.mark.parametrize("limits", [Limits(connections=2), Limits(connections_per_address=2)],
                         ids=["all clients", "one address"])
def test_a_flood_of_connections_gets_503_not_a_thread_each(study, limits):
    folder = study[1]
    with serving(folder, limits=limits) as base:
        host, port = base.removeprefix("http://").split(":")
        idle = [socket.create_connection((host, int(port)), timeout=10) for _ in range(2)]  # hold both slots
        try:
            deadline = time.monotonic() + 10
            reply = ""
            while time.monotonic() < deadline and " 503 " not in reply:  # the slots are taken once both are accepted
                reply = _ping(base)
            assert reply.startswith("HTTP/1.0 503 ") and "Retry-After: 1" in reply and "busy" in reply, reply
        finally:
            for sock in idle:
                sock.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and " 200 " not in reply:  # freed as the idle connections close
            reply = _ping(base)
        assert " 200 " in reply


def test_behind_a_proxy_connections_are_not_counted_per_address(study):
    """Every participant arrives from the proxy's address: only the server-wide count applies."""
    with serving(study[1], limits=Limits(connections_per_address=2), exposure=Exposure(behind_proxy=True)) as base:
        host, port = base.removeprefix("http://").split(":")
        idle = [socket.create_connection((host, int(port)), timeout=10) for _ in range(3)]
        try:
            for _ in range(10):  # over a second, long after the three are accepted: each ping is served
                assert " 200 " in _ping(base).splitlines()[0]
                time.sleep(0.1)
        finally:
            for sock in idle:
                sock.close()


def test_participant_ids_that_differ_in_trailing_punctuation_never_share_a_folder(served, study):
    """`p1`, `p1-`, `p1.`, `p1_` would all be scored into eval/human-p1: only the canonical one is taken, everywhere."""
    base, folder = served
    batch = study[0]
    token = start(base, "p1")
    assert request(base + "/api/session", "PUT", session(folder, "p1", batch), token=token)[0] == 200
    for other in ("p1-", "p1.", "p1_", "p1" + "1" * 113):
        status, answer = request(base + "/api/session", "POST", {"participant": other, "session": "s1"})
        error = json.loads(answer)["error"]
        assert status == 400 and "must end in a letter or digit and have at most 114 characters" in error, answer
        assert "\n" not in error and other[:20] in error
        status, answer = request(base + "/api/session", "PUT", session(folder, other, batch), token=token)
        assert status == 400 and "must end in a letter or digit" in json.loads(answer)["error"]
        assert request(f"{base}/api/session?participant={other}&session=s1", token=token)[0] == 403
    assert sorted(p.name for p in (folder / "data").iterdir()) == ["p1"]
    write_session(folder, session(folder, "p1-", batch), name="p1-_s1.json")  # a download dropped in by hand
    report = score_study(folder)
    assert [p.participant for p in report.participants] == ["p1"]
    assert "must end in a letter or digit" in report.skipped["data/p1-_s1.json"]
    assert sorted(p.name for p in (batch / "eval").glob("human-*")) == ["human-p1"]


def test_serving_a_folder_that_is_not_a_study_is_one_line(tmp_path, capsys):
    assert main(["study", "serve", str(tmp_path), "--port", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "not a study folder" in err


def write_session(folder: Path, body: dict[str, Any], name: str | None = None) -> None:
    path = folder / "data" / (name or f"{body['participant']}/{body['session']}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body))


def scripted(batch: Path, folder: Path) -> None:
    """alice all right; bob 2 main wrong; carol 1 wrong and a failed catch; dave too fast; erin half done;
    frank all right in a downloaded file dropped into data/; one file that is no session."""
    write_session(folder, session(folder, "alice", batch))
    write_session(folder, session(folder, "bob", batch, wrong=2))
    write_session(folder, session(folder, "bob", batch, upto=3, session_id="s0"))  # an earlier, shorter visit
    write_session(folder, session(folder, "carol", batch, wrong=1, wrong_catch=True))
    write_session(folder, session(folder, "dave", batch, rt_ms=300))
    write_session(folder, session(folder, "erin", batch, upto=5))
    write_session(folder, session(folder, "frank", batch), name="frank-download.json")
    (folder / "data" / "junk.json").write_text("{not a session")


def test_score_excludes_by_the_documented_rules_and_scores_like_a_model(study, capsys):
    batch, folder = study
    scripted(batch, folder)
    report = score_study(folder)
    by = {p.participant: p for p in report.participants}
    assert sorted(by) == ["alice", "bob", "carol", "dave", "erin", "frank"]
    assert [p for p in by if by[p].included] == ["alice", "bob", "frank"]
    assert [r.split(":")[0] for r in by["carol"].reasons] == ["failed attention check"]
    assert [r.split(":")[0] for r in by["dave"].reasons] == ["too fast"]
    assert by["erin"].reasons == ["incomplete: 5 of 10 trials answered"]
    assert list(report.skipped) == ["data/junk.json"] and by["bob"].session == "s1"
    exclusions = json.loads((batch / "eval" / "people-exclusions.json").read_text())
    assert not (folder / "exclusions.json").exists()  # never in the folder a server publishes
    assert {p["participant"]: p["included"] for p in exclusions["participants"]} == {p: by[p].included for p in by}
    gold = golds(batch)
    hand: dict[str, int] = {}
    for person in ("alice", "bob", "frank"):  # the hand count: each response against the record's gold text
        rows = [json.loads(line) for line in (batch / "eval" / f"human-{person}" / "responses.jsonl").read_text().splitlines()]
        assert {r["model"] for r in rows} == {f"human:{person}"} and len(rows) == 8  # main trials only
        hand[person] = sum(r["response"] == gold[r["question_id"]] for r in rows)
        assert by[person].correct == hand[person]
        scores = json.loads((batch / "eval" / f"human-{person}" / "scores.json").read_text())
        assert scores["rows"][0]["accuracy"] == pytest.approx(hand[person] / 8)
        predictions, count = read_predictions(batch / "eval" / f"human-{person}" / "responses.jsonl")
        assert count == 8 and ResponseStore(batch / "eval" / f"human-{person}").skipped_lines == 0
    assert hand == {"alice": 8, "bob": 6, "frank": 8}
    pooled = ResponseStore(batch / "eval" / "human")
    assert len(pooled) == 24 and pooled.skipped_lines == 0  # one line per response, distinct request hashes
    scores = json.loads((batch / "eval" / "human" / "scores.json").read_text())
    assert scores["rows"][0]["n"] == 24 and scores["rows"][0]["accuracy"] == pytest.approx(22 / 24)
    assert report.pooled == (24, 22, 8)
    # a participant whose data is gone is gone from eval/ on the next run
    shutil.rmtree(folder / "data" / "alice")
    again = score_study(folder)
    assert "alice" not in {p.participant for p in again.participants}
    assert not (batch / "eval" / "human-alice").exists() and again.pooled == (16, 14, 8)


def test_study_score_command_then_a_model_beside_people(study, capsys):
    batch, folder = study
    scripted(batch, folder)
    result = subprocess.run([sys.executable, "-m", "stim3d", "study", "score", str(folder)], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.strip().startswith("bob: included, 6 of 8 right, accuracy 0.750") for line in lines)
    assert any(line.strip().startswith("dave: excluded (too fast") for line in lines)
    assert any(line.endswith("people-vs-models.html") for line in lines)
    stim3d.evaluate(batch, "baseline:constant")
    assert main(["study", "score", str(folder)]) == 0
    page = (batch / "eval" / "people-vs-models.html").read_text()
    assert "<th>human</th><th>baseline-constant</th>" in page and "Fleiss" in page
    assert "accuracy by min_visibility" in page.lower()
    # the people sit in `stim3d score --compare eval/*/` too, scored on the questions they saw
    capsys.readouterr()
    sources = sorted(str(p) for p in (batch / "eval").glob("*/"))
    assert main(["score", str(batch), "--compare", *sources]) == 0
    table = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[1:]
             if not line.startswith("wrote")}
    assert table["human-bob"][1:4] == ["8", "0", "0.750"]
    assert table["human"][1:4] == ["24", "0", "0.917"]
    assert table["baseline-constant"][1] == "10"
    assert latest_responses(batch / "eval" / "human-bob")  # store.py's reader takes the human folders


def test_score_bad_inputs_are_one_line(study, tmp_path, capsys):
    batch, folder = study
    cases = [([str(tmp_path / "nowhere")], "no such study folder"), ([str(batch)], "not a study folder"),
             ([str(folder)], "no session files")]
    write_other = tmp_path / "other"
    shutil.copytree(batch, write_other)
    manifest = json.loads((write_other / "batch.json").read_text())
    (write_other / "batch.json").write_text(json.dumps({**manifest, "config_hash": "0000000000000000"}))
    cases.append(([str(folder), "--batch", str(write_other)], "not the batch this study was built from"))
    for args, message in cases:
        if "--batch" in args:
            write_session(folder, session(folder, "alice", batch))
        assert main(["study", "score", *args]) == 2, args
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and message in err, (args, err)
    assert not (batch / "eval").exists() and os.listdir(folder / "data") == ["alice"]


def test_agreement_matches_hand_counts_and_fleiss_published_example():
    from stim3d.study.agreement import fleiss_kappa, pairwise_agreement

    assert pairwise_agreement([["a", "a"], ["a", "b"], ["c"]]) == 0.5  # the single rating is no question to agree on
    assert fleiss_kappa([["a", "a"], ["a", "b"]]) == pytest.approx((0.5 - 10 / 16) / (1 - 10 / 16))
    assert fleiss_kappa([["a", "a"], ["a", "a"]]) is None  # one category: chance agreement is total
    # Fleiss (1971) as tabled on Wikipedia's "Fleiss' kappa": 10 subjects, 14 raters, 5 categories -> 0.210
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1], [7, 7, 0, 0, 0],
             [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    groups = [[str(c) for c, k in enumerate(row) for _ in range(k)] for row in table]
    assert fleiss_kappa(groups) == pytest.approx(0.210, abs=5e-4)


def test_the_questions_most_people_fail_link_to_the_gallery(study):
    from stim3d.render.batch.reading import load_batch
    from stim3d.study.versus import write_versus

    batch, _ = study
    loaded = load_batch(batch)
    first, second = loaded.records[0], loaded.records[1]
    gold = golds(batch)

    def row(person: str, record: Any, right: bool) -> dict[str, Any]:
        response = gold[record.question_id] if right else str(int(gold[record.question_id]) + 1)
        return {"question_id": record.question_id, "model": f"human:{person}", "request_hash": f"{person}{record.question_id}",
                "response": response}

    per_person = {p: [row(p, first, p == "c"), row(p, second, True)] for p in ("a", "b", "c")}
    (batch / "gallery").mkdir()
    (batch / "gallery" / "index.html").write_text("<!doctype html>")
    page = write_versus(loaded, per_person, "study-test").read_text()
    failed = page.split("Questions most people got wrong", 1)[1]
    assert f"<a href='../gallery/index.html#item={first.item_id}'>{first.item_id}</a>" in failed
    assert second.item_id not in failed  # everyone got it right
    assert "<td>3</td><td>2</td>" in failed  # three people saw it, two were wrong


def test_a_data_folder_that_is_a_link_is_refused_and_a_body_needs_its_length(served, study, tmp_path):
    base, folder = served
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (folder / "data").symlink_to(elsewhere)
    status, answer = request(base + "/api/session", "POST", {"participant": "gina", "session": "s1"})
    assert status == 400 and "symbolic link" in json.loads(answer)["error"] and not any(elsewhere.iterdir())
    assert " 411 " in raw_http(base, "PUT /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
