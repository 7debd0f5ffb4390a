"""An adaptive threshold over a sweep's ordered levels: a QUEST-style Bayesian staircase (models and people).

A sweep folder holds the same question at graded levels (occlusion sweeps: the target's
requested visibility, `difficulty.sweep_level`, shared `difficulty.sweep_id`). Asking
every level many times is wasteful; a staircase asks where the answer is least certain
and reports the level at which the observer (a person or a model) starts to fail.

The model (Watson & Pelli's QUEST with a logistic psychometric function): the chance of
a correct answer at level x, for a threshold t, is

    p(correct | x, t) = g + (1 - g - l) * F(s * (x - t)),    F(z) = 1 / (1 + exp(-z))

with guess rate g (what a blind answer gets right: 1 / options for a choice, 1/2 for
yes/no, `OPEN_GUESS` for an open answer such as a count), lapse rate l (a careless miss at
an easy level) and slope s (per unit of level). The threshold is the level halfway
between guessing and the ceiling. The posterior over t lives on `GRID_POINTS` evenly
spaced values spanning the sweep's level range (a threshold outside the range piles up at
its edge: "below the easiest level we tried" is all a sweep can say), from a uniform or a
broad normal prior, updated in log space after each answer.

Placement: the next level is the available level nearest the posterior MEAN. Why not the
level of maximum expected information: the mean is what King-Smith et al. (1994) found as
efficient as QUEST's other rules for a threshold with a known slope, and it needs one pass
over the grid instead of one hypothetical posterior per level and answer.

Ties: the page's JavaScript (js/staircase.js) must choose the same level as this class on
every CPU, or `stim3d study score` refuses a genuine session as forged. The mean's last bits
are not portable (exp differs between libm, numpy's SIMD kernels and V8; a BLAS dot product
differs between CPU kernels), and with evenly spaced levels and a uniform prior the first
mean is an exact midpoint between two levels. So the rule (`nearest_level`) is: a level
beats the lower one chosen so far only when it is nearer the mean by more than
`TIE_TOLERANCE` times the level range; a tie or near-tie goes to the LOWER level. The sums
are explicit (math.fsum here, a left-to-right loop in the page), never a BLAS call.
tests/test_study_staircase.py holds the two to the same levels and to 1e-9 on the estimate.

Everything is deterministic: no random state anywhere (the page picks which trial of a
level to show with stim3d/study/contract.py `fnv1a32`, stim3d/study/staircase.py `pick_trial`).

It lives in eval/ because both `stim3d eval --staircase` (eval/staircase.py) and the human study
(study/staircase.py, study/thresholds.py) use it, and the study is the layer above eval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from stim3d.errors import Stim3dError

GRID_POINTS = 401  # values of t over the level range (js/staircase.js uses the same)
OPEN_GUESS = 0.05  # an open answer (a count, letters, a cell) is rarely right by chance; not 0, so one lucky answer cannot rule a threshold out
DEFAULT_SLOPE = 20.0  # per unit of visibility: F goes from 0.27 to 0.73 within +/-0.05 of the threshold
DEFAULT_TRIALS = 30
MAX_TRIALS = 10_000
EPS = 1e-12  # p is kept inside [EPS, 1 - EPS] so a guess and lapse of 0 never take a log of 0
CREDIBLE = 0.95
TIE_TOLERANCE = 1e-9  # relative to the level range: distances to the mean closer than this are a tie (js/staircase.js too)
# Answer types the page can judge right or wrong by comparing the response with the trial's gold_text
# (the widgets write the canonical text; scoring/answers.py's exact rule agrees on these).
PAGE_JUDGED = ("integer", "yes_no", "letters", "cell", "strict_count", "choice")


class StaircaseError(Stim3dError, ValueError):
    """A bad staircase spec, level or answer list: one line naming it."""


def guess_rate(answer_type: str, options: Sequence[str] | None = None) -> float:
    """The chance a blind answer is right: 1/len(options) for a choice, 1/2 for yes/no, `OPEN_GUESS` otherwise."""
    if answer_type == "choice" and options:
        return 1.0 / len(options)
    if answer_type == "yes_no":
        return 0.5
    return OPEN_GUESS


class StaircaseSpec(BaseModel):
    """The staircase's settings: the levels it may pick, the psychometric function's constants, the trial count."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    levels: list[float]  # sorted ascending on validation; at least two, distinct
    guess: float = Field(default=OPEN_GUESS, ge=0, lt=1)
    lapse: float = Field(default=0.02, ge=0, lt=0.5)
    slope: float = Field(default=DEFAULT_SLOPE, gt=0, le=1e6)
    trials: int = Field(default=DEFAULT_TRIALS, ge=1, le=MAX_TRIALS)
    prior: Literal["uniform", "normal"] = "uniform"  # normal: mean at the range's middle, SD half the range

    @field_validator("levels")
    @classmethod
    def _levels(cls, value: list[float]) -> list[float]:
        if any(not math.isfinite(v) for v in value):
            raise ValueError("levels must be finite numbers")
        ordered = sorted(float(v) for v in value)
        if len(set(ordered)) < 2:
            raise ValueError(f"need at least two distinct levels, got {ordered}")
        if len(set(ordered)) != len(ordered):
            raise ValueError(f"a level is given twice: {ordered}")
        return ordered

    @model_validator(mode="after")
    def _room(self) -> StaircaseSpec:
        if self.guess + self.lapse >= 1:
            raise ValueError(f"guess {self.guess} + lapse {self.lapse} must be below 1")
        return self


