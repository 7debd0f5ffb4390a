"""ava_object: "What is in the red box?" over the composed-object library (scenes/families/ava/ava_object.py).

The family is registered in pyproject.toml; an environment installed before it existed does not list it, so
these tests put it in the registry themselves.
"""

from __future__ import annotations

from collections import Counter

import pytest

from stim3d.scenes.balance import task_answers
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families.ava import ava_object
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.object_library import object_names, synonyms_of
from stim3d.scoring.parsers_actions import parse_choice

FRAME = Frame(160, 120)


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(FAMILIES._loaded(), "ava_object", ava_object.FAMILY)


def _item(seed: int, **params):
    return make_item("ava_object", params, [seed, 0, seed], f"ava-object-{seed}", FRAME)


@pytest.mark.parametrize("name", object_names())
def test_the_boxed_object_is_the_gold_and_no_distractor_shares_its_kind(name):
    gold = name.replace("_", " ")
    item = _item(3, answer=gold, max_distractors=3)
    (question,) = item.questions
    assert question.gold == gold and question.answer_type == "choice"
    target = item.scene.object(1)
    assert target.shape == "composed" and target.source.name == name and target.attributes["marker"] == "red"
    assert all(o.source.name != name for o in item.scene.objects[1:])
    assert question.subject["options"].split("|") == [n.replace("_", " ") for n in object_names()]
    assert f"{gold}={'|'.join(synonyms_of(name))}" in question.subject["synonyms"]
    assert item.ground_truth.of(1).visibility >= 0.75


def test_answers_are_balanced_over_the_library():
    answers = task_answers(ava_object.AvaObjectParams, [{}], 48, [0, 0])
    assert Counter(answers) == {name.replace("_", " "): 4 for name in object_names()}


def test_choice_answers_parse_by_name_number_or_sentence():
    options = [n.replace("_", " ") for n in object_names()]
    assert parse_choice("It is a traffic cone.", options).value == "traffic cone"
    assert parse_choice(str(options.index("mug") + 1), options).value == "mug"


def test_compose_is_deterministic_and_refuses_unknown_answers():
    assert _item(5).to_json() == _item(5).to_json()
    with pytest.raises(ValueError, match="cannot be realised"):
        ava_object.AvaObjectParams(answer="spaceship")


@pytest.mark.bpy
def test_cycles_shows_every_library_object_where_the_ray_cast_does(tmp_path):
    pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")
    import numpy as np

    from stim3d.render.backends.blender import render_scene
    from stim3d.render.settings import RenderSettings
    from stim3d.scenes.visibility import measure

    item = _item(7, max_distractors=3)
    settings = RenderSettings(engine="cycles", width=FRAME.width, height=FRAME.height, samples=2, denoise=False)
    rendered = render_scene(item.scene, settings, item.seed, tmp_path).instance_map
    raycast = measure(item.scene).instance_map
    assert float(np.mean(rendered == raycast)) >= 0.998
    assert set(np.unique(rendered)) - {0} == {o.id for o in item.scene.objects}
