"""A photoreal look's setting (scenes/model.py SettingLook, drawn by scenes/settings.py) -> Blender datablocks.

render/backends/blender_scene.py `build` calls `build_setting` instead of photoreal's
world and endless ground when the look has a setting. Every object made here keeps
pass_index 0, so the object-index pass, and with it every mask, is the scene objects' alone;
none is between the camera and an object (scenes/settings.py says why).

- `tabletop`: the table (a box whose top face is z = 0, built in the table's own frame: local
  +X along the camera's right, +Y away from the camera, so its boards run across the frame),
  four legs, the room's floor at z = -height, the far wall (with an opening where the room has
  a window, framed, through which the environment shows) and its skirting board, and maybe a
  side wall. A window adds a rectangular area light in its opening, aimed at the table's centre
  and invisible to the camera and in reflections (the opening shows the world behind it); the
  environment and the sun then give 1 - the window's share of the light (`light_gain`), so the
  total stays photoreal's target. The world is photoreal's HDRI.
- Walls, trims and hedges shadow the world's light and no lamp's (`link_lamps`, shadow linking): the
  room is open above and behind the camera, and walls that shadowed the sun lamp would take
  the light photoreal's exposure was set for; but a wall that let the world through was seen
  in a glossy table top as the world behind it (shadow rays crossed the wall, reflected rays
  did not), a ghost the sampler never settles. The sun lamp does not light the walls either
  (light linking).
- `outdoor`: the world is Blender's physical sky (Sky Texture, MULTIPLE_SCATTERING, its sun
  where the look's sun lamp is, no sun disc: the lamp is the sun), times its white balance; one
  ground plane at z = 0 whose material is the patch's (paving or gravel) inside the patch's
  rectangle and the lawn's outside it.
- `dome`: photoreal's HDRI world, and a ground plane at z = 0 whose base colour is that map
  (turned and white-balanced as the world is) looked up by the direction from the dome's
  centre to the shading point, times the setting's gain, clipped at DOME_MAX_ALBEDO: Kubric's
  projection, lit by the same world, so objects still cast their shadows on it.

This module imports bpy; import it only where Blender is wanted.
"""

from __future__ import annotations

import math

import bpy
import numpy as np

from stim3d.scenes.camera import look_at
from stim3d.scenes.colors import linear_to_srgb, srgb_to_linear
from stim3d.scenes.model import DrawnLook, EnvironmentLook, GroundLook, Scene, SettingLook, SkyLook
from stim3d.scenes.setting_stage import StagePart, setting_axes, stage_parts, window_light_location
from stim3d.scenes.settings import DOME_MAX_ALBEDO

from . import blender_looks
from .blender_grounds import GROUND_BUILDERS, ground_material
from .blender_nodes import finish_world, new_material, new_world, rgba

SKY_MAP_RESOLUTION = 512  # the sky's importance map: smooth, a small map samples it well
PAINT = (0.86, 0.85, 0.82)  # window frames and skirting boards
STEEL = (0.12, 0.12, 0.13)  # the legs under a non-wooden top: dark powder-coated steel


def _mesh(part: StagePart):
    mesh = bpy.data.meshes.new(part.name)
    loops = np.ascontiguousarray(part.quads.astype(np.int32).ravel())
    mesh.vertices.add(len(part.vertices))
    mesh.vertices.foreach_set("co", np.ascontiguousarray(part.vertices.astype(np.float32).ravel()))
    mesh.loops.add(loops.size)
    mesh.loops.foreach_set("vertex_index", loops)
    mesh.polygons.add(len(part.quads))
    mesh.polygons.foreach_set("loop_start", np.arange(0, loops.size, 4, dtype=np.int32))
    mesh.update(calc_edges=True)
    return mesh


