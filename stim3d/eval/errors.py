"""EvalError: the one-line error of `stim3d eval` and `stim3d.evaluate`, below every eval module that raises it."""

from __future__ import annotations

from stim3d.errors import Stim3dError


class EvalError(Stim3dError, ValueError):
    """A caller's mistake (bad setting, bad URL, unknown baseline, unset key variable, no records): one line naming it."""
