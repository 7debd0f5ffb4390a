"""Photoreal (docs/looks.md "Photoreal"): grounds that read as materials, rounded edges and wear, recorded in
scene.look and drawn after everything photoreal drew before, without touching a mask."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stim3d.render.settings import RenderSettings
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.look_basis import ENVIRONMENT_IRRADIANCE, ENVIRONMENT_WHITE_BALANCE
from stim3d.scenes.looks import texture_scale
from stim3d.scenes.materials import BEVEL_SHARE, GROUND_MATERIALS, MATTE_SPECULAR, OBJECT_MATERIALS
from stim3d.scenes.model import GroundLook, Item, ObjectLook

ENTROPY = [2026, 0, 0]
MIN_PATTERN = 0.024  # relative std of the ground's luminance over a plain ground's: a pattern, not sampling noise
OLD_GROUNDS = ("wood_planks", "concrete", "ceramic_tiles", "fabric", "asphalt")  # drawn before the second round


def _item(look: str, entropy=ENTROPY):
    return make_item("shape_count", {}, list(entropy), "shape_count-x", Frame(64, 48), look=look)


def test_the_draw_is_deterministic_and_records_pattern_bevel_and_wear():
    first, again = _item("photoreal"), _item("photoreal")
    assert first.scene.look.model_dump_json() == again.scene.look.model_dump_json()
    sizes = {obj.id: obj.size for obj in first.scene.objects}
    for material in first.scene.look.objects:
        spec = OBJECT_MATERIALS[material.material]
        assert material.params["bevel_m"] == pytest.approx(BEVEL_SHARE * sizes[material.id], abs=1e-6)
        assert material.params["bump"] == spec.bump and material.params["roughness_variation"] == spec.roughness_variation
    seeds = {m.params["seed"] for m in first.scene.look.objects}
    assert len(seeds) == len(first.scene.objects)  # each object its own wear pattern


def test_every_ground_kind_is_drawn_with_its_pattern_parameters_in_range():
    drawn = {}
    for index in range(40):
        ground = _item("photoreal", [2026, 7, index]).scene.look.ground
        drawn[ground.material] = ground
        spec = GROUND_MATERIALS[ground.material]
        for name, (low, high) in spec.ranges:
            assert low <= ground.params[name] <= high, (ground.material, name)
        for name, values in spec.choices:
            assert ground.params[name] in values
        assert "seed" in ground.params
    assert set(drawn) == set(GROUND_MATERIALS)


def test_an_item_json_from_before_the_second_round_reads_and_writes_back_unchanged():
    """Older photoreal items name an older ground and carry no object params: they still load, byte for byte."""
    data = json.loads(_item("photoreal").to_json())
    data["scene"]["look"]["ground"].update(material="wood_planks", params={"seed": 3.5})
    for material in data["scene"]["look"]["objects"]:
        material["params"] = {}
    old = json.dumps(data)
    item = Item.model_validate_json(old)
    assert item.scene.look.ground.material == "wood_planks" and all(not m.params for m in item.scene.look.objects)
    assert json.loads(item.to_json()) == data


@pytest.mark.bpy
def test_older_grounds_and_objects_without_wear_still_build():
    """An item.json drawn before the second round (older ground names, no object params) renders as it did."""
    pytest.importorskip("bpy")
    from stim3d.render.backends import blender_looks

    item = _item("photoreal")
    for name in OLD_GROUNDS:
        ground = GroundLook(material=name, srgb=(0.5, 0.5, 0.5), roughness=0.5, scale_m=0.3, fade_start_m=5.0,
                            fade_end_m=9.0, params={"seed": 1.0})
        material = blender_looks.ground_material(ground)
        assert any(n.bl_idname == "ShaderNodeBsdfPrincipled" for n in material.node_tree.nodes), name
    plain = blender_looks.object_material("old", item.scene.objects[0],
                                          ObjectLook(id=1, material="plastic", roughness=0.4, metallic=0.0))
    assert not any(n.bl_idname == "ShaderNodeBevel" for n in plain.node_tree.nodes)
    worn = blender_looks.object_material("new", item.scene.objects[0], item.scene.look.of(item.scene.objects[0].id))
    bevel = next(n for n in worn.node_tree.nodes if n.bl_idname == "ShaderNodeBevel")
    assert bevel.outputs["Normal"].is_linked


def test_matte_materials_record_their_lower_specular_and_glossy_ones_none():
    """Issue 44: photoreal's matte materials record the base layer's specular in their params (older item.json
    do not, and keep Blender's); the glossy ones keep Blender's, so their gloss stays the visible finish."""
    for index in range(12):
        for material in _item("photoreal", [2026, 3, index]).scene.look.objects:
            spec = OBJECT_MATERIALS[material.material]
            if "matte" in spec.finishes:  # felt's is lower still: cloth has almost no base-layer reflection
                assert material.params["specular"] == spec.specular <= MATTE_SPECULAR < 0.25
            else:
                assert "specular" not in material.params


@pytest.mark.bpy
def test_the_backend_applies_a_recorded_specular_and_keeps_the_old_one_without():
    pytest.importorskip("bpy")
    from stim3d.render.backends import blender_looks

    obj = _item("photoreal").scene.objects[0]

    def level(params: dict[str, float]) -> float:
        look = ObjectLook(id=1, material="rubber", roughness=0.8, metallic=0.0, params=params)
        material = blender_looks.object_material("m", obj, look)
        return material.node_tree.nodes["Principled BSDF"].inputs["Specular IOR Level"].default_value

    assert level({}) == pytest.approx(0.25) and level({"specular": MATTE_SPECULAR}) == pytest.approx(MATTE_SPECULAR)


def _luminance(out) -> np.ndarray:
    return out.image[..., :3].astype(float) @ np.array([0.2126, 0.7152, 0.0722])


def _pattern(out, plain) -> float:
    """How much the ground's albedo varies: the std of its luminance over a plain ground's under the same light
    (the ratio cancels the light's falloff, the shadows and the HDRI's tint), on near-ground pixels (no object,
    lower half of the frame, lit)."""
    lower = np.arange(out.image.shape[0])[:, None] >= out.image.shape[0] // 2
    ground = (out.instance_map == 0) & lower & (_luminance(plain) > 10)
    assert ground.sum() > 200
    ratio = _luminance(out)[ground] / _luminance(plain)[ground]
    return float(ratio.std() / ratio.mean())


@pytest.mark.bpy
def test_each_ground_kind_renders_a_pattern_and_the_mask_stays_studios(tmp_path):
    """64x48 Cycles renders: every ground kind's albedo varies over the ground by more than MIN_PATTERN (a plain
    ground rendered with another Cycles seed stays below half that: sampling noise), and the object-index pass (the mask) equals studio's. The patterns are
    drawn twice their size so that a 64x48 frame resolves them (at their own size a board is about a pixel wide)."""
    pytest.importorskip("bpy")
    from stim3d.render.backends import blender

    studio = _item("studio")
    settings = RenderSettings(width=64, height=48, samples=16, threads=1)
    masks = {"studio": blender.render_scene(studio.scene, settings, studio.seed, tmp_path / "studio").instance_map}
    item = _item("photoreal")
    look = item.scene.look
    # Lit by Blender's courtyard map at the drawn exposure: a map whose own sun is a few texels (the drawn interior)
    # leaves more sampling noise on a plain ground at 16 samples than the pattern measure's noise bound below.
    drawn = look.environment
    look = look.model_copy(update={"environment": drawn.model_copy(update={
        "name": "courtyard", "white_balance": ENVIRONMENT_WHITE_BALANCE["courtyard"],
        "strength": drawn.strength * ENVIRONMENT_IRRADIANCE[drawn.name] / ENVIRONMENT_IRRADIANCE["courtyard"]})})
    renders = {}
    for name in [*GROUND_MATERIALS, "plain", "plain again"]:
        spec = GROUND_MATERIALS.get(name, GROUND_MATERIALS["aggregate_concrete"])
        ground = look.ground.model_copy(update={
            "material": name.split()[0], "srgb": spec.colors[0], "scale_m": spec.scale_m * texture_scale(item.scene) * 2,
            "params": {"seed": 5.0, **{k: lo for k, (lo, _hi) in spec.ranges}}})
        # The ground builders under photoreal's endless ground, as older items and the tabletop's floor use them
        # (tests/test_photoreal_settings.py renders the settings), through the pinhole (depth of field would soften
        # the far pattern and add its lens's noise), under plain plastic objects (a cloth's sheen or a fine bump
        # would add noise of their own to the light on the ground), before the camera's pipeline.
        plain = [o.model_copy(update={"material": "plastic", "roughness": 0.4, "metallic": 0.0, "coat": 0.0,
                                      "params": {}}) for o in look.objects]
        scene = item.scene.model_copy(update={"look": look.model_copy(update={"ground": ground, "lens": None, "pipeline": None, "setting": None,
                                                                               "objects": plain})})
        seed = item.seed + (name == "plain again")  # another Cycles seed: the same image up to sampling noise
        out = blender.render_scene(scene, settings.model_copy(update={"look": "photoreal"}), seed, tmp_path / name)
        masks[name], renders[name] = out.instance_map, out
    assert all(np.array_equal(masks["studio"], mask) for mask in masks.values())
    pattern = {name: _pattern(out, renders["plain"]) for name, out in renders.items()}
    assert pattern["plain again"] < MIN_PATTERN / 2, pattern  # the measure does not read noise as a pattern
    assert all(pattern[name] > MIN_PATTERN for name in GROUND_MATERIALS), pattern
