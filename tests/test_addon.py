"""The Blender add-on (blender_addon/): install, generate, open, inspect, edit, re-validate, render and save.

Blender tests (marked bpy) drive the add-on's operators in Blender-as-a-module
(bpy 5.0.1, background mode), exactly as a script in Blender would, and check
what they promise against the ray cast and the renderer's own mask. Renders
are tiny (128x96, 4 samples). The install test builds the extension zip
*without* third-party wheels (no download in CI) and installs it into a Blender
whose Python already has them, in a child process with its own user folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Literal

import numpy as np
import pytest
from pydantic import Field

from stim3d.blender_addon.params import ParamsError, field_specs, params_from_values
from stim3d.blender_addon.validation import check_constraints, revalidate
from stim3d.blender_addon.visibility_colors import visibility_rgba
from stim3d.scenes.families import FAMILIES
from stim3d.scenes.families.base import FamilyParams, Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import Item
from stim3d.scenes.visibility import measure
from tests.helpers import obj, scene

WIDTH, HEIGHT = 128, 96
COUNT_PARAMS = {"n_shape_types": 2, "max_instances": 2}


# -- plain functions (no Blender) ---------------------------------------------------------------------

def test_every_family_gets_a_control_per_parameter_and_its_defaults_validate():
    for name, family in FAMILIES.items():
        specs = field_specs(family.params_model)
        assert [s.name for s in specs] == list(family.params_model.model_fields), name
        defaults = {s.name: s.default for s in specs}
        assert params_from_values(family.params_model, defaults, name) == family.params_model().model_dump(mode="json")


class _NewParams(FamilyParams):
    rows: int = Field(3, ge=2, le=9, description="grid rows")
    jitter: float = Field(0.1, ge=0.0, le=0.5)
    mirrored: bool = False
    axis: Literal["x", "y", "z"] = "y"
    size_range: tuple[float, float] = (0.5, 1.0)
    labels: list[str] = Field(default_factory=lambda: ["a", "b"])


def test_panel_controls_follow_a_family_model_they_have_never_seen():
    specs = {s.name: s for s in field_specs(_NewParams)}
    assert (specs["rows"].kind, specs["rows"].minimum, specs["rows"].maximum) == ("int", 2, 9)
    assert specs["jitter"].kind == "float" and specs["mirrored"].kind == "bool"
    assert (specs["axis"].kind, specs["axis"].items, specs["axis"].default) == ("enum", ("x", "y", "z"), "y")
    assert (specs["size_range"].kind, specs["size_range"].size) == ("float_vector", 2)
    assert specs["labels"].kind == "json" and json.loads(specs["labels"].default) == ["a", "b"]
    values = {"rows": 4, "jitter": 0.2, "mirrored": True, "axis": "z", "size_range": (0.6, 0.9), "labels": '["c"]'}
    assert params_from_values(_NewParams, values) == {
        "rows": 4, "jitter": 0.2, "mirrored": True, "axis": "z", "size_range": [0.6, 0.9], "labels": ["c"],
    }
    with pytest.raises(ParamsError, match=r"^new\.rows = 12: Input should be less than or equal to 9$"):
        params_from_values(_NewParams, {**values, "rows": 12}, "new")
    with pytest.raises(ParamsError, match=r"new\.labels = '\[c': not valid JSON"):
        params_from_values(_NewParams, {**values, "labels": "[c"}, "new")


@pytest.mark.parametrize("family", ["shape_count", "shape_color_count"])
def test_revalidating_an_untouched_item_changes_nothing(family):
    for seed in range(3):
        item = make_item(family, COUNT_PARAMS, [seed, 0, 0], "x", Frame(WIDTH, HEIGHT))
        validation = revalidate(item, item.scene)
        assert validation.item == item
        assert not validation.changes and not validation.violations
        assert [a.new_gold for a in validation.answers] == [q.gold for q in item.questions]


@pytest.mark.parametrize("family", ["ava_texture", "ava_ocr", "ava_object"])
def test_signs_and_library_objects_revalidate_and_their_golds_follow_the_scene(family):
    """The add-on re-validates AVA's texture, text and object items: untouched they change nothing and every gold is
    re-derived from the scene (the sign's face, the boxed library object); a library object pushed into another is
    reported, and a deleted target leaves its gold not re-checked rather than guessed."""
    item = make_item(family, {}, [2, 0, 0], "x", Frame(320, 240))
    validation = revalidate(item, item.scene)
    assert validation.item == item and not validation.changes and not validation.violations
    assert [a.new_gold for a in validation.answers] == [q.gold for q in item.questions]
    target, *others = item.scene.objects
    if family == "ava_object":
        assert others  # seed 2 has a distractor to push
        pushed = others[0].model_copy(update={"location": target.location})
        inside = item.scene.model_copy(update={"objects": [target, pushed, *others[1:]]})
        found = revalidate(item, inside).violations
        assert ("no_interpenetration", (target.id, pushed.id)) in [(v.constraint, v.object_ids) for v in found]
    gone = revalidate(item, item.scene.model_copy(update={"objects": others}))
    assert [a.new_gold for a in gone.answers] == [None] * len(item.questions)


def test_one_object_inside_another_counts_as_interpenetration():
    big, small = obj(1, "cube", 1.2, 0.0, 0.0), obj(2, "sphere", 0.4, 0.0, 0.0, z=0.6)
    item_like = make_item("shape_count", COUNT_PARAMS, [0, 0, 0], "x", Frame(160, 120))
    inside = scene([big, small])
    found = check_constraints(item_like, inside, measure(inside))
    assert [(v.constraint, v.object_ids) for v in found if v.constraint == "no_interpenetration"] == [("no_interpenetration", (1, 2))]
    apart = scene([big, obj(2, "sphere", 0.4, 2.0, 0.0)])
    assert not [v for v in check_constraints(item_like, apart, measure(apart)) if v.constraint == "no_interpenetration"]


def test_visibility_colours_set_hidden_objects_apart_from_visible_ones():
    floor = 0.8
    below = [visibility_rgba(v, floor) for v in (0.0, 0.3, 0.79)]
    above = [visibility_rgba(v, floor) for v in (0.8, 0.9, 1.0)]
    assert all(r > g for r, g, _, _ in below)  # red to orange: broken constraint
    assert all(g > 0.7 for _, g, _, _ in above)  # yellow to green: fine
    assert visibility_rgba(0.0, floor) != visibility_rgba(0.5, floor) != visibility_rgba(1.0, floor)


# -- Blender ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def addon():
    """The add-on registered in this process's Blender, as Blender would on enabling it."""
    bpy = pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")
    from stim3d import blender_addon

    blender_addon.register()
    yield bpy
    blender_addon.unregister()


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """A one-item Cycles batch rendered by `stim3d render`: the reference the add-on must reproduce."""
    folder = tmp_path_factory.mktemp("batch")
    config = folder / "batch.yaml"
    config.write_text(
        f"seed: 5\nrender: {{engine: cycles, width: {WIDTH}, height: {HEIGHT}, samples: 4, denoise: false}}\n"
        "tasks:\n  - family: shape_count\n    count: 1\n    params: {n_shape_types: 2, max_instances: 2}\n"
    )
    done = subprocess.run([sys.executable, "-m", "stim3d", "render", str(config), "--out", str(folder / "out"), "--quiet"],
                          capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    (item_folder,) = (folder / "out" / "items").iterdir()
    return item_folder


def _settings(bpy):
    return bpy.context.scene.stim3d


def _generate(bpy, family: str, seed: int, **params) -> Item:
    settings = _settings(bpy)
    settings.family, settings.seed, settings.width, settings.height = family, seed, WIDTH, HEIGHT
    group = getattr(settings, f"params_{family}")
    for name in group.bl_rna.properties.keys():  # other tests leave values behind: start from the defaults
        if name != "rna_type":
            group.property_unset(name)
    for name, value in params.items():
        setattr(group, name, value)
    assert bpy.ops.stim3d.generate() == {"FINISHED"}
    return Item.model_validate_json(settings.item_json)


def _objects(bpy) -> dict[int, object]:
    from stim3d.blender_addon.session import stim3d_objects

    return stim3d_objects(bpy.context.scene)


def _read_back(bpy, base):
    from stim3d.blender_addon.readback import read_scene

    bpy.context.view_layer.update()
    return read_scene(bpy.context.scene.objects, base, bpy.context.scene.camera)


def _mask(folder: Path) -> np.ndarray:
    from stim3d.render.batch.item_folder import load_mask

    return load_mask(folder)


@pytest.mark.bpy
def test_built_zip_installs_and_enables_through_blenders_extension_machinery(tmp_path):
    from stim3d.cli import main

    assert main(["addon", "build", "--out", str(tmp_path / "dist"), "--without-dependencies"]) == 0
    (zip_path,) = (tmp_path / "dist").glob("stim3d-*.zip")
    with zipfile.ZipFile(zip_path) as archive:
        names = set(archive.namelist())
        manifest = archive.read("blender_manifest.toml").decode()
    assert {"blender_manifest.toml", "__init__.py", "operators.py", "render_job.py"} <= names
    import tomllib

    wheels = tomllib.loads(manifest)["wheels"]
    assert wheels and all(w.removeprefix("./") in names for w in wheels)

    script = f"""
import json, os, bpy
result = bpy.ops.extensions.package_install_files(filepath={str(zip_path)!r}, repo="user_default", enable_on_install=True)
import stim3d.scenes
settings = bpy.context.scene.stim3d
settings.width, settings.height, settings.seed = {WIDTH}, {HEIGHT}, 1
generated = bpy.ops.stim3d.generate()
settings.save_dir, settings.samples, settings.denoise = {str(tmp_path / "saved")!r}, 4, False
saved = bpy.ops.stim3d.render_save()
print("RESULT " + json.dumps({{
    "install": sorted(result), "generate": sorted(generated), "save": sorted(saved),
    "scenes_still_there": os.path.isfile(stim3d.scenes.__file__),
    "enabled": "bl_ext.user_default.stim3d" in bpy.context.preferences.addons,
    "operators": [hasattr(bpy.types, name) for name in
                  ("STIM3D_OT_generate", "STIM3D_OT_open_item", "STIM3D_OT_revalidate", "STIM3D_OT_apply_look",
                   "STIM3D_OT_render_save")],
    "panel": hasattr(bpy.types, "STIM3D_PT_main"),
    "scenes_from": stim3d.scenes.__file__,
    "primitives": sum(1 for o in bpy.context.scene.objects if o.pass_index > 0),
}}))
"""
    user = tmp_path / "blender-user"
    # Without PYTHONPATH: a checkout on it (a worktree's set-up) would shadow the extension's own stim3d wheel.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240,
                          env={**env, "BLENDER_USER_RESOURCES": str(user)}, cwd=tmp_path)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(lines[-1].removeprefix("RESULT "))
    assert result["install"] == ["FINISHED"] and result["enabled"] and result["panel"]
    assert all(result["operators"])
    assert Path(result["scenes_from"]).is_relative_to(user)  # stim3d came from the extension's own wheel
    assert result["generate"] == ["FINISHED"] and result["primitives"] >= 1
    # Render and Save runs the batch renderer in a child Blender, which resets to factory settings: the
    # extension's wheels must survive that (Blender deletes the wheels of extensions it sees disabled).
    assert result["save"] == ["FINISHED"] and result["scenes_still_there"]
    assert (tmp_path / "saved" / "items" / "shape_count-seed1-edit1" / "mask.png").is_file()


@pytest.mark.bpy
def test_generate_builds_the_items_objects_transforms_and_materials(addon):
    from stim3d.scenes.colors import srgb_to_linear
    from stim3d.scenes.primitives import world_vertices

    bpy = addon
    item = _generate(bpy, "shape_color_count", 3, n_shape_types=3, min_visibility=0.7)
    expected = make_item("shape_color_count", {"n_shape_types": 3, "min_visibility": 0.7}, [3, 0, 0],
                         "shape_color_count-seed3", Frame(WIDTH, HEIGHT))
    assert item == expected  # the panel's params and seed give the batch's item
    bpy.context.view_layer.update()
    blender = _objects(bpy)
    assert sorted(blender) == [o.id for o in item.scene.objects]
    for model in item.scene.objects:
        blender_obj = blender[model.id]
        assert blender_obj.name == f"{model.id:03d}_{model.shape}_{model.color.name}"
        assert np.allclose(blender_obj.location, model.location, atol=1e-6)
        assert np.allclose(blender_obj.rotation_quaternion, model.rotation_quat, atol=1e-6)
        coords = np.array([blender_obj.matrix_world @ v.co for v in blender_obj.data.vertices])
        assert np.allclose(coords, world_vertices(model.shape, model.size, model.location, model.rotation_quat), atol=1e-5)
        base_color = blender_obj.active_material.node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value
        assert np.allclose(base_color[:3], srgb_to_linear(model.color.srgb), atol=1e-6)
    camera = bpy.context.scene.camera
    assert np.allclose(camera.location, item.scene.camera.location, atol=1e-6)
    assert (bpy.context.scene.render.resolution_x, bpy.context.scene.render.resolution_y) == (WIDTH, HEIGHT)
    assert sum(1 for o in bpy.context.scene.objects if o.type == "LIGHT") == len(item.scene.lights)
    assert _read_back(bpy, item.scene).scene == item.scene  # and it reads back exactly


@pytest.mark.bpy
def test_opened_batch_item_rebuilds_its_scene_and_rerenders_its_mask(addon, batch, tmp_path):
    bpy = addon
    batch_item = Item.model_validate_json((batch / "item.json").read_text())
    assert bpy.ops.stim3d.open_item(filepath=str(batch / "item.json")) == {"FINISHED"}
    settings = _settings(bpy)
    assert Item.model_validate_json(settings.item_json) == batch_item
    assert _read_back(bpy, batch_item.scene).scene == batch_item.scene
    assert (settings.engine, settings.samples, settings.denoise) == ("cycles", 4, False)  # the item's own settings
    group = settings.params_shape_count
    assert (settings.family, group.n_shape_types, group.max_instances) == ("shape_count", 2, 2)
    assert Path(settings.save_dir) == batch.parent.parent  # Save goes beside the batch's items by default

    settings.save_dir = str(tmp_path / "edits")
    assert bpy.ops.stim3d.render_save() == {"FINISHED"}
    folder = tmp_path / "edits" / "items" / f"{batch_item.item_id}-edit1"
    assert np.array_equal(_mask(folder), _mask(batch))  # the renderer's object-index pass, pixel for pixel
    saved = Item.model_validate_json((folder / "item.json").read_text())
    assert saved.scene == batch_item.scene and saved.ground_truth.objects == batch_item.ground_truth.objects
    assert [q.gold for q in saved.questions] == [q.gold for q in batch_item.questions]
    assert saved.provenance.edited_by_hand and not batch_item.provenance.edited_by_hand
    records = [json.loads(line) for line in (tmp_path / "edits" / "records.jsonl").read_text().splitlines()]
    assert [r["item_id"] for r in records] == [saved.item_id]


def _hideable(seed_range=range(40)) -> tuple[int, Item, int, int]:
    """(seed, item, target, occluder): the question asks about the target's shape; the occluder can cover it."""
    for seed in seed_range:
        item = make_item("shape_count", COUNT_PARAMS, [seed, 0, 0], f"shape_count-seed{seed}", Frame(WIDTH, HEIGHT))
        (question,) = item.questions
        queried = question.subject["shape"]
        targets = [o for o in item.scene.objects if o.shape == queried]
        occluders = [o for o in item.scene.objects if o.shape in ("cube", "sphere", "cylinder") and o.shape != queried]
        if targets and occluders:
            return seed, item, targets[0].id, occluders[0].id
    raise AssertionError("no seed gives an item with a target and an occluder")


@pytest.mark.bpy
def test_hiding_an_object_drops_its_visibility_keeps_the_count_and_save_keeps_it(addon, tmp_path):
    """A fully hidden object is still in the scene and still counted (the family's recount rule, docs/plugins.md):
    the gold holds, the add-on names the hidden object and reports the broken visibility floor."""
    bpy = addon
    seed, expected, target_id, occluder_id = _hideable()
    item = _generate(bpy, "shape_count", seed, **COUNT_PARAMS)
    assert item == expected
    target, occluder = item.scene.object(target_id), item.scene.object(occluder_id)
    old_gold = item.questions[0].gold

    # Put the occluder halfway between the camera and the target, large enough to cover it.
    camera = np.array(item.scene.camera.location)
    target_at = np.array(target.location)
    place = camera + 0.5 * (target_at - camera)
    scale = 2.5 * (target.size / np.linalg.norm(target_at - camera)) * np.linalg.norm(place - camera) / occluder.size
    blender_occluder = _objects(bpy)[occluder_id]
    blender_occluder.location = place
    blender_occluder.scale = (scale, scale, scale)

    assert bpy.ops.stim3d.revalidate() == {"FINISHED"}
    settings = _settings(bpy)
    edited = Item.model_validate_json(settings.edited_json)
    truth = {t.id: t for t in edited.ground_truth.objects}
    assert truth[target_id].visible_px == 0 and truth[target_id].visibility < item.ground_truth.of(target_id).visibility
    assert edited.questions[0].gold == old_gold
    row = next(r for r in settings.objects if r.object_id == target_id)
    assert row.visibility == 0 and "min_visibility" in row.flags
    assert any(line.level == "ERROR" and line.text.startswith("min_visibility") and f"object {target_id} " in line.text
               for line in settings.report)
    assert settings.questions[0].gold == str(old_gold)
    assert settings.questions[0].check == f"holds, hidden completely: {target_id}"
    assert edited.difficulty["violated_constraints"].split(",")[0] == "min_visibility"

    settings.save_dir, settings.samples, settings.denoise = str(tmp_path / "out"), 4, False
    assert bpy.ops.stim3d.render_save() == {"FINISHED"}
    folder = tmp_path / "out" / "items" / f"{item.item_id}-edit1"
    assert not np.any(_mask(folder) == target_id)  # the renderer agrees: the target is gone from the image
    assert np.any(_mask(folder) == occluder_id)

    # The saved folder loads back, validates, and keeps the edit.
    assert bpy.ops.stim3d.open_item(filepath=str(folder / "item.json")) == {"FINISHED"}
    saved = Item.model_validate_json(settings.item_json)
    assert saved.provenance.edited_by_hand and saved.questions[0].gold == old_gold
    assert saved.ground_truth.objects == [
        t.model_copy(update={"measured_srgb": s.measured_srgb, "contrast_de": s.contrast_de})
        for t, s in zip(measure(saved.scene).truths, saved.ground_truth.objects, strict=True)
    ]
    assert bpy.ops.stim3d.revalidate() == {"FINISHED"}
    assert settings.report[0].text == "no changes to the scene"
    record = json.loads((tmp_path / "out" / "records.jsonl").read_text().splitlines()[0])
    assert record["item_id"] == f"{item.item_id}-edit1" and record["answer"]["gold"] == old_gold


@pytest.mark.bpy
def test_duplicates_deletions_and_recolours_read_back_as_new_ids_and_colours(addon):
    from stim3d.blender_addon.readback import ReadbackError
    from stim3d.scenes.colors import PALETTE, srgb_to_linear

    bpy = addon
    item = _generate(bpy, "shape_color_count", 4, n_shape_types=3)
    first, second, third = item.scene.objects[:3]
    blender = _objects(bpy)
    copy = blender[first.id].copy()
    copy.data = blender[first.id].data.copy()
    copy.location = (first.location[0] + 0.3, first.location[1] - 0.4, first.location[2])
    bpy.context.scene.collection.objects.link(copy)
    bpy.data.objects.remove(blender[second.id])
    new_colour = next(name for name in PALETTE if name != third.color.name)
    material = blender[third.id].active_material
    material.node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value = (*srgb_to_linear(PALETTE[new_colour]), 1.0)

    readback = _read_back(bpy, item.scene)
    objects = {o.id: o for o in readback.scene.objects}
    new_id = max(o.id for o in item.scene.objects) + 1
    assert second.id not in objects and new_id in objects
    assert (objects[new_id].shape, objects[new_id].size, objects[new_id].color) == (first.shape, first.size, first.color)
    assert np.allclose(objects[new_id].location, copy.location, atol=1e-6)
    assert objects[first.id] == first  # the original is untouched
    assert objects[third.id].color.name == new_colour
    assert readback.sources[new_id] == first.id

    assert bpy.ops.stim3d.revalidate() == {"FINISHED"}
    lines = [line.text for line in _settings(bpy).report]
    assert any(line.startswith(f"deleted {second.id} ") for line in lines)
    assert any(line.startswith(f"added {new_id} ") and line.endswith(f"a copy of {first.id}") for line in lines)
    assert f"recoloured object {third.id}: {third.color.name} -> {new_colour}" in lines
    assert copy.pass_index == new_id and copy.name == f"{new_id:03d}_{first.shape}_{first.color.name}"

    blender = _objects(bpy)
    blender[first.id].scale = (1.0, 1.0, 2.0)
    with pytest.raises(ReadbackError, match="non-uniform scale"):
        _read_back(bpy, item.scene)
    with pytest.raises(RuntimeError, match=r"cannot read the scene back: .*non-uniform scale"):
        bpy.ops.stim3d.revalidate()


@pytest.mark.bpy
def test_colour_by_visibility_tints_objects_and_leaves_materials_alone(addon):
    bpy = addon
    item = _generate(bpy, "shape_count", 6, **COUNT_PARAMS)
    settings = _settings(bpy)
    settings.color_by_visibility = True
    floor = item.params["min_visibility"]
    for truth in item.ground_truth.objects:
        assert np.allclose(_objects(bpy)[truth.id].color, visibility_rgba(truth.visibility, floor), atol=1e-6)
    assert _read_back(bpy, item.scene).scene == item.scene  # true colours still read back
    settings.color_by_visibility = False


@pytest.mark.bpy
def test_a_bad_item_json_is_reported_in_one_line_and_changes_nothing(addon, tmp_path, batch):
    bpy = addon
    item = _generate(bpy, "shape_count", 2, **COUNT_PARAMS)
    settings = _settings(bpy)

    def snapshot():
        bpy.context.view_layer.update()
        return (settings.item_json, settings.family, sorted((o.name, tuple(round(v, 6) for v in o.matrix_world.translation))
                                           for o in bpy.context.scene.objects))

    before = snapshot()
    good = json.loads((batch / "item.json").read_text())
    wrong_shape = json.loads(json.dumps(good))
    wrong_shape["scene"]["objects"][0]["shape"] = "pyramid"
    lost_truth = json.loads(json.dumps(good))
    lost_truth["ground_truth"]["objects"] = lost_truth["ground_truth"]["objects"][1:]
    nan_camera = json.loads(json.dumps(good))
    nan_camera["scene"]["camera"]["location"][2] = float("nan")  # json.dumps writes NaN, which json.loads takes
    cases = {
        "truncated.json": ((batch / "item.json").read_text()[:200], "not JSON"),
        "records.json": (json.dumps({"item_id": "x", "question_id": "q"}), "not a stim3d item.json"),
        "shape.json": (json.dumps(wrong_shape), "scene.objects.0.shape = 'pyramid'"),
        "truth.json": (json.dumps(lost_truth), "ground_truth.objects has ids"),
        "nan.json": (json.dumps(nan_camera), "scene.camera.location.2 = nan: Input should be a finite number"),
    }
    for name, (text, reason) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(RuntimeError) as error:
            bpy.ops.stim3d.open_item(filepath=str(path))
        message = str(error.value).strip()
        assert reason in message and str(path) in message and "\n" not in message and "Traceback" not in message
        assert snapshot() == before, name
    with pytest.raises(RuntimeError, match="no such file"):
        bpy.ops.stim3d.open_item(filepath=str(tmp_path / "missing" / "item.json"))
    with pytest.raises(RuntimeError, match="not a file"):
        bpy.ops.stim3d.open_item(filepath=str(tmp_path))
    assert snapshot() == before and Item.model_validate_json(settings.item_json) == item


class _RecordingLayout:
    """Stands in for Blender's UI layout (background mode draws nothing): records what a panel asks for."""

    def __init__(self, calls: list):
        self.calls, self.alert = calls, False

    def prop(self, data, name, **_):
        self.calls.append(("prop", data, name))

    def operator(self, idname, **_):
        self.calls.append(("operator", idname))

    def template_list(self, list_type, list_id, data, name, active_data, active_name, **_):
        self.calls += [("list", list_type), ("prop", data, name), ("prop", active_data, active_name)]

    def label(self, **_):
        self.calls.append(("label",))

    def row(self, **_):
        return self

    def column(self, **_):
        return self

    def box(self):
        return self


@pytest.mark.bpy
def test_every_panel_control_is_wired_to_a_real_property_or_operator(addon):
    from types import SimpleNamespace

    from stim3d.blender_addon import panels

    bpy = addon
    _generate(bpy, "shape_count", 2, **COUNT_PARAMS)
    assert bpy.ops.stim3d.revalidate() == {"FINISHED"}
    calls: list = []
    for panel in (panels.STIM3D_PT_main, panels.STIM3D_PT_inspect, panels.STIM3D_PT_validate, panels.STIM3D_PT_save):
        panel.draw(SimpleNamespace(layout=_RecordingLayout(calls)), bpy.context)
    settings = _settings(bpy)
    for row in settings.objects:
        panels.STIM3D_UL_objects.draw_item(None, bpy.context, _RecordingLayout(calls), settings, row, 0, settings, "objects")
    props = [(data, name) for kind, *rest in calls if kind == "prop" for data, name in [rest]]
    assert all(name in data.bl_rna.properties for data, name in props), [n for d, n in props if n not in d.bl_rna.properties]
    drawn = {name for _, name in props}
    assert set(FAMILIES["shape_count"].params_model.model_fields) <= drawn  # the generated controls are drawn
    operators = {rest[0] for kind, *rest in calls if kind == "operator"}
    assert operators == {"stim3d.generate", "stim3d.open_item", "stim3d.revalidate", "stim3d.apply_look",
                         "stim3d.render_save"}
    assert all(getattr(bpy.ops.stim3d, op.split(".")[1]).poll() for op in operators)
    assert ("list", "STIM3D_UL_objects") in calls


def test_addon_build_rejects_an_unknown_platform_in_one_line(capsys):
    from stim3d.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["addon", "build", "--platform", "amiga"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'amiga'" in capsys.readouterr().err


def test_addon_build_without_the_package_index_fails_in_one_line(tmp_path, monkeypatch, capsys):
    from stim3d.cli import main

    monkeypatch.setenv("PIP_NO_INDEX", "1")  # as on a machine with no access to PyPI
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    assert main(["addon", "build", "--out", str(tmp_path), "--platform", "windows-x64"]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("stim3d: error: pip could not download the wheels for windows-x64") and "--without-dependencies" in error
    assert not list(tmp_path.glob("*.zip"))


def _built_own_wheel(out: Path) -> bytes:
    from stim3d.cli import main

    assert main(["addon", "build", "--out", str(out), "--without-dependencies"]) == 0
    (zip_path,) = out.glob("stim3d-*.zip")
    with zipfile.ZipFile(zip_path) as archive:
        (name,) = [n for n in archive.namelist() if n.startswith("wheels/stim3d-")]
        return archive.read(name)


def test_the_wheel_in_the_extension_zip_verifies_installs_and_imports(tmp_path):
    """stim3d's own wheel (packed by `wheel pack`) is a valid wheel: every file's RECORD hash and size match its
    bytes, pip installs it, and the installed copy imports and registers the built-in families from its own
    entry points. Built twice, it is the same bytes."""
    import base64
    import hashlib

    from stim3d.version import __version__

    data = _built_own_wheel(tmp_path / "a")
    assert data == _built_own_wheel(tmp_path / "b")
    wheel = tmp_path / f"stim3d-{__version__}-py3-none-any.whl"
    wheel.write_bytes(data)
    dist_info = f"stim3d-{__version__}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    rows = [line.rsplit(",", 2) for line in files[f"{dist_info}/RECORD"].decode().splitlines()]
    assert {path for path, _, _ in rows} == set(files)  # every file listed, nothing listed that is absent
    for path, digest, size in rows:
        if path == f"{dist_info}/RECORD":
            assert (digest, size) == ("", "")
            continue
        expected = base64.urlsafe_b64encode(hashlib.sha256(files[path]).digest()).rstrip(b"=").decode()
        assert (digest, int(size)) == (f"sha256={expected}", len(files[path])), path
    assert {"stim3d/scenes/presets/demo.yaml", "stim3d/scoring/schema/record.schema.json", f"{dist_info}/METADATA",
            f"{dist_info}/WHEEL", f"{dist_info}/entry_points.txt"} <= set(files)
    assert not [n for n in files if n.startswith("stim3d/blender_addon/")]  # the add-on sits at the zip's root

    target = tmp_path / "target"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                    "--no-index", "--target", str(target), str(wheel)], check=True, capture_output=True, timeout=120)
    check = (
        "import json, stim3d, stim3d.scenes.families, stim3d.scoring.records\n"
        "from importlib import metadata\n"
        "print(json.dumps({'file': stim3d.__file__, 'version': metadata.version('stim3d'),"
        " 'families': sorted(stim3d.families())}))"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(target)})
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(out["file"]).is_relative_to(target) and out["version"] == __version__
    assert {"shape_count", "spatial_grid", "ava_depth_absolute"} <= set(out["families"])


