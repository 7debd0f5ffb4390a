"""A drawn look (scenes/looks.py) -> Blender datablocks: world, ground material, sun, object materials.

One small function per stage or material type; render/backends/blender_scene.py
calls them when `scene.look` is set (studio never reaches this module). Nothing
here changes geometry or pass indices: the object-index pass, and so the masks, are
the same in every look.

- World: clevr keeps the stage's uniform grey world; photoreal loads one of the HDRIs
  that ship with Blender, found through `bpy.utils.system_resource('DATAFILES',
  path='studiolights/world')` (never a site-packages path), turned about +Z by the
  look's rotation, at the look's exposure-normalised strength.
- Ground: a Principled BSDF whose colour, roughness and bump come from Blender's
  own Brick, Noise, Voronoi and Wave textures in object coordinates (metres), one
  builder per material in GROUND_BUILDERS. Only joints a few pixels wide (planks,
  tiles, the fabric's weave) get a bump: a bump finer than a pixel (concrete's pores,
  asphalt's grains) is shading noise that OpenImageDenoise cannot tell from sampling
  noise, and it kept the DYSM scene below SSIM 0.99 at every sample count
  (docs/looks.md, "Why photoreal missed the bar"); those grains are in the colour,
  which the denoiser keeps through its albedo pass. Photoreal's ground fades into a
  Transparent BSDF between the look's fade radii, so camera rays there see the
  environment: the stage blends into the HDRI's own ground with no seam.
- Objects: a Principled BSDF with the palette colour as base colour and the drawn
  roughness, metallic and clear coat; varnished wood multiplies a wave-texture grain
  into the colour; brushed metal is anisotropic.

This module imports bpy; import it only where Blender is wanted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bpy

from stim3d.scenes.colors import srgb_to_linear
from stim3d.scenes.model import EnvironmentLook, GroundLook, ObjectLook, SceneObject, SunLook

ENVIRONMENT_FOLDER = "studiolights/world"  # inside Blender's DATAFILES
COAT_ROUGHNESS = 0.05
ENVIRONMENT_MAP_RESOLUTION = 2048  # the world's importance map (set_environment says why this size)


class EnvironmentMissing(RuntimeError):
    """The HDRI a look names is not among the ones this Blender ships."""


def environment_folder() -> Path:
    """The folder of the HDRIs that ship with this Blender."""
    return Path(bpy.utils.system_resource("DATAFILES", path=ENVIRONMENT_FOLDER))


def environment_files() -> dict[str, Path]:
    """HDRI name (file stem) -> path, for every .exr this Blender ships."""
    return {path.stem: path for path in sorted(environment_folder().glob("*.exr"))}


def _rgba(srgb) -> tuple[float, float, float, float]:
    r, g, b = (float(c) for c in srgb_to_linear(srgb))
    return (r, g, b, 1.0)


def _socket(sockets, identifier: str):
    """A node socket by identifier (ShaderNodeMix has several sockets named "A")."""
    return next(socket for socket in sockets if socket.identifier == identifier)


class Nodes:
    """A node tree with terse helpers: `add(kind, **inputs)` and `link(output, input)`."""

    def __init__(self, tree):
        self.tree = tree

    def add(self, kind: str, **inputs: Any):
        node = self.tree.nodes.new(kind)
        for name, value in inputs.items():
            node.inputs[name.replace("_", " ")].default_value = value
        return node

    def link(self, output, to_input) -> None:
        self.tree.links.new(output, to_input)

    def mix(self, factor, a, b, blend: str = "MIX"):
        """Colour mix of a and b (a socket or an RGBA tuple each); returns the result socket."""
        node = self.tree.nodes.new("ShaderNodeMix")
        node.data_type = "RGBA"
        node.blend_type = blend
        for identifier, value in (("Factor_Float", factor), ("A_Color", a), ("B_Color", b)):
            socket = _socket(node.inputs, identifier)
            if isinstance(value, (tuple, float, int)):
                socket.default_value = value
            else:
                self.link(value, socket)
        return _socket(node.outputs, "Result_Color")

    def coords(self, scale_m: float, stretch=(1.0, 1.0, 1.0)):
        """Object coordinates divided by `scale_m` (texture units per metre), optionally stretched per axis."""
        coord = self.add("ShaderNodeTexCoord")
        mapping = self.add("ShaderNodeMapping")
        mapping.inputs["Scale"].default_value = tuple(s / scale_m for s in stretch)
        self.link(coord.outputs["Object"], mapping.inputs["Vector"])
        return mapping.outputs["Vector"]


def _material(name: str):
    material = bpy.data.materials.new(name)
    if material.node_tree is None:  # Blender 4.x
        material.use_nodes = True
    tree = material.node_tree
    bsdf = next(node for node in tree.nodes if node.bl_idname == "ShaderNodeBsdfPrincipled")
    output = next(node for node in tree.nodes if node.bl_idname == "ShaderNodeOutputMaterial")
    return material, Nodes(tree), bsdf, output


def _bump(nodes: Nodes, bsdf, height, strength: float, distance: float) -> None:
    bump = nodes.add("ShaderNodeBump", Strength=strength, Distance=distance)
    nodes.link(height, bump.inputs["Height"])
    nodes.link(bump.outputs["Normal"], bsdf.inputs["Normal"])


# -- ground materials: colour, roughness and bump from Blender's textures, scale in metres ----------------------

def _wood_planks(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    base = _rgba(ground.srgb)
    darker = tuple(c * 0.7 for c in base[:3]) + (1.0,)
    brick = nodes.add("ShaderNodeTexBrick", Scale=1.0, Mortar_Size=0.02, Brick_Width=6.0, Row_Height=1.0, Bias=0.0)
    brick.offset, brick.offset_frequency = 0.37, 1
    brick.inputs["Color1"].default_value = base
    brick.inputs["Color2"].default_value = darker
    brick.inputs["Mortar"].default_value = tuple(c * 0.35 for c in base[:3]) + (1.0,)
    nodes.link(nodes.coords(ground.scale_m), brick.inputs["Vector"])
    grain = nodes.add("ShaderNodeTexWave", Scale=2.0, Distortion=6.0, Detail=3.0)
    grain.wave_type, grain.bands_direction = "BANDS", "Y"
    nodes.link(nodes.coords(ground.scale_m, (0.15, 1.0, 1.0)), grain.inputs["Vector"])
    color = nodes.mix(0.25, brick.outputs["Color"], grain.outputs["Color"], "MULTIPLY")
    nodes.link(color, bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    _bump(nodes, bsdf, brick.outputs["Factor"], 0.4, 0.01 * ground.scale_m)


def _concrete(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    noise = nodes.add("ShaderNodeTexNoise", Scale=1.0, Detail=8.0, Roughness=0.6)
    noise.noise_dimensions = "4D"  # W (the look's seed) picks the pattern; the socket exists only in 4D
    noise.inputs["W"].default_value = ground.params.get("seed", 0.0)
    nodes.link(nodes.coords(ground.scale_m), noise.inputs["Vector"])
    base = _rgba(ground.srgb)
    color = nodes.mix(noise.outputs["Factor"], tuple(c * 0.8 for c in base[:3]) + (1.0,),
                      tuple(min(1.0, c * 1.15) for c in base[:3]) + (1.0,))
    nodes.link(color, bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness


def _ceramic_tiles(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    base = _rgba(ground.srgb)
    brick = nodes.add("ShaderNodeTexBrick", Scale=1.0, Mortar_Size=0.04, Brick_Width=1.0, Row_Height=1.0, Bias=0.0)
    brick.offset = 0.0
    brick.inputs["Color1"].default_value = base
    brick.inputs["Color2"].default_value = tuple(c * 0.94 for c in base[:3]) + (1.0,)
    brick.inputs["Mortar"].default_value = (0.35, 0.34, 0.32, 1.0)
    nodes.link(nodes.coords(ground.scale_m), brick.inputs["Vector"])
    nodes.link(brick.outputs["Color"], bsdf.inputs["Base Color"])
    rough = nodes.add("ShaderNodeMapRange", From_Min=0.0, From_Max=1.0, To_Min=ground.roughness, To_Max=0.9)
    nodes.link(brick.outputs["Factor"], rough.inputs["Value"])
    nodes.link(rough.outputs["Result"], bsdf.inputs["Roughness"])
    _bump(nodes, bsdf, brick.outputs["Factor"], 0.6, 0.01 * ground.scale_m)


def _fabric(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    warp = nodes.add("ShaderNodeTexWave", Scale=1.0, Distortion=0.5, Detail=1.0)
    weft = nodes.add("ShaderNodeTexWave", Scale=1.0, Distortion=0.5, Detail=1.0)
    warp.bands_direction, weft.bands_direction = "X", "Y"
    for wave in (warp, weft):
        nodes.link(nodes.coords(ground.scale_m), wave.inputs["Vector"])
    weave = nodes.mix(0.5, warp.outputs["Color"], weft.outputs["Color"], "MULTIPLY")
    base = _rgba(ground.srgb)
    color = nodes.mix(0.3, base, weave, "MULTIPLY")
    nodes.link(color, bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    bsdf.inputs["Sheen Weight"].default_value = 0.5
    _bump(nodes, bsdf, weave, 0.3, 0.2 * ground.scale_m)


def _marble(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    """Veins where a distorted noise crosses its mid value: thin, branching, irregular lines."""
    noise = nodes.add("ShaderNodeTexNoise", Scale=1.0, Detail=6.0, Roughness=0.55, Distortion=1.5)
    noise.noise_dimensions = "4D"
    noise.inputs["W"].default_value = ground.params.get("seed", 0.0)
    nodes.link(nodes.coords(ground.scale_m), noise.inputs["Vector"])
    centred = nodes.add("ShaderNodeMath")
    centred.operation = "SUBTRACT"
    centred.inputs[1].default_value = 0.5
    nodes.link(noise.outputs["Factor"], centred.inputs[0])
    distance = nodes.add("ShaderNodeMath")
    distance.operation = "ABSOLUTE"
    nodes.link(centred.outputs["Value"], distance.inputs[0])
    vein_mask = nodes.add("ShaderNodeMapRange", From_Min=0.0, From_Max=0.025, To_Min=0.8, To_Max=0.0)
    nodes.link(distance.outputs["Value"], vein_mask.inputs["Value"])
    base = _rgba(ground.srgb)
    vein = tuple(c * 0.45 if base[0] > 0.3 else min(1.0, c * 3.0) for c in base[:3]) + (1.0,)
    color = nodes.mix(vein_mask.outputs["Result"], base, vein)
    nodes.link(color, bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness
    bsdf.inputs["Coat Weight"].default_value = 0.3


def _asphalt(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    grains = nodes.add("ShaderNodeTexVoronoi", Scale=1.0, Randomness=1.0)
    nodes.link(nodes.coords(ground.scale_m), grains.inputs["Vector"])
    noise = nodes.add("ShaderNodeTexNoise", Scale=0.05, Detail=4.0)
    nodes.link(nodes.coords(ground.scale_m), noise.inputs["Vector"])
    base = _rgba(ground.srgb)
    speckled = nodes.mix(0.35, base, grains.outputs["Color"], "OVERLAY")
    color = nodes.mix(0.3, speckled, noise.outputs["Color"], "MULTIPLY")
    nodes.link(color, bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = ground.roughness


def _plain(nodes: Nodes, bsdf, ground: GroundLook) -> None:
    bsdf.inputs["Base Color"].default_value = _rgba(ground.srgb)
    bsdf.inputs["Roughness"].default_value = ground.roughness


GROUND_BUILDERS: dict[str, Callable[[Nodes, Any, GroundLook], None]] = {
    "wood_planks": _wood_planks, "concrete": _concrete, "ceramic_tiles": _ceramic_tiles, "fabric": _fabric,
    "marble": _marble, "asphalt": _asphalt, "plain": _plain,
}


def _fade(nodes: Nodes, bsdf, output, ground: GroundLook) -> None:
    """Mix the ground into a Transparent BSDF with distance from the look's centre (smoothstep)."""
    coord = nodes.add("ShaderNodeTexCoord")
    offset = nodes.add("ShaderNodeVectorMath")
    offset.operation = "SUBTRACT"
    offset.inputs[1].default_value = (ground.centre[0], ground.centre[1], 0.0)
    nodes.link(coord.outputs["Object"], offset.inputs[0])
    length = nodes.add("ShaderNodeVectorMath")
    length.operation = "LENGTH"
    nodes.link(offset.outputs["Vector"], length.inputs[0])
    ramp = nodes.add("ShaderNodeMapRange", From_Min=ground.fade_start_m, From_Max=ground.fade_end_m,
                     To_Min=0.0, To_Max=1.0)
    ramp.interpolation_type = "SMOOTHSTEP"
    nodes.link(length.outputs["Value"], ramp.inputs["Value"])
    mix = nodes.add("ShaderNodeMixShader")
    transparent = nodes.add("ShaderNodeBsdfTransparent")
    nodes.link(ramp.outputs["Result"], mix.inputs["Fac"])
    nodes.link(bsdf.outputs["BSDF"], mix.inputs[1])
    nodes.link(transparent.outputs["BSDF"], mix.inputs[2])
    nodes.link(mix.outputs["Shader"], output.inputs["Surface"])


