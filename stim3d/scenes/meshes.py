"""THE mesh of any scene object: a primitive's, a composed object's or a mesh file's (docs/objects.md).

Ray casting (visibility.py), placement's collisions (placement.py), Blender
(render/backends/blender_scene.py), the raster backend and the BOP export all take an
object's triangles from `object_mesh` here, so ground truth stays exact whatever the
object is. Every mesh is unit-size (longest extent 1 for composed and mesh objects; a
primitive's own unit, scenes/primitives.py), centred on its bounding-box centre, Z up;
the object's `size` scales it and its pose places it.

A composed object's mesh is the union of its parts' primitive meshes (each scaled per
axis, turned and moved in the library entry's frame), normalised as a whole; the
parts stay separate triangle sets (they may touch or overlap: visibility is first-hit,
which needs no watertight or single surface).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from .model import Color, ObjectPart, ObjectSource, SceneObject, round6
from .primitives import PrimitiveMesh, axis_angle_quat, quat_to_matrix, unit_mesh

GROUND_CLEARANCE = 1e-4  # a resting composed or mesh object floats this share of its size above the ground
_CACHE_SIZE = 64  # distinct composed or mesh geometries kept; a batch uses a handful
_cache: dict[str, tuple[tuple[int, int] | None, PrimitiveMesh]] = {}
_cache_lock = threading.Lock()  # the cache is shared by the compose thread and the backend (source_mesh)


def mesh_key(obj: SceneObject) -> str:
    """A string naming the object's unit geometry: the shape for a primitive, the whole source otherwise."""
    return obj.shape if obj.source is None else obj.source.model_dump_json()


def kind_name(obj: SceneObject) -> str:
    """What the object is, as a word: a primitive's shape, a composed object's library name (`traffic_cone`), a mesh
    file's stem (`kettle` for kettle.obj). Exports name categories and shapes by it."""
    if obj.source is None:
        return obj.shape
    return obj.source.name if obj.source.kind == "composed" else Path(obj.source.name).stem


def part_vertices(part: ObjectPart) -> np.ndarray:
    """A part's vertices in its library entry's frame."""
    unit = unit_mesh(part.shape).vertices * np.asarray(part.scale, dtype=float)
    return unit @ quat_to_matrix(part.rotation_quat).T + np.asarray(part.location, dtype=float)


def _centre_and_scale(vertices: np.ndarray) -> tuple[np.ndarray, float]:
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    return 0.5 * (low + high), float((high - low).max())


def composed_mesh(parts: list[ObjectPart]) -> tuple[PrimitiveMesh, np.ndarray]:
    """The unit mesh of a composed object and, per face, the index of the part it belongs to."""
    if not parts:
        raise ValueError("a composed object needs at least one part")
    vertices, faces, smooth, owner = [], [], [], []
    offset = 0
    for index, part in enumerate(parts):
        prim = unit_mesh(part.shape)
        vertices.append(part_vertices(part))
        faces.append(prim.faces + offset)
        smooth.append(prim.smooth)
        owner.append(np.full(len(prim.faces), index))
        offset += len(prim.vertices)
    all_vertices = np.concatenate(vertices)
    centre, extent = _centre_and_scale(all_vertices)
    if extent <= 0.0:
        raise ValueError("a composed object's parts have zero extent")
    mesh = PrimitiveMesh((all_vertices - centre) / extent, np.concatenate(faces), np.concatenate(smooth))
    return mesh, np.concatenate(owner)


def _file_stamp(source: ObjectSource) -> tuple[int, int] | None:
    """A mesh file's (mtime, size): a cached mesh is used only while its file still has the same stamp."""
    if source.kind != "mesh" or source.path is None:
        return None
    try:
        stat = Path(source.path).stat()
    except OSError:
        return (-1, -1)
    return stat.st_mtime_ns, stat.st_size


def source_mesh(source: ObjectSource) -> PrimitiveMesh:
    """The unit mesh of a composed or mesh source (cached by the source's content; arrays read-only).

    A mesh file is read again (and its sha256 checked) whenever its modification time or size changed,
    so a file edited after the item was composed is refused in this process too, not served from the cache.
    """
    key = source.model_dump_json()
    stamp = _file_stamp(source)
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    if source.kind == "composed":
        mesh = composed_mesh(source.parts)[0]
    else:
        from .mesh_files import normalised_file_mesh

        mesh = normalised_file_mesh(source)
    for array in (mesh.vertices, mesh.faces, mesh.smooth):
        array.setflags(write=False)
    with _cache_lock:  # a batch worker composes on one thread while its backend builds meshes on another
        _cache.pop(key, None)
        if len(_cache) >= _CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        _cache[key] = (stamp, mesh)
    return mesh


def object_mesh(obj: SceneObject) -> PrimitiveMesh:
    """The unit-size mesh of any scene object (faces counter-clockwise from outside where the source has one)."""
    return unit_mesh(obj.shape) if obj.source is None else source_mesh(obj.source)


def unit_extents(obj: SceneObject) -> tuple[float, float, float]:
    """Bounding-box extents of the object's unit mesh (multiply by `size` for `dimensions`)."""
    v = object_mesh(obj).vertices
    return tuple(float(x) for x in (v.max(axis=0) - v.min(axis=0)))  # type: ignore[return-value]


def object_world_vertices(obj: SceneObject, location=None, rotation_quat=None) -> np.ndarray:
    """The object's vertices in world coordinates (faces as in `object_mesh`); pose overridable for trials."""
    where = obj.location if location is None else location
    turn = obj.rotation_quat if rotation_quat is None else rotation_quat
    return (object_mesh(obj).vertices * obj.size) @ quat_to_matrix(turn).T + np.asarray(where, dtype=float)


def resting_source_object(object_id: int, source: ObjectSource, size: float, x: float, y: float, yaw: float,
                          color: Color, attributes: dict | None = None) -> SceneObject:
    """A composed or mesh object resting on the ground at (x, y), turned by `yaw` degrees about +Z.

    `location` is the bounding-box centre, raised so the turned mesh's lowest vertex is GROUND_CLEARANCE * size
    above z = 0: an open mesh (a box without a side) can show the camera its faces lying on the ground, and a
    face exactly in the ground's plane would be a coin toss per pixel in Cycles (z-fighting), not ground truth.
    """
    w, qx, qy, qz = (round6(v) for v in axis_angle_quat((0.0, 0.0, 1.0), yaw))
    rotation = (w, qx, qy, qz)
    unit = source_mesh(source).vertices
    extents = unit.max(axis=0) - unit.min(axis=0)
    lowest = float(((unit * size) @ quat_to_matrix(rotation).T)[:, 2].min())
    shape = "composed" if source.kind == "composed" else "mesh"
    dx, dy, dz = (round6(d * size) for d in extents)
    return SceneObject(id=object_id, shape=shape, size=round6(size), dimensions=(dx, dy, dz),
                       location=(round6(x), round6(y), round6(GROUND_CLEARANCE * size - lowest)), rotation_quat=rotation,
                       color=color, attributes=attributes or {}, source=source)
