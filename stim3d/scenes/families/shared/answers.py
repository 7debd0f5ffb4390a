"""Answers several families share: a fixed `answer` checked against what the parameters can realise, and
an answer drawn uniformly when none is fixed (a batch schedules answers instead: scenes/balance.py).

`REVISION` is this module's own generator revision (scenes/families/shared/__init__.py).
"""

from __future__ import annotations

import numpy as np

REVISION = 1


def draw_answer(rng: np.random.Generator, low: int, high: int) -> int:
    """Uniform over low..high inclusive (an item on its own; a batch schedules answers instead)."""
    return int(rng.integers(low, high + 1))


def check_answer(params):
    """A fixed `answer` must be one the parameters can realise (`params.answer_space()`): one clear line otherwise."""
    if params.answer is not None and params.answer not in params.answer_space():
        raise ValueError(f"answer {params.answer!r} cannot be realised here; allowed: {params.answer_space()}")
    return params
