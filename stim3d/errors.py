"""The one family of user-facing errors: `Stim3dError` and the failures every layer shares.

Anything a user can cause (a bad config, an unknown family, an infeasible constraint, a
folder in use, a refused path) is a subclass of `Stim3dError` whose `str()` is one line
naming what is wrong and what is allowed; the command line catches this one class and
exits 2 (stim3d/cli/__init__.py), and a script can `except stim3d.Stim3dError`. Each
subclass also keeps the built-in base it always had (ValueError, RuntimeError), so code
that caught those keeps working. The facts of an error are fields, so callers decide by
type and field, never by matching the message.

The library speaks in settings, not flags: an error about one setting carries it as
`field` (the name a caller of the library knows: a keyword argument, an options model's
field) and reads `timeout 0: must be above 0`; another setting a message points to is
written in backticks (`force=True`, `filters`). Only the command line knows flags: it
names each setting by the flag that sets it (stim3d/cli/flags.py), so the same error
reads `--timeout 0: must be above 0` and `--force` there.

The scoring core (stim3d/scoring/) is the exception: it imports nothing else of stim3d
so that it can be vendored alone, so its errors (RecordVersionError, RuleError,
ScoringInputError, ...) are plain ValueErrors with no common base there, which the
commands that call it catch as ValueError (stim3d/cli/score.py); they carry no field, so
they name a setting in backticks only (`by`).

This module imports nothing, so every layer may import it.
"""

from __future__ import annotations


class Stim3dError(Exception):
    """A failure the user can act on; `str()` is its one-line message.

    `field`: the setting at fault, when there is one, and `value` the value given as it is shown (None: not
    shown, e.g. a secret); `reason` is the message without them. Every subclass takes them, so an error keeps
    its type (`except SweepError` still catches it) and still names its setting.
    """

    def __init__(self, reason: str = "", *, field: str | None = None, value: object = None) -> None:
        self.reason, self.field, self.value = reason, field, value
        named = field if value is None else f"{field} {value}"
        super().__init__(reason if field is None else f"{named}: {reason}")


class ConfigError(Stim3dError, ValueError):
    """A user's mistake in a config (or any input read like one): one line naming the field, the value and what is
    allowed. Defined here so the config's readers (render/batch/config.py, config_yaml.py) share it without importing
    each other; `stim3d.ConfigError` and `stim3d.render.batch.config.ConfigError` are this class."""


class MissingObject(Stim3dError, KeyError):
    """A scene or its ground truth has no object with `object_id` (a KeyError too, as it always was)."""

    def __init__(self, where: str, object_id: int) -> None:
        super().__init__(f"{where} has no object with id {object_id}")
        self.where = where
        self.object_id = object_id

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])
