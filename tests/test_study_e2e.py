"""The whole human study as a new user meets it: build, serve, a person completes it in Chromium, score.

A real `build_study` folder over the study batch (every answer type a person can answer;
cell_set is produced by no family), served by `make_server` on 127.0.0.1 in a thread.
Alice completes it in headless Chromium with the REAL widgets, by keyboard and accessible
labels: practice (one right, one wrong, with feedback), a reload in the middle that resumes
from the server, main trials answered right on some and wrong or partly right on others,
both catch trials right. Bob opens the page from a plain static server (no API: the
download fallback), answers every main trial right and one catch wrong; his downloaded
file is dropped into data/. `score_study` must then reproduce the script exactly: each
question's response text, right or wrong, and partial-credit score computed here by hand
from the gold (count_soft, set_f1, click_submit_soft, IoU, delta < 1.25), Bob excluded for
the failed attention check, the pooled `human` accuracy. The page logs no error, and the
HTTP API refuses an oversize, a malformed and a path-like session with nothing written
outside data/.

Response times: Playwright's clock is installed and fast-forwarded 2 s before every
answer, so no answer is "too fast" (exclusions.py) and the test never sleeps.
"""

from __future__ import annotations

import functools
import json
import shutil
import socket
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from stim3d.render.batch.reading import load_batch
from stim3d.scoring.answers import answer_text, canonical_gold
from stim3d.scoring.records import Record
from stim3d.study.build import BuildOptions
from stim3d.study.contract import MAX_BODY_BYTES, Session, Trial, participant_plan
from stim3d.study.score import score_study
from stim3d.study.serve import make_server
from tests.study_support import build_real
from tests.study_widgets_support import chromium_browser, running

pytestmark = [pytest.mark.browser, pytest.mark.bpy]
STEP_MS = 20_000  # the deadline of every wait: generous for two busy cores, never a fixed sleep
THINK_MS = 2_000  # the fake clock's jump before each answer: a steady human pace
SEED = 1  # with it, every answer type of the batch has a main trial (asserted below)
PERSON_TYPES = {"integer", "yes_no", "letters", "cell", "strict_count", "strict_cell_set", "strict_cell_set_count",
                "box", "number", "choice", "rubric"}  # answers.py's types but cell_set, which no family produces


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass



# -- the scripted participant: what to do on each trial, and what scoring must make of it -----------------

@dataclass
class Step:
    """One trial's answer: the keys and labels used, the text the widget must submit, its hand-computed score."""

    act: Callable[[Any], None]
    response: str
    correct: bool
    score: float


def count_soft(pred: int, gold: int) -> float:
    return 1 / (1 + abs(pred - gold))


def set_f1(pred: set, gold: set) -> float:
    return 1.0 if not pred and not gold else 2 * len(pred & gold) / (len(pred) + len(gold))


def iou(a: list[int], b: list[int]) -> float:
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def typed(text: str) -> Callable[[Any], None]:
    """Type into the focused widget (the number pad's digits, letters, metres), then Enter submits."""
    def act(page: Any) -> None:
        page.keyboard.type(text)
        page.keyboard.press("Enter")
    return act


def key(name: str) -> Callable[[Any], None]:
    """A choice's shortcut (y/n, 1-9), then Enter."""
    def act(page: Any) -> None:
        page.keyboard.press(name)
        page.keyboard.press("Enter")
    return act


def cells(picked: list[tuple[int, int]], none: bool = False, count: int | None = None,
          submit: str = "Submit") -> Callable[[Any], None]:
    """Cell buttons pressed with Space by their labels ("Row r, Column c"), a count typed, then the submit button."""
    def act(page: Any) -> None:
        if none:
            page.get_by_role("button", name="None of the cells").press("Space")
        for row, col in picked:
            page.get_by_role("button", name=f"Row {row}, Column {col}", exact=True).press("Space")
        if count is not None:
            page.get_by_label("How many did you click?").fill(str(count))
        page.get_by_role("button", name=submit, exact=True).press("Enter")
    return act


