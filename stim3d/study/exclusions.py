"""Which participants `stim3d study score` leaves out, and why: the rules and their thresholds, in one place.

A participant is scored on one session (`choose_sessions`: the one with the most answered
trials; ties go to a session marked complete, then to the smaller session id), and left
out for every rule that session breaks (all reasons are listed, not just the first):

- **incomplete**: some position of the plan has no answer. A partial session is not
  scored: which questions a person stops at is not random (people quit on hard ones),
  so the answered part would bias accuracy upwards. The page's own `complete` flag is
  not required: a session with every trial answered but no goodbye screen counts.
- **failed attention check**: a catch trial (one of the batch's easiest items) answered
  wrong by the scoring core's own parser and exact-match rule (the same `score_record`
  as every answer, against the batch's record: trials.json never holds a catch answer). Catch
  trials have an unambiguous answer a person who looks gets right; one wrong means the
  person was not looking, and with two checks per study (the default) the rule is
  deliberately strict.
- **too fast**: the median response time over main trials is under `FAST_MEDIAN_MS`
  (1000 ms), or more than `FAST_SHARE` (25 %) of main trials took under `FAST_TRIAL_MS`
  (500 ms). Each answer means reading the question, looking at the image, operating a
  widget (typing, choosing, clicking cells) and pressing Submit: a pointing movement to a
  button alone takes 300-500 ms (Fitts' law), and enumerating even two or three objects
  takes 500-700 ms before any movement (subitizing latencies). A median below a second is
  answering without looking; a few very fast trials happen honestly (a double click, a
  remembered layout), hence the share rather than a single trial.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from stim3d.scoring.records import Record
from stim3d.scoring.report import score_record
from stim3d.study.contract import Session
from stim3d.study.folder import answered_all

FAST_MEDIAN_MS = 1000
FAST_TRIAL_MS = 500
FAST_SHARE = 0.25
RULES = {
    "incomplete": "some trial of the participant's plan has no answer",
    "failed attention check": "a catch trial answered wrong (scoring core's parser and exact match)",
    "too fast": f"median main-trial (and staircase step) time under {FAST_MEDIAN_MS} ms, or more than {FAST_SHARE:.0%} of main trials "
                f"under {FAST_TRIAL_MS} ms",
}


@dataclass(frozen=True)
class Chosen:
    """The session a participant is scored on, and the other sessions of theirs (not used)."""

    session: Session
    source: str  # the file it was read from (the first, when two files held one session)
    unused: tuple[str, ...]


def choose_sessions(sessions: Sequence[tuple[Session, str]]) -> dict[str, Chosen]:
    """{participant: the session to score}: most trials answered, then complete, then the smallest session id."""
    by_person: dict[str, list[tuple[Session, str]]] = defaultdict(list)
    for session, source in sessions:
        by_person[session.participant].append((session, source))
    chosen = {}
    for person, theirs in sorted(by_person.items()):
        ranked = sorted(theirs, key=lambda s: (-len(s[0].trials), not s[0].complete, s[0].session))
        chosen[person] = Chosen(ranked[0][0], ranked[0][1], tuple(f"{s.session} ({src})" for s, src in ranked[1:]))
    return chosen


def catch_correct(record: Record, response: str) -> bool:
    """A catch trial's response right by exact match against the batch's record (score.open_batch makes sure every
    catch trial has one)."""
    return score_record(record, response).correct


def reasons(session: Session, records: dict[str, Record], staircase_steps: int = 0) -> list[str]:
    """Every rule `session` breaks, each as one phrase with the numbers that broke it (empty: included).

    `staircase_steps`: the steps a staircase study asks after the plan (its spec's trials);
    fewer answered is incomplete too. Staircase answers count as main ones for speed.
    """
    out = []
    if not answered_all(session):
        out.append(f"incomplete: {len({t.index for t in session.trials if t.index < len(session.plan)})} of "
                   f"{len(session.plan)} trials answered")
    steps = sum(t.role == "staircase" for t in session.trials)
    if steps < staircase_steps:
        out.append(f"incomplete: {steps} of {staircase_steps} staircase steps answered")
    failed = [t.trial_id for t in session.trials
              if t.role == "catch" and not catch_correct(records[t.trial_id], t.response)]
    if failed:
        out.append(f"failed attention check: catch trial {', '.join(failed)} answered wrong")
    times = [t.rt_ms for t in session.trials if t.role in ("main", "staircase")]
    if times:
        median = statistics.median(times)
        fast = sum(rt < FAST_TRIAL_MS for rt in times)
        if median < FAST_MEDIAN_MS:
            out.append(f"too fast: median main-trial time {median:.0f} ms, under {FAST_MEDIAN_MS} ms")
        elif fast > FAST_SHARE * len(times):
            out.append(f"too fast: {fast} of {len(times)} main trials under {FAST_TRIAL_MS} ms "
                       f"(more than {FAST_SHARE:.0%})")
    return out
