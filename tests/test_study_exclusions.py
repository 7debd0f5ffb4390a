"""The exclusion rules pinned at the numbers docs/study_collect.md documents, on either side of each threshold.

The numbers are written here as the documentation states them (median main-trial time under 1000 ms; more
than 25 % of main trials under 500 ms; every position of the plan answered, whatever the page's `complete`
flag), not read from stim3d/study/exclusions.py, so changing any threshold there fails a test until the
documentation and this file change with it.
"""

from __future__ import annotations

import pytest

from stim3d.study.contract import Session, TrialResult
from stim3d.study.exclusions import reasons

MAIN = 8


def session(times: list[int], *, missing: tuple[int, ...] = (), complete: bool = True) -> Session:
    """A session of MAIN main trials answered in `times` ms each, the positions in `missing` left out."""
    plan = [f"m{i}" for i in range(len(times))]
    trials = [TrialResult(index=i, trial_id=plan[i], role="main", response="1", rt_ms=rt)
              for i, rt in enumerate(times) if i not in missing]
    return Session(study="s", participant="p", session="s1", plan=plan, trials=trials, complete=complete)


@pytest.mark.parametrize(("times", "median"), [
    ([1000] * MAIN, None),  # a median of exactly 1000 ms is not under it
    ([999] * 4 + [1001] * 4, None),  # the median of an even count is the mean of the middle two: 1000
    ([999] * MAIN, 999),
    ([999] * 5 + [5000] * 3, 999),
])
def test_a_median_main_trial_time_under_1000_ms_is_too_fast(times, median):
    expected = [] if median is None else [f"too fast: median main-trial time {median} ms, under 1000 ms"]
    assert reasons(session(times), {}) == expected


@pytest.mark.parametrize(("fast", "fast_ms", "excluded"), [
    (2, 499, False),  # 2 of 8 is 25 %: not more than a quarter
    (3, 499, True),  # 3 of 8 is 37.5 %
    (3, 500, False),  # 500 ms is not under 500 ms
    (4, 1, True),  # half
])
def test_more_than_25_percent_of_main_trials_under_500_ms_is_too_fast(fast, fast_ms, excluded):
    times = [fast_ms] * fast + [3000] * (MAIN - fast)  # the median stays well above 1000 ms
    expected = [f"too fast: {fast} of {MAIN} main trials under 500 ms (more than 25%)"] if excluded else []
    assert reasons(session(times), {}) == expected


def test_a_quarter_exactly_of_a_hundred_is_kept_and_one_more_is_not():
    assert reasons(session([100] * 25 + [2000] * 75), {}) == []
    assert reasons(session([100] * 26 + [2000] * 74), {}) == [
        "too fast: 26 of 100 main trials under 500 ms (more than 25%)"]


def test_every_position_of_the_plan_must_be_answered_whatever_the_complete_flag_says():
    assert reasons(session([2000] * MAIN, complete=False), {}) == []  # no goodbye screen, every answer stored
    assert reasons(session([2000] * MAIN, missing=(3,), complete=True), {}) == [
        "incomplete: 7 of 8 trials answered"]  # the page said complete, position 3 is missing
    assert reasons(session([2000] * MAIN, missing=(MAIN - 1,), complete=False), {}) == [
        "incomplete: 7 of 8 trials answered"]
