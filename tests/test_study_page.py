"""The built study page in headless Chromium, with no server: consent, instructions, preload, practice with feedback,
a reload that resumes, main and catch trials, and the download fallback's Session (a contract.Session with the
participant's plan); a pilot's golds after each answer; a minimum window size. The response widget is the stand-in of tests/fixtures/study/ (the page's flow is tested here;
the real widgets have their own tests)."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from stim3d.study.build import BuildOptions, build_study
from stim3d.study.contract import Session, Trial, participant_plan
from tests.study_support import build_real, with_standin_widgets
from tests.study_widgets_support import chromium_browser, running

pytestmark = [pytest.mark.browser, pytest.mark.bpy]
STEP_MS = 20_000  # the deadline of every wait: generous for two busy cores, never a fixed sleep


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="module")
def study(study_batch, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("page") / "study"
    build_real(study_batch, out, BuildOptions(practice=2, catch=2, per_participant=4, seed=3))
    with_standin_widgets(out)
    return out


@pytest.fixture(scope="module")
def site(study):
    """A static server of the study folder on 127.0.0.1 (no /api: the page falls back to the download)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(study)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join(timeout=10)


@pytest.fixture
def page():
    with chromium_browser() as browser:
        context = browser.new_context(accept_downloads=True)
        tab = context.new_page()
        tab.set_default_timeout(STEP_MS)
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        yield tab
        assert not errors, errors


def answer(page, trial: Trial, text: str) -> None:
    page.locator(f'[data-trial="{trial.trial_id}"]').wait_for(state="attached")
    page.get_by_label("Answer").fill(text)
    page.get_by_role("button", name="Submit").click()
    page.locator(f'[data-trial="{trial.trial_id}"]').wait_for(state="detached")


def test_a_participant_completes_the_study_and_downloads_a_valid_session(study, study_batch, site, page):
    from playwright.sync_api import expect

    from stim3d.scoring.answers import answer_text
    from stim3d.scoring.records import read_records

    trials = [Trial.model_validate(t) for t in json.loads((study / "trials.json").read_text())["trials"]]
    manifest = json.loads((study / "study.json").read_text())
    by_id = {t.trial_id: t for t in trials}
    gold = {r.question_id: answer_text(r.answer.type, r.answer.gold) for r in read_records(study_batch / "records.jsonl")}
    participant = "P7"
    plan = participant_plan(trials, 3, participant, 4)
    assert len(plan) == 2 + 4 + 2
    page.goto(f"{site}/index.html?participant={participant}&STUDY_ID=st1")

    page.get_by_role("button", name="I agree").click()
    page.get_by_role("button", name="Stay in this window").click()
    for _ in manifest["instructions"]:
        page.get_by_role("button", name="Next").click()
    expect(page.get_by_text("Loading")).to_have_count(0, timeout=STEP_MS)
    first, second = by_id[plan[0]], by_id[plan[1]]
    assert first.role == second.role == "practice"
    answer(page, first, first.gold_text or "")
    expect(page.get_by_text("Correct!")).to_be_visible()
    page.get_by_role("button", name="Continue").click()
    answer(page, second, "no idea")
    expect(page.get_by_text(f"The answer was {second.gold_text}")).to_be_visible()

    page.reload()  # resumes from localStorage: the two practice trials are not asked again
    expect(page.get_by_text("you answered 2 of 8")).to_be_visible()
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Start").click()
    for trial_id in plan[2:]:
        trial = by_id[trial_id]
        answer(page, trial, gold[trial_id] if trial.role == "catch" else "1")  # catch answers: the batch's, not the page's

    with page.expect_download(timeout=STEP_MS) as info:
        page.get_by_role("button", name="Download your data").click()
    download = info.value
    session = Session.model_validate_json(Path(download.path()).read_text())
    assert download.suggested_filename == f"{participant}_{session.session}.json"
    assert session.study == manifest["study_id"] and session.participant == participant and session.complete
    assert session.plan == plan and session.prolific == {"STUDY_ID": "st1"}
    assert [t.index for t in session.trials] == list(range(len(plan)))
    assert [t.trial_id for t in session.trials] == plan
    catch = [t for t in session.trials if t.role == "catch"]
    assert [t.response for t in catch] == [gold[t.trial_id] for t in catch]
    assert session.environment.window is not None and session.environment.device_pixel_ratio


def test_a_participant_id_that_is_not_canonical_is_refused_in_one_message(study, site, page):
    """`p1-` would share eval/human-p1 with `p1`: the page names the id from the link and asks for another."""
    from playwright.sync_api import expect

    page.goto(f"{site}/index.html?participant=p1-")
    expect(page.get_by_role("alert")).to_have_text(
        "The participant ID in the link (p1-) cannot be used. Use letters, digits, '.', '_' or '-', starting and "
        "ending with a letter or digit (at most 114 characters).")
    for typed in ("p1.", "p1_", "a" * 115):
        page.get_by_label("Participant ID").fill(typed)
        page.get_by_role("button", name="Continue").click()
        expect(page.get_by_role("alert")).to_contain_text("ending with a letter or digit")
        expect(page.get_by_role("button", name="I agree")).to_have_count(0)
    page.get_by_label("Participant ID").fill("p1")
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("button", name="I agree")).to_be_visible()


