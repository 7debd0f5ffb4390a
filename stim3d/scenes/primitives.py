"""THE mesh of each primitive: one tessellation, used by ray casting and by Blender alike.

Ground truth is only exact if the ray caster and the renderer see the same
triangles, so this module is the single source of geometry. Meshes are built at
unit size (`size = 1`), centred on their bounding-box centre, Z up. Vertices are
split along sharp edges (cylinder and cone rims, cube edges) so that smooth
shading in Blender changes normals only where the surface is smooth; silhouettes
are identical either way.

What `size` means per shape (all in metres):
- sphere: diameter;  cube: edge;  cylinder and cone: base diameter = height;
- torus: outer diameter, lying flat (axis = Z), tube radius `TORUS_TUBE * size`;
- tile: edge of a square slab `TILE_THICKNESS * size` thick (a marker on the ground).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

SEGMENTS = 64  # around the Z axis, for every round shape
SPHERE_RINGS = 32
TORUS_TUBE = 0.14  # tube radius as a fraction of the outer diameter
TORUS_TUBE_SEGMENTS = 24
TILE_THICKNESS = 0.01  # a tile's height as a fraction of its edge


@dataclass(frozen=True)
class PrimitiveMesh:
    """Triangles of a unit-size primitive. `smooth[i]` says whether face i is smooth-shaded."""

    vertices: np.ndarray  # (N, 3) float64
    faces: np.ndarray  # (M, 3) int64, counter-clockwise seen from outside
    smooth: np.ndarray  # (M,) bool


def _ring(radius: float, z: float, n: int = SEGMENTS) -> np.ndarray:
    angles = 2.0 * np.pi * np.arange(n) / n
    return np.stack([radius * np.cos(angles), radius * np.sin(angles), np.full(n, z)], axis=1)


def _quad_strip(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Triangles joining two closed rings of vertex indices (outward normals for CCW rings)."""
    nxt_lower, nxt_upper = np.roll(lower, -1), np.roll(upper, -1)
    first = np.stack([lower, nxt_lower, nxt_upper], axis=1)
    second = np.stack([lower, nxt_upper, upper], axis=1)
    return np.concatenate([first, second])


def _fan(center: int, ring: np.ndarray, facing_up: bool) -> np.ndarray:
    nxt = np.roll(ring, -1)
    if facing_up:
        return np.stack([np.full_like(ring, center), ring, nxt], axis=1)
    return np.stack([np.full_like(ring, center), nxt, ring], axis=1)


def _sphere() -> PrimitiveMesh:
    verts = [np.array([[0.0, 0.0, -0.5]])]
    for k in range(1, SPHERE_RINGS):
        polar = np.pi * k / SPHERE_RINGS
        verts.append(_ring(0.5 * np.sin(polar), -0.5 * np.cos(polar)))
    verts.append(np.array([[0.0, 0.0, 0.5]]))
    vertices = np.concatenate(verts)
    rings = [1 + SEGMENTS * k + np.arange(SEGMENTS) for k in range(SPHERE_RINGS - 1)]
    faces = [_fan(0, rings[0], facing_up=False)]
    faces += [_quad_strip(rings[k], rings[k + 1]) for k in range(len(rings) - 1)]
    faces.append(_fan(len(vertices) - 1, rings[-1], facing_up=True))
    faces_arr = np.concatenate(faces)
    return PrimitiveMesh(vertices, faces_arr, np.ones(len(faces_arr), bool))


def _cube() -> PrimitiveMesh:
    corners = np.array(
        [[x, y, z] for z in (-0.5, 0.5) for y in (-0.5, 0.5) for x in (-0.5, 0.5)], dtype=float
    )
    quads = [  # outward, counter-clockwise
        (0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5),
    ]
    vertices: list[np.ndarray] = []
    faces: list[tuple[int, int, int]] = []
    for quad in quads:  # own vertices per face: flat shading, sharp edges
        base = len(vertices)
        vertices.extend(corners[list(quad)])
        faces += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
    faces_arr = np.array(faces, dtype=np.int64)
    return PrimitiveMesh(np.array(vertices), faces_arr, np.zeros(len(faces_arr), bool))


def _cylinder() -> PrimitiveMesh:
    n = SEGMENTS
    side_low, side_high = _ring(0.5, -0.5), _ring(0.5, 0.5)
    cap_low, cap_high = _ring(0.5, -0.5), _ring(0.5, 0.5)
    vertices = np.concatenate(
        [side_low, side_high, cap_low, cap_high, [[0.0, 0.0, -0.5], [0.0, 0.0, 0.5]]]
    )
    idx = np.arange(n)
    side = _quad_strip(idx, n + idx)
    bottom = _fan(4 * n, 2 * n + idx, facing_up=False)
    top = _fan(4 * n + 1, 3 * n + idx, facing_up=True)
    faces = np.concatenate([side, bottom, top])
    smooth = np.concatenate([np.ones(len(side), bool), np.zeros(len(bottom) + len(top), bool)])
    return PrimitiveMesh(vertices, faces, smooth)