def ground_material(ground: GroundLook):
    """The ground's material for a look (fading into the environment when the look has fade radii)."""
    material, nodes, bsdf, output = _material("ground")
    GROUND_BUILDERS[ground.material](nodes, bsdf, ground)
    if ground.fade_start_m is not None and ground.fade_end_m is not None:
        _fade(nodes, bsdf, output, ground)
    material.diffuse_color = _rgba(ground.srgb)
    material.roughness = ground.roughness
    return material


# -- objects ------------------------------------------------------------------------------------------------

def object_material(name: str, obj: SceneObject, look: ObjectLook):
    """The object's library material with its palette colour as base colour."""
    material, nodes, bsdf, _output = _material(name)
    rgba = _rgba(obj.color.srgb)
    bsdf.inputs["Roughness"].default_value = look.roughness
    bsdf.inputs["Metallic"].default_value = look.metallic
    bsdf.inputs["Coat Weight"].default_value = look.coat
    bsdf.inputs["Coat Roughness"].default_value = COAT_ROUGHNESS
    if look.material == "rubber":
        bsdf.inputs["Specular IOR Level"].default_value = 0.25
    if look.material == "brushed_metal":
        bsdf.inputs["Anisotropic"].default_value = 0.6
    if look.material == "varnished_wood":
        grain = nodes.add("ShaderNodeTexWave", Scale=1.0, Distortion=4.0, Detail=2.0)
        grain.wave_type = "RINGS"
        nodes.link(nodes.coords(max(0.01, obj.size * 0.15)), grain.inputs["Vector"])
        tone = nodes.add("ShaderNodeMapRange", From_Min=0.0, From_Max=1.0, To_Min=0.8, To_Max=1.0)
        nodes.link(grain.outputs["Factor"], tone.inputs["Value"])
        color = nodes.mix(1.0, rgba, tone.outputs["Result"], "MULTIPLY")
        nodes.link(color, bsdf.inputs["Base Color"])
    else:
        bsdf.inputs["Base Color"].default_value = rgba
    material.diffuse_color = rgba
    material.roughness = look.roughness
    material.metallic = look.metallic
    return material


