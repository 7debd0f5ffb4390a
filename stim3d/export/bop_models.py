"""BOP's object models: `models/obj_NNNNNN.ply` (ASCII PLY, millimetres, with vertex normals) and `models_info.json`.

BOP's format (bop_toolkit's bop_datasets_format.md): models are ASCII PLY in mm
that "include vertex normals", Z up, the origin at the centre of the 3D bounding box;
models_info.json gives per model its `diameter` (the largest distance between two
vertices) and its box (`min_x`, `min_y`, `min_z`, `size_x`, `size_y`, `size_z`).
stim3d's meshes (scenes/primitives.py) are already centred on their box, Z up, so a
model is THE mesh stim3d renders and ray-casts, scaled to the object's size in mm.

Normals: the angle-weighted sum of the face normals around each vertex (MeshLab's
rule, which BOP's models use). stim3d splits vertices along sharp edges (cube edges,
cylinder rims), so a vertex there belongs to one flat side and gets that side's normal.
"""

from __future__ import annotations

import hashlib

import numpy as np

from stim3d.scenes.meshes import mesh_key, object_mesh
from stim3d.scenes.model import SceneObject

MM = 1000.0


def model_key(obj: SceneObject) -> tuple[str, float]:
    """One BOP model per distinct (geometry, size): BOP has no per-instance scale. The geometry is the shape for
    a primitive, `kind:name:hash` of the source for a composed or mesh object (scenes/meshes.py)."""
    if obj.source is None:
        return obj.shape, round(obj.size, 6)
    digest = hashlib.sha256(mesh_key(obj).encode()).hexdigest()[:12]
    return f"{obj.source.kind}:{obj.source.name}:{digest}", round(obj.size, 6)


def vertex_normals(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Unit normals, per vertex the angle-weighted sum of its faces' normals."""
    corners = vertices[faces]  # (M, 3, 3)
    face_normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    face_normals /= np.maximum(np.linalg.norm(face_normals, axis=1, keepdims=True), 1e-12)
    normals = np.zeros_like(vertices)
    for k in range(3):
        a = corners[:, (k + 1) % 3] - corners[:, k]
        b = corners[:, (k + 2) % 3] - corners[:, k]
        cos = np.einsum("ij,ij->i", a, b) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)
        np.add.at(normals, faces[:, k], face_normals * np.arccos(np.clip(cos, -1.0, 1.0))[:, None])
    return normals / np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)


def diameter(vertices: np.ndarray) -> float:
    """The largest distance between two vertices, over every pair (a few thousand vertices: a few MB)."""
    squared = (vertices ** 2).sum(axis=1)
    d2 = squared[:, None] + squared[None, :] - 2.0 * vertices @ vertices.T
    return float(np.sqrt(max(float(d2.max()), 0.0)))


def model_ply(obj: SceneObject) -> tuple[str, dict[str, float]]:
    """The ASCII PLY text of the object's mesh at its size in millimetres (x y z nx ny nz per vertex) and its
    models_info entry."""
    mesh, size = object_mesh(obj), model_key(obj)[1]
    vertices = mesh.vertices * size * MM
    normals = vertex_normals(mesh.vertices, mesh.faces)
    header = ["ply", "format ascii 1.0", "comment stim3d object mesh, millimetres", f"element vertex {len(vertices)}",
              *(f"property float {name}" for name in ("x", "y", "z", "nx", "ny", "nz")),
              f"element face {len(mesh.faces)}", "property list uchar int vertex_indices", "end_header"]
    rows = [" ".join(f"{v:.4f}" for v in vertex) + " " + " ".join(f"{n:.6f}" for n in normal)
            for vertex, normal in zip(vertices, normals)]
    faces = ["3 " + " ".join(str(int(i)) for i in face) for face in mesh.faces]
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    info = {"diameter": round(diameter(vertices), 4), **{f"min_{a}": round(float(v), 4) for a, v in zip("xyz", low)},
            **{f"size_{a}": round(float(v), 4) for a, v in zip("xyz", high - low)}}
    return "\n".join(header + rows + faces) + "\n", info
