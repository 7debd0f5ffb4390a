"""Which questions of a batch become practice, catch and main trials: deterministic, no item in two roles.

- **Practice** (`choose_practice`): the questions with the smallest hash of (seed,
  "practice", question id), taking one per answer type first (so a participant practises
  as many kinds of answer as the study asks for), then the next by hash; one per item;
  never a rubric (free description: no answer to give feedback on).
- **Catch** (`choose_catch`): attention checks, so only questions with one exact, easy
  answer (`catchable`): a count of at most `MAX_CATCH_COUNT` (integer or ROSE's strict
  count), yes/no, or a choice among at most `MAX_CATCH_OPTIONS` options (asked with
  options, not in the open); never a box drawn around an object, a length, letters or a
  text typed, a set of cells or a free description, where an attentive person can still
  miss. Among those, the batch's easiest (`easiness`): the largest `least_visibility`
  first (every object fully in view), then the fewest objects (`n_objects`, else `rows` x
  `cols`, else `n_dots`). Ties by question id. One per item, none from a practice item.
- **Main**: every other selected question whose item is neither practice nor catch.
  Practice and catch trials show their golds (feedback, attention checks), so no question
  about the same image (it would share the answer's scene) is a main trial.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from stim3d.scoring.records import Record
from stim3d.study.contract import fnv1a32
from stim3d.study.errors import StudyError

EXACT_TYPES = ("integer", "yes_no", "letters", "choice", "cell", "strict_count")
# Attention checks: answers a person who looks gets exactly right (`catchable`).
CATCH_TYPES = ("integer", "strict_count", "yes_no", "choice")
MAX_CATCH_COUNT = 6  # counting more objects than this is a task, not a check
MAX_CATCH_OPTIONS = 4  # a choice among more (AVA's 8 colours, 9 views, 12 objects) can be mistaken honestly
# A free description has no answer a person could match: never a catch trial, and never practice (whose feedback
# compares the answer with the gold's text).
NEVER_SHOWN_GOLD = frozenset({"rubric"})


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def object_count(record: Record) -> float:
    """How many objects the question's image shows, as its difficulty records it (inf when it says nothing)."""
    d = record.difficulty
    n = _number(d.get("n_objects"))
    if n is not None:
        return n
    rows, cols = _number(d.get("rows")), _number(d.get("cols"))
    if rows is not None and cols is not None:
        return rows * cols
    dots = _number(d.get("n_dots"))
    return dots if dots is not None else math.inf


def easiness(record: Record) -> tuple[float, float, int, str]:
    """Sort key, easiest first: visibility, objects, exactly checkable answer type, question id."""
    visibility = _number(record.difficulty.get("least_visibility"))
    exact = 0 if record.answer.type in EXACT_TYPES else 1
    return -(visibility if visibility is not None else 0.0), object_count(record), exact, record.question_id


def catchable(record: Record) -> bool:
    """Whether a question may be an attention check: one exact, easy answer (the module docstring's rule)."""
    kind, gold = record.answer.type, record.answer.gold
    if kind not in CATCH_TYPES:
        return False
    if kind in ("integer", "strict_count"):
        return isinstance(gold, int) and not isinstance(gold, bool) and 0 <= gold <= MAX_CATCH_COUNT
    if kind == "choice":
        options = record.answer.options or []
        return record.subject.get("form") != "open" and 2 <= len(options) <= MAX_CATCH_OPTIONS
    return True


def choose_practice(records: Sequence[Record], count: int, seed: int) -> list[Record]:
    """`count` practice questions, one per item, covering as many answer types as possible (module docstring)."""
    ranked = sorted(records, key=lambda r: (fnv1a32(f"{seed}|practice|{r.question_id}"), r.question_id))
    chosen: list[Record] = []
    items: set[str] = set()
    types: set[str] = set()
    for new_types_only in (True, False):
        for record in ranked:
            if len(chosen) == count:
                return chosen
            if record.item_id in items or record.answer.type in NEVER_SHOWN_GOLD or (
                    new_types_only and record.answer.type in types):
                continue
            chosen.append(record)
            items.add(record.item_id)
            types.add(record.answer.type)
    return chosen


def choose_catch(records: Sequence[Record], count: int, taken_items: set[str]) -> list[Record]:
    """`count` catch questions: the easiest, one per item, none from `taken_items` (module docstring)."""
    chosen: list[Record] = []
    items = set(taken_items)
    for record in sorted((r for r in records if catchable(r)), key=easiness):
        if len(chosen) == count:
            break
        if record.item_id not in items:
            chosen.append(record)
            items.add(record.item_id)
    return chosen


def assign_roles(records: Sequence[Record], practice: int, catch: int, seed: int
                 ) -> tuple[list[Record], list[Record], list[Record]]:
    """(practice, catch, main) records; StudyError when the selection cannot give what was asked."""
    practice_records = choose_practice(records, practice, seed)
    if len(practice_records) < practice:
        raise StudyError(f"the selection has only {len(practice_records)} item(s) to practise on (one practice "
                         "question per item); ask for fewer", field="practice", value=practice)
    used = {r.item_id for r in practice_records}
    catch_records = choose_catch(records, catch, used)
    if len(catch_records) < catch:
        raise StudyError(f"only {len(catch_records)} item(s) left after {practice} practice item(s) have an easy exact "
                         f"question for a catch trial (a count up to {MAX_CATCH_COUNT}, yes/no, a choice among up to "
                         f"{MAX_CATCH_OPTIONS}); ask for fewer", field="catch", value=catch)
    used |= {r.item_id for r in catch_records}
    main = [r for r in records if r.item_id not in used]
    if not main:
        raise StudyError(f"no main trial is left: the {len({r.item_id for r in records})} selected item(s) all went "
                         f"to `practice={practice}` and `catch={catch}`; ask for fewer or select more")
    return practice_records, catch_records, main
