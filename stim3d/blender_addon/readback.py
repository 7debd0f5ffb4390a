"""Blender objects -> the scene model: what a user changed by hand in Blender, read back as stim3d data.

The Blender add-on builds a scene with `render.backends.blender_scene.build` and lets the
user move, rotate, scale, delete, duplicate and recolour objects. This module
reads the result back. It only reads: a pure function of the bpy objects and
the scene they were built from (`base`), so the same readback serves every
operator and the tests.

What identifies an object, and why:
- its *shape* and *base size* come from its mesh: build writes the shared
  primitive triangles (`scenes.primitives.unit_mesh`) scaled by `size` into the
  vertex array, so a mesh is recognised by comparing its vertices with each
  unit mesh. A composed or mesh object (docs/objects.md) is recognised the same
  way against the mesh of the base object with its pass index
  (`scenes.meshes.object_mesh`), and keeps that object's `source`. A mesh that
  matches none (edited in Edit Mode, a scale applied with Ctrl+A) cannot be
  described by the model and is reported;
- its *id* is the object's pass index (what Blender's object-index pass and
  mask.png hold); Shift+D copies it, so several objects may share one. The one
  still carrying its original name keeps the id, the others (duplicates, in
  name order) get fresh ids after the largest in use;
- *size* = base size x the object's uniform scale (a non-uniform or mirrored
  scale is reported: a primitive has one size);
- *pose* from `matrix_world` (parenting included): location = bounding-box
  centre, rotation as a (w, x, y, z) quaternion with w >= 0;
- *colour*: the material's Base Color (linear) -> sRGB -> the nearest palette
  name (CIEDE2000); *finish* from the roughness build used (the studio finish's, or
  under a look the object's look material's).
Values within float32 noise of the base object's are snapped back to it, so an
untouched object reads back exactly, and an untouched scene equals `base`.
Objects hidden from rendering (`hide_render`) count as deleted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from stim3d.errors import Stim3dError
from stim3d.render.backends.blender_scene import ROUGHNESS, object_name
from stim3d.scenes.colors import PALETTE, delta_e_srgb, linear_to_srgb, named, nearest_palette_color
from stim3d.scenes.meshes import object_mesh
from stim3d.scenes.model import Color, DrawnLook, ObjectSource, Scene, SceneObject, round6
from stim3d.scenes.primitives import unit_dimensions, unit_mesh
from stim3d.scenes.surfaces import carries_print

SHAPES = ("sphere", "cube", "cone", "cylinder", "torus", "tile")
ROLE_KEY = "stim3d_role"  # custom property the add-on puts on the ground, camera and lights it built
POSITION_TOLERANCE = 1e-5  # metres: float32 noise on scene coordinates of a few metres
ROTATION_TOLERANCE = 1e-10  # 1 - |q1.q2|: about 3e-5 rad; float32 noise is about 1e-7 rad
MESH_TOLERANCE = 1e-4  # relative: a vertex further than this from the primitive's means the mesh was edited
SCALE_TOLERANCE = 1e-4  # relative spread of the three scale factors still called uniform
FAR_FROM_PALETTE = 10.0  # CIEDE2000: a recolour further than this from every palette colour is worth a note


class ReadbackError(Stim3dError, ValueError):
    """The Blender scene holds something the scene model cannot describe; `problems` lists each, one line each."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class Readback:
    scene: Scene
    names: dict[int, str] = field(default_factory=dict)  # object id -> Blender object name
    sources: dict[int, int | None] = field(default_factory=dict)  # id -> base object it came from (None: new)
    ignored: list[str] = field(default_factory=list)  # names of objects that are not stim3d primitives
    notes: list[str] = field(default_factory=list)  # things worth telling that do not stop the readback


@cache
def _unit(shape: str) -> tuple[np.ndarray, float]:
    vertices = unit_mesh(shape).vertices
    return vertices, float(np.abs(vertices).max())


