"""The staircase (stim3d/study/staircase.py) and its JavaScript twin (js/staircase.js).

The page and `stim3d study score` must agree on every level a participant was shown and on
the threshold reported, so the JavaScript runs in node on scripted answers and is held to
the Python class to 1e-9. A simulated observer with a known threshold checks that the
estimate recovers it and that the 95 % interval means what it says.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stim3d.study.contract import Trial
from stim3d.study.staircase import (
    Staircase,
    StaircaseError,
    guess_rate,
    make_spec,
    nearest_level,
    pick_trial,
    replay,
    session_steps,
    staircase_manifest,
)

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "stim3d" / "study" / "assets" / "js" / "staircase.js"
NODE = shutil.which("node") or "/usr/bin/node"
LEVELS = [round(0.05 * i, 3) for i in range(21)]  # 0.0 .. 1.0, as a sweep's --levels 0:1:0.05


def run_js(script: str) -> object:
    if not Path(NODE).is_file():
        pytest.skip("node is not installed")
    code = f"const S = require({json.dumps(str(JS))});\n{script}"
    result = subprocess.run([NODE, "-e", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def scripted(spec: dict, answers: list[bool]) -> tuple[list[float], list[dict]]:
    """Python side: the level chosen at each step and the estimate after it, answering as scripted."""
    staircase = Staircase(spec)
    levels, estimates = [], []
    for correct in answers:
        level = staircase.next()
        staircase.update(level, correct)
        levels.append(level)
        estimates.append(staircase.estimate().as_dict())
    return levels, estimates


JS_SCRIPTED = """
const out = [];
for (const [spec, answers] of CASES) {
  const sc = S.create(spec);
  const levels = [], estimates = [];
  for (const correct of answers) { const level = sc.next(); sc.update(level, correct); levels.push(level);
                                   estimates.push(sc.estimate()); }
  out.push({levels, estimates});
}
console.log(JSON.stringify(out));
"""


def test_javascript_chooses_the_same_levels_and_reaches_the_same_estimate():
    rng = np.random.default_rng(7)
    cases = [
        ({"levels": LEVELS, "guess": 0.05}, [bool(x) for x in rng.random(40) < 0.6]),
        ({"levels": LEVELS, "guess": 0.25, "prior": "normal", "slope": 8}, [True] * 25),
        ({"levels": [0.3, 0.45, 0.6, 0.9], "guess": 0.5, "lapse": 0.0}, [False] * 15 + [True, False] * 10),
        ({"levels": [1.0, 0.2, 0.55], "guess": 0.0, "lapse": 0.0, "slope": 200}, [True, False] * 12),
    ]
    got = run_js(f"const CASES = {json.dumps(cases)};\n{JS_SCRIPTED}")
    for (spec, answers), js in zip(cases, got):
        levels, estimates = scripted(spec, answers)
        assert js["levels"] == levels, spec
        for py_est, js_est in zip(estimates, js["estimates"]):
            assert js_est["trials"] == py_est["trials"]
            for key in ("threshold", "sd"):
                assert abs(js_est[key] - py_est[key]) <= 1e-9, (spec, key, js_est, py_est)
            assert np.allclose(js_est["ci"], py_est["ci"], rtol=0, atol=1e-9), (spec, js_est, py_est)
    assert len(set(got[0]["levels"])) > 3  # the mixed answers really moved the staircase around


def test_javascript_picks_the_same_trial_of_a_level():
    manifest = staircase_manifest(level_trials([0.3, 0.6, 0.9], per_level=5), {"levels": [0.3, 0.6, 0.9]})
    calls = [(seed, participant, step, level) for seed in (0, 17) for participant in ("p1", "Ünïcode")
             for step in range(6) for level in (0.3, 0.6, 0.9)]
    got = run_js(f"const M = {json.dumps(manifest)};\n"
                 f"console.log(JSON.stringify({json.dumps(calls)}.map(c => S.pickTrial(M, ...c))));")
    assert got == [pick_trial(manifest, *call) for call in calls]
    assert len(set(got)) > 5  # different steps and participants see different trials of a level


def test_javascript_refuses_a_bad_spec():
    got = run_js("const r = []; for (const s of [{levels: [0.5]}, {levels: [0.1, 0.2], guess: 0.6, lapse: 0.5}])"
                 " { try { S.create(s); r.push('ok'); } catch (e) { r.push(e.message); } }"
                 " console.log(JSON.stringify(r));")
    assert got[0].startswith("staircase spec") and got[1].startswith("staircase spec")


def observe(rng: np.random.Generator, level: float, threshold: float, spec) -> bool:
    z = spec.slope * (level - threshold)
    p = spec.guess + (1 - spec.guess - spec.lapse) / (1 + np.exp(-z))
    return bool(rng.random() < p)


@pytest.mark.parametrize("true_threshold", [0.35, 0.62])
def test_simulated_observer_threshold_is_recovered_and_the_interval_covers_it(true_threshold):
    spec = make_spec({"levels": LEVELS, "guess": 0.05, "lapse": 0.02, "slope": 20, "trials": 40})
    errors, covered, widths = [], 0, []
    for run in range(30):
        rng = np.random.default_rng([run, int(true_threshold * 1000)])
        staircase = Staircase(spec)
        while not staircase.done:
            level = staircase.next()
            staircase.update(level, observe(rng, level, true_threshold, spec))
        estimate = staircase.estimate()
        errors.append(estimate.threshold - true_threshold)
        covered += estimate.ci[0] <= true_threshold <= estimate.ci[1]
        widths.append(estimate.ci[1] - estimate.ci[0])
        assert estimate.trials == 40
    assert abs(np.mean(errors)) < 0.02, errors  # no bias worth half a level
    assert np.sqrt(np.mean(np.square(errors))) < 0.05, errors
    assert covered >= 24, covered  # a 95 % interval: at least 80 % of 30 runs
    assert np.median(widths) < 0.2  # and it is informative, not the whole range


def test_always_right_goes_to_the_bottom_always_wrong_to_the_top():
    spec = {"levels": LEVELS, "guess": 0.05, "trials": 20}
    right, wrong = Staircase(spec), Staircase(spec)
    for _ in range(20):
        right.update(right.next(), True)
        wrong.update(wrong.next(), False)
    low, high = right.estimate(), wrong.estimate()
    assert low.threshold < 0.1 and low.ci[0] == 0.0
    assert high.threshold > 0.9 and high.ci[1] == 1.0
    assert right.history[-1][0] == 0.0 and wrong.history[-1][0] == 1.0


def test_replay_gives_the_live_estimate_and_refuses_a_level_the_staircase_would_not_pick():
    spec = {"levels": LEVELS, "guess": 0.05}
    live = Staircase(spec)
    answers = []
    for correct in [True, True, False, True, False, False, True]:
        level = live.next()
        live.update(level, correct)
        answers.append((level, correct))
    assert replay(spec, answers) == live.estimate()
    tampered = [answers[0], (0.95, True), *answers[2:]]
    with pytest.raises(StaircaseError, match="step 1: the session asked level 0.95"):
        replay(spec, tampered)
    assert replay(spec, tampered, check_levels=False).trials == len(answers)


@pytest.mark.parametrize(("spec", "message"), [
    ({"levels": [0.5]}, "staircase levels: Value error, need at least two distinct levels"),
    ({"levels": [0.1, 0.1, 0.2]}, "a level is given twice"),
    ({"levels": [0.1, float("nan")]}, "finite"),
    ({"levels": [0.1, 0.2], "guess": 0.7, "lapse": 0.3}, "guess 0.7 + lapse 0.3 must be below 1"),
    ({"levels": [0.1, 0.2], "slope": 0}, "staircase slope:"),
    ({"levels": [0.1, 0.2], "trials": 0}, "staircase trials:"),
    ({"levels": [0.1, 0.2], "prior": "flat"}, "staircase prior:"),
    ({"levels": [0.1, 0.2], "step": 3}, "staircase step: Extra inputs"),
])
def test_a_bad_spec_is_one_line(spec, message):
    with pytest.raises(StaircaseError, match=message.replace("(", r"\(").replace("+", r"\+")) as info:
        make_spec(spec)
    assert "\n" not in str(info.value)


def test_update_refuses_a_level_not_in_the_spec():
    with pytest.raises(StaircaseError, match="level 0.33 is not one of"):
        Staircase({"levels": [0.3, 0.6]}).update(0.33, True)


def test_guess_rate_follows_the_answer_type():
    assert guess_rate("choice", ["a", "b", "c", "d"]) == 0.25
    assert guess_rate("yes_no") == 0.5
    assert 0 < guess_rate("integer") < 0.2


def level_trials(levels: list[float], per_level: int, answer_type: str = "integer") -> list[Trial]:
    trials = []
    for level in levels:
        for k in range(per_level):
            trial_id = f"s{k}-vis{round(level * 1000):04d}-q0"
            trials.append(Trial(trial_id=trial_id, item_id=trial_id[:-3], question_id=trial_id, family="shape_count",
                                role="main", answer_type=answer_type, prompt="How many cones?", instructions="Type a number",
                                image=f"stimuli/{trial_id[:-3]}.png", width=64, height=48, gold=1, gold_text="1",
                                difficulty={"sweep_level": level, "sweep_id": f"sweep-s{k}"}))
    return trials


def test_manifest_lists_each_levels_trials_and_refuses_what_the_page_cannot_run():
    trials = level_trials([0.3, 0.6], per_level=2)
    manifest = staircase_manifest(trials, {"levels": [0.6, 0.3], "trials": 12})
    assert manifest["levels"] == [0.3, 0.6] and manifest["keys"] == ["0.300", "0.600"]
    assert manifest["trial_ids"] == [["s0-vis0300-q0", "s1-vis0300-q0"], ["s0-vis0600-q0", "s1-vis0600-q0"]]
    assert manifest["spec"]["trials"] == 12 and manifest["sweeps"] == ["sweep-s0", "sweep-s1"]
    json.dumps(manifest)  # goes into study.json as is
    with pytest.raises(StaircaseError, match="level 0.900 has no main trial"):
        staircase_manifest(trials, {"levels": [0.3, 0.6, 0.9]})
    with pytest.raises(StaircaseError, match="answer type 'box' cannot be judged by the page"):
        staircase_manifest(level_trials([0.3, 0.6], 1, "box"), {"levels": [0.3, 0.6]})
    no_gold = [t.model_copy(update={"gold_text": None}) for t in trials]
    with pytest.raises(StaircaseError, match="needs its gold_text"):
        staircase_manifest(no_gold, {"levels": [0.3, 0.6]})


PAGE_FLOW = """
// What the page does per step: the level, the trial of that level, the participant's answer, the update.
const sc = S.create(M.spec);
const shown = [];
for (let step = 0; !sc.done(); step++) {
  const level = sc.next();
  const id = S.pickTrial(M, SEED, PARTICIPANT, step, level);
  const response = level >= 0.6 ? GOLD[id] : "7";  // a participant who sees the cones from 0.6 up
  sc.update(level, response === GOLD[id]);
  shown.push([id, response]);
}
console.log(JSON.stringify({shown, estimate: sc.estimate()}));
"""


def test_a_session_the_page_ran_replays_to_the_same_estimate_and_a_forged_one_is_refused():
    levels = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    trials = level_trials(levels, per_level=3)
    manifest = staircase_manifest(trials, {"levels": levels, "trials": 16})
    gold = {t.trial_id: t.gold_text for t in trials}
    got = run_js(f"const M = {json.dumps(manifest)}; const SEED = 5; const PARTICIPANT = 'p-7';"
                 f"const GOLD = {json.dumps(gold)};\n{PAGE_FLOW}")
    shown = [tuple(x) for x in got["shown"]]
    answers = session_steps(manifest, 5, "p-7", shown, gold)
    estimate = replay(manifest["spec"], answers)
    assert abs(estimate.threshold - got["estimate"]["threshold"]) <= 1e-9 and estimate.trials == 16
    assert 0.5 <= estimate.threshold <= 0.6  # between the last level missed and the first one seen
    assert len({trial_id for trial_id, _ in shown}) > len({level for level, _ in answers})  # several trials per level
    with pytest.raises(StaircaseError, match="step 0: the session shows trial"):
        session_steps(manifest, 6, "p-7", shown, gold)  # another seed picks other trials
    forged = [*shown[:3], (shown[3][0], gold[shown[3][0]] if shown[3][1] != gold[shown[3][0]] else "7"), *shown[4:]]
    with pytest.raises(StaircaseError, match="staircase step"):
        session_steps(manifest, 5, "p-7", forged, gold)  # one answer flipped: the later levels no longer follow


EIGHT = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]  # evenly spaced: a uniform prior's first mean is the midpoint 0.65


def test_an_exact_midpoint_and_a_near_tie_go_to_the_lower_level_in_python_and_javascript():
    assert Staircase({"levels": EIGHT}).next() == 0.6  # the first mean is (0.3 + 1.0) / 2, between 0.6 and 0.7
    span = EIGHT[-1] - EIGHT[0]
    means = [0.65, 0.65 + 1e-15, 0.65 - 1e-15, 0.65 + 0.25e-9 * span, 0.65 + 1e-9 * span, 0.65 - 1e-6, 0.3, 1.7, -2.0]
    python = [nearest_level(EIGHT, m) for m in means]  # distances within 1e-9 of the range (0.7e-9): a tie
    assert python == [0.6, 0.6, 0.6, 0.6, 0.7, 0.6, 0.3, 1.0, 0.3]
    assert run_js(f"console.log(JSON.stringify({json.dumps(means)}.map(m => S.nearestLevel({json.dumps(EIGHT)}, m))));"
                  ) == python
    first = run_js(f"console.log(JSON.stringify(S.create({{levels: {json.dumps(EIGHT)}}}).next()));")
    assert first == 0.6


CHOICES = """
import json, sys
from stim3d.eval.adaptive import Staircase
out = []
for spec, answers in json.loads(sys.argv[1]):
    sc = Staircase(spec)
    for correct in answers:
        sc.update(sc.next(), correct)
    out.append([sc.history, sc.estimate().as_dict()])
