"""A drawn look (scenes/looks.py) -> Blender datablocks: world, ground material, sun, object materials.

One small function per stage or material type; render/backends/blender_scene.py
calls them when `scene.look` is set (studio never reaches this module). Nothing
here changes geometry or pass indices: the object-index pass, and so the masks, are
the same in every look.

- World: clevr keeps the stage's uniform grey world; photoreal loads one of the HDRIs
  that ship with Blender, found through `bpy.utils.system_resource('DATAFILES',
  path='studiolights/world')` (never a site-packages path), turned about +Z by the
  look's rotation, multiplied by the look's white balance (a Mix node, Multiply),
  at the look's exposure-normalised strength.
- Ground: render/backends/blender_grounds.py (planks, tiles, aggregate concrete,
  marble from Blender's Brick, Wave, Noise and Voronoi textures; re-exported here).
- Objects: a Principled BSDF with the palette colour as base colour and the drawn
  roughness, metallic and clear coat, and the base layer's Specular IOR Level when the
  object's params record one (`specular`: photoreal's matte materials since issue 44,
  scenes/looks.py MATTE_SPECULAR); varnished wood multiplies a wave-texture grain
  into the colour; brushed metal is anisotropic. When the look records them in the
  object's `params` (photoreal since its second round), `imperfections` adds rounded
  edges and a worn surface, both shading only: a Bevel node of radius `bevel_m` gives
  the shading normal of a rounded edge while the silhouette and the object-index pass
  stay the mesh's own, and a low-frequency Noise texture (features a fifth of the
  object across, pixels wide, so the denoiser keeps them) varies the roughness by
  +-`roughness_variation` and bumps the surface with strength `bump`. An item.json
  without these params (clevr, photoreal before its second round) renders as it did.

This module imports bpy; import it only where Blender is wanted.
"""

from __future__ import annotations

import math
from pathlib import Path

import bpy

from stim3d.scenes.look_basis import PMNDRS_PREFIX
from stim3d.scenes.model import EnvironmentLook, ObjectLook, PartLook, SceneObject, SunLook

from .blender_grounds import ground_material
from .blender_nodes import Nodes, finish_world, new_material, new_world, rgba

__all__ = ["ground_material", "object_material", "set_environment", "add_sun", "set_cycles", "environment_files"]

ENVIRONMENT_FOLDER = "studiolights/world"  # inside Blender's DATAFILES
PMNDRS_FOLDER = Path(__file__).resolve().parents[1] / "hdri"  # stim3d/render/hdri (scripts/fetch_hdris.sh)
COAT_ROUGHNESS = 0.05
BEVEL_SAMPLES = 4  # the Bevel node's rays per shading point (Blender's default)
WEAR_SCALE = 0.2  # the wear noise's feature size as a share of the object's size: pixels wide, not sub-pixel
ENVIRONMENT_MAP_RESOLUTION = 2048  # the world's importance map (set_environment says why this size)


class EnvironmentMissing(RuntimeError):
    """The HDRI a look names is neither one this Blender ships nor one of the vendored pmndrs maps."""


def environment_folder() -> Path:
    """The folder of the HDRIs that ship with this Blender."""
    return Path(bpy.utils.system_resource("DATAFILES", path=ENVIRONMENT_FOLDER))


def environment_files() -> dict[str, Path]:
    """HDRI name -> path: every .exr this Blender ships (by file stem), then the pmndrs maps that
    scripts/fetch_hdris.sh vendored into stim3d/render/hdri/ (named PMNDRS_PREFIX + stem, so a pmndrs `city` is
    never Blender's `city`)."""
    files = {path.stem: path for path in sorted(environment_folder().glob("*.exr"))}
    files.update({PMNDRS_PREFIX + path.stem: path for path in sorted(PMNDRS_FOLDER.glob("*.exr"))})
    return files


# -- objects ------------------------------------------------------------------------------------------------

def object_material(name: str, obj: SceneObject, look: ObjectLook | PartLook):
    """The object's library material with its palette colour as base colour, or an accent part's (`PartLook`) in
    its own colour; either's grain, bevel and wear scale with the whole object's size."""
    material, nodes, bsdf, _output = new_material(name)
    colour = rgba(look.srgb if isinstance(look, PartLook) else obj.color.srgb)
    bsdf.inputs["Roughness"].default_value = look.roughness
    bsdf.inputs["Metallic"].default_value = look.metallic
    bsdf.inputs["Coat Weight"].default_value = look.coat
    bsdf.inputs["Coat Roughness"].default_value = COAT_ROUGHNESS
    if look.material == "rubber":
        bsdf.inputs["Specular IOR Level"].default_value = 0.25
    if "specular" in look.params:  # photoreal's matte materials since issue 44 (an older item.json: the above)
        bsdf.inputs["Specular IOR Level"].default_value = look.params["specular"]
    if look.material == "brushed_metal":
        bsdf.inputs["Anisotropic"].default_value = 0.6
    if look.material == "varnished_wood":
        grain = nodes.add("ShaderNodeTexWave", Scale=1.0, Distortion=4.0, Detail=2.0)
        grain.wave_type = "RINGS"
        nodes.link(nodes.coords(max(0.01, obj.size * 0.15)), grain.inputs["Vector"])
        tone = nodes.add("ShaderNodeMapRange", From_Min=0.0, From_Max=1.0, To_Min=0.8, To_Max=1.0)
        nodes.link(grain.outputs["Factor"], tone.inputs["Value"])
        nodes.link(nodes.mix(1.0, colour, tone.outputs["Result"], "MULTIPLY"), bsdf.inputs["Base Color"])
    else:
        bsdf.inputs["Base Color"].default_value = colour
    imperfections(nodes, bsdf, obj, look)
    material.diffuse_color = colour
    material.roughness = look.roughness
    material.metallic = look.metallic
    return material


