"""The rubrics3d preset: PerceptionRubrics' evaluation-set size over every family, golden captions at full
marks, and a constant description that scores low (scoring/rubric_baseline.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from stim3d.render.batch.config import expand, load_config
from stim3d.render.cli.batch import compose_one_per_task
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.presets import preset_path
from stim3d.scoring.judges import reference_judge
from stim3d.scoring.rubric import Rubric, RubricItem, judge_rubric
from stim3d.scoring.rubric_baseline import description_baselines, family_baseline, spread

PERCEPTION_RUBRICS_IMAGES = 1038  # PerceptionRubrics, table 1: "Number of images 1,038"
PER_TASK = 3  # items composed per task for the caption and baseline checks (composition at 640x480 is slow)


@pytest.fixture(scope="module")
def config():
    path = preset_path("rubrics3d")
    assert path is not None
    return load_config(path)


@pytest.fixture(scope="module")
def sample(config):
    """The first PER_TASK items of every task, composed at the preset's size: (family, rubric) pairs."""
    frame = Frame(config.render.width, config.render.height)
    pairs = []
    for plan in expand(config):
        if plan.item_index >= PER_TASK:
            continue
        item = make_item(plan.family, plan.params, [config.seed, plan.task_index, plan.item_index], plan.item_id,
                         frame, plan.split, plan.scene_id, plan.questions)
        (question,) = item.questions  # describe only
        assert question.answer_type == "rubric"
        pairs.append((plan.family, question.gold))
    return pairs


def test_preset_is_perception_rubrics_sized_over_every_family_and_composes(config):
    plans = expand(config)
    assert len(plans) == PERCEPTION_RUBRICS_IMAGES
    per_family = Counter(plan.family for plan in plans)
    assert set(per_family) == set(FAMILIES)  # every installed family, plug-ins aside
    assert max(per_family.values()) - min(per_family.values()) <= 1  # spread evenly
    assert all(list(plan.questions) == ["describe"] for plan in plans)
    compose_one_per_task(config, plans)  # what `stim3d validate rubrics3d` runs: raises on a task that cannot compose


def test_every_golden_caption_scores_full_marks(sample):
    for family, rubric in sample:
        result = judge_rubric(rubric, rubric.caption, reference_judge)
        assert (result.must_right_passed, result.score) == (True, 1.0), (family, rubric.caption)


def test_a_constant_description_scores_low_except_where_the_rubric_is_constant(sample):
    baselines = {b.family: b for b in description_baselines(sample)}
    assert set(baselines) == set(FAMILIES)
    # A caption from another image of the family gets a count, colour, letter string or cell wrong: gate 0.
    high = {family for family, b in baselines.items() if b.best_score > 0.1}
    # ava_orientation's rubric names only the toy car (never which side faces the camera; scenes/rubrics.py),
    # so one fixed sentence passes every image of it: the preset's header says so.
    assert high == {"ava_orientation"}
    assert baselines["ava_orientation"].best_score == 1.0


def test_family_baseline_leaves_the_candidates_own_image_out():
    def rubric(n: int) -> Rubric:
        word = ("one", "two", "three")[n - 1]
        noun = "cube" if n == 1 else "cubes"
        fact = RubricItem(id="count.cube", statement=f"There {'is' if n == 1 else 'are'} {word} {noun}.",
                          type="count", fact={"shape": "cube", "count": n})
        return Rubric(must_right=[fact], caption=f"The scene shows {word} {noun}.")

    # Three images with 1, 2, 3 cubes: any one caption is right on its own image only, so 0 on the others.
    assert family_baseline("toy", [rubric(1), rubric(2), rubric(3)]).best_score == 0.0
    # Two images with 2 cubes and one with 3: "two cubes" is right on the other 2-cube image, 1 of 2 others.
    best = family_baseline("toy", [rubric(2), rubric(2), rubric(3)])
    assert (best.best_score, best.best_caption) == (0.5, "The scene shows two cubes.")
    with pytest.raises(ValueError, match="at least 2 rubrics"):
        family_baseline("toy", [rubric(1)])


def test_spread_picks_evenly_with_both_ends():
    assert spread(5, 12) == [0, 1, 2, 3, 4]
    assert spread(100, 3) == [0, 50, 99]