def _cone() -> PrimitiveMesh:
    n = SEGMENTS
    side_ring, cap_ring = _ring(0.5, -0.5), _ring(0.5, -0.5)
    vertices = np.concatenate([side_ring, cap_ring, [[0.0, 0.0, 0.5], [0.0, 0.0, -0.5]]])
    idx = np.arange(n)
    side = _fan(2 * n, idx, facing_up=True)
    side = side[:, [1, 2, 0]]  # (ring_i, ring_i+1, apex): outward
    bottom = _fan(2 * n + 1, n + idx, facing_up=False)
    faces = np.concatenate([side, bottom])
    smooth = np.concatenate([np.ones(len(side), bool), np.zeros(len(bottom), bool)])
    return PrimitiveMesh(vertices, faces, smooth)


def _torus() -> PrimitiveMesh:
    tube = TORUS_TUBE
    major = 0.5 - tube
    n, m = SEGMENTS, TORUS_TUBE_SEGMENTS
    around = 2.0 * np.pi * np.arange(n) / n
    across = 2.0 * np.pi * np.arange(m) / m
    a, b = np.meshgrid(around, across, indexing="ij")  # (n, m)
    radial = major + tube * np.cos(b)
    vertices = np.stack([radial * np.cos(a), radial * np.sin(a), tube * np.sin(b)], axis=-1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    v00 = (i * m + j).ravel()
    v10 = (((i + 1) % n) * m + j).ravel()
    v01 = (i * m + (j + 1) % m).ravel()
    v11 = (((i + 1) % n) * m + (j + 1) % m).ravel()
    faces = np.concatenate([np.stack([v00, v10, v11], 1), np.stack([v00, v11, v01], 1)])
    return PrimitiveMesh(vertices, faces, np.ones(len(faces), bool))


def _tile() -> PrimitiveMesh:
    """The cube flattened to TILE_THICKNESS: a square slab lying on the ground (a marker, not a counted shape)."""
    cube = _cube()
    return PrimitiveMesh(cube.vertices * np.array([1.0, 1.0, TILE_THICKNESS]), cube.faces, cube.smooth)


_BUILDERS = {"sphere": _sphere, "cube": _cube, "cylinder": _cylinder, "cone": _cone, "torus": _torus, "tile": _tile}


@cache
def unit_mesh(shape: str) -> PrimitiveMesh:
    """The unit-size mesh of `shape`; arrays are read-only and shared."""
    try:
        mesh = _BUILDERS[shape]()
    except KeyError:
        raise ValueError(f"unknown shape {shape!r}; allowed: {', '.join(_BUILDERS)}") from None
    for array in (mesh.vertices, mesh.faces, mesh.smooth):
        array.setflags(write=False)
    return mesh


def unit_dimensions(shape: str) -> tuple[float, float, float]:
    """Bounding-box extents of the unit mesh (x, y, z)."""
    v = unit_mesh(shape).vertices
    return tuple(float(x) for x in (v.max(axis=0) - v.min(axis=0)))  # type: ignore[return-value]


def quat_to_matrix(quat: tuple[float, float, float, float]) -> np.ndarray:
    """Rotation matrix of a (w, x, y, z) quaternion (normalised first)."""
    w, x, y, z = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quat(matrix: np.ndarray) -> tuple[float, float, float, float]:
    """(w, x, y, z) of a rotation matrix, with w >= 0."""
    m = np.asarray(matrix, dtype=float)
    trace = np.trace(m)
    if trace > 0:
        s = 2.0 * np.sqrt(trace + 1.0)
        q = [0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [(m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s]
    q_arr = np.array(q) / np.linalg.norm(q)
    if q_arr[0] < 0:
        q_arr = -q_arr
    return tuple(float(v) for v in q_arr)  # type: ignore[return-value]


def axis_angle_quat(axis: np.ndarray | tuple[float, float, float], degrees: float) -> tuple[float, float, float, float]:
    """(w, x, y, z) for a rotation of `degrees` about `axis`."""
    axis_arr = np.asarray(axis, dtype=float)
    axis_arr = axis_arr / np.linalg.norm(axis_arr)
    half = np.radians(degrees) / 2.0
    return (float(np.cos(half)), *(float(v) for v in np.sin(half) * axis_arr))  # type: ignore[return-value]


def world_vertices(shape: str, size: float, location, rotation_quat) -> np.ndarray:
    """The object's triangles' vertices in world coordinates (faces as in `unit_mesh`)."""
    mesh = unit_mesh(shape)
    return (mesh.vertices * size) @ quat_to_matrix(rotation_quat).T + np.asarray(location, dtype=float)
