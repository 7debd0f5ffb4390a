"""The statistics of a score report: Wilson intervals, accuracy by difficulty axis, a fitted psychometric curve.

Plain numpy, no scipy: the intervals are closed-form and the logistic is fitted by
Newton's method on the binomial log-likelihood (iteratively reweighted least
squares), a dozen steps for the few dozen points of a sweep.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stim3d.scoring.records import Record
from stim3d.scoring.report import QuestionResult

Z95 = 1.959963984540054
MAX_LEVELS = 12  # a numeric axis with more distinct values than this is binned into this many bins
SWEEP_LEVEL = "sweep_level"  # the visibility level an occlusion sweep asked for (scenes/sweep/items.py)


def wilson(correct: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95 % by default); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Cell:
    """Accuracy of one group of questions with its 95 % Wilson interval."""

    label: Any
    n: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.correct, self.n)


def grouped(labels: Sequence[Any], results: Sequence[QuestionResult]) -> list[Cell]:
    """One Cell per distinct label (in sorted order), counting exact-match correct answers."""
    counts: dict[Any, list[int]] = defaultdict(lambda: [0, 0])
    for label, result in zip(labels, results):
        counts[label][0] += 1
        counts[label][1] += result.correct
    return [Cell(label, n, c) for label, (n, c) in sorted(counts.items(), key=lambda kv: _order(kv[0]))]


def _order(value: Any) -> tuple:
    return (0, float(value), "") if isinstance(value, (int, float)) and not isinstance(value, bool) else (1, 0.0, str(value))


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def varied_axes(records: Sequence[Record]) -> list[str]:
    """Difficulty keys that take at least two numeric values among the records (what the batch varies)."""
    values: dict[str, set] = defaultdict(set)
    for record in records:
        for key, value in record.difficulty.items():
            if _numeric(value):
                values[key].add(value)
    return sorted(key for key, seen in values.items() if len(seen) >= 2)


def axis_cells(records: Sequence[Record], results: Sequence[QuestionResult], key: str) -> list[Cell]:
    """Accuracy at each value of difficulty `key` (records without it left out); equal-width bins past MAX_LEVELS values.

    A bin is labelled by its centre.
    """
    pairs = [(float(value), q) for r, q in zip(records, results)
             if isinstance(value := r.difficulty.get(key), (int, float)) and _numeric(value)]
    values = sorted({v for v, _ in pairs})
    if len(values) > MAX_LEVELS:
        low, high = values[0], values[-1]
        width = (high - low) / MAX_LEVELS
        labels = [round(low + width * (min(int((v - low) / width), MAX_LEVELS - 1) + 0.5), 6) for v, _ in pairs]
    else:
        labels = [v for v, _ in pairs]
    return grouped(labels, [q for _, q in pairs])


@dataclass(frozen=True)
class Logistic:
    """p(x) = 1 / (1 + exp(-(intercept + slope * x))); `threshold` is where p = 0.5 (None if the slope is ~0)."""

    intercept: float
    slope: float

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-(self.intercept + self.slope * x)))

    @property
    def threshold(self) -> float | None:
        return -self.intercept / self.slope if abs(self.slope) > 1e-9 else None


def fit_logistic(x: Sequence[float], correct: Sequence[int], n: Sequence[int], steps: int = 50,
                 ridge: float = 1e-6) -> Logistic | None:
    """Maximum-likelihood logistic fit to grouped binomial data; None with fewer than two levels.

    A small ridge keeps the Newton step defined when the data separate perfectly
    (all wrong below a level, all right above): the slope then grows large but finite.
    """
    xs, ks, ns = (np.asarray(v, dtype=float) for v in (x, correct, n))
    if len(np.unique(xs)) < 2 or ns.sum() == 0:
        return None
    design = np.column_stack([np.ones_like(xs), xs])  # (levels, 2)
    beta = np.zeros(2)
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(design @ beta)))
        gradient = design.T @ (ks - ns * p) - ridge * beta
        hessian = (design * (ns * p * (1 - p))[:, None]).T @ design + ridge * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    return Logistic(float(beta[0]), float(beta[1]))