def _place(scene_bpy, setting: SettingLook, part: StagePart, material):
    """The part as an object in the setting's frame (so its object coordinates, hence its patterns, follow the
    table: boards run across the frame); pass index 0."""
    mesh = _mesh(part)
    mesh.materials.append(material)
    obj = bpy.data.objects.new(part.name, mesh)
    origin, right, _away = setting_axes(setting)
    obj.location = tuple(origin)
    obj.rotation_mode = "XYZ"
    obj.rotation_euler = (0.0, 0.0, math.atan2(right[1], right[0]))
    obj.pass_index = 0
    obj["stim3d_surface"] = part.surface
    scene_bpy.collection.objects.link(obj)
    return obj


def _surface(name: str, surface: GroundLook):
    material = ground_material(surface)
    material.name = name
    return material


def _paint(name: str, srgb, roughness: float, metallic: float = 0.0):
    material, _nodes, bsdf, _output = new_material(name)
    bsdf.inputs["Base Color"].default_value = rgba(srgb)
    bsdf.inputs["Roughness"].default_value = roughness
    bsdf.inputs["Metallic"].default_value = metallic
    material.diffuse_color = rgba(srgb)
    return material


def _toned(srgb, tone: float) -> tuple[float, float, float]:
    """An sRGB colour whose linear value is scaled by `tone` (the wall's darkening, scenes/setting_room.py)."""
    darker = linear_to_srgb(np.asarray(srgb_to_linear(srgb)) * tone)
    return (float(darker[0]), float(darker[1]), float(darker[2]))


def _tabletop(scene_bpy, scene: Scene, setting: SettingLook) -> None:
    table, room = setting.table, setting.room
    assert table is not None and room is not None
    wall = _surface("room_wall", room.wall)
    materials = {"table_top": lambda: _surface("table_top", table.top),
                 "table_legs": lambda: (_surface("table_legs", table.top) if table.top.material == "wood_top"
                                        else _paint("table_legs", STEEL, 0.45, 0.8)),
                 "floor": lambda: _surface("room_floor", room.floor), "wall": lambda: wall,
                 "trim": lambda: _paint("room_paint", _toned(PAINT, room.wall.params.get("tone", 1.0)), 0.4)}
    for part in stage_parts(setting, scene.camera.location):
        _place(scene_bpy, setting, part, materials[part.surface]())
    location = window_light_location(setting)
    if location is not None and room.window is not None:
        data = bpy.data.lights.new("window", "AREA")
        data.shape = "RECTANGLE"
        data.size, data.size_y = room.window.width, room.window.height
        data.energy = room.window.power_w
        obj = bpy.data.objects.new("window", data)
        target = (setting.centre[0], setting.centre[1], 0.0)
        obj.rotation_mode = "QUATERNION"
        obj.rotation_quaternion = look_at(tuple(location), target, 8, 8).rotation_quat
        obj.location = tuple(location)
        obj.visible_camera = False  # the opening shows the world behind it
        # Nor in reflections: the light stands in for the window's diffuse light, about five times the radiance of
        # the view it replaces, and a varnished top reflected it as a blown-out blob; glossy surfaces reflect the
        # opening itself, the environment seen through it.
        obj.visible_glossy = False
        scene_bpy.collection.objects.link(obj)


def _ground_plane(scene_bpy, scene: Scene, setting: SettingLook, material) -> None:
    """The outdoor or dome ground in `material`, and an outdoor hedge in its own."""
    for part in stage_parts(setting, scene.camera.location):
        if part.surface == "ground":
            _place(scene_bpy, setting, part, material)
        elif setting.hedge is not None:
            _place(scene_bpy, setting, part, _surface("hedge", setting.hedge.surface))


WALLS = ("wall", "trim")  # the stage's surfaces the sun lamp does not light
SCREENS = (*WALLS, "hedge")  # the stage's surfaces that shadow the world's light but no lamp's


