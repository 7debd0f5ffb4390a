"""Judges as plug-ins: the entry-point group `stim3d.judges`, and the prompt a model-based judge sends.

A judge is `judge(response, rubric_item) -> (satisfied, evidence)` (scoring/rubric.py),
satisfied True, False or None (undecided). `stim3d score --judge NAME` takes a name
registered in the group, or `module:function`:

    [project.entry-points."stim3d.judges"]
    mymodel = "mypackage.judge:judge"

A model-based judge sends `judge_prompt(response, item)` (JUDGE_PROMPT, in the style of
PerceptionRubrics' per-item checks) and reads the reply with `parse_judge_reply`:

    def judge(response, item):
        return parse_judge_reply(my_model.complete(judge_prompt(response, item)))
"""

from __future__ import annotations

import json
import re

from .judges import reference_judge
from .plugins import call_bounded, load_callable, registered, shown
from .rubric import Judge, RubricItem

GROUP = "stim3d.judges"
REFERENCE = "reference"
TIMEOUT = 120.0  # seconds one plug-in judge call may take (a model judge waits for a model): --judge-timeout


JUDGE_PROMPT = """You check one fact about an image against a description of that image.

Fact ({type}, {part}): {statement}
The fact as data: {fact}

Description:
\"\"\"
{response}
\"\"\"

Does the description state this fact correctly? Rules:
- A description that contradicts the fact does not satisfy it.
- A count, colour, letter string, grid size or relation the description never states is not satisfied.
- An absence fact ("there is no cylinder") is satisfied unless the description claims the thing is there.
- Judge only what the description says, not what is likely.
Reply with one word on the first line, SATISFIED, NOT_SATISFIED or UNKNOWN, then one line quoting the words
of the description that decide it."""


def judge_prompt(response: str, item: RubricItem, part: str = "") -> str:
    """The prompt a model-based judge sends for one rubric item (the text of JUDGE_PROMPT, filled in)."""
    return JUDGE_PROMPT.format(type=item.type, part=part or "rubric item", statement=item.statement,
                               fact=json.dumps(item.fact, sort_keys=True), response=response.strip())


def parse_judge_reply(reply: str) -> tuple[bool | None, str]:
    """A model judge's reply -> (satisfied, evidence); anything but the three words is UNKNOWN."""
    first, _, rest = reply.strip().partition("\n")
    word = re.sub(r"[^A-Z_]", "", first.upper())
    verdict = {"SATISFIED": True, "NOT_SATISFIED": False, "NOTSATISFIED": False}.get(word)
    return verdict, rest.strip() or first.strip()


def available_judges() -> dict[str, str]:
    """{name: "module:function"} of every registered judge, the reference judge included."""
    return registered(GROUP, REFERENCE, "stim3d.scoring.judges:reference_judge")


class JudgeError(ValueError):
    """A judge that cannot be found or loaded."""


def load_judge(spec: str | None, timeout: float = TIMEOUT) -> tuple[str, Judge]:
    """(name, judge) for an entry-point name of group stim3d.judges or a `module:function`; None = reference.

    A plug-in judge comes back guarded (`guarded`): what it raises, a reply that is not (verdict, evidence),
    and a call longer than `timeout` seconds become JudgeError, one line, instead of a traceback or a hang.
    """
    spec = spec or REFERENCE
    judge = load_callable(spec, available_judges(), group=GROUP, option="`judge`", noun="judge", label="judge",
                          error=JudgeError)
    if judge is reference_judge:  # stim3d's own, pure and fast: called directly
        return spec, judge
    return spec, guarded(spec, judge, timeout)


def guarded(name: str, judge: Judge, timeout: float = TIMEOUT) -> Judge:
    """`judge` with every call bounded in time and its reply checked: JudgeError (one line) otherwise."""

    def run(response: str, item: RubricItem) -> tuple[bool | None, str]:
        label = f"judge {name} (rubric item {item.id})"
        reply = call_bounded(judge, (response, item), seconds=timeout, label=label, error=JudgeError)
        if not (isinstance(reply, tuple) and len(reply) == 2 and (reply[0] is None or isinstance(reply[0], bool))
                and isinstance(reply[1], str)):
            raise JudgeError(f"{label} returned {shown(reply)}; a judge returns (True, False or None, evidence text)")
        return reply

    return run