def box(values: list[int]) -> Callable[[Any], None]:
    def act(page: Any) -> None:
        labels = ("Left edge x0", "Top edge y0", "Right edge x1 (exclusive)", "Bottom edge y1 (exclusive)")
        for label, value in zip(labels, values):
            page.get_by_label(label, exact=True).fill(str(value))
        page.keyboard.press("Enter")
    return act


def describe(text: str) -> Callable[[Any], None]:
    def act(page: Any) -> None:
        page.get_by_label("Your description").fill(text)
        page.keyboard.press("Control+Enter")  # Enter alone is a new line in the description
    return act


def right_answer(trial: Trial, record: Record) -> Step:
    """The gold, given through the widget: exact, so right with full score."""
    kind, gold = trial.answer_type, record.answer.gold
    text = answer_text(kind, gold)
    if kind in ("integer", "strict_count"):
        act = typed(str(canonical_gold(kind, gold) if kind == "integer" else gold))
    elif kind == "yes_no":
        act = key(str(gold)[0])
    elif kind == "choice":
        act = key(str(trial.options.index(gold) + 1))
    elif kind in ("letters", "number"):
        act = typed(text)
    elif kind == "cell":
        act = cells([], none=True) if tuple(gold) == (0, 0) else cells([tuple(gold)])
    elif kind == "strict_cell_set":
        act = cells([tuple(c) for c in gold], submit="Done")
    elif kind == "strict_cell_set_count":
        act = cells([tuple(c) for c in gold], count=len(gold))
    elif kind == "box":
        act = box([int(v) for v in gold])
    elif kind == "rubric":
        act = describe(text)  # its golden caption, which the reference judge passes (tests/test_rubrics_preset.py)
    else:
        raise AssertionError(f"no script for {kind}")
    return Step(act, text, True, 1.0)


def other_answer(trial: Trial, record: Record, nth: int) -> Step:
    """Wrong or partly right, per answer type; the score computed here from the gold by each rule's definition."""
    kind, gold = trial.answer_type, record.answer.gold
    if kind == "integer" and nth == 0:
        return Step(typed(str(gold + 1)), str(gold + 1), False, count_soft(gold + 1, gold))
    if kind == "strict_count" and nth == 1:
        return Step(typed(str(gold + 2)), f"COUNT({gold + 2})", False, count_soft(gold + 2, gold))
    if kind == "letters":
        wrong = "".join("B" if c == "A" else "A" for c in str(gold).upper())
        return Step(typed(wrong), wrong, False, 0.0)
    if kind == "choice":
        wrong = next(o for o in trial.options if o != gold)
        return Step(key(str(trial.options.index(wrong) + 1)), wrong, False, 0.0)
    if kind == "number":  # 15 % off: within delta < 1.25, so right
        pred = round(float(gold) * 1.15, 2)
        return Step(typed(f"{pred:g}"), f"{pred:g}", max(pred / gold, gold / pred) < 1.25, 1.0)
    if kind == "box":  # moved by half its width: IoU 1/3 when it stays in the picture
        x0, y0, x1, y1 = (int(v) for v in gold)
        shift = (x1 - x0) // 2 if x1 + (x1 - x0) // 2 <= trial.width else -((x1 - x0) // 2)
        pred = [x0 + shift, y0, x1 + shift, y1]
        overlap = iou(pred, [x0, y0, x1, y1])
        return Step(box(pred), "[" + ", ".join(map(str, pred)) + "]", overlap >= 0.5, overlap)
    truth = {tuple(c) for c in gold} if kind.startswith("strict_cell") else set()
    if kind == "strict_cell_set":  # one cell that is not among the gold's (the first free one)
        pick = next((r, c) for r in range(1, 5) for c in range(1, 5) if (r, c) not in truth)
        return Step(cells([pick], submit="Done"), f"CLICK(R{pick[0]},C{pick[1]}); DONE", False,
                    set_f1({pick}, truth))
    if kind == "strict_cell_set_count":  # the right cells, one too many counted: the count and consistency parts fail
        picks = sorted(truth)
        n = len(picks) + 1
        text = "".join(f"CLICK(R{r},C{c}); " for r, c in picks) + f"SUBMIT({n})"
        return Step(cells(picks, count=n), text, False, (set_f1(set(picks), truth) + count_soft(n, len(picks)) + 0) / 3)
    return right_answer(trial, record)


