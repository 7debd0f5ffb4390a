"""The rubrics3d preset: PerceptionRubrics' evaluation-set size over every family, golden captions at full
marks, and a constant description that scores low (scoring/rubric_baseline.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from stim3d.cli.batch import compose_one_per_task
from stim3d.render.batch.config import load_config
from stim3d.render.batch.plan import expand
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
    """PER_TASK items spread over every task (first, middle, last), composed at the preset's size: (family, rubric)."""
    frame = Frame(config.render.width, config.render.height)
    pairs = []
    counts = Counter(plan.task_index for plan in expand(config))
    for plan in expand(config):
        if plan.item_index not in spread(counts[plan.task_index], PER_TASK):
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


def test_a_constant_description_scores_low_on_every_family(sample):
    baselines = {b.family: b for b in description_baselines(sample)}
    assert set(baselines) == set(FAMILIES)
    # A caption from another image of the family gets a count, colour, letter string, cell or the side the toy
    # car is seen from wrong: the gate sets its score to 0.
    # ava_orientation's one varying fact is a 9-way view: its constant is at chance, checked over the whole task below.
    assert {family: b.best_score for family, b in baselines.items()
            if b.best_score > 0.1 and family != "ava_orientation"} == {}


def test_ava_orientation_constant_description_is_at_chance(config):
    """Over all of the task's images: the views are scheduled evenly (n // 9 or one more of each of 9), so the best
    fixed sentence is right on at most that many - 1 of the other images (its own left out): 1/9 at most."""
    frame = Frame(config.render.width, config.render.height)
    rubrics = []
    for plan in expand(config):
        if plan.family == "ava_orientation":
            item = make_item(plan.family, plan.params, [config.seed, plan.task_index, plan.item_index], plan.item_id,
                             frame, plan.split, plan.scene_id, plan.questions)
            rubrics.append(item.questions[0].gold)
    views = Counter(i.fact["value"] for r in rubrics for i in r.must_right if i.id == "view")
    n, most = len(rubrics), -(-len(rubrics) // 9)
    assert n == sum(t.count for t in config.tasks if t.family == "ava_orientation")
    assert len(views) == 9 and max(views.values()) == most
    best = family_baseline("ava_orientation", rubrics, max_candidates=len(rubrics))
    assert best.best_score == round((most - 1) / (n - 1), 4) <= 1 / 9


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


@pytest.mark.parametrize("text, expected", [
    ("The toy car is seen from the front left.", True),
    ("A red toy car, viewed from the front-left.", True),
    ("We get a front left view of a small car.", True),
    ("The toy car is seen from the left.", False),  # the side, not the diagonal
    ("A toy car seen from the rear left.", False),  # rear = back: back left is not front left
    ("The car faces the camera at an angle.", None),  # talks about the view without a readable side
    ("There is a toy car on a grey floor.", False),  # never says
])
def test_the_view_of_an_assembly_is_read(text, expected):
    fact = RubricItem(id="view", statement="The toy car is seen from the front left.", type="attribute",
                      fact={"attribute": "view", "object": "toy car", "value": "front left"})
    assert reference_judge(text, fact)[0] is expected


def test_ava_orientation_rubric_names_the_side_its_question_asks_for(sample):
    config_frame = Frame(640, 480)
    for index in range(3):
        item = make_item("ava_orientation", {}, [3, 0, index], f"ava_orientation-t0-{index:05d}", config_frame,
                         question_sets=("default", "describe"))
        view, rubric = item.questions[0].gold, item.questions[1].gold
        assert [i.fact for i in rubric.must_right if i.id == "view"] == [
            {"attribute": "view", "object": "toy car", "value": view}]
        assert view == item.difficulty["view"]


def test_spread_picks_evenly_with_both_ends():
    assert spread(5, 12) == [0, 1, 2, 3, 4]
    assert spread(100, 3) == [0, 50, 99]
