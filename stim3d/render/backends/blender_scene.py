"""Scene -> Blender datablocks, with the data API only (`bpy.data.*.new`, no selection-driven bpy.ops).

Geometry comes from `scenes.meshes.object_mesh` (a primitive's, a composed object's
or a mesh file's unit mesh), the same triangles the ray caster uses, scaled by `size` in the vertex array (object scale stays 1), then
rotated and placed by the object's transform: Blender's silhouette is exactly the
ray-cast silhouette. Smooth shading changes normals only.

Names: objects `f"{id:03d}_{shape}_{color}"` with `pass_index = id`; the ground is
"ground" with pass_index 0. Colours are defined in display sRGB and linearised for
Blender (the view transform is "Standard", see render/backends/blender.py).

This module imports bpy; import it only where Blender is wanted.
"""

from __future__ import annotations

import bpy
import numpy as np

from stim3d.render.backends import blender_looks, blender_textures
from stim3d.render.backends.blender_nodes import new_world
from stim3d.scenes.camera import blender_lens
from stim3d.scenes.colors import srgb_to_linear
from stim3d.scenes.lens import aperture_m
from stim3d.scenes.meshes import composed_mesh, mesh_key, object_mesh
from stim3d.scenes.model import (
    Camera,
    DrawnLook,
    LensLook,
    Light,
    Look,
    ObjectLook,
    Scene,
    SceneObject,
    Stage,
    StudioLook,
)
from stim3d.scenes.primitives import PrimitiveMesh

ROUGHNESS = {"matte": 0.5, "glossy": 0.15}
GROUND_ROUGHNESS = 0.8
CLIP_START = 0.01  # the least clip start (metres)
CLIP_END = 1000.0  # the least clip end (metres)
NEAR_SHARE = 0.5  # clip start: this share of the distance to the nearest geometry (ground or object)
FAR_MARGIN = 1.5  # clip end: this many times the distance to the farthest geometry


def clip_range(scene: Scene) -> tuple[float, float]:
    """Camera clip start and end scaled with the scene's distance from the camera.

    A fixed 0.01 m near clip with a camera 200-320 m away (form constancy) leaves a
    depth buffer too coarse for Workbench: coplanar-looking faces z-fight into
    speckles that differ between two identical groups. The near clip is half the
    distance to the nearest geometry (an object's bounding sphere, or the ground,
    which is no nearer than the camera's height), so nothing in the scene is ever
    clipped; the far clip takes the farthest object and ground corner with a margin.
    The same range goes to every engine.
    """
    location = np.asarray(scene.camera.location, dtype=float)
    half = scene.stage.ground_size / 2.0
    corners = np.array([(x, y, 0.0) for x in (-half, half) for y in (-half, half)])
    nearest = [abs(location[2])]
    farthest = [float(np.linalg.norm(corners - location, axis=1).max())]
    for obj in scene.objects:
        distance = float(np.linalg.norm(np.asarray(obj.location) - location))
        radius = 0.5 * float(np.linalg.norm(obj.dimensions))
        nearest.append(distance - radius)
        farthest.append(distance + radius)
    start = max(CLIP_START, NEAR_SHARE * min(nearest))
    return start, max(CLIP_END, FAR_MARGIN * max(farthest), 10.0 * start)


def object_name(obj: SceneObject) -> str:
    return f"{obj.id:03d}_{obj.shape}_{obj.color.name}"


def _rgba(srgb) -> tuple[float, float, float, float]:
    r, g, b = (float(c) for c in srgb_to_linear(srgb))
    return (r, g, b, 1.0)


_ARRAYS_CACHE_SIZE = 64
_arrays: dict[tuple[str, float], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}


def _object_arrays(obj: SceneObject) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`_mesh_arrays` of the object's mesh at its size, cached per (geometry, size)."""
    mesh = object_mesh(obj)  # first: a mesh file changed since compose is refused, never served from here
    key = (mesh_key(obj), float(obj.size))
    if key not in _arrays:
        if len(_arrays) >= _ARRAYS_CACHE_SIZE:
            _arrays.pop(next(iter(_arrays)))
        _arrays[key] = _mesh_arrays(mesh, float(obj.size))
    return _arrays[key]