@contextmanager
def static_site(folder: Path) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(folder)))
    with running(server) as base:
        yield base


def start(page, url: str, pages: int) -> None:
    """Consent, the optional full screen, the instruction pages, then the preload."""
    from playwright.sync_api import expect

    page.goto(url)
    page.get_by_role("button", name="I agree").click()
    page.get_by_role("button", name="Stay in this window").click()
    for _ in range(pages):
        page.get_by_role("button", name="Next").click()
    expect(page.get_by_text("Loading")).to_have_count(0, timeout=STEP_MS)


def test_a_pilot_shows_the_owner_each_gold_after_the_answer_and_a_real_study_does_not(study_batch, study, site,
                                                                                        tmp_path, page):
    from playwright.sync_api import expect

    pilot = tmp_path / "pilot"
    build_study(study_batch, pilot, BuildOptions(pilot=True, practice=0, catch=1, per_participant=2, seed=3))
    with_standin_widgets(pilot)
    trials = {t["trial_id"]: Trial.model_validate(t) for t in json.loads((pilot / "trials.json").read_text())["trials"]}
    manifest = json.loads((pilot / "study.json").read_text())
    plan = participant_plan(list(trials.values()), 3, "owner", 2)
    with static_site(pilot) as base:
        start(page, f"{base}/index.html?participant=owner", len(manifest["instructions"]))
        for trial_id in plan:
            trial = trials[trial_id]
            answer(page, trial, "my answer")
            shown = page.locator(f'[data-pilot-gold="{trial_id}"]')
            expect(shown.locator(".stim3d-gold")).to_have_text(trial.gold_text or "")
            expect(shown).to_contain_text(f"Question {trial.question_id} ({trial.role} trial")
            expect(shown).to_contain_text("Your answer: my answer")
            page.get_by_role("button", name="Continue").click()
        expect(page.get_by_role("button", name="Download your data")).to_be_visible()
    # the real study (the module's `study`): after a main trial comes the next trial, no gold
    real = {t["trial_id"]: Trial.model_validate(t) for t in json.loads((study / "trials.json").read_text())["trials"]}
    real_plan = participant_plan(list(real.values()), 3, "P8", 4)
    start(page, f"{site}/index.html?participant=P8", len(json.loads((study / "study.json").read_text())["instructions"]))
    for trial_id in real_plan[:2]:  # the practice, with its feedback
        answer(page, real[trial_id], real[trial_id].gold_text or "")
        page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Start").click()
    answer(page, real[real_plan[2]], "1")
    page.locator(f'[data-trial="{real_plan[3]}"]').wait_for(state="attached")
    assert page.locator("[data-pilot-gold]").count() == 0


def test_a_study_with_a_minimum_window_waits_until_the_window_fits(study_batch, tmp_path, page):
    """`--min-window 1000x700`: a smaller window gets the notice and nothing behind it; once it fits the study goes
    on, and the notice comes back when the window shrinks again. A screen too small for it is told so."""
    from playwright.sync_api import expect

    out = tmp_path / "study"
    build_real(study_batch, out, BuildOptions(practice=0, catch=0, per_participant=1, min_window=(1000, 700)))
    browser = page.context.browser
    with static_site(out) as base:
        phone = browser.new_context(viewport={"width": 390, "height": 844}, screen={"width": 390, "height": 844})
        tab = phone.new_page()
        tab.goto(f"{base}/index.html?participant=P9")
        expect(tab.get_by_role("alertdialog", name="Window too small")).to_contain_text(
            "This study needs a screen of at least 1000 x 700 pixels, and this one is smaller.")
        phone.close()

        laptop = browser.new_context(viewport={"width": 800, "height": 600}, screen={"width": 1920, "height": 1080})
        tab = laptop.new_page()
        tab.set_default_timeout(STEP_MS)
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        cdp = laptop.new_cdp_session(tab)

        def window(width: int, height: int) -> None:  # a window resized on a 1920x1080 screen
            cdp.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                            "mobile": False, "screenWidth": 1920, "screenHeight": 1080})

        window(800, 600)
        tab.goto(f"{base}/index.html?participant=P9")
        notice = tab.get_by_role("alertdialog", name="Window too small")
        expect(notice).to_contain_text("Please make this window larger: the study needs at least 1000 x 700 pixels, "
                                       "and it is 800 x 600 now.")
        expect(tab.get_by_role("button", name="Full screen")).to_be_visible()
        expect(tab.get_by_role("button", name="I agree")).to_have_count(0)  # the study has not started
        window(1000, 650)
        expect(notice).to_contain_text("and it is 1000 x 650 now")
        window(1100, 750)
        expect(notice).to_be_hidden()
        agree = tab.get_by_role("button", name="I agree")
        expect(agree).to_be_visible()
        window(900, 750)
        expect(notice).to_be_visible()
        tab.keyboard.press("Enter")  # keys do not reach the page behind the notice
        with pytest.raises(Exception, match="Timeout"):
            agree.click(timeout=500)  # covered by the notice
        window(1280, 800)
        agree.click()
        expect(tab.get_by_role("button", name="Stay in this window")).to_be_visible()
        laptop.close()
        assert not errors, errors
