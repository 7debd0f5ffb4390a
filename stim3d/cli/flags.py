"""Settings named as flags: the one place that knows which flag sets which setting of the library.

The library's errors name settings as its callers know them (stim3d/errors.py): the
setting at fault as the error's `field` (`timeout 0: must be above 0`), any other it
points to in backticks (`force=True`, `filters`). A command line user typed flags, so
`error_text` names each by its flag instead (`--timeout 0: must be above 0`, `--force`,
`--filter`). The flag of a setting is `--` and its name with `_` as `-`; FLAGS lists
the settings whose flag is another word.
"""

from __future__ import annotations

import re

from stim3d.errors import Stim3dError

FLAGS = {  # setting -> its flag, where it is not `--` + the name with '-' for '_'
    "image_scale": "--downscale",
    "filters": "--filter",
    "trials": "--staircase-trials",  # run_staircases(trials=...): `stim3d eval --staircase`'s steps
    "dest": "--to",  # an export's destination folder
    "with_dependencies=False": "--without-dependencies",
}
SWITCH = "True"  # `force=True` is the switch `--force`
REFERENCE = re.compile(r"`([a-z][a-z0-9_]*)(?:=([^`]+))?`")  # `name` or `name=value` in a message


def flag(setting: str, value: object = None) -> str:
    """The flag that gives `setting` its `value` (None: the flag alone): `--timeout 5`, `--force`, `--to DIR`."""
    token = setting if value is None else f"{setting}={value}"
    if token in FLAGS:
        return FLAGS[token]
    name = FLAGS.get(setting, "--" + setting.replace("_", "-"))
    return name if value is None or str(value) == SWITCH else f"{name} {value}"


def as_flags(text: str) -> str:
    """`text` with every setting it names in backticks (`name` or `name=value`) written as its flag: how a library
    line (an error, a summary) reads on the command line."""
    return REFERENCE.sub(lambda ref: flag(ref[1], ref[2]), text)


def error_text(exc: Stim3dError) -> str:
    """The error's message as the command line's user reads it: every setting named by its flag."""
    return as_flags(str(exc) if exc.field is None else f"{flag(exc.field, exc.value)}: {exc.reason}")
