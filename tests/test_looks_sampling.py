"""Photoreal's environment light is sampled finely enough to find an HDRI's own sun.

Several shipped HDRIs (sunrise, city, interior, night) hold a sun a few texels
wide with most of the map's energy. Cycles aims its light samples through the
world's importance map; a map coarser than the image spreads the sun over cells
mostly dark, most samples miss it, and a photoreal render stays noisy at any
affordable sample count (bench/results/looks_noise.json: 11.4 vs 2.7 levels RMS of
ground noise at 64 samples for a 256-px and a 2048-px map). The texture is looked
up with linear interpolation, so a texel's light spreads over two map cells per axis
only when the map has at least two cells per texel.
"""

from __future__ import annotations

import pytest


@pytest.mark.bpy
def test_the_world_importance_map_has_two_cells_per_hdri_texel():
    pytest.importorskip("bpy")
    import bpy

    from stim3d.render.backends import blender_looks
    from stim3d.scenes.model import EnvironmentLook

    for name in blender_looks.environment_files():
        bpy.ops.wm.read_factory_settings(use_empty=True)
        scene = bpy.context.scene
        world = blender_looks.set_environment(
            scene, EnvironmentLook(name=name, rotation_deg=0.0, strength=1.0, exposure_ev=0.0))
        image = next(n.image for n in world.node_tree.nodes if n.bl_idname == "ShaderNodeTexEnvironment")
        assert scene.world == world and world.cycles.sampling_method == "MANUAL"
        assert world.cycles.sample_map_resolution >= 2 * image.size[0], (name, image.size[:])
