"""Occlusion sweeps without rendering: levels met in measured visibility, nothing but the occluder moves,
unreachable levels reported with their reason, the level grammar and its errors.

Scenes are hand-made at 160x120 with a close camera, so the target covers several
hundred pixels (a level within +/-0.01 needs that many); every visibility here is
re-measured with scenes.visibility.measure, never taken from the sweep's own numbers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stim3d.render.sweep import accuracy_by_level, parse_levels, read_scores
from stim3d.scenes.camera import look_at
from stim3d.scenes.model import GroundTruth, Scene
from stim3d.scenes.sweep import (
    SweepError,
    choose_pair,
    rank_occluders,
    rank_targets,
    sweep_item,
    sweep_scene,
    sweep_stage,
)
from stim3d.scenes.visibility import measure
from tests.helpers import SWEEP_CAMERA, counting_item, obj, scene, three_objects

ROOT = Path(__file__).resolve().parents[1]
LEVELS = [0.2, 0.4, 0.6, 0.8, 1.0]


def visibility_of(scene_: Scene, object_id: int) -> float:
    return measure(scene_).visibility()[object_id]


@pytest.mark.parametrize("occluder", [("cylinder", 1.1), ("sphere", 1.4)])
def test_each_reachable_level_is_met_within_001_in_measured_visibility(occluder):
    sweep = sweep_scene(three_objects(*occluder), 1, 2, LEVELS)
    assert sweep.reached >= 4, [(lv.requested, lv.unreachable) for lv in sweep.levels]
    for level in sweep.levels:
        if level.reachable:
            measured = visibility_of(level.scene, 1)
            assert abs(measured - level.requested) <= 0.01, (level.requested, measured)
            assert measured == level.achieved


def test_only_the_occluder_moves_everything_else_is_byte_identical():
    source = three_objects()
    sweep = sweep_scene(source, 1, 2, LEVELS)
    scenes = [lv.scene for lv in sweep.levels if lv.reachable]
    assert len(scenes) >= 4
    for level_scene in scenes:
        assert level_scene.camera.model_dump_json() == source.camera.model_dump_json()
        assert level_scene.stage.model_dump_json() == source.stage.model_dump_json()
        assert [light.model_dump_json() for light in level_scene.lights] == [light.model_dump_json() for light in source.lights]
        for before, after in zip(source.objects, level_scene.objects):
            if before.id == 2:
                # Same object on the same ground: only x and y differ.
                assert after.model_dump(exclude={"location"}) == before.model_dump(exclude={"location"})
                assert after.location[2] == before.location[2]
            else:
                assert after.model_dump_json() == before.model_dump_json()
    offsets = [lv.offset for lv in sweep.levels if lv.reachable]
    assert len(set(offsets)) == len(offsets)  # the occluder did move between levels


@pytest.mark.parametrize("occluder", [("cylinder", 1.1), ("sphere", 1.4), ("cube", 1.1)])
def test_target_visibility_rises_monotonically_along_the_path(occluder):
    """Sampled finely along the path, visibility never falls by more than one pixel's worth.

    The covered area of a convex target behind a convex occluder sliding away from
    the most covering point only shrinks; counting it on pixel centres can flip a
    single pixel back and forth, nothing more.
    """
    source = three_objects(*occluder)
    sweep = sweep_scene(source, 1, 2, [0.5])
    stage = sweep_stage(source, 1, 2, 0.0, 1)
    one_pixel = 1.0 / measure(source).truths[0].amodal_px
    values = [stage.visibility_at(sweep.path.point(t))[1] for t in np.linspace(0.0, sweep.path.max_offset, 90)]
    assert min(np.diff(values)) >= -one_pixel - 1e-12
    assert values[0] < 0.5 < values[-1]  # the path really goes from hidden to unhidden
    assert values[-1] == 1.0


def test_unreachable_levels_are_reported_and_the_others_produced():
    source = three_objects("sphere", 0.7)  # too small to hide much of the cone
    sweep = sweep_scene(source, 1, 2, [0.05, 0.6, 0.8, 1.0])
    low = sweep.levels[0]
    assert not low.reachable and low.scene is None
    assert low.unreachable.code == "occluder_too_small"
    lowest = float(low.unreachable.detail.rsplit(" ", 1)[1])
    assert lowest > 0.05 + 0.01
    assert [lv.reachable for lv in sweep.levels[1:]] == [True, True, True]
    for level in sweep.levels[1:]:
        assert abs(visibility_of(level.scene, 1) - level.requested) <= 0.01


def test_collision_with_another_object_makes_a_level_unreachable():
    """An object standing on the path: the solved position would interpenetrate it."""
    base = three_objects()
    free = sweep_scene(base, 1, 2, [0.6])
    x, y = free.path.point(free.levels[0].offset)
    blocker = obj(4, "cube", 0.5, x + 0.45 * free.path.direction[0], y + 0.45 * free.path.direction[1], color="yellow")
    blocked_scene = base.model_copy(update={"objects": [*base.objects, blocker]})
    sweep = sweep_scene(blocked_scene, 1, 2, [0.6], path=free.path)
    (level,) = sweep.levels
    assert not level.reachable
    assert level.unreachable.code == "collision"
    assert "object 4" in level.unreachable.detail


def test_frame_edge_caps_the_visibility_of_a_cut_target():
    camera = look_at((0.0, -5.0, 3.0), (0.0, 0.0, 0.4), 160, 120)
    target = obj(1, "sphere", 1.0, 2.45, 0.0)  # partly outside the right edge of the frame
    cut = scene([target, obj(2, "cylinder", 1.2, 0.0, -1.5, color="blue")], camera=camera)
    truncation = measure(cut).truths[0].truncation
    assert truncation > 0.05
    sweep = sweep_scene(cut, 1, 2, [1.0])
    (level,) = sweep.levels
    assert level.unreachable is not None and level.unreachable.code == "frame_edge"


def test_a_level_between_two_pixel_columns_is_reported_as_quantisation():
    """A level camera sees every vertical edge as a pixel column: an 8-px-wide cube's visibility moves in
    steps of 1/8, so 0.3 (between 0.25 and 0.375) cannot be met within 0.01, while 0.5 can."""
    camera = look_at((0.0, -8.0, 0.5), (0.0, 0.0, 0.5), 64, 48)
    tiny = scene([obj(1, "cube", 0.8, 0.0, 0.0), obj(2, "cylinder", 1.2, 1.6, -1.2, color="blue")], camera=camera)
    low, middle = sweep_scene(tiny, 1, 2, [0.3, 0.5]).levels
    assert low.unreachable.code == "pixel_quantisation"
    below, above = (float(v) for v in low.unreachable.detail.split("jumps from ")[1].split(" across")[0].split(" to "))
    assert below < 0.3 - 0.01 and above > 0.3 + 0.01
    assert middle.reachable and abs(visibility_of(middle.scene, 1) - 0.5) <= 0.01


def test_other_objects_keep_their_visibility_floor():
    """No level may hide a third object below the floor; the levels that would are reported, naming it."""
    objects = [obj(1, "cone", 1.0, 0.0, 0.0), obj(2, "cylinder", 1.1, 1.8, -1.2, color="blue"),
               obj(3, "sphere", 0.5, 1.5, 0.3, color="green")]  # right of the target, behind the path
    crowded = scene(objects, camera=SWEEP_CAMERA)
    free = sweep_scene(crowded, 1, 2, LEVELS)
    hidden = {lv.requested for lv in free.levels if lv.reachable and visibility_of(lv.scene, 3) < 0.9}
    assert 0 < len(hidden) < len(LEVELS), "the occluder should hide object 3 at some levels, not all"
    guarded = sweep_scene(crowded, 1, 2, LEVELS, path=free.path, others_floor=0.9)
    for level in guarded.levels:
        if level.requested in hidden:
            assert level.unreachable.code == "hides_other" and "object 3" in level.unreachable.detail
        else:
            assert level.reachable and visibility_of(level.scene, 3) >= 0.9


def test_bad_ids_are_clear_errors():
    source = three_objects()
    with pytest.raises(SweepError, match="target id 9 is not in the scene"):
        sweep_scene(source, 9, 2, LEVELS)
    with pytest.raises(SweepError, match="same object"):
        sweep_scene(source, 1, 1, LEVELS)


def test_default_choice_hides_an_asked_about_object_behind_the_best_cover():
    source = three_objects()
    assert rank_targets(source, {"shape": "torus"}) == [3]
    assert rank_targets(source, {"shape": "hexagon"})[0] == 1  # nothing asked matches: the most central first
    ranking = [object_id for _, object_id in rank_occluders(source, 1)]
    assert ranking == [2, 3]  # the tall cylinder covers the cone better than the flat torus
    target, occluders = choose_pair(source, 0.2, {"shape": "cone"})
    assert (target, occluders[0]) == (1, 2)


def test_default_target_is_one_that_can_be_hidden_to_the_lowest_level():
    """Two cubes are asked about; nothing can hide the big central one to 0.1, the small one can be."""
    objects = [obj(1, "cube", 1.2, 0.0, 0.0), obj(2, "cube", 0.5, -1.6, 0.6, color="blue"),
               obj(3, "cylinder", 0.8, 1.6, -1.0, color="green")]
    source = scene(objects, camera=SWEEP_CAMERA)
    assert rank_targets(source, {"shape": "cube"}) == [1, 2]
    assert rank_occluders(source, 1)[0][0] > 0.2
    target, occluders = choose_pair(source, 0.1, {"shape": "cube"})
    assert target == 2
    sweep = sweep_scene(source, target, occluders[0], [0.1])
    assert sweep.levels[0].reachable, sweep.levels[0].unreachable
    assert abs(visibility_of(sweep.levels[0].scene, target) - 0.1) <= 0.01


def test_sweep_items_keep_gold_question_and_say_answer_does_not_depend_on_visibility():
    item = counting_item(three_objects(), "cone", min_visibility=0.7)
    swept = sweep_item(item, LEVELS, target_id=1, occluder_id=2)
    built = [i for i in swept.items if i is not None]
    assert len(built) >= 4
    ids = [q.question_id for i in built for q in i.questions]
    assert len(set(ids)) == len(ids)  # predictions can be matched per level
    for level_item, result in zip(swept.items, swept.sweep.levels):
        if level_item is None:
            continue
        (question,) = level_item.questions
        assert question.text == item.questions[0].text
        assert question.gold == sum(o.countable and o.shape == "cone" for o in level_item.scene.objects) == 1
        d = level_item.difficulty
        assert d["sweep_id"] == swept.sweep_id
        assert d["sweep_level"] == result.requested
        assert d["target_visibility"] == level_item.ground_truth.of(1).visibility
        assert abs(d["target_visibility"] - result.requested) <= 0.01
        assert d["answer_depends_on_visibility"] is False
        assert d["least_visibility"] == min(t.visibility for t in level_item.ground_truth.objects)
        assert level_item.ground_truth.model_dump() == GroundTruth(objects=measure(level_item.scene).truths).model_dump()
        # The other objects keep the floor the source item was made under.
        assert all(t.visibility >= 0.7 for t in level_item.ground_truth.objects if t.id != 1)


def test_same_item_and_levels_give_the_same_level_items_byte_for_byte():
    item = counting_item(three_objects())
    first = sweep_item(item, [0.3, 0.7])
    second = sweep_item(item, [0.3, 0.7])
    assert [i.to_json() if i else None for i in first.items] == [i.to_json() if i else None for i in second.items]


def test_families_whose_gold_cannot_be_recomputed_are_refused():
    item = counting_item(three_objects()).model_copy(update={"family": "letters"})
    with pytest.raises(SweepError, match="cannot be swept"):
        sweep_item(item, LEVELS)


# -- the level grammar ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0.2,0.4,0.6", [0.2, 0.4, 0.6]),
        (" 0.5 , 1 ", [0.5, 1.0]),
        ("0.1:1.0:0.1", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]),  # end included: a step lands on it
        ("0.2:0.9:0.3", [0.2, 0.5, 0.8]),  # end not on a step: not included
        ("0.5:0.5:0.1", [0.5]),
    ],
)
def test_levels_accept_lists_and_inclusive_ranges(text, expected):
    assert parse_levels(text) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("0.2,abc", "'abc' is not a number"),
        ("0.2,1.4", "level 1.4 is outside [0, 1]"),
        ("0.1:1.0", "start:stop:step"),
        ("0.1:1.0:0", "step must be positive"),
        ("0.9:0.1:0.1", "ends (0.1) before it starts (0.9)"),
        ("0.4,0.4", "differ by at least 0.001"),
        ("", "empty"),
    ],
)
def test_bad_levels_are_one_clear_error(text, message):
    with pytest.raises(SweepError) as error:
        parse_levels(text)
    assert message in str(error.value)


def test_cli_bad_levels_one_line_exit_2(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "stim3d", "sweep", "occlusion", str(tmp_path), "--levels", "0.2:x:0.1",
         "--out", str(tmp_path / "out")],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "'x' is not a number" in lines[0], result.stderr
    assert not (tmp_path / "out").exists()


# -- accuracy vs visibility from a scores file --------------------------------------------------------


def test_accuracy_per_level_joins_the_scores_of_each_level_item(tmp_path):
    sweeps = [
        {"levels": [{"requested": 0.2, "item_id": "a-vis0200", "achieved": 0.21, "status": "rendered"},
                    {"requested": 0.6, "item_id": "a-vis0600", "achieved": 0.6, "status": "rendered"},
                    {"requested": 1.0, "item_id": None, "status": "unreachable"}]},
        {"levels": [{"requested": 0.2, "item_id": "b-vis0200", "achieved": 0.19, "status": "rendered"},
                    {"requested": 0.6, "item_id": "b-vis0600", "achieved": 0.6, "status": "rendered"},
                    {"requested": 1.0, "item_id": "b-vis1000", "achieved": 1.0, "status": "rendered"}]},
    ]
    questions = [("a-vis0200", False), ("b-vis0200", True), ("a-vis0600", True), ("b-vis0600", True),
                 ("b-vis1000", True), ("elsewhere", False)]
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps({"questions": [{"item_id": i, "question_id": f"{i}-q0", "correct": c} for i, c in questions]}))
    rows = accuracy_by_level(sweeps, read_scores(scores))
    assert rows == [(0.2, pytest.approx(0.2), 0.5, 2), (0.6, 0.6, 1.0, 2), (1.0, 1.0, 1.0, 1)]


def test_scores_that_are_not_from_stim3d_score_are_one_clear_error(tmp_path):
    bad = tmp_path / "scores.json"
    bad.write_text('{"rows": []}')
    with pytest.raises(SweepError, match="not a scores file"):
        read_scores(bad)
    unrelated = tmp_path / "other.json"
    unrelated.write_text(json.dumps({"questions": [{"item_id": "x", "correct": True}]}))
    with pytest.raises(SweepError, match="none of this sweep's items"):
        accuracy_by_level([{"levels": [{"requested": 0.5, "item_id": "y", "achieved": 0.5}]}], read_scores(unrelated))


def test_plot_gets_an_accuracy_panel_only_when_scores_are_given(tmp_path):
    from PIL import Image

    from stim3d.render.sweep import plot_achieved

    sweeps = [{"source_item_id": "a", "levels": [
        {"requested": 0.2, "item_id": "a-vis0200", "achieved": 0.21, "status": "rendered"},
        {"requested": 0.6, "item_id": None, "status": "unreachable", "reason": "collision"}]}]
    alone = Image.open(plot_achieved(sweeps, tmp_path / "alone.png"))
    both = Image.open(plot_achieved(sweeps, tmp_path / "both.png", {"a-vis0200": [True, False]}))
    assert both.height == alone.height and both.width == 2 * alone.width


def test_a_batch_folder_is_refused_as_sweep_output(tmp_path):
    """A sweep writes its own records.jsonl: pointing it at a batch folder must not replace the batch's."""
    from stim3d.render.sweep import run_occlusion_sweep

    (tmp_path / "batch.json").write_text("{}")
    (tmp_path / "records.jsonl").write_text("batch records\n")
    with pytest.raises(SweepError, match="is a batch folder"):
        run_occlusion_sweep(tmp_path / "missing", [0.5], tmp_path)
    assert (tmp_path / "records.jsonl").read_text() == "batch records\n"