def _mesh_arrays(prim: PrimitiveMesh, size: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flat arrays for foreach_set: vertex coords (float32), loop vertex ids, loop starts, smooth flags."""
    coords = np.ascontiguousarray((prim.vertices * size).astype(np.float32).ravel())
    loops = np.ascontiguousarray(prim.faces.astype(np.int32).ravel())
    starts = np.arange(0, loops.size, 3, dtype=np.int32)
    smooth = np.ascontiguousarray(prim.smooth.astype(bool))
    for array in (coords, loops, starts, smooth):
        array.setflags(write=False)
    return coords, loops, starts, smooth


def _new_mesh(name: str, coords: np.ndarray, loops: np.ndarray, starts: np.ndarray, smooth: np.ndarray):
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(coords.size // 3)
    mesh.vertices.foreach_set("co", coords)
    mesh.loops.add(loops.size)
    mesh.loops.foreach_set("vertex_index", loops)
    mesh.polygons.add(starts.size)
    mesh.polygons.foreach_set("loop_start", starts)  # loop_total follows from the starts (Blender >= 4.0)
    mesh.update(calc_edges=True)
    mesh.polygons.foreach_set("use_smooth", smooth)
    mesh.update()
    return mesh


def _principled_material(name: str, srgb, roughness: float):
    """A Principled BSDF material; in Blender 5.0 new materials come with that node tree already."""
    material = bpy.data.materials.new(name)
    if material.node_tree is None:  # Blender 4.x (the add-on's desktop Blenders): nodes are opt-in
        material.use_nodes = True
    rgba = _rgba(srgb)
    tree = material.node_tree
    bsdf = next(node for node in tree.nodes if node.bl_idname == "ShaderNodeBsdfPrincipled")
    bsdf.inputs["Base Color"].default_value = rgba
    bsdf.inputs["Roughness"].default_value = roughness
    material.diffuse_color = rgba  # what Workbench shows with color_type 'MATERIAL'
    material.roughness = roughness
    return material


def _link(scene_bpy, obj) -> None:
    scene_bpy.collection.objects.link(obj)


def _add_part_materials(mesh, name: str, obj: SceneObject, look: ObjectLook) -> None:
    """A library object's accent parts (look.parts, scenes/looks.py) in their own materials: one material slot per
    distinct part look, each of the part's faces pointed at it (meshes.composed_mesh gives every face's part, in the
    order the mesh was built). Shading only: the mesh, its silhouette and its pass index are unchanged."""
    if not look.parts or obj.source is None or obj.source.kind != "composed":
        return
    owner = composed_mesh(obj.source.parts)[1]
    slots: dict[str, int] = {}
    slot_of_part = np.zeros(len(obj.source.parts), dtype=np.int32)  # slot 0: the object's own material
    for index, part in enumerate(obj.source.parts):
        part_look = look.parts.get(part.name)
        if part_look is None:
            continue
        key = part_look.model_dump_json()
        if key not in slots:
            slots[key] = len(mesh.materials)
            mesh.materials.append(blender_looks.object_material(f"{name}.{part.name}", obj, part_look))
        slot_of_part[index] = slots[key]
    mesh.polygons.foreach_set("material_index", slot_of_part[owner])


def add_object(scene_bpy, obj: SceneObject, look: Look):
    """The object with its studio material, or with its drawn look's material."""
    name = object_name(obj)
    mesh = _new_mesh(name, *_object_arrays(obj))
    surface = blender_textures.surface_material(name, obj)  # a sign's texture or text, in every look
    if surface is not None:
        mesh.materials.append(surface)
    elif isinstance(look, StudioLook):
        mesh.materials.append(_principled_material(name, obj.color.srgb, ROUGHNESS[obj.finish]))
    else:
        mesh.materials.append(blender_looks.object_material(name, obj, look.of(obj.id)))
        _add_part_materials(mesh, name, obj, look.of(obj.id))
    blender_obj = bpy.data.objects.new(name, mesh)
    blender_obj.rotation_mode = "QUATERNION"
    blender_obj.rotation_quaternion = obj.rotation_quat
    blender_obj.location = obj.location
    blender_obj.pass_index = obj.id
    _link(scene_bpy, blender_obj)
    return blender_obj


def add_ground(scene_bpy, stage: Stage, look: Look):
    half = stage.ground_size / 2.0
    coords = np.array([[-half, -half, 0], [half, -half, 0], [half, half, 0], [-half, half, 0]], np.float32).ravel()
    mesh = _new_mesh(
        "ground", coords, np.arange(4, dtype=np.int32), np.zeros(1, np.int32), np.zeros(1, bool)
    )
    if isinstance(look, StudioLook):
        mesh.materials.append(_principled_material("ground", stage.ground_srgb, GROUND_ROUGHNESS))
    else:
        mesh.materials.append(blender_looks.ground_material(look.ground))
    ground = bpy.data.objects.new("ground", mesh)
    ground.pass_index = 0
    _link(scene_bpy, ground)
    return ground


