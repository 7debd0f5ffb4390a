"""Visibility levels of a sweep, parsed from the command line."""

from __future__ import annotations

import numpy as np

from stim3d.scenes.sweep import SweepError


def parse_levels(text: str) -> list[float]:
    """Visibility levels from `0.2,0.4,0.6` or a range `a:b:step` (end included when a step lands on it).

    Raises SweepError with one line naming the bad part. Levels must lie in
    [0, 1] and differ by at least 0.001 (each level names its item folder).
    """
    text = text.strip()
    if not text:
        raise SweepError("empty; give a list like 0.2,0.4,0.6 or a range like 0.1:1.0:0.1", field="levels")

    def number(part: str) -> float:
        try:
            value = float(part)
        except ValueError:
            raise SweepError(f"{part.strip()!r} is not a number", field="levels", value=repr(text)) from None
        if not np.isfinite(value):
            raise SweepError(f"{part.strip()!r} is not a finite number", field="levels", value=repr(text))
        return value

    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise SweepError("a range is start:stop:step (three numbers)", field="levels", value=repr(text))
        start, stop, step = (number(p) for p in parts)
        if step <= 0:
            raise SweepError("the step must be positive", field="levels", value=repr(text))
        if stop < start:
            raise SweepError(f"the range ends ({stop}) before it starts ({start})", field="levels", value=repr(text))
        count = int(np.floor((stop - start) / step + 1e-9)) + 1
        levels = [round(start + i * step, 6) for i in range(count)]
    else:
        levels = [round(number(p), 6) for p in text.split(",")]
    for level in levels:
        if not 0.0 <= level <= 1.0:
            raise SweepError(f"level {level} is outside [0, 1] (visibility is a fraction)", field="levels",
                             value=repr(text))
    thousandths = [int(round(level * 1000)) for level in levels]
    if len(set(thousandths)) != len(levels):
        raise SweepError("levels must differ by at least 0.001", field="levels", value=repr(text))
    return levels
