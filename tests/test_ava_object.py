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
    question, open_question = item.questions
    assert question.gold == gold and question.answer_type == "choice"
    assert open_question.gold == gold and open_question.subject["form"] == "open"
    assert "Choose one" not in open_question.text
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


def test_open_answers_are_scored_through_the_synonym_lists():
    """An open answer naming a synonym ("a coffee cup") is the option it names, through the record's own synonyms;
    the open form's prompt lists no options."""
    from stim3d.render.batch.records import OPEN_PROTOCOL, protocol_of
    from stim3d.scoring.records import Answer, Record

    item = _item(11, answer="mug")
    open_question = item.questions[1]
    assert protocol_of("choice", open_question.subject) == OPEN_PROTOCOL
    options = open_question.subject["options"].split("|")
    record = Record.model_construct(answer=Answer(type="choice", gold="mug", options=options),
                                    subject=open_question.subject)
    assert record.choice_synonyms()["mug"] == synonyms_of("mug")
    right = ["It is a coffee cup.", "\\boxed{Tea cup}", "mug", "I see a cup on the ground."]
    wrong = ["A desk lamp.", "It looks like a pylon.", "a vase"]
    assert [parse_choice(r, options, record.choice_synonyms()).value for r in right] == ["mug"] * 4
    assert [parse_choice(r, options, record.choice_synonyms()).value for r in wrong] == ["lamp", "traffic cone", None]
    assert parse_choice("It is a coffee cup.", options).value is None  # without the synonyms: no option named


# Open answers as people and models write them, per library object; each row names another object's synonym as a
# colour ("light" is the lamp's), a shape ("cone" is the traffic cone's) or a modifier of the head noun.
PHRASINGS = {
    "mug": ["a light blue mug", "A light-gray coffee cup.", "It's a tea cup on a table.", "a cone-shaped mug",
            "The object is a white mug with a handle."],
    "table": ["a light-gray table", "A light wooden desk.", "a dining table", "It is a pine table.",
              "a small table with a lamp on it"],
    "chair": ["light brown chair", "a desk chair", "It looks like a dark-gray chair.", "a car seat",
              "A chair next to a table."],
    "lamp": ["a table lamp", "a desk lamp", "It is a light.", "a light-colored floor lamp", "A small light on a desk."],
    "snowman": ["a snowman", "A light-gray snow man.", "a snowman with a cone-shaped nose", "a snow figure"],
    "car": ["a light blue car", "A toy car.", "It is a vehicle, maybe a car.", "a house-shaped car",
            "The object in the box is an automobile."],
    "house": ["a light-yellow house", "a tree house", "It's a small cottage.", "a mushroom-shaped house",
              "A building with a cone-shaped roof."],
    "tree": ["a cone-shaped tree", "a christmas tree", "A light-green pine tree.", "It's a fir."],
    "rocket": ["a light-gray rocket", "a cone-shaped rocket", "It is a space rocket.", "a rocket-shaped rocket",
               "a toy missile"],
    "mushroom": ["a light brown mushroom", "A toadstool.", "It's a cone-shaped mushroom.", "a tree mushroom"],
    "dumbbell": ["a light-gray dumbbell", "a light weight", "A barbell.", "a set of weights", "a chair-shaped dumbbell"],
    "traffic cone": ["a traffic cone", "A light-orange cone.", "It's a safety cone on a road.", "an orange pylon",
                     "a mug-shaped road cone"],
}


def test_open_answers_name_the_head_noun_not_a_modifier_that_is_another_objects_synonym():
    """"a light-gray table" is table (not the lamp's "light"), "a cone-shaped tree" tree (not the traffic cone's
    "cone"), "a table lamp" lamp: an open answer is read through the record's synonyms at its noun phrase's head."""
    from stim3d.scoring.records import Answer, Record

    options = [n.replace("_", " ") for n in object_names()]
    assert sorted(PHRASINGS) == sorted(options)
    subject = {"synonyms": ava_object.synonyms_text(), "form": "open"}
    for gold, phrasings in PHRASINGS.items():
        record = Record.model_construct(answer=Answer(type="choice", gold=gold, options=options), subject=subject)
        read = {phrase: parse_choice(phrase, options, record.choice_synonyms()).value for phrase in phrasings}
        assert read == dict.fromkeys(phrasings, gold), gold


def test_names_in_separate_phrases_keep_the_first_and_a_bare_shape_or_shade_names_nothing():
    """Two objects in two phrases ("a mug next to a lamp") still read as the first named, as before; a name used only
    to describe a look ("It is cone-shaped.", "light gray") names no object."""
    synonyms = {n.replace("_", " "): synonyms_of(n) for n in object_names()}
    options = list(synonyms)
    assert parse_choice("A mug next to a lamp.", options, synonyms).value == "mug"
    assert parse_choice("a lamp, or maybe a table", options, synonyms).value == "lamp"
    assert parse_choice("It is cone-shaped.", options, synonyms).value is None
    assert parse_choice("light gray", options, synonyms).value is None


