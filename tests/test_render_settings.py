"""The render settings chosen by bench/render_settings.py reach Cycles, and a config can turn them back.

`denoise_quality` picks OIDN's quality mode (fast also prefilters the albedo and normal
passes the fast way) and `light_tree` Cycles' light tree; the dysm3d preset sets
`denoise_quality: fast, light_tree: false`. Checked on Blender's own scene after a tiny
render, and on the pixels: the fast denoiser gives another image than the high one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stim3d.render.batch.config import load_config
from stim3d.render.settings import RenderSettings
from tests.helpers import mixed_scene

PRESET = Path(__file__).resolve().parents[1] / "stim3d" / "scenes" / "presets" / "dysm3d.yaml"


def render(tmp_path: Path, **fields):
    import bpy

    from stim3d.render.backends.blender import render_scene

    scene = mixed_scene()
    settings = RenderSettings(engine="cycles", width=scene.camera.width, height=scene.camera.height, samples=2,
                              denoise=True, **fields)
    out = render_scene(scene, settings, 5, tmp_path)
    cycles = bpy.context.scene.cycles
    return out.image, (cycles.denoising_quality, cycles.denoising_prefilter, cycles.use_light_tree)


@pytest.mark.bpy
def test_fast_denoising_and_no_light_tree_reach_cycles(tmp_path):
    fast, applied = render(tmp_path / "fast", denoise_quality="fast", light_tree=False)
    assert applied == ("FAST", "FAST", False)
    high, applied = render(tmp_path / "high")  # the defaults: Cycles' own
    assert applied == ("HIGH", "ACCURATE", True)
    assert not np.array_equal(fast, high)


def test_the_dysm3d_preset_uses_the_benchmarked_setting():
    render_settings = load_config(PRESET).render
    assert (render_settings.samples, render_settings.denoise, render_settings.denoise_quality,
            render_settings.light_tree) == (4, True, "fast", False)


def test_an_unknown_denoise_quality_is_refused():
    with pytest.raises(ValueError, match="denoise_quality"):
        RenderSettings(denoise_quality="ultra")  # type: ignore[arg-type]