def alice_script(plan: list[Trial], records: dict[str, Record]) -> list[Step]:
    """Practice: the first right, the second wrong; main: other_answer per type; catch: right."""
    steps, seen = [], {}
    practice = 0
    for trial in plan:
        record = records[trial.trial_id]
        if trial.role == "practice":
            practice += 1
            steps.append(right_answer(trial, record) if practice == 1 else other_answer(trial, record, 0))
        elif trial.role == "catch":
            steps.append(right_answer(trial, record))
        else:
            nth = seen.get(trial.answer_type, 0)
            seen[trial.answer_type] = nth + 1
            steps.append(other_answer(trial, record, nth))
    return steps


def bob_script(plan: list[Trial], records: dict[str, Record]) -> list[Step]:
    """Everything right but the first catch trial (a wrong option or a far-off answer)."""
    steps = [right_answer(t, records[t.trial_id]) for t in plan]
    first = next(i for i, t in enumerate(plan) if t.role == "catch")
    trial, record = plan[first], records[plan[first].trial_id]
    if trial.answer_type == "number":
        far = round(float(record.answer.gold) * 3, 2)
        steps[first] = Step(typed(f"{far:g}"), f"{far:g}", False, 0.0)
    else:
        steps[first] = other_answer(trial, record, 0)
    assert not steps[first].correct
    return steps


# -- driving the page -------------------------------------------------------------------------------------

class Participant:
    """One browser page of the study: console errors and page errors collected, the fake clock installed."""

    def __init__(self, browser: Any, url: str, server: bool = True,
                 allowed: tuple[tuple[str, str], ...] = ()) -> None:
        """`allowed`: (part of the URL, status) of the failed requests the page makes by design (the console reports
        each as an error)."""
        self.server = server
        self.context = browser.new_context(accept_downloads=True, viewport={"width": 1100, "height": 900})
        self.page = self.context.new_page()
        self.page.set_default_timeout(STEP_MS)
        self.errors: list[str] = []

        def console(message: Any) -> None:
            where = (message.location or {}).get("url", "")
            expected = any(end in where and f"status of {status}" in message.text for end, status in allowed)
            if message.type == "error" and not expected:
                self.errors.append(f"{message.text} ({where})")
        self.page.on("console", console)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.clock.install()
        self.page.goto(url)

    def start(self, pages: int) -> None:
        """Consent, the optional full screen, the instruction pages."""
        self.page.get_by_role("button", name="I agree").click()
        self.page.get_by_role("button", name="Stay in this window").click()
        for _ in range(pages):
            self.page.get_by_role("button", name="Next").click()

    def answer(self, trial: Trial, step: Step) -> None:
        """Wait for the trial's widget (ready for answers), think THINK_MS on the fake clock, answer, wait it gone."""
        current = self.page.locator(".stim3d-trial[data-ready]")
        current.wait_for()
        assert current.get_attribute("data-answer-type") == trial.answer_type
        assert self.page.locator("#stim3d-prompt").text_content() == trial.prompt
        handle = current.element_handle()
        self.page.clock.fast_forward(THINK_MS)
        if not self.server:
            step.act(self.page)
        else:  # the page saves after every trial: the PUT is answered before the next step
            with self.page.expect_response(lambda r: r.url.endswith("/api/session") and r.request.method == "PUT") as put:
                step.act(self.page)
            assert put.value.ok, put.value.text()
        handle.wait_for_element_state("hidden")

    def run(self, plan: list[Trial], steps: list[Step], start: int = 0, stop: int | None = None) -> None:
        """Answer plan[start:stop]: feedback after practice trials, the main part's Start after the last one."""
        from playwright.sync_api import expect

        for index in range(start, len(plan) if stop is None else stop):
            trial, step = plan[index], steps[index]
            if trial.role != "practice" and index > 0 and plan[index - 1].role == "practice":
                self.page.get_by_role("button", name="Start").click()
            self.answer(trial, step)
            if trial.role == "practice":
                feedback = "Correct!" if step.correct else f"The answer was {trial.gold_text}."
                expect(self.page.get_by_text(feedback, exact=True)).to_be_visible()
                self.page.get_by_role("button", name="Continue").click()