def test_viewpoint_is_the_cameras_azimuth_from_the_front_and_its_elevation():
    from stim3d.scenes.colors import named
    from stim3d.scenes.object_library import library_object

    obj = library_object(1, "mug", 1.0, 0.0, 0.0, 90.0, named("red"))  # turned 90 degrees: its front faces -X
    azimuth, elevation = ava_object.viewpoint(obj, (-10.0, 0.0, obj.location[2]))
    assert azimuth == pytest.approx(0.0, abs=1e-6) and elevation == pytest.approx(0.0, abs=1e-6)
    azimuth, elevation = ava_object.viewpoint(obj, (0.0, -5.0, obj.location[2] + 5.0))  # from its left, 45 up
    assert azimuth == pytest.approx(90.0, abs=1e-6) and elevation == pytest.approx(45.0, abs=1e-6)


def test_difficulty_records_visibility_size_in_pixels_and_viewpoint():
    item = _item(13)
    d = item.difficulty
    box = item.ground_truth.of(1).bbox_visible
    assert d["size_px"] == max(box[2] - box[0], box[3] - box[1]) > 0
    assert d["target_visibility"] == item.ground_truth.of(1).visibility
    assert 0.0 <= d["view_azimuth_deg"] < 360.0 and 0.0 < d["view_elevation_deg"] < 90.0


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


def _part_px_by_own_cast(item) -> dict[str, float]:
    """Visible pixels of each part of the target (object 1), by a cast of this test's own: every part of the target
    and every other object as one triangle soup, one ray through each pixel centre of the frame, first hit only.

    The target's parts are placed from item.json alone (each primitive scaled, turned and moved in the library
    frame, the whole normalised to its bounding box, then the object's size and pose), not through the
    family's meshes or visibility code."""
    import numpy as np
    import trimesh

    from stim3d.scenes.meshes import object_mesh, object_world_vertices
    from stim3d.scenes.primitives import quat_to_matrix, unit_mesh

    target = item.scene.object(1)
    pieces = [(unit_mesh(p.shape).vertices * np.asarray(p.scale) @ quat_to_matrix(p.rotation_quat).T
               + np.asarray(p.location), unit_mesh(p.shape).faces) for p in target.source.parts]
    every = np.concatenate([v for v, _ in pieces])
    low, high = every.min(axis=0), every.max(axis=0)
    centre, extent = (low + high) / 2, float((high - low).max())
    turn = quat_to_matrix(target.rotation_quat)
    vertices, faces, labels, offset = [], [], [], 0
    for index, (v, f) in enumerate(pieces):
        vertices.append((v - centre) / extent * target.size @ turn.T + np.asarray(target.location))
        faces.append(f + offset)
        labels.append(np.full(len(f), index))
        offset += len(v)
    for obj in item.scene.objects[1:]:
        vertices.append(object_world_vertices(obj))
        faces.append(object_mesh(obj).faces + offset)
        labels.append(np.full(len(object_mesh(obj).faces), -1))
        offset += len(vertices[-1])
    soup = trimesh.Trimesh(np.concatenate(vertices), np.concatenate(faces), process=False)
    cam = item.scene.camera
    xs, ys = np.meshgrid(np.arange(cam.width) + 0.5, np.arange(cam.height) + 0.5)
    local = np.stack([(xs.ravel() - cam.cx) / cam.fx, -(ys.ravel() - cam.cy) / cam.fy, -np.ones(xs.size)], axis=1)
    directions = local @ quat_to_matrix(cam.rotation_quat).T
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    origins = np.broadcast_to(np.asarray(cam.location, dtype=float), directions.shape)
    first = soup.ray.intersects_first(origins, directions)
    hit = np.concatenate(labels)[first[first >= 0]]
    return {p.name: float(np.sum(hit == i)) for i, p in enumerate(target.source.parts)}


# Defining features as a person names them (docs/objects.md), written out here rather than read from objects.yaml.
DEFINING = {"mug": [["handle"]],
            "car": [["wheel_front_left", "wheel_front_right", "wheel_back_left", "wheel_back_right"]],
            "chair": [["backrest"]]}


@pytest.mark.parametrize("name, seeds", [("mug", range(12)), ("car", range(4)), ("chair", range(4))])
def test_every_targets_defining_parts_show_by_an_independent_cast(name, seeds):
    """At the issue's 320x240, a mug target's handle was hidden in 17 of 60 items: every layout now shows it. The
    recorded part_px agree with a cast of the test's own (ties and embree's edges aside: 2 px or 1 %)."""
    for seed in seeds:
        item = make_item("ava_object", {"answer": name}, [seed, 0, seed], f"ava-object-{seed}", Frame(320, 240))
        own = _part_px_by_own_cast(item)
        for feature in DEFINING[name]:
            assert sum(own[part] for part in feature) > 0, (seed, feature, own)
        recorded = item.ground_truth.of(1).part_px
        assert recorded is not None and set(recorded) == set(own)
        assert all(abs(recorded[p] - own[p]) <= max(2.0, 0.01 * own[p]) for p in own), (seed, recorded, own)
        assert all(t.part_px is None for t in item.ground_truth.objects[1:])  # the target's alone