def imperfections(nodes: Nodes, bsdf, obj: SceneObject, look: ObjectLook | PartLook) -> None:
    """Rounded-edge shading and a worn surface from the look's params (none recorded: nothing added).

    The Bevel node's normal feeds the Bump node (and the coat), so edges catch light as
    if rounded by `bevel_m` while the mesh, its silhouette and its pass index are unchanged.
    """
    params = look.params
    if not params:
        return
    normal = None
    if params.get("bevel_m", 0.0) > 0:
        bevel = nodes.add("ShaderNodeBevel", Radius=params["bevel_m"])
        bevel.samples = BEVEL_SAMPLES
        normal = bevel.outputs["Normal"]
        nodes.link(normal, bsdf.inputs["Coat Normal"])
    wear = nodes.noise(nodes.coords(max(0.01, obj.size * WEAR_SCALE)), params.get("seed", 0.0), detail=2.0)
    variation = params.get("roughness_variation", 0.0)
    if variation > 0:
        rough = nodes.map_range(wear.outputs["Factor"], (0.3, 0.7),
                                (max(0.0, look.roughness - variation), min(1.0, look.roughness + variation)))
        nodes.link(rough, bsdf.inputs["Roughness"])
    if params.get("bump", 0.0) > 0:
        bump = nodes.add("ShaderNodeBump", Strength=params["bump"], Distance=obj.size * WEAR_SCALE * 0.1)
        nodes.link(wear.outputs["Factor"], bump.inputs["Height"])
        if normal is not None:
            nodes.link(normal, bump.inputs["Normal"])
        normal = bump.outputs["Normal"]
    if params.get("detail", 0.0) > 0:  # the material's own micro-detail (scenes/materials.py): a finer bump on top
        fine = nodes.noise(nodes.coords(max(0.002, params["detail_m"])), params.get("seed", 0.0) + 17.0, detail=4.0)
        detail = nodes.add("ShaderNodeBump", Strength=params["detail"], Distance=params["detail_m"] * 0.1)
        nodes.link(fine.outputs["Factor"], detail.inputs["Height"])
        if normal is not None:
            nodes.link(normal, detail.inputs["Normal"])
        normal = detail.outputs["Normal"]
    if params.get("sheen", 0.0) > 0:
        bsdf.inputs["Sheen Weight"].default_value = params["sheen"]
        bsdf.inputs["Sheen Roughness"].default_value = 0.5
    if normal is not None:
        nodes.link(normal, bsdf.inputs["Normal"])


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
    """World lit by the named HDRI, turned about +Z, times its white balance (when the look records one), at the
    look's strength. EnvironmentMissing if absent."""
    files = environment_files()
    if environment.name not in files:
        if environment.name.startswith(PMNDRS_PREFIX):
            raise EnvironmentMissing(f"HDRI {environment.name!r} is not in {PMNDRS_FOLDER}: the pmndrs maps are fetched "
                                     "by scripts/fetch_hdris.sh (scripts/install.sh runs it; a wheel carries them)")
        raise EnvironmentMissing(
            f"HDRI {environment.name!r} not in {environment_folder()} (found: {', '.join(files) or 'none'})")
    world, nodes, background = new_world("stim3d_environment")
    texture = nodes.add("ShaderNodeTexEnvironment")
    texture.image = bpy.data.images.load(str(files[environment.name]), check_existing=True)
    coord = nodes.add("ShaderNodeTexCoord")
    mapping = nodes.add("ShaderNodeMapping")
    mapping.inputs["Rotation"].default_value = (0.0, 0.0, math.radians(environment.rotation_deg))
    nodes.link(coord.outputs["Generated"], mapping.inputs["Vector"])
    nodes.link(mapping.outputs["Vector"], texture.inputs["Vector"])
    # The grey-card white balance (an older look without it: as shipped). Importance map: 'AUTOMATIC' builds it at a resolution that cost 15 s per render on this 2-core machine
    # (160x120, 1 sample: 18 s vs 1.2 s). At 256 px an HDRI whose own sun is a few texels (sunrise) was
    # sampled through 4x4-texel map cells, so most light samples aimed at the sun missed it: a 64-sample
    # render's ground noise was 11.4 levels RMS, 2.7 at 2048 px, two map cells per texel of the shipped
    # 1024-px HDRIs (bench/results/looks_noise.json; tests/test_looks_sampling.py).
    return finish_world(scene_bpy, world, nodes, background, texture.outputs["Color"], environment.white_balance,
                        environment.strength, ENVIRONMENT_MAP_RESOLUTION)


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
