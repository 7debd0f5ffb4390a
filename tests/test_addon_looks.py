"""The add-on switches an open item's look and re-renders it (docs/addon.md): Apply Look rebuilds the scene in the
look drawn from the item's own seed, Render and Save renders it, and the mask and golds stay the batch item's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from stim3d.scenes.looks import with_look
from stim3d.scenes.model import Item

pytestmark = pytest.mark.bpy

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def addon():
    bpy = pytest.importorskip("bpy", reason="the Blender Python module (bpy==5.0.1) is not installed")
    from stim3d import blender_addon

    blender_addon.register()
    yield bpy
    blender_addon.unregister()


@pytest.fixture(scope="module")
def batch_item(tmp_path_factory) -> Path:
    """A one-item studio batch rendered by `stim3d render` at 64x48, 4 samples."""
    folder = tmp_path_factory.mktemp("batch")
    (folder / "c.yaml").write_text("seed: 5\nrender: {engine: cycles, width: 64, height: 48, samples: 4, "
                                   "denoise: false}\ntasks:\n  - family: shape_color_count\n    count: 1\n")
    done = subprocess.run([sys.executable, "-m", "stim3d", "render", str(folder / "c.yaml"), "--out",
                           str(folder / "out"), "--quiet"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    (item_folder,) = (folder / "out" / "items").iterdir()
    return item_folder


def _pixels(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path))


def test_apply_look_rebuilds_the_open_item_in_the_look_drawn_from_its_seed(addon, batch_item):
    bpy = addon
    original = Item.model_validate_json((batch_item / "item.json").read_text())
    assert bpy.ops.stim3d.open_item(filepath=str(batch_item / "item.json")) == {"FINISHED"}
    settings = bpy.context.scene.stim3d
    assert settings.look == "studio"
    settings.look = "photoreal"
    assert bpy.ops.stim3d.apply_look() == {"FINISHED"}
    expected = with_look(original, "photoreal").scene.look  # what a batch of this item in photoreal draws
    edited = Item.model_validate_json(settings.edited_json)
    assert edited.scene.look == expected and edited.difficulty["look"] == "photoreal"
    world = bpy.context.scene.world
    textures = [n for n in world.node_tree.nodes if n.bl_idname == "ShaderNodeTexEnvironment"]
    from stim3d.render.backends.blender_looks import environment_files

    # the map the look names (a pmndrs map's file is its name without the prefix: pmndrs_night is night.exr there)
    assert [Path(t.image.filepath) for t in textures] == [environment_files()[expected.environment.name]]
    objects = {o.pass_index: o for o in bpy.context.scene.objects if o.type == "MESH" and o.pass_index > 0}
    for material in expected.objects:
        bsdf = objects[material.id].material_slots[0].material.node_tree.nodes["Principled BSDF"]
        assert bsdf.inputs["Metallic"].default_value == pytest.approx(material.metallic)
        assert bsdf.inputs["Roughness"].default_value == pytest.approx(material.roughness)
    # the look's materials read back as the objects' own finishes: an untouched scene has no changes
    assert bpy.ops.stim3d.revalidate() == {"FINISHED"}
    revalidated = Item.model_validate_json(settings.edited_json)
    assert revalidated.scene == edited.scene and revalidated.difficulty["look"] == "photoreal"


def test_render_and_save_rerenders_in_the_look_with_the_batch_items_mask_and_golds(addon, batch_item, tmp_path):
    bpy = addon
    original = Item.model_validate_json((batch_item / "item.json").read_text())
    assert bpy.ops.stim3d.open_item(filepath=str(batch_item / "item.json")) == {"FINISHED"}
    settings = bpy.context.scene.stim3d
    settings.save_dir = str(tmp_path / "edits")
    saved = {}
    for edit, look in enumerate(("clevr", "studio"), start=1):
        settings.look = look
        assert bpy.ops.stim3d.apply_look() == {"FINISHED"}
        assert bpy.ops.stim3d.render_save() == {"FINISHED"}
        folder = tmp_path / "edits" / "items" / f"{original.item_id}-edit{edit}"
        saved[look] = (folder, json.loads((folder / "item.json").read_text()))
    clevr_folder, clevr = saved["clevr"]
    assert clevr["scene"]["look"]["name"] == "clevr"
    assert clevr["scene"]["look"]["objects"] == \
        with_look(original, "clevr").scene.look.model_dump(mode="json")["objects"]
    assert "look" not in saved["studio"][1]["scene"] and "look" not in saved["studio"][1]["difficulty"]
    for folder, item in saved.values():  # Blender's object-index pass is the batch item's in every look
        assert np.array_equal(_pixels(folder / "mask.png"), _pixels(batch_item / "mask.png"))
        assert [q["gold"] for q in item["questions"]] == [q.gold for q in original.questions]
    assert not np.array_equal(_pixels(clevr_folder / "image.png"), _pixels(saved["studio"][0] / "image.png"))
    records = [json.loads(line) for line in (tmp_path / "edits" / "records.jsonl").read_text().splitlines()]
    assert {r["item_id"]: r["difficulty"].get("look", "studio") for r in records} == \
        {f"{original.item_id}-edit1": "clevr", f"{original.item_id}-edit2": "studio"}


def test_a_duplicate_made_under_a_look_gets_a_look_material(addon, batch_item):
    """A copy of an object has no material in the look's record; Apply Look (same look) draws the look again
    for the edited scene, so every object, the copy included, can be built and rendered."""
    bpy = addon
    assert bpy.ops.stim3d.open_item(filepath=str(batch_item / "item.json")) == {"FINISHED"}
    settings = bpy.context.scene.stim3d
    settings.look = "clevr"
    assert bpy.ops.stim3d.apply_look() == {"FINISHED"}
    before = Item.model_validate_json(settings.edited_json)
    first = before.scene.objects[0]
    blender = {o.pass_index: o for o in bpy.context.scene.objects if o.type == "MESH" and o.pass_index > 0}
    copy = blender[first.id].copy()
    copy.data = blender[first.id].data.copy()
    copy.location = (first.location[0] + 0.3, first.location[1] - 0.4, first.location[2])
    bpy.context.scene.collection.objects.link(copy)
    assert bpy.ops.stim3d.apply_look() == {"FINISHED"}
    after = Item.model_validate_json(settings.edited_json)
    new_id = max(o.id for o in before.scene.objects) + 1
    assert {m.id for m in after.scene.look.objects} == {o.id for o in after.scene.objects} and \
        new_id in {o.id for o in after.scene.objects}
    assert after.scene.look.objects[-1].material in ("rubber", "metal")
    mesh = {o.pass_index: o for o in bpy.context.scene.objects if o.type == "MESH" and o.pass_index > 0}[new_id]
    assert mesh.material_slots[0].material.node_tree.nodes["Principled BSDF"].inputs["Metallic"].default_value == \
        pytest.approx(after.scene.look.of(new_id).metallic)


def test_a_glossy_object_under_a_look_material_reads_back_glossy(addon):
    """Painted metal (a glossy look material) has roughness 0.3-0.4, nearer studio's matte 0.5 than its glossy
    0.15 for values above 0.325: read back by roughness alone, a glossy object at 0.38 would turn matte."""
    from stim3d.blender_addon.readback import read_scene
    from stim3d.render.backends import blender_scene
    from stim3d.scenes.families.base import Frame
    from stim3d.scenes.items import make_item

    bpy = addon
    item = with_look(make_item("shape_color_count", {}, [5, 0, 0], "g", Frame(64, 48)), "photoreal")
    glossy = item.scene.objects[0].model_copy(update={"finish": "glossy"})
    look = item.scene.look.model_copy(update={"objects": [
        m.model_copy(update={"material": "painted_metal", "roughness": 0.38, "metallic": 0.0, "coat": 1.0})
        if m.id == glossy.id else m for m in item.scene.look.objects]})
    scene = item.scene.model_copy(update={"objects": [glossy, *item.scene.objects[1:]], "look": look})
    for obj in list(bpy.context.scene.objects):
        bpy.data.objects.remove(obj, do_unlink=True)
    blender_scene.build(bpy.context.scene, scene)
    bpy.context.view_layer.update()
    readback = read_scene(bpy.context.scene.objects, scene, bpy.context.scene.camera)
    assert readback.scene.object(glossy.id).finish == "glossy"
    assert readback.scene == scene
