"""Scoring cores: what receives a batch's records when `stim3d render` finishes.

A scoring core is a callable `core(records: list[Record], batch_dir: Path)` that may
return lines for the command to print (a core never prints itself). Cores are found
by name in the entry-point group `stim3d.scoring_cores`, e.g. in a plugin's
pyproject.toml:

    [project.entry-points."stim3d.scoring_cores"]
    mycore = "mypackage.scoring:receive"

or named directly as `module:function`. The default is `builtin` (`receive` below),
which this distribution also registers under that name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from .answers import answer_text, canonical_gold, parse
from .judges import caption_failures
from .plugins import call_bounded, load_callable, registered, shown
from .records import Record
from .rules import RuleError, check_rule

GROUP = "stim3d.scoring_cores"
BUILTIN = "builtin"
BUILTIN_TARGET = "stim3d.scoring.cores:receive"
TIMEOUT = 600.0  # seconds a core may take before the finished batch's command gives up on it (--core-timeout)

ScoringCore = Callable[[list[Record], Path], Sequence[str] | None]


class ScoringCoreError(ValueError):
    """A core that cannot be found or loaded, or records the built-in core cannot score."""


def available_cores() -> dict[str, str]:
    """{name: "module:function"} of every registered core, the built-in one included."""
    return registered(GROUP, BUILTIN, BUILTIN_TARGET)


def load_core(spec: str | None) -> tuple[str, ScoringCore]:
    """(name, callable) for an entry-point name or a `module:function`; None means the built-in core."""
    spec = spec or BUILTIN
    core = load_callable(spec, available_cores(), group=GROUP, option="`scoring_core`", noun="core",
                         label="scoring core", error=ScoringCoreError)
    return spec, core


def run_core(name: str, core: ScoringCore, records: list[Record], batch_dir: Path,
             timeout: float = TIMEOUT) -> list[str]:
    """The lines `core` returns for the records; ScoringCoreError (one line) if it raises, hangs past `timeout`
    seconds or returns anything but None or a list of strings."""
    label = f"scoring core {name} (on {len(records)} records)"
    lines = call_bounded(core, (records, batch_dir), seconds=timeout, label=label, error=ScoringCoreError)
    if lines is None:
        return []
    if not isinstance(lines, (list, tuple)) or not all(isinstance(line, str) for line in lines):
        raise ScoringCoreError(f"{label} returned {shown(lines)}; a core returns a list of lines to print, or None")
    return list(lines)


def check_scorable(record: Record) -> None:
    """Raise ScoringCoreError unless this core can score the record and its gold reads back through the parser."""
    kind = record.answer.type
    try:
        check_rule(record.scoring.rule, kind, record.scoring.params)
    except RuleError as exc:
        raise ScoringCoreError(f"record {record.question_id}: {exc}") from None
    if kind == "rubric":  # the golden caption must satisfy every item of its rubric under the reference judge
        failed = caption_failures(record.answer.gold)  # type: ignore[arg-type]
        if failed:
            raise ScoringCoreError(f"record {record.question_id}: its golden caption fails rubric item(s) {', '.join(failed)}")
        return
    gold = canonical_gold(kind, record.answer.gold)
    written = answer_text(kind, gold)
    if parse(kind, written, record.answer.options, record.choice_synonyms()).value != gold:
        raise ScoringCoreError(f"record {record.question_id}: its gold written as {written!r} does not parse back")


def receive(records: list[Record], batch_dir: Path) -> list[str]:
    """The built-in core: check that every record can be scored by this reference core; fail loudly if not."""
    for record in records:
        check_scorable(record)
    return [f"scoring core builtin: all {len(records)} records scorable (rule known, gold parses back)"]
