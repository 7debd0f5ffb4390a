"""A look's ground (scenes/model.py GroundLook) -> a Blender material built from shader nodes.

One builder per ground kind in GROUND_BUILDERS, all in object coordinates (metres,
divided by the look's `scale_m`), all from Blender's own Brick, Wave, Noise and
Voronoi textures. Photoreal draws three kinds built to read as real floors
(scenes/materials.py GROUND_MATERIALS) plus marble:

- `planks`: boards one `scale_m` wide in a staggered Brick layout; each board gets its
  own tone and its own grain phase from the brick's per-brick random value, the grain
  is a Wave texture stretched along the board, and the seams are dark, rough grooves.
- `tiles`: square tiles one `scale_m` across in a grid or running bond, each tile a
  shade apart, with recessed, matte grout lines of the drawn width and tone.
- `aggregate_concrete`: cloudy cement (a low-frequency Noise), exposed stones (Voronoi
  cells a few centimetres across whose tone each cell draws, in patches), and control
  joints between slabs.

Bumps only where a pixel resolves them (seams, grout, joints): a bump finer than a pixel
is shading noise that OpenImageDenoise cannot tell from sampling noise (bench/results/looks_NOTES.md,
"The grounds' sub-pixel bump"); the aggregate and the grain are in the colour and the
roughness. The kinds photoreal drew before (wood_planks, concrete, ceramic_tiles,
fabric, asphalt) keep their builders, so an older item.json renders as it did. Every
ground fades into a Transparent BSDF between the look's fade radii, so camera rays
there see the environment: the stage blends into the HDRI's own ground with no seam.

This module imports bpy; import it only where Blender is wanted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stim3d.scenes.model import GroundLook

from .blender_nodes import Nodes, new_material, rgba, scaled

BLACK, WHITE = (0.0, 0.0, 0.0, 1.0), (1.0, 1.0, 1.0, 1.0)


def _bump(nodes: Nodes, bsdf, height, strength: float, distance: float) -> None:
    bump = nodes.add("ShaderNodeBump", Strength=strength, Distance=distance)
    nodes.link(height, bump.inputs["Height"])
    nodes.link(bump.outputs["Normal"], bsdf.inputs["Normal"])


def _bricks(nodes: Nodes, vector, width: float, mortar: float, offset: float, smooth: float = 0.0):
    """A Brick texture giving each brick a random grey (Color: 0..1 per brick, 0 in the mortar) and Factor = mortar."""
    brick = nodes.add("ShaderNodeTexBrick", Scale=1.0, Mortar_Size=mortar, Mortar_Smooth=smooth, Brick_Width=width,
                      Row_Height=1.0, Bias=0.0, Color1=BLACK, Color2=WHITE, Mortar=BLACK)
    brick.offset, brick.offset_frequency = offset, 1
    nodes.link(vector, brick.inputs["Vector"])
    return brick


# -- the grounds photoreal draws ----------------------------------------------------------------------------------

def _planks(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    p, base = ground.params, rgba(ground.srgb)
    board = _bricks(nodes, nodes.coords(ground.scale_m), p.get("plank_length", 7.0), 0.03, p.get("stagger", 0.4), 0.4)
    tone = nodes.mix(board.outputs["Color"], scaled(base, 0.7), scaled(base, 1.25))
    grain = nodes.add("ShaderNodeTexWave", Scale=1.5, Distortion=6.0, Detail=3.0, Detail_Scale=1.5)
    grain.wave_type, grain.bands_direction = "BANDS", "Y"
    nodes.link(nodes.coords(ground.scale_m, (0.08, 1.0, 1.0), (p.get("seed", 0.0), 0.0, 0.0)), grain.inputs["Vector"])
    nodes.link(nodes.math("MULTIPLY", board.outputs["Color"], 40.0), grain.inputs["Phase Offset"])
    figure = nodes.math("MULTIPLY", grain.outputs["Factor"], 0.5)
    wood = nodes.mix(figure, tone, scaled(base, 0.55))
    seam = board.outputs["Factor"]
    nodes.link(nodes.mix(seam, wood, scaled(base, 0.25)), bsdf.inputs["Base Color"])
    rough = nodes.map_range(grain.outputs["Factor"], (0.0, 1.0), (ground.roughness - 0.05, ground.roughness + 0.12))
    nodes.link(nodes.math("MAXIMUM", rough, nodes.math("MULTIPLY", seam, 0.9)), bsdf.inputs["Roughness"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    _bump(nodes, bsdf, nodes.math("SUBTRACT", 1.0, seam), 0.5, 0.004 * ground.scale_m)


def _tiles(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    p, base = ground.params, rgba(ground.srgb)
    tile = _bricks(nodes, nodes.coords(ground.scale_m), 1.0, p.get("grout_width", 0.04), p.get("stagger", 0.0), 0.15)
    shade = nodes.mix(tile.outputs["Color"], scaled(base, 0.93), scaled(base, 1.06))
    mottle = nodes.noise(nodes.coords(ground.scale_m), p.get("seed", 0.0), scale=3.0, detail=3.0)
    glaze = nodes.mix(0.12, shade, mottle.outputs["Color"], "OVERLAY")
    grout = (p.get("grout_tone", 0.4),) * 3
    grout_mask = tile.outputs["Factor"]
    nodes.link(nodes.mix(grout_mask, glaze, rgba(grout)), bsdf.inputs["Base Color"])
    nodes.link(nodes.map_range(grout_mask, (0.0, 1.0), (ground.roughness, 0.9)), bsdf.inputs["Roughness"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    _bump(nodes, bsdf, nodes.math("SUBTRACT", 1.0, grout_mask), 0.6, 0.006 * ground.scale_m)


def _aggregate_concrete(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    p, base = ground.params, rgba(ground.srgb)
    seed = p.get("seed", 0.0)
    cloud = nodes.noise(nodes.coords(ground.scale_m), seed, scale=1.0, detail=6.0, roughness=0.6)
    blotch = nodes.map_range(cloud.outputs["Factor"], (0.3, 0.7), (0.0, 1.0))  # noise sits near 0.5: spread it
    cement = nodes.mix(blotch, scaled(base, 0.72), scaled(base, 1.2))
    stones = nodes.add("ShaderNodeTexVoronoi", Scale=1.0, Randomness=1.0)
    nodes.link(nodes.coords(p.get("stone_m", 0.03) * ground.scale_m / 0.6), stones.inputs["Vector"])
    core = nodes.map_range(stones.outputs["Distance"], (0.22, 0.4), (1.0, 0.0), smooth=True)
    patches = nodes.noise(nodes.coords(ground.scale_m * 0.5), seed + 17.0, scale=1.0, detail=2.0)
    density = nodes.map_range(patches.outputs["Factor"], (0.35, 0.65), (0.0, p.get("aggregate", 0.7)), smooth=True)
    stone_mask = nodes.math("MULTIPLY", core, density)
    stone_tone = nodes.map_range(stones.outputs["Color"], (0.0, 1.0), (0.55, 1.35))
    stone = nodes.mix(1.0, base, _grey(nodes, stone_tone), "MULTIPLY")
    colour = nodes.mix(stone_mask, cement, stone)
    joints = _bricks(nodes, nodes.coords(ground.scale_m * 2.5), 1.0, 0.006, 0.0, 0.3)
    nodes.link(nodes.mix(joints.outputs["Factor"], colour, scaled(base, 0.45)), bsdf.inputs["Base Color"])
    rough = nodes.map_range(cloud.outputs["Factor"], (0.0, 1.0), (ground.roughness - 0.08, min(1.0, ground.roughness + 0.05)))
    nodes.link(rough, bsdf.inputs["Roughness"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    _bump(nodes, bsdf, nodes.math("SUBTRACT", 1.0, joints.outputs["Factor"]), 0.5, 0.004 * ground.scale_m)


def _grey(nodes: Nodes, tone):
    """A grey RGB colour socket of value `tone` (a float socket)."""
    combine = nodes.add("ShaderNodeCombineColor")
    for channel in ("Red", "Green", "Blue"):
        nodes.link(tone, combine.inputs[channel])
    return combine.outputs["Color"]


def _marble(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    """Veins where a distorted noise crosses its mid value: thin, branching, irregular lines."""
    noise = nodes.noise(nodes.coords(ground.scale_m), ground.params.get("seed", 0.0), detail=6.0, roughness=0.55)
    noise.inputs["Distortion"].default_value = 1.5
    distance = nodes.math("ABSOLUTE", nodes.math("SUBTRACT", noise.outputs["Factor"], 0.5))
    vein_mask = nodes.map_range(distance, (0.0, 0.025), (0.8, 0.0))
    base = rgba(ground.srgb)
    vein = tuple(c * 0.45 if base[0] > 0.3 else min(1.0, c * 3.0) for c in base[:3]) + (1.0,)
    nodes.link(nodes.mix(vein_mask, base, vein), bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    bsdf.inputs["Coat Weight"].default_value = 0.3


def _plain(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    bsdf.inputs["Base Color"].default_value = rgba(ground.srgb)
    bsdf.inputs["Roughness"].default_value = ground.roughness


# -- the grounds photoreal drew before the second round (kept so older items render as they did) -------------------

def _wood_planks(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    base = rgba(ground.srgb)
    brick = nodes.add("ShaderNodeTexBrick", Scale=1.0, Mortar_Size=0.02, Brick_Width=6.0, Row_Height=1.0, Bias=0.0,
                      Color1=base, Color2=scaled(base, 0.7), Mortar=scaled(base, 0.35))
    brick.offset, brick.offset_frequency = 0.37, 1
    nodes.link(nodes.coords(ground.scale_m), brick.inputs["Vector"])
    grain = nodes.add("ShaderNodeTexWave", Scale=2.0, Distortion=6.0, Detail=3.0)
    grain.wave_type, grain.bands_direction = "BANDS", "Y"
    nodes.link(nodes.coords(ground.scale_m, (0.15, 1.0, 1.0)), grain.inputs["Vector"])
    nodes.link(nodes.mix(0.25, brick.outputs["Color"], grain.outputs["Color"], "MULTIPLY"), bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    _bump(nodes, bsdf, brick.outputs["Factor"], 0.4, 0.01 * ground.scale_m)


def _concrete(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    noise = nodes.noise(nodes.coords(ground.scale_m), ground.params.get("seed", 0.0), detail=8.0, roughness=0.6)
    base = rgba(ground.srgb)
    nodes.link(nodes.mix(noise.outputs["Factor"], scaled(base, 0.8), scaled(base, 1.15)), bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness


def _ceramic_tiles(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    base = rgba(ground.srgb)
    brick = nodes.add("ShaderNodeTexBrick", Scale=1.0, Mortar_Size=0.04, Brick_Width=1.0, Row_Height=1.0, Bias=0.0,
                      Color1=base, Color2=scaled(base, 0.94), Mortar=(0.35, 0.34, 0.32, 1.0))
    brick.offset = 0.0
    nodes.link(nodes.coords(ground.scale_m), brick.inputs["Vector"])
    nodes.link(brick.outputs["Color"], bsdf.inputs["Base Color"])
    nodes.link(nodes.map_range(brick.outputs["Factor"], (0.0, 1.0), (ground.roughness, 0.9)), bsdf.inputs["Roughness"])
    _bump(nodes, bsdf, brick.outputs["Factor"], 0.6, 0.01 * ground.scale_m)


def _fabric(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    warp = nodes.add("ShaderNodeTexWave", Scale=1.0, Distortion=0.5, Detail=1.0)
    weft = nodes.add("ShaderNodeTexWave", Scale=1.0, Distortion=0.5, Detail=1.0)
    warp.bands_direction, weft.bands_direction = "X", "Y"
    for wave in (warp, weft):
        nodes.link(nodes.coords(ground.scale_m), wave.inputs["Vector"])
    weave = nodes.mix(0.5, warp.outputs["Color"], weft.outputs["Color"], "MULTIPLY")
    nodes.link(nodes.mix(0.3, rgba(ground.srgb), weave, "MULTIPLY"), bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    bsdf.inputs["Sheen Weight"].default_value = 0.5
    _bump(nodes, bsdf, weave, 0.3, 0.2 * ground.scale_m)


def _asphalt(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    grains = nodes.add("ShaderNodeTexVoronoi", Scale=1.0, Randomness=1.0)
    nodes.link(nodes.coords(ground.scale_m), grains.inputs["Vector"])
    noise = nodes.add("ShaderNodeTexNoise", Scale=0.05, Detail=4.0)
    nodes.link(nodes.coords(ground.scale_m), noise.inputs["Vector"])
    speckled = nodes.mix(0.35, rgba(ground.srgb), grains.outputs["Color"], "OVERLAY")
    nodes.link(nodes.mix(0.3, speckled, noise.outputs["Color"], "MULTIPLY"), bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness


GROUND_BUILDERS: dict[str, Callable[[Nodes, Any, GroundLook], None]] = {
    "planks": _planks, "tiles": _tiles, "aggregate_concrete": _aggregate_concrete, "marble": _marble,
    "plain": _plain,
    "wood_planks": _wood_planks, "concrete": _concrete, "ceramic_tiles": _ceramic_tiles, "fabric": _fabric,
    "asphalt": _asphalt,
}


def _fade(nodes: Nodes, bsdf, output, ground: GroundLook, start_m: float, end_m: float) -> None:
    """Mix the ground into a Transparent BSDF with distance from the look's centre (smoothstep)."""
    coord = nodes.add("ShaderNodeTexCoord")
    offset = nodes.add("ShaderNodeVectorMath")
    offset.operation = "SUBTRACT"
    offset.inputs[1].default_value = (ground.centre[0], ground.centre[1], 0.0)
    nodes.link(coord.outputs["Object"], offset.inputs[0])
    length = nodes.add("ShaderNodeVectorMath")
    length.operation = "LENGTH"
    nodes.link(offset.outputs["Vector"], length.inputs[0])
    ramp = nodes.map_range(length.outputs["Value"], (start_m, end_m), (0.0, 1.0), smooth=True)
    mix = nodes.add("ShaderNodeMixShader")
    transparent = nodes.add("ShaderNodeBsdfTransparent")
    nodes.link(ramp, mix.inputs["Fac"])
    nodes.link(bsdf.outputs["BSDF"], mix.inputs[1])
    nodes.link(transparent.outputs["BSDF"], mix.inputs[2])
    nodes.link(mix.outputs["Shader"], output.inputs["Surface"])


