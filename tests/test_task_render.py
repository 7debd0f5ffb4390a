"""A task's own sampling (`render:` inside a task, render/batch/config.py TaskRender) reaches Cycles.

One batch of several families gives each the cheapest setting measured for it
(scenes/presets/rubrics3d.yaml). Checked on the pixels: the task that samples more
renders a quieter background than its neighbour task at the batch's setting; and on
the batch: the keys of tasks without their own sampling stay what they were, and
`--samples` on the command line overrides every task.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from stim3d.cli import main
from stim3d.cli.rendering import with_overrides
from stim3d.render.batch.config import ConfigError, parse_config
from stim3d.render.batch.item_folder import load_item, load_mask
from stim3d.render.batch.keys import expected_keys
from stim3d.render.batch.plan import expand

TASK = {"family": "shape_count", "count": 1, "params": {"n_shape_types": 1, "max_instances": 1}}
BATCH = {"seed": 4, "render": {"engine": "cycles", "width": 64, "height": 48, "samples": 1, "denoise": False},
         "tasks": [TASK, {**TASK, "render": {"samples": 48}}]}


def test_a_task_samples_on_its_own_and_the_other_tasks_keep_their_keys():
    config = parse_config(BATCH)
    noisy, clean = expand(config)
    assert (noisy.settings(config.render).samples, clean.settings(config.render).samples) == (1, 48)
    assert clean.settings(config.render).denoise is False  # what the task leaves out stays the batch's
    alone = parse_config({**BATCH, "tasks": [TASK]})
    assert expected_keys(config)[noisy.item_id] == expected_keys(alone)[noisy.item_id]
    same = parse_config({**BATCH, "tasks": [TASK, TASK]})  # the second task without its own sampling
    assert expected_keys(config)[clean.item_id] != expected_keys(same)[clean.item_id]


def test_samples_on_the_command_line_override_every_task():
    config = parse_config({**BATCH, "tasks": [TASK, {**TASK, "render": {"samples": 48, "denoise_quality": "fast"}}]})
    args = argparse.Namespace(engine=None, samples=2, width=None, height=None, depth=False, normals=False, look=None,
                              device=None)
    overridden = with_overrides(config, args)
    plans = expand(overridden)
    assert [p.settings(overridden.render).samples for p in plans] == [2, 2]
    assert plans[1].settings(overridden.render).denoise_quality == "fast"  # not overridden: the task's own


@pytest.mark.parametrize(("render", "named"), [
    ({"width": 320}, "a task's or look's render sets only samples, denoise, denoise_quality, light_tree, adaptive_sampling"),
    ({"samples": 0}, "greater than or equal to 1"),
    ({"samples": True}, "valid integer"),
    ({"denoise_quality": "ultra"}, "'high', 'balanced' or 'fast'"),
])
def test_a_bad_task_render_is_one_line_naming_the_field(render, named):
    with pytest.raises(ConfigError) as caught:
        parse_config({**BATCH, "tasks": [{**TASK, "render": render}]}, "c.yaml")
    lines = str(caught.value).splitlines()
    assert len(lines) == 1 and lines[0].startswith("c.yaml: tasks[0].render") and named in lines[0], lines


LOOKS = {"photoreal": {"samples": 32, "denoise_quality": "balanced"}, "clevr": {"samples": 16}}


def test_a_look_samples_on_its_own_over_the_tasks_own_and_studio_items_keep_their_keys():
    tasks = [TASK, {**TASK, "look": "photoreal"}, {**TASK, "render": {"samples": 8, "denoise": True}, "look": "photoreal"},
             {**TASK, "variants": {"plain": {}, "clevr": {"look": "clevr"}}}]
    config = parse_config({**BATCH, "looks": LOOKS, "tasks": tasks})
    settings = [p.settings(config.render) for p in expand(config)]
    assert [s.samples for s in settings] == [1, 32, 32, 1, 16]  # studio, photoreal, photoreal over a task's, studio, clevr
    assert settings[1].denoise_quality == "balanced" == settings[2].denoise_quality
    assert (settings[1].denoise, settings[2].denoise) == (False, True)  # what the look leaves out stays the task's
    without = parse_config({**BATCH, "tasks": tasks})
    keys, old = expected_keys(config), expected_keys(without)
    studio = [p.item_id for p in expand(config) if p.look is None or p.look == "studio"]
    assert all(keys[i] == old[i] for i in studio) and len(studio) == 2
    assert sum(keys[i] != old[i] for i in keys) == 3


def test_a_task_samples_on_its_own_in_a_look_over_the_batchs_look_sampling():
    crowd = {**TASK, "looks": {"photoreal": {"samples": 64}}}
    config = parse_config({**BATCH, "looks": LOOKS, "tasks": [crowd, {**crowd, "look": "photoreal"}, TASK]})
    args = argparse.Namespace(engine=None, samples=None, width=None, height=None, depth=False, normals=False,
                              look="photoreal", device=None)
    photo = with_overrides(config, args)
    settings = [p.settings(photo.render) for p in expand(photo)]
    assert [s.samples for s in settings] == [64, 64, 32]  # the crowd's own photoreal sampling, the batch's elsewhere
    assert settings[0].denoise_quality == "balanced"  # what the task's look sampling leaves out is the batch look's
    studio = expand(config)[0].settings(config.render)
    assert studio.samples == 1  # in studio the task's photoreal sampling does nothing
    fewer = with_overrides(config, argparse.Namespace(**{**vars(args), "samples": 2}))
    assert {p.settings(fewer.render).samples for p in expand(fewer)} == {2}


def test_the_batch_look_takes_its_own_sampling_and_the_command_line_overrides_it():
    config = parse_config({**BATCH, "looks": LOOKS, "tasks": [TASK]})
    args = argparse.Namespace(engine=None, samples=None, width=None, height=None, depth=False, normals=False,
                              look="photoreal", device=None)
    photo = with_overrides(config, args)
    assert expand(photo)[0].settings(photo.render).samples == 32  # `--look photoreal` on a preset: its own sampling
    fewer = with_overrides(config, argparse.Namespace(**{**vars(args), "samples": 2}))
    settings = expand(fewer)[0].settings(fewer.render)
    assert (settings.samples, settings.denoise_quality) == (2, "balanced")  # --samples wins, the rest stays the look's


@pytest.mark.parametrize(("looks", "named"), [
    ({"photorealistic": {"samples": 8}}, "looks.photorealistic"),
    ({"photoreal": {"width": 320}}, "a task's or look's render sets only samples"),
    ({"clevr": {"samples": 0}}, "greater than or equal to 1"),
])
def test_a_bad_look_sampling_is_one_line_naming_the_look(looks, named):
    with pytest.raises(ConfigError) as caught:
        parse_config({**BATCH, "looks": looks}, "c.yaml")
    lines = str(caught.value).splitlines()
    assert len(lines) == 1 and lines[0].startswith("c.yaml: looks") and named in lines[0], lines


def background_noise(folder: Path) -> float:
    """Mean absolute difference between horizontal neighbours over the background (object index 0)."""
    image = np.asarray(Image.open(folder / "image.png").convert("RGB")).astype(float)
    mask = load_mask(folder)
    both = (mask[:, 1:] == 0) & (mask[:, :-1] == 0)
    return float(np.abs(image[:, 1:] - image[:, :-1]).sum(axis=2)[both].mean())


@pytest.mark.bpy
def test_the_task_that_samples_more_renders_a_quieter_image(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps(BATCH))
    out = tmp_path / "out"
    assert main(["render", str(tmp_path / "c.json"), "--out", str(out), "--quiet"]) == 0
    noisy, clean = (out / "items" / plan.item_id for plan in expand(parse_config(BATCH)))
    assert (load_item(noisy).provenance.samples, load_item(clean).provenance.samples) == (1, 48)
    assert background_noise(clean) < 0.5 * background_noise(noisy)
    assert main(["render", str(tmp_path / "c.json"), "--out", str(out), "--quiet"]) == 0  # resumes: nothing redone
    assert json.loads((out / "summary.json").read_text())["rendered"] == 0