def _scaled(vertices: np.ndarray, unit: np.ndarray) -> float | None:
    """The size s with vertices == unit * s (within MESH_TOLERANCE), or None."""
    if unit.shape != vertices.shape:
        return None
    size = float(np.abs(vertices).max()) / float(np.abs(unit).max())
    return size if size > 0 and np.abs(vertices - unit * size).max() <= MESH_TOLERANCE * size + 1e-6 else None


def mesh_primitive(vertices: np.ndarray) -> tuple[str, float] | None:
    """(shape, size) of a mesh whose vertices are a primitive's unit mesh times a size; None otherwise."""
    for shape in SHAPES:
        size = _scaled(vertices, _unit(shape)[0])
        if size is not None:
            return shape, size
    return None


def mesh_of_source(vertices: np.ndarray, base: SceneObject | None) -> float | None:
    """The size of a composed or mesh object's mesh when `vertices` are `base`'s own unit mesh times it."""
    if base is None or base.source is None:
        return None
    return _scaled(vertices, object_mesh(base).vertices)


def _mesh_vertices(mesh: Any) -> np.ndarray:
    coords = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", coords)
    return coords.reshape(-1, 3).astype(np.float64)


def _material_color_and_roughness(obj: Any) -> tuple[tuple[float, float, float], float] | None:
    """Base Color (linear RGB) and roughness of the object's first material, as build wrote them."""
    material = obj.active_material
    if material is None:
        return None
    if material.node_tree is not None:
        for node in material.node_tree.nodes:
            if node.bl_idname == "ShaderNodeBsdfPrincipled":
                base = node.inputs["Base Color"]  # a look may drive it (varnished wood's grain): then the material's own
                rgb = tuple(float(c) for c in (material.diffuse_color if base.is_linked else base.default_value)[:3])
                return rgb, float(node.inputs["Roughness"].default_value)  # type: ignore[return-value]
    return tuple(float(c) for c in material.diffuse_color[:3]), float(material.roughness)  # type: ignore[return-value]


def _quat(rotation: Any) -> tuple[float, float, float, float]:
    """Unit quaternion (w, x, y, z) with w >= 0, unrounded (snapping compares before rounding)."""
    q = np.array([rotation.w, rotation.x, rotation.y, rotation.z], dtype=float)
    q /= np.linalg.norm(q)
    if q[0] < 0:
        q = -q
    return tuple(float(v) for v in q)  # type: ignore[return-value]


def _same_rotation(q1: tuple[float, ...], q2: tuple[float, ...], tolerance: float) -> bool:
    """True when the rotations differ by less than about sqrt(8 * tolerance) radians."""
    a, b = np.asarray(q1, dtype=float), np.asarray(q2, dtype=float)
    return 1.0 - abs(float(np.dot(a / np.linalg.norm(a), b / np.linalg.norm(b)))) < tolerance


def _snap_vec(new: tuple[float, ...], old: tuple[float, ...] | None) -> tuple[float, ...]:
    if old is not None and np.abs(np.subtract(new, old)).max() <= POSITION_TOLERANCE:
        return old
    return tuple(round6(v) for v in new)


def _snap_quat(new: tuple[float, ...], old: tuple[float, ...] | None) -> tuple[float, ...]:
    if old is not None and _same_rotation(new, old, ROTATION_TOLERANCE):
        return old
    return tuple(round6(v) for v in new)


@dataclass
class _Candidate:
    name: str
    pass_index: int
    shape: str
    size: float
    location: tuple[float, float, float]
    rotation: tuple[float, float, float, float]
    material: tuple[tuple[float, float, float], float] | None
    source: ObjectSource | None = None  # a composed or mesh object's, kept from the base object it matched


