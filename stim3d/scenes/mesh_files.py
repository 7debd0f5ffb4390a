"""Mesh files as scene objects: read with trimesh, checked, normalised like a primitive (docs/objects.md).

A mesh object's geometry must be exactly the same triangles in the ray cast, in
placement's collisions, in Blender and in the BOP export, so every one of them reads
the file through `normalised_file_mesh` here. Normalising: the file's up axis turned
to +Z (glTF is Y-up by its specification; OBJ, PLY and STL are taken as Z-up unless
told), centred on its bounding-box centre and scaled so that its longest extent is 1
(the object's `size` is then the longest extent in metres, as for a primitive). The
file's own units are recorded, not used: `size` decides the scale.

A path is resolved (symbolic links followed) and refused unless it lies inside one of
the allowed roots (the config's folder and its `mesh_roots`, or what a caller passes),
so a config cannot make stim3d read an arbitrary file. The file's sha256 goes into
item.json; when the file on disk no longer has that hash at render time, the item is
refused (`MeshFileError`) rather than rendered from different triangles than its ground
truth was measured on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from stim3d.errors import Stim3dError

from .model import ObjectSource, Scene
from .primitives import PrimitiveMesh

MAX_FACES = 200_000  # triangles per mesh file: ray casting and Blender stay fast, files stay small
MAX_BYTES = 100 * 1024 * 1024  # a mesh file larger than this is refused before it is read
SUFFIXES = {".obj": "obj", ".ply": "ply", ".stl": "stl", ".gltf": "gltf", ".glb": "glb"}
Y_UP_FORMATS = ("gltf", "glb")  # glTF 2.0: +Y is up


class MeshFileError(Stim3dError, ValueError):
    """A mesh file that cannot be used as an object: one line naming the file and what is wrong."""


def resolve_mesh_path(path: str | Path, roots: Sequence[str | Path]) -> Path:
    """`path` resolved against the first root (when relative) and checked to lie inside one of `roots`."""
    if not roots:
        raise MeshFileError(f"mesh {path}: no allowed folder (give mesh_roots, or keep meshes beside the config)")
    resolved_roots = [Path(root).resolve() for root in roots]
    given = Path(path).expanduser()
    resolved = (given if given.is_absolute() else resolved_roots[0] / given).resolve()
    if not any(resolved.is_relative_to(root) for root in resolved_roots):
        allowed = ", ".join(str(root) for root in resolved_roots)
        raise MeshFileError(f"mesh {path}: outside the allowed folders ({allowed}); add its folder to mesh_roots")
    if not resolved.is_file():
        raise MeshFileError(f"mesh {path}: no such file")
    if resolved.suffix.lower() not in SUFFIXES:
        raise MeshFileError(f"mesh {path}: unknown format {resolved.suffix!r}; allowed: {', '.join(SUFFIXES)}")
    if resolved.stat().st_size > MAX_BYTES:
        raise MeshFileError(f"mesh {path}: larger than {MAX_BYTES // (1024 * 1024)} MB")
    return resolved


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_triangles(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and triangles of the whole file (every part of a scene file, with its transforms)."""
    import trimesh

    try:
        loaded = trimesh.load(str(path), file_type=SUFFIXES[path.suffix.lower()], force="mesh", process=False)
    except Exception as exc:  # trimesh raises many types for a broken file; all mean "cannot read"
        raise MeshFileError(f"mesh {path.name}: cannot read: {type(exc).__name__}: {exc}".split("\n")[0]) from None
    vertices = np.asarray(getattr(loaded, "vertices", np.zeros((0, 3))), dtype=np.float64).reshape(-1, 3)
    faces = np.asarray(getattr(loaded, "faces", np.zeros((0, 3))), dtype=np.int64).reshape(-1, 3)
    return vertices, faces