@pytest.fixture(scope="module")
def built(study_batch, tmp_path_factory) -> tuple[Path, Path]:
    """(batch, study): the study batch copied (score writes into its eval/), the study built beside it."""
    root = tmp_path_factory.mktemp("e2e")
    batch = root / "batch"
    shutil.copytree(study_batch, batch)
    build_real(batch, root / "study", BuildOptions(practice=2, catch=2, seed=SEED, include_describe=True))
    return batch, root / "study"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium_browser() as chromium:
        yield chromium


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def put(base: str, body: bytes) -> tuple[int, str]:
    request = urllib.request.Request(base + "/api/session", data=body, method="PUT",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def refusals(base: str, session: dict[str, Any]) -> None:
    """An oversize, a malformed and path-like sessions through the real HTTP API: refused in one line."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"PUT /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {MAX_BODY_BYTES + 1}\r\n\r\n{{".encode())
        assert " 413 " in sock.makefile("rb").readline().decode()
    bodies = [b"{not json", json.dumps({**session, "participant": "../x"}).encode(),
              json.dumps({**session, "participant": "/tmp/x"}).encode(),
              json.dumps({**session, "session": "../../x"}).encode()]
    for body in bodies:
        status, answer = put(base, body)
        assert status == 400 and "\n" not in json.loads(answer)["error"], (body[:40], status, answer)


def test_a_person_completes_the_real_study_and_scoring_reproduces_the_script(built, browser, tmp_path):
    from playwright.sync_api import expect

    batch, study = built
    trials = [Trial.model_validate(t) for t in json.loads((study / "trials.json").read_text())["trials"]]
    manifest = json.loads((study / "study.json").read_text())
    records = {r.question_id: r for r in load_batch(batch).records}
    by_id = {t.trial_id: t for t in trials}
    assert {t.answer_type for t in trials if t.role == "main"} == PERSON_TYPES
    pages = len(manifest["instructions"])

    # Alice, through `stim3d study serve`: a reload after five trials resumes from the server
    alice_plan = [by_id[t] for t in participant_plan(trials, SEED, "alice", None)]
    alice = alice_script(alice_plan, records)
    server = make_server(study, "127.0.0.1", 0, log=lambda line: None)
    before = listing(study.parent)
    with running(server) as base:
        person = Participant(browser, f"{base}/index.html?participant=alice")
        person.start(pages)
        person.run(alice_plan, alice, stop=5)
        stored = study / "data" / "alice"
        assert len(Session.model_validate_json(next(stored.glob("*.json")).read_text()).trials) == 5
        # the page's own copy is dropped: only the server can resume the session
        person.page.evaluate("Object.keys(localStorage).filter(k => k.endsWith(':data'))"
                             ".forEach(k => localStorage.removeItem(k))")
        person.page.reload()
        expect(person.page.get_by_text(f"you answered 5 of {len(alice_plan)}")).to_be_visible()
        person.page.get_by_role("button", name="Continue").click()
        person.run(alice_plan, alice, start=5)
        expect(person.page.get_by_text("Your answers are saved.")).to_be_visible()
        assert not person.errors, person.errors
        person.context.close()
        files = list(stored.glob("*.json"))
        assert len(files) == 1
        session = Session.model_validate_json(files[0].read_text())
        refusals(base, session.model_dump(mode="json"))
        # alice again in another browser (no token there): refused by the documented rule, her session untouched
        again = Participant(browser, f"{base}/index.html?participant=alice", allowed=(("/api/session", "409"),))
        expect(again.page.get_by_text("You have already started this study (participant ID alice)")).to_be_visible()
        assert not again.errors, again.errors
        again.context.close()
    written = sorted(set(listing(study.parent)) - set(before))
    token = files[0].with_suffix(".token").name
    assert written == ["study/data", "study/data/alice", f"study/data/alice/{files[0].name}", f"study/data/alice/{token}"]
    assert Session.model_validate_json(files[0].read_text()) == session
    assert session.complete and [t.trial_id for t in session.trials] == [t.trial_id for t in alice_plan]
    assert [t.response for t in session.trials] == [s.response for s in alice]
    assert all(t.rt_ms >= THINK_MS for t in session.trials), [t.rt_ms for t in session.trials]

    # Bob, on a plain static server (no API): the download fallback, one catch wrong
    bob_plan = [by_id[t] for t in participant_plan(trials, SEED, "bob", None)]
    bob = bob_script(bob_plan, records)
    static = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(study)))
    with running(static) as base:
        person = Participant(browser, f"{base}/index.html?participant=bob", server=False,
                             allowed=(("/api/ping", "404"),))  # the page asks whether a server is there
        person.start(pages)
        person.run(bob_plan, bob)
        with person.page.expect_download(timeout=STEP_MS) as download:
            person.page.get_by_role("button", name="Download your data").click()
        shutil.copyfile(download.value.path(), study / "data" / download.value.suggested_filename)
        assert not person.errors, person.errors
        person.context.close()

    report = score_study(study)
    assert report.skipped == {}  # the downloaded file is read like the server's
    outcome = {p.participant: p for p in report.participants}
    assert outcome["alice"].included
    failed = next(t for t in bob_plan if t.role == "catch")
    assert outcome["bob"].reasons == [f"failed attention check: catch trial {failed.trial_id} answered wrong"]
    scored = json.loads((batch / "eval" / "human-alice" / "scores.json").read_text())["questions"]
    got = {q["question_id"]: (q["response"], q["correct"], pytest.approx(q["score"])) for q in scored}
    want = {t.trial_id: (s.response, s.correct, s.score) for t, s in zip(alice_plan, alice) if t.role == "main"}
    assert got == want
    right = sum(s.correct for t, s in zip(alice_plan, alice) if t.role == "main")
    assert 0 < right < len(want)  # the script is right on some questions and wrong on others
    assert report.pooled == (len(want), right, len(want))
    pooled = json.loads((batch / "eval" / "human" / "scores.json").read_text())["rows"][0]
    assert pooled["accuracy"] == pytest.approx(right / len(want))


def test_a_participant_whose_session_the_owner_moved_out_starts_over_and_another_browser_is_refused(built, browser,
                                                                                                   tmp_path):
    """The documented rule (docs/study_collect.md, sessions and tokens): one session per participant; moving a
    participant's folder out of data/ lets them start over in the browser they used."""
    from playwright.sync_api import expect

    study = tmp_path / "study"
    shutil.copytree(built[1], study, ignore=shutil.ignore_patterns("data", ".stim3d-serve.lock"))
    with running(make_server(study, "127.0.0.1", 0, log=lambda line: None)) as base:
        url = f"{base}/index.html?participant=carol"
        person = Participant(browser, url, allowed=(("/api/session?participant=carol&session=", "403"),))
        expect(person.page.get_by_role("button", name="I agree")).to_be_visible()
        (token,) = (study / "data" / "carol").glob("*.token")
        first = token.read_text()
        shutil.move(study / "data" / "carol", tmp_path / "carol-moved")
        person.page.reload()  # the kept token is no longer the session's: a new start under the same session id
        expect(person.page.get_by_role("button", name="I agree")).to_be_visible()
        assert [p.name for p in (study / "data" / "carol").iterdir()] == [token.name]
        assert token.read_text() != first
        assert not person.errors, person.errors
        other = Participant(browser, url, allowed=(("/api/session", "409"),))
        expect(other.page.get_by_role("alert")).to_contain_text("You have already started this study")
        expect(other.page.get_by_role("button", name="I agree")).to_have_count(0)
        assert not other.errors, other.errors
        other.context.close()
        person.context.close()