def test_addon_build_without_the_wheel_project_fails_in_one_line(tmp_path, monkeypatch, capsys):
    import importlib.util

    from stim3d.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "wheel" else real(name, *a))
    assert main(["addon", "build", "--out", str(tmp_path), "--without-dependencies"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and error[0] == ("stim3d: error: building the add-on needs the 'wheel' project, "
                                            "a dependency of stim3d: pip install wheel")
    assert not list(tmp_path.glob("*.zip"))


@pytest.mark.bpy
def test_composed_objects_read_back_moved_scaled_and_duplicated_with_their_source(addon):
    """An ava_object item opened in Blender: its composed library objects read back exactly when untouched, and a
    moved, uniformly scaled or duplicated one keeps its library source, so the re-validated gold is still its name."""
    from stim3d.blender_addon.validation import revalidate

    bpy = addon
    item = _generate(bpy, "ava_object", 2)
    assert _read_back(bpy, item.scene).scene == item.scene
    target = item.scene.objects[0]
    blender = _objects(bpy)
    blender[target.id].location.x += 0.25
    blender[target.id].scale = (1.2, 1.2, 1.2)
    copy = blender[target.id].copy()
    copy.location.y -= 1.5
    bpy.context.scene.collection.objects.link(copy)
    objects = {o.id: o for o in _read_back(bpy, item.scene).scene.objects}
    moved, duplicate = objects[target.id], objects[max(objects)]
    assert moved.source == target.source == duplicate.source and duplicate.id not in {o.id for o in item.scene.objects}
    assert moved.size == pytest.approx(target.size * 1.2, rel=1e-5)
    assert moved.location[0] == pytest.approx(target.location[0] + 0.25, abs=1e-5)
    edited = item.scene.model_copy(update={"objects": sorted(objects.values(), key=lambda o: o.id)})
    assert [a.new_gold for a in revalidate(item, edited).answers] == [q.gold for q in item.questions]


@pytest.mark.bpy
@pytest.mark.parametrize("family", ["ava_texture", "ava_ocr"])
def test_a_sign_opens_reads_back_unchanged_and_keeps_its_face_when_moved(addon, family):
    """A texture or text sign built in Blender (its paper-and-ink material) reads back as the same object: its colour
    is not re-read from the paper, and a moved sign keeps the texture or text its gold is re-derived from."""
    from stim3d.blender_addon.validation import revalidate

    bpy = addon
    item = _generate(bpy, family, 2)
    assert _read_back(bpy, item.scene).scene == item.scene
    sign = item.scene.objects[0]
    _objects(bpy)[sign.id].location.x += 0.1
    moved = _read_back(bpy, item.scene).scene
    assert moved.object(sign.id).attributes == sign.attributes and moved.object(sign.id).color == sign.color
    assert [a.new_gold for a in revalidate(item, moved).answers] == [q.gold for q in item.questions]