def _checked(name: str, vertices: np.ndarray, faces: np.ndarray) -> None:
    if len(faces) == 0 or len(vertices) == 0:
        raise MeshFileError(f"mesh {name}: no triangles")
    if len(faces) > MAX_FACES:
        raise MeshFileError(f"mesh {name}: {len(faces)} triangles; at most {MAX_FACES} are allowed (decimate it)")
    if not np.isfinite(vertices).all():
        raise MeshFileError(f"mesh {name}: vertices that are not finite numbers (NaN or infinity)")
    if faces.min() < 0 or faces.max() >= len(vertices):
        raise MeshFileError(f"mesh {name}: triangles name vertices it does not have")
    extent = float((vertices.max(axis=0) - vertices.min(axis=0)).max())
    corners = vertices[faces]
    area = np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1)
    if extent <= 0.0 or not (area > 1e-12 * extent * extent).any():
        raise MeshFileError(f"mesh {name}: degenerate (zero extent or every triangle of zero area)")


def normalise(vertices: np.ndarray, faces: np.ndarray, up: str) -> PrimitiveMesh:
    """Z up, centred on the bounding-box centre, longest extent 1; faces of zero area dropped (they hide nothing)."""
    if up == "y":  # (x, y, z) Y-up -> (x, -z, y) Z-up, a proper rotation about +X
        vertices = np.stack([vertices[:, 0], -vertices[:, 2], vertices[:, 1]], axis=1)
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    unit = (vertices - 0.5 * (low + high)) / float((high - low).max())
    corners = unit[faces]
    area = np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1)
    kept = faces[area > 1e-12]
    return PrimitiveMesh(np.ascontiguousarray(unit), np.ascontiguousarray(kept), np.zeros(len(kept), bool))


def mesh_source(path: str | Path, roots: Sequence[str | Path], units: str = "m", up: str | None = None) -> ObjectSource:
    """The `source` of a mesh object: the checked file, its hash and how it is read (raises MeshFileError)."""
    resolved = resolve_mesh_path(path, roots)
    fmt = SUFFIXES[resolved.suffix.lower()]
    axis = up or ("y" if fmt in Y_UP_FORMATS else "z")
    vertices, faces = _read_triangles(resolved)
    _checked(resolved.name, vertices, faces)
    return ObjectSource(kind="mesh", name=resolved.name, path=resolved.as_posix(), sha256=file_sha256(resolved),
                        units=units, up=axis, faces=len(faces))


def normalised_file_mesh(source: ObjectSource) -> PrimitiveMesh:
    """The unit-size mesh of a mesh source, after checking that the file still has the recorded hash."""
    if source.path is None or source.sha256 is None:
        raise MeshFileError(f"mesh object {source.name}: its source names no file or no sha256")
    path = Path(source.path)
    if not path.is_file():
        raise MeshFileError(f"mesh {source.path}: no such file (the item was composed with it)")
    if file_sha256(path) != source.sha256:
        raise MeshFileError(f"mesh {source.path}: the file changed since the item was composed (sha256 differs); "
                            "compose the item again")
    vertices, faces = _read_triangles(path)
    _checked(path.name, vertices, faces)
    return normalise(vertices, faces, source.up or "z")


def changed_mesh_files(scene: Scene) -> list[str]:
    """Names of the scene's mesh files that no longer have the sha256 its item recorded (missing ones too).

    A batch folder's item is done only while this is empty (render/batch/folder.py `state`): a changed
    file renders the item again even where the resume key, made from the config, did not change.
    """
    changed = []
    for obj in scene.objects:
        source = obj.source
        if source is None or source.kind != "mesh" or source.path is None:
            continue
        path = Path(source.path)
        try:
            same = path.is_file() and _hash_by_stamp(path) == source.sha256
        except OSError:
            same = False
        if not same:
            changed.append(source.name)
    return sorted(set(changed))


_hashes: dict[tuple[str, int, int], str] = {}


def _hash_by_stamp(path: Path) -> str:
    """sha256 of `path`, read again only when its modification time or size changed (a batch checks many items)."""
    stat = path.stat()
    stamp = (str(path), stat.st_mtime_ns, stat.st_size)
    if stamp not in _hashes:
        if len(_hashes) > 256:
            _hashes.clear()
        _hashes[stamp] = file_sha256(path)
    return _hashes[stamp]
