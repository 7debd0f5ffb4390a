"""Photoreal's white balance per environment (scenes/looks.py ENVIRONMENT_WHITE_BALANCE): the photographer's grey
card. Each shipped HDRI tints the light (courtyard and sunset blue from above, interior orange); a per-channel gain
measured from the map's upward irradiance makes a grey card facing up render neutral without changing exposure."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from stim3d.scenes import looks
from stim3d.scenes.colors import PALETTE, srgb_to_lab
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.model import GroundLook, Item

LUMA = np.array([0.2126, 0.7152, 0.0722])


def _item(look: str, entropy=(2026, 0, 0)) -> Item:
    return make_item("shape_count", {}, list(entropy), "shape_count-x", Frame(64, 48), look=look)


def _maps() -> dict[str, Path]:
    """Every HDRI photoreal draws (Blender's and the vendored pmndrs maps), or a skip when bpy or OpenEXR is
    missing."""
    pytest.importorskip("OpenEXR")
    pytest.importorskip("bpy")
    from bench.looks_exposure import environment_maps

    maps = environment_maps()
    if not maps:
        pytest.skip("no HDRIs found")
    return maps


@pytest.mark.bpy
def test_the_table_is_what_the_bench_measures_from_each_map():
    """Every gain equals E / E_c recomputed from the EXR, and the balanced irradiance keeps the luminance the
    exposure table normalises by (so balancing changes hue, never exposure)."""
    from bench.looks_exposure import upward_irradiance_rgb, white_balance

    maps = _maps()
    assert set(maps) == set(looks.ENVIRONMENT_WHITE_BALANCE)
    for name, path in maps.items():
        rgb = upward_irradiance_rgb(path)
        assert looks.ENVIRONMENT_WHITE_BALANCE[name] == pytest.approx(white_balance(rgb), abs=1e-4), name
        balanced = np.asarray(looks.ENVIRONMENT_WHITE_BALANCE[name]) * rgb
        assert np.ptp(balanced) == pytest.approx(0.0, abs=1e-3 * balanced.mean()), name  # a neutral grey card
        assert LUMA @ balanced == pytest.approx(looks.ENVIRONMENT_IRRADIANCE[name], rel=1e-3), name


def test_the_gain_is_looked_up_and_shifts_no_other_draw(monkeypatch):
    """The look records its environment's gain; with other gains in the table every other value is the same
    (a lookup draws nothing from the look's stream)."""
    drawn = [_item("photoreal", (2026, 3, index)).scene.look for index in range(12)]
    for look in drawn:
        assert look.environment.white_balance == looks.ENVIRONMENT_WHITE_BALANCE[look.environment.name]
    monkeypatch.setattr(looks, "ENVIRONMENT_WHITE_BALANCE", {name: (2.0, 1.0, 0.5) for name in looks.ENVIRONMENTS})
    for index, look in enumerate(drawn):
        other = _item("photoreal", (2026, 3, index)).scene.look
        assert other.environment.white_balance == (2.0, 1.0, 0.5)
        unbalanced = other.environment.model_copy(update={"white_balance": look.environment.white_balance})
        assert other.model_copy(update={"environment": unbalanced}) == look


def test_the_gain_round_trips_and_an_older_look_without_it_still_reads_unchanged():
    item = _item("photoreal")
    data = json.loads(item.to_json())
    assert data["scene"]["look"]["environment"]["white_balance"] == list(item.scene.look.environment.white_balance)
    assert Item.model_validate_json(item.to_json()) == item
    del data["scene"]["look"]["environment"]["white_balance"]  # an item drawn before the white balance existed
    old = Item.model_validate(data)
    assert old.scene.look.environment.white_balance is None
    assert json.loads(old.to_json()) == data  # written back without the key: its bytes are kept


def test_a_gain_must_be_three_positive_numbers():
    environment = _item("photoreal").scene.look.environment.model_dump()
    for bad in ([1.0, 1.0], [1.0, 0.0, 1.0], [1.0, -1.0, 1.0]):
        with pytest.raises(ValueError):
            type(_item("photoreal").scene.look.environment).model_validate({**environment, "white_balance": bad})


def _grey_chroma(tmp_path: Path, name: str, white_balance) -> float:
    """Median chroma (CIELAB a*, b* distance from neutral) of grey rubber objects on a grey ground, lit only by the
    map `name`, with or without its gain; 64x48, 4 samples."""
    from stim3d.render.backends import blender
    from stim3d.render.batch.produce import measured_colors
    from stim3d.render.settings import RenderSettings

    item = _item("photoreal")
    grey = item.scene.objects[0].color.model_copy(update={"name": "gray", "srgb": PALETTE["gray"]})
    objects = [obj.model_copy(update={"color": grey}) for obj in item.scene.objects]
    look = item.scene.look
    environment = look.environment.model_copy(update={"name": name, "white_balance": white_balance})
    materials = [m.model_copy(update={"material": "rubber", "metallic": 0.0, "coat": 0.0, "params": {}})
                 for m in look.objects]
    ground = GroundLook(material="plain", srgb=(0.5, 0.5, 0.5), roughness=0.8, scale_m=1.0)
    # No setting (issue 52): the map lights the scene (an outdoor setting's sky would replace it)
    look = look.model_copy(update={"environment": environment, "sun": None, "objects": materials, "ground": ground,
                                   "setting": None})
    scene = item.scene.model_copy(update={"objects": objects, "look": look})
    settings = RenderSettings(width=64, height=48, samples=4, threads=1, look="photoreal")
    out = blender.render_scene(scene, settings, item.seed, tmp_path / f"{name}-{white_balance is not None}")
    colours = [c for c in measured_colors(out.image, out.instance_map, [o.id for o in objects]).values() if c]
    assert colours
    lab = srgb_to_lab(np.asarray(colours, dtype=float))
    return float(np.median(np.hypot(lab[:, 1], lab[:, 2])))


@pytest.mark.bpy
def test_a_grey_object_under_the_most_tinted_map_renders_nearer_neutral_with_the_gain(tmp_path):
    pytest.importorskip("bpy")
    tint = {name: max(gain) / min(gain) for name, gain in looks.ENVIRONMENT_WHITE_BALANCE.items()}
    most = max(tint, key=tint.get)  # pmndrs_venice (a blue sky over water: gains 1.81, 0.99, 0.44)
    unbalanced = _grey_chroma(tmp_path, most, None)
    balanced = _grey_chroma(tmp_path, most, looks.ENVIRONMENT_WHITE_BALANCE[most])
    assert balanced < unbalanced / 2, (most, balanced, unbalanced)
