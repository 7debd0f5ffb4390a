"""One item from (family, params, seed): compose, measure, assemble. Pure; never imports bpy.

Seeding: one `numpy.random.Generator` per item from
`SeedSequence([batch_seed, task_index, item_index])`, passed explicitly. The
same three numbers always give the same item, whatever else is in the batch and
in whatever order or process items are made.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import ValidationError

from stim3d.errors import Stim3dError
from stim3d.scoring.records import Answer

from .families import Family, Frame, clip, get_family
from .looks import with_look
from .model import GroundTruth, Item, LookName, Question
from .rubrics import describe_question

QUESTION_SETS = ("default", "describe")  # a config task's `questions:` (render/batch/config.py)


def seed_entropy(batch_seed: int, task_index: int, item_index: int) -> list[int]:
    return [int(batch_seed), int(task_index), int(item_index)]


def item_seed(entropy: list[int]) -> int:
    """A 31-bit integer seed for engines that want one (Cycles), derived from the item's entropy."""
    return int(np.random.SeedSequence(entropy).generate_state(1)[0] & 0x7FFFFFFF)


class MalformedItem(Stim3dError, ValueError):
    """A family composed an item that cannot be scored (a gold that does not fit its answer type, an answer type
    the family does not declare): a bug in the family, caught before anything is written. `str()` is one line."""


def check_questions(family: Family, questions: list[Question]) -> None:
    """Raise MalformedItem unless every question's answer type is one the family declares and its gold fits it.

    The check is the hand-off record's own (`scoring.records.Answer`), so an item that passes always becomes
    records; a plug-in's mistake fails here, in `validate` and in the worker, not after the folder is complete.
    """
    for question in questions:
        where = f"family {family.name}: question {clip(question.question_id, 40)} ({question.answer_type})"
        if question.answer_type not in family.answer_types:
            raise MalformedItem(f"{where}: answer type {question.answer_type!r} is not among the family's declared "
                                f"answer types ({', '.join(family.answer_types)})")
        options = str(question.subject.get("options", "")).split("|") if question.answer_type == "choice" else None
        try:
            Answer(type=question.answer_type, gold=question.gold, options=options)
        except ValidationError as exc:
            reason = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise MalformedItem(f"{where} has gold {clip(repr(question.gold))}: {clip(reason, 160)}") from None


def make_item(
    family_name: str,
    params: dict[str, Any],
    entropy: list[int],
    item_id: str,
    frame: Frame,
    split: str = "test",
    scene_id: str | None = None,
    question_sets: tuple[str, ...] = ("default",),
    look: LookName = "studio",
) -> Item:
    """Compose and measure one item. Raises placement.InfeasibleError when constraints cannot be met.

    `scene_id` names the scene that several variants of one item share (same seed,
    different parameter overrides, e.g. with and without a cue); it is recorded as
    `difficulty.scene_id`, which the hand-off records use as their `scene_id`.
    `question_sets` (a task's `questions:`) picks the questions: "default" the family's own,
    "describe" a free-form description scored by a rubric from the ground truth (scenes/rubrics.py).
    Raises MalformedItem when the family's questions do not fit their answer types (`check_questions`).
    `look` draws the item's appearance from its own stream (scenes/looks.py); studio draws nothing.
    """
    unknown = [name for name in question_sets if name not in QUESTION_SETS]
    if unknown or not question_sets:
        raise ValueError(f"question sets {list(question_sets)}: use one or both of {', '.join(QUESTION_SETS)}")
    family = get_family(family_name)
    validated = family.params_model.model_validate(params)
    rng = np.random.default_rng(np.random.SeedSequence(entropy))
    composed = family.compose(validated, rng, frame)
    check_questions(family, composed.questions)
    questions = [
        q.model_copy(update={"question_id": f"{item_id}-{q.question_id}"}) for q in composed.questions
    ]
    item = Item(
        item_id=item_id,
        family=family_name,
        params=validated.model_dump(mode="json"),
        seed=item_seed(entropy),
        seed_entropy=entropy,
        split=split,
        scene=composed.scene,
        ground_truth=GroundTruth(objects=composed.truth.truths, rays_per_pixel=frame.rays_per_pixel),
        questions=questions,
        difficulty={**composed.difficulty, "scene_id": scene_id} if scene_id else composed.difficulty,
    )
    if "default" not in question_sets:
        item.questions = []
    if "describe" in question_sets:
        describe = describe_question(item)
        item.questions.append(describe.model_copy(update={"question_id": f"{item_id}-{describe.question_id}"}))
    return with_look(item, look)