def _excluded(scene_bpy, name: str, surfaces: tuple[str, ...]):
    """A collection of the stage's objects wearing `surfaces`, each linked as EXCLUDE; None when there are none."""
    objects = [obj for obj in scene_bpy.collection.objects if obj.get("stim3d_surface") in surfaces]
    if not objects:
        return None
    collection = bpy.data.collections.new(name)
    for obj in objects:
        collection.objects.link(obj)
    for entry in collection.collection_objects:
        entry.light_linking.link_state = "EXCLUDE"
    return collection


def link_lamps(scene_bpy, sun) -> None:
    """Light and shadow linking of a setting's lamps (call once every lamp is built).

    Walls, trims and the hedge block no lamp (shadow linking) but do block the world: a
    wall that cast no shadow at all let the world behind it light the table, and a glossy
    top showed that light where its reflection saw the wall. Light samples crossed the wall
    and reflected rays stopped at it, so the image converged to depended on the sampler, and
    the stage's noise was 1.6 times what it is now (bench/results/looks_noise_walls.json;
    docs/looks_cost.md "Walls that shadow the world"). And the sun lamp lights
    everything but the walls and trims: the room has no ceiling and no wall on the camera's
    side, so a low sun from behind the camera lit the far wall face-on, up to twice the
    table's irradiance, and blew it out; indoors the sun reaches a table through a window,
    not the wall facing it."""
    screens = _excluded(scene_bpy, "lamps_unblocked", SCREENS)
    if screens is not None:
        for lamp in (obj for obj in scene_bpy.collection.objects if obj.type == "LIGHT"):
            lamp.light_linking.blocker_collection = screens
    walls = _excluded(scene_bpy, "sun_unlit", WALLS) if sun is not None else None
    if walls is not None:
        sun.light_linking.receiver_collection = walls


def set_sky(scene_bpy, sky: SkyLook):
    """The physical sky as the world: Sky Texture (MULTIPLE_SCATTERING, no sun disc) times its white balance."""
    world, nodes, background = new_world("stim3d_sky")
    texture = nodes.add("ShaderNodeTexSky")
    texture.sky_type = "MULTIPLE_SCATTERING"
    texture.sun_disc = False
    texture.sun_elevation = math.radians(sky.sun_elevation_deg)
    texture.sun_rotation = math.radians(90.0 - sky.sun_azimuth_deg)  # the sky's 0 is +Y, clockwise; ours +X, ccw
    texture.air_density = sky.air_density
    texture.aerosol_density = sky.aerosol_density
    texture.ozone_density = sky.ozone_density
    return finish_world(scene_bpy, world, nodes, background, texture.outputs["Color"], sky.white_balance, sky.strength,
                        SKY_MAP_RESOLUTION)


def _outdoor(scene_bpy, scene: Scene, setting: SettingLook) -> None:
    assert setting.sky is not None and setting.ground is not None
    set_sky(scene_bpy, setting.sky)
    if setting.surround is None or setting.patch is None:
        _ground_plane(scene_bpy, scene, setting, _surface("outdoor_ground", setting.ground))
        return
    material, nodes, bsdf, output = new_material("outdoor_ground")
    GROUND_BUILDERS[setting.ground.material](nodes, bsdf, setting.ground)
    lawn = nodes.add("ShaderNodeBsdfPrincipled")
    GROUND_BUILDERS[setting.surround.material](nodes, lawn, setting.surround)
    # Inside the patch (object coordinates: x across, y away from the camera) the patch's material, else the lawn's.
    coord = nodes.add("ShaderNodeTexCoord")
    split = nodes.add("ShaderNodeSeparateXYZ")
    nodes.link(coord.outputs["Object"], split.inputs["Vector"])
    half_x, half_y = setting.patch[0] / 2, setting.patch[1] / 2
    outside = nodes.math("MAXIMUM", nodes.math("SUBTRACT", nodes.math("ABSOLUTE", split.outputs["X"]), half_x),
                         nodes.math("SUBTRACT", nodes.math("ABSOLUTE", split.outputs["Y"]), half_y))
    edge = 0.01 * setting.unit
    factor = nodes.map_range(outside, (-edge, edge), (0.0, 1.0), smooth=True)
    mix = nodes.add("ShaderNodeMixShader")
    nodes.link(factor, mix.inputs["Fac"])
    nodes.link(bsdf.outputs["BSDF"], mix.inputs[1])
    nodes.link(lawn.outputs["BSDF"], mix.inputs[2])
    nodes.link(mix.outputs["Shader"], output.inputs["Surface"])
    material.diffuse_color = rgba(setting.ground.srgb)
    _ground_plane(scene_bpy, scene, setting, material)


