"""People's prompts (stim3d/study/prompts.py): every registered family and answer type has one, each reads its
family's own question (so a changed wording fails here), the page never shows a model's framing or answer protocol,
a plug-in family falls back to the generic prompt, and a describe trial lists topics, never the rubric's values."""

from __future__ import annotations

import json
import re

import pytest

import stim3d
from stim3d.scoring.records import read_records
from stim3d.study.prompts import (
    ANY_FAMILY,
    FAMILY_TASKS,
    PEOPLE_PROMPTS,
    generic_prompt,
    mention_topics,
    people_prompt,
    rule_for,
)

# What a model is told and a person must never read: its framing, the answer protocol, the grammar of ROSE.
MODEL_WORDS = re.compile(r"You are (solving|given)|\\boxed|LaTeX|COUNT\(|CLICK\(|SUBMIT\(|Output only|Answer (with|only)|"
                         r"Allowed answer formats|Choose one|explanation|Carefully inspect|End the response", re.I)
ODD_GRID = ("You are solving an odd-one-out visual perception task. You are given an image showing a 3×3 grid of cubes. "
            "All cubes appear the same, except one that is visually different in color. Carefully inspect the grid. "
            "Identify the grid position (row and column) of the cube that is different. Counting starts from the "
            "top-left corner, i.e., Row 1, Column 1. End the response with the final answer in the following strict "
            "LaTeX format: \\boxed{Row X, Column Y}. If no odd cube exists, output \\boxed{Row 0, Column 0}.")


def trial_type(record) -> str:
    """The answer type a trial asks (trials.py: a choice asked in the open is typed as text)."""
    return "text" if record.answer.type == "choice" and record.subject.get("form") == "open" else record.answer.type


def test_every_registered_family_and_answer_type_has_a_peoples_prompt():
    """A new family (or answer type of one) fails here until prompts.py has its people's prompt and task line."""
    missing = [(name, kind) for name, family in sorted(stim3d.families().items())
               for kind in (*family.answer_types, "rubric") if rule_for(name, kind) is None]
    assert not missing, f"no people's prompt in stim3d/study/prompts.py for {missing}"
    assert sorted(FAMILY_TASKS) == sorted(stim3d.families())
    unknown = {name for name, _ in PEOPLE_PROMPTS} - set(stim3d.families()) - {ANY_FAMILY}
    assert not unknown, f"rules for families that are not registered: {unknown}"


@pytest.mark.bpy
def test_every_question_of_every_family_is_read_by_its_rule_in_plain_words(every_family_batch):
    records = read_records(every_family_batch / "records.jsonl")
    assert {r.family for r in records} == set(stim3d.families())
    for record in records:
        prompt, written = people_prompt(record.family, trial_type(record), record.question)
        assert written, f"{record.family} {trial_type(record)}: the rule no longer reads {record.question!r}"
        assert not MODEL_WORDS.search(prompt), (record.question_id, prompt)
        assert "image" not in prompt.lower() and "scene" not in prompt.lower(), (record.question_id, prompt)


def test_the_rules_read_the_facts_the_model_is_told_and_no_more():
    """The same grid size, the differing attribute when the model is told it, ROSE's region in plain words."""
    prompt, _ = people_prompt("odd_grid", "cell", ODD_GRID)
    assert "3 rows by 3 columns" in prompt and "different in color" in prompt and prompt.startswith("The picture")
    unnamed, _ = people_prompt("odd_grid", "cell", ODD_GRID.replace(" in color", ""))
    assert "color" not in unnamed
    rose = ("You are given a grid image: 4 rows and 5 columns of 3D objects standing on the ground. Rows are counted "
            "from top to bottom, and columns from left to right, both starting from 1. Output only the formal answer "
            "in the required format. Do not output any explanation. Allowed answer formats: 1) COUNT(n) 2) "
            "CLICK(Rr,Cc); CLICK(Rr,Cc); ...; DONE 3) CLICK(Rr,Cc); CLICK(Rr,Cc); ...; SUBMIT(n). Examples: COUNT(3) | "
            "CLICK(R2,C5); CLICK(R4,C7); DONE | CLICK(R2,C5); CLICK(R4,C7); SUBMIT(2). Count the number of cells that "
            "are different from the majority from row 1 column 2 to row 3 column 4.")
    prompt, written = people_prompt("rose_grid", "strict_count", rose)
    assert written and prompt.endswith("How many objects differ from the majority in the block from row 1, column 2 "
                                       "to row 3, column 4?")
    assert "4 rows by 5 columns" in prompt


def test_a_plugin_family_gets_the_question_without_the_models_framing():
    prompt, written = people_prompt("my_plugin_family", "cell", ODD_GRID)
    assert not written
    assert prompt == generic_prompt(ODD_GRID)
    assert prompt.startswith("The picture shows a 3×3 grid of cubes.") and not MODEL_WORDS.search(prompt)
    assert "Which" not in prompt and "Identify the grid position" in prompt  # the family's own words, nothing added
    assert generic_prompt("How many cubes? Answer with a single integer.") == "How many cubes?"
    assert generic_prompt("Is the cone left? Choose one: 1. left, 2. right.") == "Is the cone left?"
    # a question of a family whose rule does not read it (its wording changed) falls back the same way
    assert people_prompt("shape_count", "integer", "Count the cubes. Answer with a single integer.") == (
        "Count the cubes.", False)


@pytest.mark.bpy
def test_a_describe_trial_lists_what_to_mention_never_the_answers(every_family_batch):
    (record,) = [r for r in read_records(every_family_batch / "records.jsonl") if r.answer.type == "rubric"]
    rubric = record.answer.model_dump(mode="json")["gold"]
    topics = mention_topics(rubric)
    assert topics and len(topics) == len(set(topics))
    said = " ".join(topics)
    for item in rubric["must_right"]:  # no count, colour or shape of the image is in the topics
        for value in item["fact"].values():
            if isinstance(value, str) and value not in ("count", "colour"):
                assert value not in said, (value, topics)
            if isinstance(value, int) and not isinstance(value, bool):
                assert str(value) not in said, (value, topics)
    assert json.dumps(topics) == json.dumps(mention_topics(rubric))  # the same rubric, the same list


def test_the_opening_pages_say_the_question_is_above_the_picture_and_name_each_task():
    from stim3d.study.instructions import overview_pages

    pages = overview_pages(["odd_grid", "my_plugin_family"], ["cell", "integer"], practice=1, catch=1, present_ms=None)
    text = " ".join(pages)
    assert "Each question is written above its picture; under the picture you find how to answer" in text
    assert "Under each picture you find the question" not in text
    assert FAMILY_TASKS["odd_grid"] in text and "answer a question about a picture" in text
