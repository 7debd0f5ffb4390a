"""The published DYSM 3D visibility measure and CLEVR's visibility rule, re-implemented for comparison only.

Nothing in stim3d uses these; bench/visibility_accuracy.py measures how far they
are from the real visible fraction (docs/performance.md, "Visibility accuracy").

DYSM: an object's "visibility" is the fraction of its mesh *vertices* whose
straight line to the camera is not blocked by an object placed before it. The
object's own surface is ignored (a vertex on its far side counts as visible), and
only objects placed earlier can block (a later object may hide it completely).
The generator used Blender's default primitives, so the vertex sets are those
meshes' vertices (a cube has 8, a UV sphere 482), fitted to stim3d's unit shapes
(same extents and centre as `scenes.primitives`). Placement order is not part of a
stim3d scene; the scene's object order stands for it (`blockers="earlier"`).
`blockers="all"` is the same vertex test against every other object: it isolates
the error of counting vertices from the error of ignoring later objects.

CLEVR: a scene is rejected when any object has fewer than 200 visible pixels,
an absolute count whatever the object's size or the image's resolution.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

import numpy as np
import trimesh

from stim3d.scenes.model import Scene, SceneObject
from stim3d.scenes.primitives import TORUS_TUBE, quat_to_matrix, unit_mesh

CLEVR_MIN_PIXELS = 200
Blockers = Literal["earlier", "all"]


def _ring(radius: float, z: float, n: int) -> np.ndarray:
    angles = 2.0 * np.pi * np.arange(n) / n
    return np.stack([radius * np.cos(angles), radius * np.sin(angles), np.full(n, z)], axis=1)


@cache
def blender_default_vertices(shape: str) -> np.ndarray:
    """Vertices of Blender's default primitive of `shape`, at stim3d's unit size (read-only).

    cube 8; UV sphere 32 segments x 16 rings = 482; cylinder 32 per cap = 64;
    cone 32 + apex = 33; torus 48 major x 12 minor segments = 576.
    """
    if shape == "cube":
        vertices = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    elif shape == "sphere":
        rings = [_ring(0.5 * np.sin(np.pi * k / 16), -0.5 * np.cos(np.pi * k / 16), 32) for k in range(1, 16)]
        vertices = np.concatenate([[[0.0, 0.0, -0.5]], *rings, [[0.0, 0.0, 0.5]]])
    elif shape == "cylinder":
        vertices = np.concatenate([_ring(0.5, -0.5, 32), _ring(0.5, 0.5, 32)])
    elif shape == "cone":
        vertices = np.concatenate([_ring(0.5, -0.5, 32), [[0.0, 0.0, 0.5]]])
    elif shape == "torus":
        major = 0.5 - TORUS_TUBE
        a, b = np.meshgrid(2 * np.pi * np.arange(48) / 48, 2 * np.pi * np.arange(12) / 12, indexing="ij")
        radial = major + TORUS_TUBE * np.cos(b)
        vertices = np.stack([radial * np.cos(a), radial * np.sin(a), TORUS_TUBE * np.sin(b)], axis=-1).reshape(-1, 3)
    else:
        raise ValueError(f"unknown shape {shape!r}")
    vertices = np.asarray(vertices, dtype=float)
    vertices.setflags(write=False)
    return vertices


def _world(points: np.ndarray, obj: SceneObject) -> np.ndarray:
    return (points * obj.size) @ quat_to_matrix(obj.rotation_quat).T + np.asarray(obj.location, dtype=float)


def _mesh(objects: list[SceneObject]) -> trimesh.Trimesh:
    parts = [trimesh.Trimesh(_world(unit_mesh(o.shape).vertices, o), unit_mesh(o.shape).faces, process=False) for o in objects]
    return trimesh.util.concatenate(parts)


def unblocked_fraction(obj: SceneObject, blockers: list[SceneObject], camera_location) -> float:
    """Fraction of `obj`'s Blender-default vertices whose segment to the camera meets none of `blockers`."""
    points = _world(blender_default_vertices(obj.shape), obj)
    if not blockers:
        return 1.0
    camera = np.asarray(camera_location, dtype=float)
    to_camera = camera - points
    length = np.linalg.norm(to_camera, axis=1)
    directions = to_camera / length[:, None]
    locations, ray_index, _ = _mesh(blockers).ray.intersects_location(points, directions, multiple_hits=False)
    hit_distance = np.linalg.norm(locations - points[ray_index], axis=1)
    blocked = np.zeros(len(points), dtype=bool)
    blocked[ray_index[hit_distance < length[ray_index]]] = True
    return float(1.0 - blocked.mean())


def dysm_visibility(scene: Scene, blockers: Blockers = "earlier") -> dict[int, float]:
    """DYSM's vertex visibility of every object; blockers: objects earlier in `scene.objects`, or all others."""
    result = {}
    for index, obj in enumerate(scene.objects):
        others = scene.objects[:index] if blockers == "earlier" else scene.objects[:index] + scene.objects[index + 1 :]
        result[obj.id] = unblocked_fraction(obj, others, scene.camera.location)
    return result


def clevr_accepts(visible_px: dict[int, float], min_pixels: int = CLEVR_MIN_PIXELS) -> bool:
    """CLEVR's rule: every object has at least `min_pixels` visible pixels."""
    return all(count >= min_pixels for count in visible_px.values())
