"""Photoreal's HDRIs: Blender's eight and the 18 CC0 pmndrs maps (scripts/fetch_hdris.sh); which settings use which.

Every map photoreal draws has its measured exposure, white balance and wall irradiance; a pmndrs map (512x256)
lights a tabletop or outdoor item but is never a dome's background; the renderer finds every map, and a map that
was not fetched is one clear error naming the script."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from stim3d.render.settings import RenderSettings
from stim3d.scenes.families.base import Frame
from stim3d.scenes.items import make_item
from stim3d.scenes.look_basis import ENVIRONMENT_IRRADIANCE, ENVIRONMENT_WHITE_BALANCE, ENVIRONMENTS, PMNDRS_PREFIX
from stim3d.scenes.model import EnvironmentLook
from stim3d.scenes.setting_room import WALL_IRRADIANCE
from stim3d.scenes.settings import SETTING_KINDS, kinds_for

VENDOR = Path(__file__).resolve().parents[1] / "stim3d" / "render" / "hdri"
PMNDRS = sorted(name for name in ENVIRONMENTS if name.startswith(PMNDRS_PREFIX))


def test_photoreal_draws_from_26_maps_each_measured():
    assert len(ENVIRONMENTS) == 26 and len(PMNDRS) == 18
    assert set(ENVIRONMENT_IRRADIANCE) == set(ENVIRONMENT_WHITE_BALANCE) == set(WALL_IRRADIANCE) == set(ENVIRONMENTS)
    assert all(value > 0 for value in ENVIRONMENT_IRRADIANCE.values())


def test_the_vendored_maps_are_the_pinned_package_with_its_licence():
    """scripts/fetch_hdris.sh (run by scripts/install.sh) wrote every map with its recorded sha256 and the CC0
    licence; the maps are 512x256 OpenEXR."""
    assert "CC0" in (VENDOR / "LICENSE").read_text() and "@pmndrs/assets@" in (VENDOR / "VERSION").read_text()
    sums = dict(line.split()[::-1] for line in (VENDOR / "SHA256SUMS").read_text().splitlines())
    assert sorted(PMNDRS_PREFIX + Path(name).stem for name in sums if name.endswith(".exr")) == PMNDRS
    for name, digest in sums.items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, name
    import OpenEXR

    with OpenEXR.File(str(VENDOR / "city.exr"), separate_channels=True) as exr:
        assert np.asarray(exr.parts[0].channels["R"].pixels).shape == (256, 512)


def test_a_pmndrs_map_is_never_a_domes_background():
    assert kinds_for(EnvironmentLook(name="courtyard", rotation_deg=0, strength=1, exposure_ev=0)) == SETTING_KINDS
    assert set(kinds_for(EnvironmentLook(name="pmndrs_lobby", rotation_deg=0, strength=1, exposure_ev=0))) == {
        "tabletop", "outdoor"}
    seen: dict[str, set[str]] = {"pmndrs": set(), "blender": set()}
    for index in range(60):
        look = make_item("shape_count", {}, [2026, 11, index], "x", Frame(64, 48), look="photoreal").scene.look
        seen["pmndrs" if look.environment.name.startswith(PMNDRS_PREFIX) else "blender"].add(look.setting.kind)
    assert seen["pmndrs"] == {"tabletop", "outdoor"} and seen["blender"] == set(SETTING_KINDS)


@pytest.mark.bpy
def test_the_renderer_finds_every_map_and_names_the_script_for_a_missing_one(tmp_path, monkeypatch):
    pytest.importorskip("bpy")
    from stim3d.render.backends import blender, blender_looks

    assert set(blender_looks.environment_files()) == set(ENVIRONMENTS)
    item = next(i for i in (make_item("shape_count", {}, [2026, 11, k], "x", Frame(64, 48), look="photoreal")
                            for k in range(40)) if i.scene.look.environment.name.startswith(PMNDRS_PREFIX))
    out = blender.render_scene(item.scene, RenderSettings(width=64, height=48, samples=2, threads=1,
                                                          look="photoreal"), item.seed, tmp_path / "r")
    assert out.linear is not None and np.isfinite(out.linear).all() and out.linear.mean() > 0.01
    monkeypatch.setattr(blender_looks, "PMNDRS_FOLDER", tmp_path / "absent")
    with pytest.raises(blender_looks.EnvironmentMissing, match="scripts/fetch_hdris.sh"):
        blender_looks.set_environment(None, item.scene.look.environment)