def make_spec(data: Any) -> StaircaseSpec:
    """A StaircaseSpec from a mapping (or a spec), or StaircaseError with the first problem on one line."""
    if isinstance(data, StaircaseSpec):
        return data
    try:
        return StaircaseSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "spec"
        raise StaircaseError(f"staircase {where}: {first['msg']}") from None


@dataclass(frozen=True)
class Estimate:
    """The threshold (posterior mean), its posterior SD, the 95 % credible interval and the trials used."""

    threshold: float
    sd: float
    ci: tuple[float, float]
    trials: int

    def as_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "sd": self.sd, "ci": list(self.ci), "trials": self.trials}


def _logistic(z: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-z)) without overflow (the branch js/staircase.js takes too)."""
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out


def nearest_level(levels: Sequence[float], mean: float) -> float:
    """The level of ascending `levels` nearest `mean`; a tie or near-tie goes to the lower level.

    Near-tie: distances that differ by no more than `TIE_TOLERANCE` times the level range, so
    a mean at (or a last-bit rounding away from) a midpoint picks the same level in Python
    and in the page whatever the CPU. js/staircase.js `nearestLevel` is this function.
    """
    tolerance = TIE_TOLERANCE * (levels[-1] - levels[0])
    best = 0
    for i in range(1, len(levels)):
        if abs(levels[i] - mean) < abs(levels[best] - mean) - tolerance:
            best = i
    return levels[best]


class Staircase:
    """One run: `next()` the level to ask, `update(level, correct)` after the answer, `estimate()` at any time."""

    def __init__(self, spec: StaircaseSpec | dict[str, Any]) -> None:
        self.spec = make_spec(spec)
        lo, hi = self.spec.levels[0], self.spec.levels[-1]
        step = (hi - lo) / (GRID_POINTS - 1)
        self.grid = lo + np.arange(GRID_POINTS, dtype=float) * step
        self.grid[-1] = hi
        if self.spec.prior == "normal":
            mid, sd = (lo + hi) / 2, (hi - lo) / 2
            self.log_post = -0.5 * ((self.grid - mid) / sd) ** 2
        else:
            self.log_post = np.zeros(GRID_POINTS)
        self.history: list[tuple[float, bool]] = []

    @property
    def done(self) -> bool:
        return len(self.history) >= self.spec.trials

    def posterior(self) -> np.ndarray:
        """The normalised posterior over `grid`."""
        weights = np.exp(self.log_post - self.log_post.max())
        return weights / math.fsum(weights.tolist())

    def p_correct(self, level: float) -> np.ndarray:
        """p(correct | level, t) for every t of the grid."""
        s = self.spec
        p = s.guess + (1.0 - s.guess - s.lapse) * _logistic(s.slope * (level - self.grid))
        return np.clip(p, EPS, 1.0 - EPS)

    def mean(self, weights: np.ndarray) -> float:
        """The grid's mean under `weights`, summed by math.fsum (correctly rounded), so no BLAS kernel decides its last bit."""
        return math.fsum(float(t) * float(w) for t, w in zip(self.grid, weights, strict=True))

    def next(self) -> float:
        """The available level nearest the posterior mean, by `nearest_level`'s tie rule."""
        return nearest_level(self.spec.levels, self.mean(self.posterior()))

    def update(self, level: float, correct: bool) -> None:
        """Fold in one answer at `level` (one of the spec's levels)."""
        if level not in self.spec.levels:
            raise StaircaseError(f"level {level} is not one of the staircase's levels {self.spec.levels}")
        p = self.p_correct(level)
        self.log_post = self.log_post + (np.log(p) if correct else np.log(1.0 - p))
        self.history.append((float(level), bool(correct)))

    def estimate(self) -> Estimate:
        """Posterior mean and SD of t, the central 95 % credible interval on the grid, the answers used."""
        w = self.posterior()
        mean = self.mean(w)
        sd = math.sqrt(max(0.0, math.fsum(float(d) * float(d) * float(p) for d, p in zip(self.grid - mean, w, strict=True))))
        cdf = np.cumsum(w)
        tail = (1 - CREDIBLE) / 2
        lo = min(int(np.searchsorted(cdf, tail, side="left")), GRID_POINTS - 1)
        hi = min(int(np.searchsorted(cdf, 1 - tail, side="left")), GRID_POINTS - 1)
        return Estimate(mean, sd, (float(self.grid[lo]), float(self.grid[hi])), len(self.history))


def replay(spec: StaircaseSpec | dict[str, Any], answers: Iterable[tuple[float, bool]],
           check_levels: bool = True) -> Estimate:
    """The estimate from a session's staircase answers, (level, correct) in the order asked.

    With `check_levels`, each answer's level must be the one the staircase picks at that
    step: a session whose page chose differently (another spec, a tampered file) is
    refused with the first step that differs, instead of silently scored.
    """
    staircase = Staircase(spec)
    for step, (level, correct) in enumerate(answers):
        if check_levels and level != staircase.next():
            raise StaircaseError(f"staircase step {step}: the session asked level {level}, "
                                 f"the staircase picks {staircase.next()}")
        staircase.update(level, correct)
    return staircase.estimate()