print(json.dumps(out))
"""


def test_the_choices_do_not_depend_on_the_blas_kernel_and_match_the_page():
    """The same scripted answers under three OpenBLAS kernels (the CPU types a participant's page never sees)."""
    cases = [({"levels": EIGHT, "trials": 16}, [level >= 0.65 for level in (0.6, 0.9, 0.7, 0.5)] * 4),
             ({"levels": EIGHT, "prior": "normal"}, [True, False] * 8),
             ({"levels": LEVELS, "guess": 0.5, "lapse": 0.0}, [False, True, True, False, True] * 3)]
    runs = {}
    for coretype in ("Prescott", "Sandybridge", "Haswell"):
        env = {**os.environ, "OPENBLAS_CORETYPE": coretype}
        result = subprocess.run([sys.executable, "-c", CHOICES, json.dumps(cases)], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=120, check=False)
        assert result.returncode == 0, result.stderr
        runs[coretype] = json.loads(result.stdout)
    assert runs["Prescott"] == runs["Sandybridge"] == runs["Haswell"]
    page = run_js(f"const CASES = {json.dumps(cases)};\n{JS_SCRIPTED}")
    for (history, estimate), js in zip(runs["Haswell"], page):
        assert [level for level, _ in history] == js["levels"]
        assert abs(js["estimates"][-1]["threshold"] - estimate["threshold"]) <= 1e-9
    assert runs["Haswell"][0][0][0][0] == 0.6  # the exact midpoint at step 0, taken to the lower level