def ground_material(ground: GroundLook):
    """The ground's material for a look (fading into the environment when the look has fade radii)."""
    material, nodes, bsdf, output = new_material("ground")
    GROUND_BUILDERS[ground.material](nodes, bsdf, ground)
    if ground.fade_start_m is not None and ground.fade_end_m is not None:
        _fade(nodes, bsdf, output, ground, ground.fade_start_m, ground.fade_end_m)
    material.diffuse_color = rgba(ground.srgb)
    material.roughness = ground.roughness
    return material


# -- the settings' surfaces (scenes/setting_room.py, scenes/setting_outdoor.py): table tops, walls, outdoor grounds ---------------------------

def _wood_top(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    """A table top of long glued boards (planks' pattern) under a thin varnish."""
    _planks(nodes, bsdf, ground)
    bsdf.inputs["Coat Weight"].default_value = 0.25
    bsdf.inputs["Coat Roughness"].default_value = 0.15


def _laminate(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    """A plain laminate desk top: a faint low-frequency mottle in colour and sheen."""
    base = rgba(ground.srgb)
    mottle = nodes.noise(nodes.coords(ground.scale_m), ground.params.get("seed", 0.0), detail=4.0, roughness=0.6)
    nodes.link(nodes.mix(mottle.outputs["Factor"], scaled(base, 0.95), scaled(base, 1.04)), bsdf.inputs["Base Color"])
    nodes.link(nodes.map_range(mottle.outputs["Factor"], (0.3, 0.7), (ground.roughness - 0.06, ground.roughness + 0.06)),
               bsdf.inputs["Roughness"])
    bsdf.inputs["Roughness"].default_value = ground.roughness


def _plaster(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    """A painted plaster wall: matte, with a faint cloudy unevenness of the paint."""
    base = rgba(ground.srgb)
    cloud = nodes.noise(nodes.coords(ground.scale_m), ground.params.get("seed", 0.0), detail=5.0, roughness=0.55)
    nodes.link(nodes.mix(cloud.outputs["Factor"], scaled(base, 0.94), scaled(base, 1.04)), bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    bsdf.inputs["Specular IOR Level"].default_value = 0.2


def _paving(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    """Square concrete or stone slabs one `scale_m` across, each its own shade and mottle, in darker joints."""
    p, base = ground.params, rgba(ground.srgb)
    slab = _bricks(nodes, nodes.coords(ground.scale_m), 1.0, p.get("joint_width", 0.025), p.get("stagger", 0.0), 0.2)
    shade = nodes.mix(slab.outputs["Color"], scaled(base, 0.85), scaled(base, 1.12))
    mottle = nodes.noise(nodes.coords(ground.scale_m * 0.3), p.get("seed", 0.0), detail=5.0, roughness=0.6)
    surface = nodes.mix(0.35, shade, mottle.outputs["Color"], "OVERLAY")
    joint = slab.outputs["Factor"]
    nodes.link(nodes.mix(joint, surface, rgba((p.get("grout_tone", 0.35),) * 3)), bsdf.inputs["Base Color"])
    nodes.link(nodes.map_range(joint, (0.0, 1.0), (ground.roughness, 0.95)), bsdf.inputs["Roughness"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    _bump(nodes, bsdf, nodes.math("SUBTRACT", 1.0, joint), 0.5, 0.01 * ground.scale_m)


def _gravel(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    """Loose stones one `scale_m` across (Voronoi cells), each its own tone, darker in the gaps between them."""
    base = rgba(ground.srgb)
    stones = nodes.add("ShaderNodeTexVoronoi", Scale=1.0, Randomness=1.0)
    nodes.link(nodes.coords(ground.scale_m), stones.inputs["Vector"])
    tone = nodes.map_range(stones.outputs["Color"], (0.0, 1.0), (0.6, 1.35))
    stone = nodes.mix(1.0, base, _grey(nodes, tone), "MULTIPLY")
    gap = nodes.map_range(stones.outputs["Distance"], (0.25, 0.55), (0.0, 1.0), smooth=True)
    patches = nodes.noise(nodes.coords(ground.scale_m * 20.0), ground.params.get("seed", 0.0), detail=2.0)
    colour = nodes.mix(nodes.map_range(patches.outputs["Factor"], (0.4, 0.6), (0.0, 0.3)), stone, scaled(base, 1.1))
    nodes.link(nodes.mix(nodes.math("MULTIPLY", gap, 0.7), colour, scaled(base, 0.3)), bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    _bump(nodes, bsdf, nodes.math("SUBTRACT", 1.0, gap), 0.35, 0.3 * ground.scale_m)


def _grass(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    """A lawn from above: blades as a fine streaky noise, clumps, and drier, yellower patches."""
    base = rgba(ground.srgb)
    seed = ground.params.get("seed", 0.0)
    blades = nodes.noise(nodes.coords(ground.scale_m, (1.0, 0.35, 1.0)), seed, detail=4.0, roughness=0.7)
    clumps = nodes.noise(nodes.coords(ground.scale_m * 3.0), seed + 5.0, detail=3.0, roughness=0.5)
    dry = nodes.noise(nodes.coords(ground.scale_m * 40.0), seed + 11.0, detail=2.0)
    spread = nodes.map_range(blades.outputs["Factor"], (0.3, 0.7), (0.0, 1.0))  # noise sits near 0.5: spread it
    leaf = nodes.mix(spread, scaled(base, 0.5), scaled(base, 1.5))
    shade = nodes.map_range(clumps.outputs["Factor"], (0.35, 0.65), (0.45, 0.0))  # hollows between clumps
    leaf = nodes.mix(shade, leaf, scaled(base, 0.3))
    straw = (base[0] * 1.9, base[1] * 1.3, base[2] * 0.8, 1.0)
    dryness = nodes.map_range(dry.outputs["Factor"], (0.45, 0.7), (0.0, 0.45), smooth=True)
    # Mowing stripes: bands a metre wide (20 scale_m) whose blades lean toward or away from the camera, lighter and
    # darker in turn, the way a mown lawn reads in a photograph.
    stripes = nodes.add("ShaderNodeTexWave", Scale=1.0, Distortion=0.3, Detail=1.0)
    stripes.wave_type, stripes.bands_direction, stripes.wave_profile = "BANDS", "X", "SIN"
    nodes.link(nodes.coords(ground.scale_m * 20.0), stripes.inputs["Vector"])
    lean = nodes.map_range(stripes.outputs["Factor"], (0.0, 1.0), (0.8, 1.2))
    lawn = nodes.mix(1.0, nodes.mix(dryness, leaf, straw), _grey(nodes, lean), "MULTIPLY")
    nodes.link(lawn, bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    bsdf.inputs["Specular IOR Level"].default_value = 0.3
    _bump(nodes, bsdf, blades.outputs["Factor"], 0.3, 0.5 * ground.scale_m)


def _hedge(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    """Clipped leaves: small Voronoi cells (leaves `scale_m` across) each a shade of the green, in shadowed hollows
    a few leaves across, with a strong bump; a little translucency-like sheen is left out (noise at 16 samples)."""
    base = rgba(ground.srgb)
    seed = ground.params.get("seed", 0.0)
    leaves = nodes.add("ShaderNodeTexVoronoi", Scale=1.0, Randomness=1.0)
    nodes.link(nodes.coords(ground.scale_m, offset=(seed, 0.0, 0.0)), leaves.inputs["Vector"])
    tone = nodes.map_range(leaves.outputs["Color"], (0.0, 1.0), (0.6, 1.5))
    leaf = nodes.mix(1.0, base, _grey(nodes, tone), "MULTIPLY")
    hollows = nodes.noise(nodes.coords(ground.scale_m * 6.0), seed, detail=3.0, roughness=0.6)
    depth = nodes.map_range(hollows.outputs["Factor"], (0.35, 0.6), (0.75, 0.0), smooth=True)
    nodes.link(nodes.mix(depth, leaf, scaled(base, 0.2)), bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    height = nodes.math("ADD", hollows.outputs["Factor"], nodes.math("MULTIPLY", leaves.outputs["Distance"], -0.3))
    _bump(nodes, bsdf, height, 0.6, 2.0 * ground.scale_m)


GROUND_BUILDERS.update({"hedge": _hedge, "wood_top": _wood_top, "laminate": _laminate, "plaster": _plaster, "paving": _paving,
                        "gravel": _gravel, "grass": _grass})