def _candidate(obj: Any, problems: list[str], base: dict[int, SceneObject]) -> _Candidate | None:
    vertices = _mesh_vertices(obj.data)
    primitive = mesh_primitive(vertices)
    source = None
    if primitive is None and (size := mesh_of_source(vertices, base.get(int(obj.pass_index)))) is not None:
        matched = base[int(obj.pass_index)]
        primitive, source = (matched.shape, size), matched.source
    if primitive is None:
        if obj.pass_index > 0:
            problems.append(
                f"object {obj.name!r}: its mesh is no longer a stim3d primitive or its item's object (edited, or a "
                "scale applied); "
                "only moves, rotations, uniform scales, deletions, duplicates and recolours can be read back"
            )
        return None
    shape, base_size = primitive
    location, rotation, scale = obj.matrix_world.decompose()
    factors = np.array(scale[:], dtype=float)
    if factors.min() <= 0:
        problems.append(f"object {obj.name!r}: mirrored or zero scale {tuple(round(f, 4) for f in factors)}")
        return None
    if factors.max() - factors.min() > SCALE_TOLERANCE * factors.max():
        problems.append(
            f"object {obj.name!r}: non-uniform scale {tuple(round(f, 4) for f in factors)}; "
            "a primitive has one size, so scale it uniformly"
        )
        return None
    return _Candidate(
        name=obj.name,
        pass_index=int(obj.pass_index),
        shape=shape,
        size=base_size * float(factors.mean()),
        location=tuple(float(v) for v in location),  # type: ignore[arg-type]
        rotation=_quat(rotation),
        material=_material_color_and_roughness(obj),
        source=source,
    )


def _printed(source: SceneObject | None) -> bool:
    """A sign whose face carries a texture or text (scenes/surfaces.py): its material is paper and ink, built from its
    attributes, so its colour and finish are the base object's, not read from the material."""
    return source is not None and carries_print(source.attributes)


def _color(candidate: _Candidate, source: SceneObject | None, notes: list[str]) -> Color:
    if _printed(source):
        return source.color  # type: ignore[union-attr]
    if candidate.material is None:
        if source is not None:
            notes.append(f"{candidate.name}: no material; keeps its colour {source.color.name}")
            return source.color
        return named("gray")
    srgb = tuple(float(c) for c in linear_to_srgb(candidate.material[0]))
    if source is not None and np.abs(np.subtract(srgb, source.color.srgb)).max() <= 1e-3:
        return source.color
    name = nearest_palette_color(srgb)
    distance = float(delta_e_srgb(np.array(srgb), np.array(PALETTE[name])))
    if distance > FAR_FROM_PALETTE:
        notes.append(f"{candidate.name}: colour {tuple(round(c, 3) for c in srgb)} is {distance:.1f} (CIEDE2000) from "
                     f"the nearest palette colour, {name}; read as {name}")
    return named(name)


def _finish(candidate: _Candidate, source: SceneObject | None, look_roughness: float | None = None) -> str:
    """The finish the material's roughness was built from: the source's when it still has the roughness the
    studio finish or the look's material (`look_roughness`, scenes/looks.py) gave it, else the nearest finish."""
    if _printed(source):
        return source.finish  # type: ignore[union-attr]
    if candidate.material is None:
        return source.finish if source is not None else "matte"
    roughness = candidate.material[1]
    built = [ROUGHNESS[source.finish]] if source is not None else []
    if source is not None and look_roughness is not None:
        built.append(look_roughness)
    if source is not None and any(abs(roughness - value) <= 1e-3 for value in built):
        return source.finish
    return min(ROUGHNESS, key=lambda finish: abs(ROUGHNESS[finish] - roughness))


def _scene_object(object_id: int, candidate: _Candidate, source: SceneObject | None, notes: list[str],
                  look_roughness: float | None = None) -> SceneObject:
    size = round6(candidate.size)
    if source is not None and source.shape == candidate.shape and abs(candidate.size - source.size) <= POSITION_TOLERANCE * max(1.0, source.size):
        size = source.size
    dimensions: tuple[float, ...]
    if source is not None and source.shape == candidate.shape and size == source.size:
        dimensions = source.dimensions  # unscaled: the base object's, not a float32 round trip of them
    elif candidate.source is None:
        dimensions = tuple(round6(d * size) for d in unit_dimensions(candidate.shape))
    else:
        vertices = object_mesh(source).vertices  # type: ignore[arg-type]  # a sourced candidate matched `source`
        dimensions = tuple(round6(float(d) * size) for d in vertices.max(axis=0) - vertices.min(axis=0))
    return SceneObject(
        id=object_id,
        shape=candidate.shape,
        size=size,
        dimensions=dimensions,
        source=candidate.source,
        location=_snap_vec(candidate.location, source.location if source else None),
        rotation_quat=_snap_quat(candidate.rotation, source.rotation_quat if source else None),
        color=_color(candidate, source, notes),
        finish=_finish(candidate, source, look_roughness),
        countable=source.countable if source is not None else True,
        attributes=dict(source.attributes) if source is not None else {},
    )