# -- Cycles settings of a look ---------------------------------------------------------------------------------

# Environment light and glossy or metallic materials make noise that a few samples plus OIDN leave as blotches;
# these trade unbiasedness nobody sees for much less of it, at lower cost (bench/looks_settings.py measures it).
LOOK_CYCLES = {"caustics_reflective": False, "caustics_refractive": False, "blur_glossy": 1.0,
               "sample_clamp_indirect": 10.0, "max_bounces": 6, "diffuse_bounces": 3, "glossy_bounces": 3,
               "transmission_bounces": 2, "transparent_max_bounces": 8}


def set_cycles(cycles) -> None:
    """Apply LOOK_CYCLES to a scene's Cycles settings (clevr and photoreal; studio keeps Cycles' defaults)."""
    for name, value in LOOK_CYCLES.items():
        setattr(cycles, name, value)


# -- world and sun --------------------------------------------------------------------------------------------

def set_environment(scene_bpy, environment: EnvironmentLook):
    """World lit by the named HDRI, turned about +Z, at the look's strength. EnvironmentMissing if absent."""
    files = environment_files()
    if environment.name not in files:
        raise EnvironmentMissing(
            f"HDRI {environment.name!r} not in {environment_folder()} (found: {', '.join(files) or 'none'})")
    world = bpy.data.worlds.new("stim3d_environment")
    if world.node_tree is None:  # Blender 4.x
        world.use_nodes = True
    nodes = Nodes(world.node_tree)
    background = next(node for node in world.node_tree.nodes if node.bl_idname == "ShaderNodeBackground")
    texture = nodes.add("ShaderNodeTexEnvironment")
    texture.image = bpy.data.images.load(str(files[environment.name]), check_existing=True)
    coord = nodes.add("ShaderNodeTexCoord")
    mapping = nodes.add("ShaderNodeMapping")
    mapping.inputs["Rotation"].default_value = (0.0, 0.0, math.radians(environment.rotation_deg))
    nodes.link(coord.outputs["Generated"], mapping.inputs["Vector"])
    nodes.link(mapping.outputs["Vector"], texture.inputs["Vector"])
    nodes.link(texture.outputs["Color"], background.inputs["Color"])
    background.inputs["Strength"].default_value = environment.strength
    # Importance map: 'AUTOMATIC' builds it at a resolution that cost 15 s per render on this 2-core machine
    # (160x120, 1 sample: 18 s vs 1.2 s). At 256 px an HDRI whose own sun is a few texels (sunrise) was
    # sampled through 4x4-texel map cells, so most light samples aimed at the sun missed it: a 64-sample
    # render's ground noise was 11.4 levels RMS, 2.7 at 2048 px, two map cells per texel of the shipped
    # 1024-px HDRIs (bench/results/looks_noise.json; tests/test_looks_sampling.py).
    world.cycles.sampling_method = "MANUAL"
    world.cycles.sample_map_resolution = ENVIRONMENT_MAP_RESOLUTION
    scene_bpy.world = world
    return world


def add_sun(scene_bpy, sun: SunLook):
    """A sun lamp shining from (azimuth, elevation): its local -Z turned onto the light's travel direction."""
    data = bpy.data.lights.new("sun", "SUN")
    data.energy = sun.strength
    data.angle = math.radians(sun.angle_deg)
    obj = bpy.data.objects.new("sun", data)
    obj.rotation_mode = "XYZ"
    obj.rotation_euler = (0.0, math.radians(90.0 - sun.elevation_deg), math.radians(sun.azimuth_deg))
    scene_bpy.collection.objects.link(obj)
    return obj