def set_world(scene_bpy, stage: Stage, strength: float | None = None):
    """The uniform world light: the stage's colour at `strength` (default: the stage's own)."""
    world, _nodes, background = new_world("stim3d_world")
    background.inputs["Color"].default_value = _rgba(stage.world_srgb)
    background.inputs["Strength"].default_value = stage.world_strength if strength is None else strength
    world.color = _rgba(stage.world_srgb)[:3]
    scene_bpy.world = world
    return world


def add_light(scene_bpy, light: Light, index: int):
    name = f"light_{index:02d}"
    data = bpy.data.lights.new(name, "AREA")
    data.shape = "SQUARE"
    data.size = light.size
    data.energy = light.power_w
    data.color = _rgba(light.color_srgb)[:3]
    obj = bpy.data.objects.new(name, data)
    obj.rotation_mode = "QUATERNION"
    obj.rotation_quaternion = light.rotation_quat
    obj.location = light.location
    _link(scene_bpy, obj)
    return obj


def add_camera(scene_bpy, camera: Camera, clip: tuple[float, float] = (CLIP_START, CLIP_END),
               lens_look: LensLook | None = None):
    """The family's pinhole camera; with `lens_look` (photoreal) Cycles' depth of field too: focused at its
    distance, the aperture's diameter its focal length over f-number times the miniature's scale, in scene metres
    (scenes/lens.py), which Blender takes as an f-number of its own lens."""
    lens = blender_lens(camera)
    data = bpy.data.cameras.new("camera")
    data.type = "PERSP"
    data.sensor_fit = lens["sensor_fit"]
    data.sensor_width = lens["sensor_width"]
    data.lens = lens["lens"]
    data.shift_x = lens["shift_x"]
    data.shift_y = lens["shift_y"]
    data.clip_start, data.clip_end = clip
    if lens_look is not None:
        data.dof.use_dof = True
        data.dof.focus_distance = lens_look.focus_m
        data.dof.aperture_fstop = data.lens * 1e-3 / aperture_m(lens_look)
    obj = bpy.data.objects.new("camera", data)
    obj.rotation_mode = "QUATERNION"
    obj.rotation_quaternion = camera.rotation_quat
    obj.location = camera.location
    _link(scene_bpy, obj)
    scene_bpy.camera = obj
    render = scene_bpy.render
    render.resolution_x = camera.width
    render.resolution_y = camera.height
    render.resolution_percentage = 100
    render.pixel_aspect_x = 1.0
    render.pixel_aspect_y = 1.0
    return obj


def build(scene_bpy, scene: Scene) -> None:
    """Populate an empty Blender scene with `scene`'s camera, stage, lights and objects.

    Studio builds the stage's world and ground, the scene's lights and each object's
    plain material; a drawn look (`scene.look`, scenes/looks.py) replaces them with its
    world, ground material, lights, sun and object materials (render/backends/blender_looks.py),
    or, when photoreal drew a setting, with the setting's world and stage (render/backends/blender_settings.py).
    Meshes, transforms and pass indices are the same in every look; every object of a stage has pass index 0.
    """
    look = scene.look
    add_camera(scene_bpy, scene.camera, clip_range(scene), look.lens if isinstance(look, DrawnLook) else None)
    if isinstance(look, StudioLook):
        set_world(scene_bpy, scene.stage)
        add_ground(scene_bpy, scene.stage, look)
        lights, sun = scene.lights, None
    elif look.setting is not None:  # photoreal in a place: its world and stage (render/backends/blender_settings.py)
        from stim3d.render.backends import blender_settings

        blender_settings.build_setting(scene_bpy, scene, look)
        lights, sun = look.lights, look.sun
        if sun is not None and blender_settings.light_gain(look) != 1.0:  # a window takes its share of the light
            sun = sun.model_copy(update={"strength": sun.strength * blender_settings.light_gain(look)})
    else:
        if look.environment is not None:
            blender_looks.set_environment(scene_bpy, look.environment)
        else:  # clevr, whose world a correction scales (DrawnLook.world_strength)
            set_world(scene_bpy, scene.stage, look.world_strength)
        add_ground(scene_bpy, scene.stage, look)
        lights, sun = look.lights, look.sun
    for index, light in enumerate(lights):
        add_light(scene_bpy, light, index)
    sun_obj = blender_looks.add_sun(scene_bpy, sun) if sun is not None else None
    if isinstance(look, DrawnLook) and look.setting is not None:
        from stim3d.render.backends import blender_settings

        blender_settings.link_lamps(scene_bpy, sun_obj)
    for obj in scene.objects:
        add_object(scene_bpy, obj, look)
