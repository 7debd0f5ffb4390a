"""One rule for recounting a gold answer after the scene changed: the add-on's Re-validate and an occlusion
sweep ask the family (`Family.recount`) and agree on the same scene, a fully hidden object included."""

from __future__ import annotations

import pytest

from stim3d.blender_addon.validation import revalidate
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.model import Question
from stim3d.scenes.sweep import level_gold, sweep_item
from stim3d.scenes.visibility import measure
from tests.helpers import counting_item, obj, scene, three_objects


def test_the_addon_and_a_sweep_recount_the_same_scene_alike_a_fully_hidden_object_counting():
    item = counting_item(three_objects(), "cone")  # one cone (object 1), a cylinder, a torus: gold 1 by hand
    swept = sweep_item(item, [0.0, 0.5], target_id=1, occluder_id="add")
    fully_hidden = []
    for level_item in swept.items:
        assert level_item is not None
        checked = revalidate(item, level_item.scene)  # the add-on, given the sweep's scene as an edit
        (answer,) = checked.answers
        assert answer.new_gold == level_item.questions[0].gold == 1
        visible = {t.id: t.visible_px for t in measure(level_item.scene).truths}
        fully_hidden += [i for i, px in visible.items() if px == 0]
        assert answer.hidden == ((1,) if visible[1] == 0 else ())  # the add-on names a hidden counted object
    assert 1 in fully_hidden  # level 0.0: the added panel hides the counted cone completely, and it still counts


def test_a_fully_hidden_object_is_reported_but_still_counted_by_the_addon():
    item = counting_item(three_objects(), "cone")
    hidden_scene = sweep_item(item, [0.0], target_id=1, occluder_id="add").items[0].scene
    lines = revalidate(item, hidden_scene).lines()
    assert ("WARNING", "How many cones are in the scene? gold 1 holds (recounted: objects [1], hidden completely [1] "
            "(counted: they are in the scene))") in lines


def test_the_rule_counts_countable_matches_of_shape_and_colour():
    # two red cones, one blue cone, a red sphere, and an uncountable red cone (a sweep's panel would be one)
    objects = [obj(1, "cone", 0.8, -2.0, 0.0), obj(2, "cone", 0.8, 0.0, 0.0), obj(3, "cone", 0.8, 2.0, 0.0, color="blue"),
               obj(4, "sphere", 0.8, 0.0, 2.0),
               obj(5, "cone", 0.8, 0.0, -2.0).model_copy(update={"countable": False})]
    scene_ = scene(objects)
    recount = FAMILIES["shape_color_count"].recount
    red_cones = Question(question_id="q", text="?", answer_type="integer", gold=0, subject={"shape": "cone", "color": "red"})
    cones = red_cones.model_copy(update={"subject": {"shape": "cone"}})
    assert recount(red_cones, scene_).object_ids == (1, 2)
    assert recount(cones, scene_).gold == 3
    assert recount(cones.model_copy(update={"subject": {"shape": "cone", "size": "big"}}), scene_) is None


def test_a_family_without_a_rule_is_not_rechecked_nor_swept():
    item = counting_item(three_objects()).model_copy(update={"family": "letters"})
    (answer,) = revalidate(item, item.scene).answers
    assert answer.new_gold is None and "no recount rule" in answer.how
    with pytest.raises(ValueError, match="no recount rule"):
        level_gold(FAMILIES["letters"], item.scene, item.questions[0])
