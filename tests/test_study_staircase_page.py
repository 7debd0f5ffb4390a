"""A sweep study with a staircase, end to end: `study build --staircase` of a real occlusion sweep (Workbench,
8 levels), `study serve`, a scripted participant in headless Chromium with the real widgets (reloading midway:
the staircase resumes) who is right exactly at the levels at or above a known cut, then `study score`: the threshold it reports is `replay` of the same
answers in Python and lies near the cut; the server refuses a session whose steps do not follow."""

from __future__ import annotations

import json
import shutil
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from stim3d.cli import main
from stim3d.study.build import BuildOptions, build_study
from stim3d.study.contract import Session, Trial
from stim3d.study.staircase import Staircase, replay
from tests.batch_support import render_cone_sweep
from tests.study_widgets_support import chromium_browser

pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")
pytestmark = pytest.mark.bpy
ROOT = Path(__file__).resolve().parents[1]
STEPS = 12
RELOAD_AT = 5
CUT = 0.65  # the participant is right exactly at levels >= CUT
STEP_MS = 20_000  # the deadline of every wait
ANSWER_S = 1.05  # a participant's time per answer: above the "too fast" exclusion's median of 1 s


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> Path:
    return render_cone_sweep(tmp_path_factory.mktemp("stairpage"))


def expected_answers(spec: dict) -> list[tuple[float, bool]]:
    """The steps the scripted participant produces, computed in Python alone."""
    staircase = Staircase(spec)
    while not staircase.done:
        level = staircase.next()
        staircase.update(level, level >= CUT)
    return staircase.history