def _camera_note(camera_object: Any, base: Scene) -> str | None:
    location, rotation, _ = camera_object.matrix_world.decompose()
    moved = np.abs(np.subtract(tuple(location), base.camera.location)).max() > 1e-4
    turned = not _same_rotation(_quat(rotation), base.camera.rotation_quat, 1e-8)
    if moved or turned:
        return ("the camera was moved in Blender; stim3d keeps the item's camera "
                "(its pose and intrinsics define the image and every measurement)")
    return None


def read_scene(
    objects: Iterable[Any], base: Scene, camera_object: Any = None, reserved_ids: Iterable[int] = ()
) -> Readback:
    """Read Blender objects back into a Scene (camera, lights and stage from `base`). Raises ReadbackError.

    New objects get ids above every id in `base`, every pass index in use and `reserved_ids`
    (the ids of the item before earlier edits, so a deleted object's id is never reused).
    """
    problems: list[str] = []
    notes: list[str] = []
    ignored: list[str] = []
    candidates: list[_Candidate] = []
    for obj in sorted(objects, key=lambda o: o.name):
        if obj.type != "MESH":
            continue
        if obj.get(ROLE_KEY) == "ground" or (obj.name == "ground" and obj.pass_index == 0):
            continue
        if obj.hide_render:
            if obj.pass_index > 0:
                notes.append(f"{obj.name} is hidden from rendering: read as deleted")
            continue
        candidate = _candidate(obj, problems, {o.id: o for o in base.objects})
        if candidate is None:
            if obj.pass_index == 0:
                ignored.append(obj.name)
            continue
        candidates.append(candidate)
    if problems:
        raise ReadbackError(problems)

    base_objects = {o.id: o for o in base.objects}
    next_id = max([*base_objects, *(c.pass_index for c in candidates), *reserved_ids, 0]) + 1
    keeps: dict[int, _Candidate] = {}
    fresh: list[tuple[_Candidate, SceneObject | None]] = []
    by_index: dict[int, list[_Candidate]] = {}
    for candidate in candidates:
        by_index.setdefault(candidate.pass_index, []).append(candidate)
    for index, group in sorted(by_index.items()):
        source = base_objects.get(index)
        if source is None:
            fresh.extend((c, None) for c in group)
            continue
        name = object_name(source)
        group.sort(key=lambda c: (c.name != name, c.name))
        keeps[index] = group[0]
        fresh.extend((c, source) for c in group[1:])

    look_roughness = {m.id: m.roughness for m in base.look.objects} if isinstance(base.look, DrawnLook) else {}
    scene_objects: list[SceneObject] = []
    names: dict[int, str] = {}
    sources: dict[int, int | None] = {}
    for index, candidate in keeps.items():
        scene_objects.append(_scene_object(index, candidate, base_objects[index], notes, look_roughness.get(index)))
        names[index], sources[index] = candidate.name, index
    for candidate, source in sorted(fresh, key=lambda pair: pair[0].name):
        scene_objects.append(_scene_object(next_id, candidate, source, notes,
                                           look_roughness.get(source.id) if source is not None else None))
        names[next_id], sources[next_id] = candidate.name, source.id if source else None
        next_id += 1
    if camera_object is not None and (note := _camera_note(camera_object, base)):
        notes.append(note)
    scene = base.model_copy(update={"objects": sorted(scene_objects, key=lambda o: o.id)})
    return Readback(scene=scene, names=names, sources=sources, ignored=ignored, notes=notes)