def _dome_material(environment: EnvironmentLook, setting: SettingLook):
    """The ground's base colour: the world's map by the direction from the dome's centre (Kubric's projection)."""
    assert setting.dome_height is not None and setting.dome_gain is not None
    material, nodes, bsdf, _output = new_material("dome_ground")
    geometry = nodes.add("ShaderNodeNewGeometry")
    offset = nodes.add("ShaderNodeVectorMath")
    offset.operation = "SUBTRACT"
    offset.inputs[1].default_value = (setting.centre[0], setting.centre[1], setting.dome_height)
    nodes.link(geometry.outputs["Position"], offset.inputs[0])
    direction = nodes.add("ShaderNodeVectorMath")
    direction.operation = "NORMALIZE"
    nodes.link(offset.outputs["Vector"], direction.inputs[0])
    mapping = nodes.add("ShaderNodeMapping")
    mapping.inputs["Rotation"].default_value = (0.0, 0.0, math.radians(environment.rotation_deg))
    nodes.link(direction.outputs["Vector"], mapping.inputs["Vector"])
    texture = nodes.add("ShaderNodeTexEnvironment")
    texture.image = bpy.data.images.load(str(blender_looks.environment_files()[environment.name]),
                                         check_existing=True)
    nodes.link(mapping.outputs["Vector"], texture.inputs["Vector"])
    balance = environment.white_balance or (1.0, 1.0, 1.0)
    gain = tuple(setting.dome_gain * c for c in balance)
    colour = nodes.mix(1.0, texture.outputs["Color"], (*gain, 1.0), "MULTIPLY")
    clipped = nodes.add("ShaderNodeVectorMath")
    clipped.operation = "MINIMUM"
    clipped.inputs[1].default_value = (DOME_MAX_ALBEDO,) * 3
    nodes.link(colour, clipped.inputs[0])
    nodes.link(clipped.outputs["Vector"], bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = 0.9
    bsdf.inputs["Specular IOR Level"].default_value = 0.2
    material.diffuse_color = (0.4, 0.4, 0.4, 1.0)
    return material


def light_gain(look: DrawnLook) -> float:
    """What the environment's and the sun's strengths are multiplied by under the look's setting: 1 - the window's
    share when a room has a window (its light takes that share of photoreal's upward irradiance, so the total stays
    the target photoreal's exposure is set for; at 1 + share a light wooden top clipped), else 1."""
    setting = look.setting
    if setting is None or setting.room is None or setting.room.window is None:
        return 1.0
    return 1.0 - setting.room.window.share


def build_setting(scene_bpy, scene: Scene, look: DrawnLook) -> None:
    """The look's world and stage for its setting (the look's sun, lights and objects are built by the caller, the
    sun at `light_gain`)."""
    setting = look.setting
    assert setting is not None and look.environment is not None
    if setting.kind == "outdoor":
        _outdoor(scene_bpy, scene, setting)
        return
    environment = look.environment
    blender_looks.set_environment(
        scene_bpy, environment.model_copy(update={"strength": environment.strength * light_gain(look)}))
    if setting.kind == "tabletop":
        _tabletop(scene_bpy, scene, setting)
    else:
        _ground_plane(scene_bpy, scene, setting, _dome_material(look.environment, setting))
