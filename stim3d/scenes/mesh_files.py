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
so a config cannot make stim3d read an arbitrary file; so must every file it reads with it
(a glTF's external buffers and images, an OBJ's material libraries and their textures:
`referenced_files`). The hash of every byte read (`mesh_sha256`: the file's own sha256
when it reads no other file) goes into item.json; when the files on disk no longer have
that hash at render time, the item is refused (`MeshFileError`) rather than rendered from
different triangles than its ground truth was measured on, and a batch renders it again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote

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


def _gltf_json(path: Path) -> dict:
    """The JSON of a .gltf, or of a .glb's first chunk (12-byte header, then chunk length, type "JSON", data: only
    those bytes are read, not the binary chunk after them)."""
    if path.suffix.lower() == ".glb":
        with path.open("rb") as f:
            length, kind = struct.unpack("<I4s", f.read(20)[12:])
            if kind != b"JSON":
                raise ValueError("no JSON chunk")
            data = f.read(length)
    else:
        data = path.read_bytes()
    loaded = json.loads(data)
    return loaded if isinstance(loaded, dict) else {}


def _references(path: Path) -> list[str]:
    """The other files `path` names, as written (relative to its folder): external glTF buffers and images (a `uri`
    that is not `data:`), an OBJ's `mtllib` files and the texture maps those name (`map_Kd` ..., the last word)."""
    fmt = SUFFIXES[path.suffix.lower()]
    if fmt in Y_UP_FORMATS:
        gltf = _gltf_json(path)
        entries = [e for key in ("buffers", "images") for e in gltf.get(key) or [] if isinstance(e, dict)]
        return [unquote(e["uri"]) for e in entries if isinstance(e.get("uri"), str) and not e["uri"].startswith("data:")]
    if fmt != "obj":
        return []
    names: list[str] = []
    for library in re.findall(r"^[ \t]*mtllib[ \t]+(.+?)[ \t]*$", path.read_text(errors="replace"), re.MULTILINE):
        names.append(library)
        mtl = path.parent / library
        if mtl.is_file():
            names += [m.split()[-1] for m in re.findall(r"^[ \t]*(?:map_\w+|bump|disp|decal)[ \t]+(.+?)[ \t]*$",
                                                         mtl.read_text(errors="replace"), re.MULTILINE)]
    return names


def referenced_files(path: Path) -> list[Path]:
    """Every other file the mesh file `path` names (`_references`), resolved against its folder, in the order
    named, without repeats; [] for a self-contained file or one whose references cannot be read (then trimesh's
    own read says what is wrong)."""
    try:
        names = _references(path)
    except (OSError, ValueError, UnicodeDecodeError, struct.error):
        return []
    return list(dict.fromkeys((path.parent / name).resolve() for name in names))


def read_files(path: Path) -> list[Path]:
    """The files trimesh reads for the mesh `path`: itself, then those it names that exist (a missing material
    library is skipped by trimesh, a missing buffer fails its read; either way its bytes are not read)."""
    return [path, *(other for other in referenced_files(path) if other.is_file())]


def mesh_sha256(path: Path) -> str:
    """The hash of every byte the mesh reads (`read_files`): the file's sha256 when it reads no other file (so a
    self-contained file's recorded hash is its plain sha256), else the sha256 of one line "<sha256> <name>" per
    file, the mesh file first, then each other by its path relative to the mesh's folder."""
    files = read_files(path)
    if len(files) == 1:
        return file_sha256(path)
    lines = [f"{file_sha256(f)} {_relative(f, path.parent)}" for f in files]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _relative(other: Path, folder: Path) -> str:
    """`other` as a path relative to `folder` (with '..' when outside), the same wherever the batch lives."""
    return Path(os.path.relpath(other, folder)).as_posix()


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
    allowed = [Path(root).resolve() for root in roots]
    for other in referenced_files(resolved):  # what trimesh reads with it is bound by the same roots
        if not any(other.is_relative_to(root) for root in allowed):
            raise MeshFileError(f"mesh {path}: it reads {_relative(other, resolved.parent)}, outside the allowed "
                                "folders; keep a mesh's buffers, materials and images beside it")
    vertices, faces = _read_triangles(resolved)
    _checked(resolved.name, vertices, faces)
    return ObjectSource(kind="mesh", name=resolved.name, path=resolved.as_posix(), sha256=mesh_sha256(resolved),
                        units=units, up=axis, faces=len(faces))


def normalised_file_mesh(source: ObjectSource) -> PrimitiveMesh:
    """The unit-size mesh of a mesh source, after checking that the file still has the recorded hash."""
    if source.path is None or source.sha256 is None:
        raise MeshFileError(f"mesh object {source.name}: its source names no file or no sha256")
    path = Path(source.path)
    if not path.is_file():
        raise MeshFileError(f"mesh {source.path}: no such file (the item was composed with it)")
    if mesh_sha256(path) != source.sha256:
        raise MeshFileError(f"mesh {source.path}: the file or a file it reads changed since the item was composed "
                            "(sha256 differs); compose the item again")
    vertices, faces = _read_triangles(path)
    _checked(path.name, vertices, faces)
    return normalise(vertices, faces, source.up or "z")


def changed_mesh_files(scene: Scene) -> list[str]:
    """Names of the scene's mesh files whose bytes (with every file each reads) no longer have the sha256 its item
    recorded (missing ones too).

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


_hashes: dict[tuple[tuple[str, int, int], ...], str] = {}
_referenced: dict[tuple[str, int, int], list[Path]] = {}


def _stamp(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return str(path), stat.st_mtime_ns, stat.st_size


def _hash_by_stamp(path: Path) -> str:
    """`mesh_sha256` of `path`, read again only when the modification time or size of it or of a file it reads
    changed (a batch checks many items; the names it reads are parsed again only when the mesh file changed).
    OSError when the mesh file is gone."""
    own = _stamp(path)
    if own not in _referenced:
        if len(_referenced) > 256:
            _referenced.clear()
        _referenced[own] = referenced_files(path)
    stamp = (own, *(_stamp(other) for other in _referenced[own] if other.is_file()))
    if stamp not in _hashes:
        if len(_hashes) > 256:
            _hashes.clear()
        _hashes[stamp] = mesh_sha256(path)
    return _hashes[stamp]