def test_build_refuses_a_folder_without_sweeps_and_options_that_do_not_fit(sweep, tmp_path, capsys):
    plain = tmp_path / "plain"
    shutil.copytree(sweep, plain)
    lines = [json.loads(line) for line in (plain / "records.jsonl").read_text().splitlines()]
    for record in lines:
        record["difficulty"].pop("sweep_id")
    (plain / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    for args, message in (([str(plain), "--staircase"], "has no sweep"),
                          ([str(sweep), "--staircase-trials", "5"], "--staircase-trials needs --staircase"),
                          ([str(sweep), "--staircase", "--catch", "1"], "went to practice or catch trials")):
        assert main(["study", "build", *args, "--out", str(tmp_path / "study")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err


def _api(url: str, method: str, body: dict, token: str | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    request = urllib.request.Request(f"{url}/api/session", data=json.dumps(body).encode(), method=method,
                                     headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _participant(page, base: str, by_image: dict[str, Trial]) -> None:
    """Consent, instructions, then each staircase step: right iff the shown trial's level >= CUT (the study is a
    pilot: after each step its gold, which the page shows the owner)."""
    from playwright.sync_api import expect

    page.goto(f"{base}/index.html?participant=P1")
    page.get_by_role("button", name="I agree").click()
    page.get_by_role("button", name="Stay in this window").click()
    while page.get_by_role("button", name="Next").count():  # the instruction pages (a handful)
        page.get_by_role("button", name="Next").click()
        page.wait_for_timeout(50)
    deadline = time.monotonic() + 120
    for step in range(STEPS):
        if step == RELOAD_AT:  # a reload resumes the staircase after the last stored step
            page.reload()
            expect(page.get_by_text(f"you answered {RELOAD_AT} of {STEPS}")).to_be_visible()
            page.get_by_role("button", name="Continue").click()
        ready = page.locator(".stim3d-trial[data-ready='true']")
        ready.wait_for(state="visible")
        trial = by_image[ready.locator("img.stim3d-image").get_attribute("src") or ""]
        gold = trial.gold_text or ""
        right = float(trial.difficulty["sweep_level"]) >= CUT
        page.get_by_label("Your answer (a whole number)").fill(gold if right else str(int(gold) + 1))
        page.wait_for_timeout(ANSWER_S * 1000)
        handle = ready.element_handle()
        page.keyboard.press("Enter")
        page.wait_for_function("element => !element.isConnected", arg=handle, timeout=STEP_MS)
        # a pilot build: the step's gold shown to the owner after the answer, then the next step
        expect(page.locator(f'[data-pilot-gold="{trial.trial_id}"] .stim3d-gold')).to_have_text(gold)
        page.get_by_role("button", name="Continue").click()
        assert time.monotonic() < deadline, "the staircase took too long"
    expect(page.get_by_text("Your answers are saved.")).to_be_visible(timeout=STEP_MS)


@pytest.mark.browser
def test_a_participant_runs_the_staircase_and_score_reports_the_threshold_replay_gives(sweep, tmp_path):
    from stim3d.eval.options import EvalOptions
    from stim3d.eval.staircase import run_staircases
    from stim3d.study.score import score_study
    from stim3d.study.serve import make_server

    batch = tmp_path / "sweep"
    shutil.copytree(sweep, batch)
    study = tmp_path / "study"
    report = build_study(batch, study, BuildOptions(pilot=True, staircase=True, staircase_trials=STEPS))
    assert any(line.startswith(f"staircase: {STEPS} steps over 8 levels") for line in report.summary_lines())
    manifest = json.loads((study / "study.json").read_text())
    trials = [Trial.model_validate(t) for t in json.loads((study / "trials.json").read_text())["trials"]]
    assert {t.role for t in trials} == {"staircase"} and all(t.gold_text for t in trials)
    by_image = {t.image: t for t in trials}

    server = make_server(study, "127.0.0.1", 0, log=lambda line: None)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    base = server.url.rsplit("/", 1)[0]
    errors: list[str] = []
    try:
        with chromium_browser() as browser:
            page = browser.new_page()
            page.set_default_timeout(STEP_MS)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(f"{msg.text} {msg.location['url']}")
                    if msg.type == "error" and not _expected_404(msg) else None)
            _participant(page, base, by_image)
        (stored,) = (study / "data" / "P1").glob("*.json")
        session = Session.model_validate_json(stored.read_text())
        answers = expected_answers(manifest["staircase"]["spec"])
        assert session.complete and session.plan == []
        assert [(t.index, t.level) for t in session.trials] == [(k, level) for k, (level, _) in enumerate(answers)]

        # A forged step: flipping an answer moves the staircase elsewhere, so the next step no longer follows.
        flip = next(k for k in range(STEPS - 1)
                    if _next_after(manifest, answers[:k] + [(answers[k][0], not answers[k][1])]) != answers[k + 1][0])
        forged = json.loads(session.model_dump_json())
        gold = next(t.gold_text or "" for t in trials if t.trial_id == forged["trials"][flip]["trial_id"])
        forged["trials"][flip]["response"] = str(int(gold) + 1) if answers[flip][1] else gold
        # sent as a fresh session of P1 (one session per participant: the real one moves aside meanwhile)
        shutil.move(study / "data" / "P1", tmp_path / "P1")
        status, started = _api(base, "POST", {"participant": "P1", "session": session.session})
        assert status == 201, started
        status, body = _api(base, "PUT", forged, started["token"])
        assert status == 400 and f"staircase step {flip + 1}" in body["error"]
        shutil.rmtree(study / "data" / "P1")
        shutil.move(tmp_path / "P1", study / "data" / "P1")
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()
    assert not errors, errors

    run_staircases(batch, EvalOptions(model="baseline:oracle"), trials=6)  # a model's threshold beside the people's
    scored = score_study(study)
    (person,) = scored.participants
    assert person.included, person.reasons
    expected = replay(manifest["staircase"]["spec"], answers)
    assert person.threshold is not None and person.threshold.estimate == expected
    assert abs(expected.threshold - CUT) < 0.08 and expected.ci[0] <= CUT <= expected.ci[1]
    lines = scored.summary_lines()
    assert any(f"staircase threshold {expected.threshold:.3f} (SD {expected.sd:.3f}" in line for line in lines), lines
    assert any(line.startswith("staircase (pooled): threshold") for line in lines), lines
    exclusions = json.loads((batch / "eval" / "people-exclusions.json").read_text())
    assert exclusions["participants"][0]["staircase"]["threshold"] == expected.threshold
    versus = (batch / "eval" / "people-vs-models.html").read_text()
    assert "Staircase thresholds" in versus and f"{expected.threshold:.3f}" in versus
    assert "baseline:oracle (sweep-hand-t1-o2/q0)" in versus


def _expected_404(msg) -> bool:
    """The one 404 a visit gets by design: no favicon."""
    return "404" in msg.text and msg.location.get("url", "").endswith("/favicon.ico")


def _next_after(manifest: dict, answers: list[tuple[float, bool]]) -> float:
    staircase = Staircase(manifest["staircase"]["spec"])
    for level, right in answers:
        staircase.update(level, right)
    return staircase.next()
