"""Placing objects on the ground under constraints, with bounded retries.

A `Layout` owns the objects placed so far, their collision meshes and the
incremental visibility canvas. Every candidate is checked against every
constraint at once, and every object already placed is re-measured (a later
object can hide an earlier one):
- in frame: the whole silhouette inside the image with a margin (no truncation);
- no interpenetration: mesh-to-mesh distance (FCL on the shared meshes) at least `clearance`;
- visibility: each object's measured visibility at least its floor, at most its ceiling.

Retries are loops with a fixed budget; running out raises `InfeasibleError`
naming the constraint that rejected the most candidates, never recursion.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import fcl
import numpy as np
import trimesh

from stim3d.errors import Stim3dError

from .camera import geometry
from .meshes import mesh_key, object_mesh, object_world_vertices
from .model import Camera, SceneObject, round6
from .primitives import axis_angle_quat, quat_to_matrix, world_vertices
from .visibility import VisibilityCanvas


class InfeasibleError(Stim3dError, RuntimeError):
    """An item whose constraints could not be met within the retry budget."""

    def __init__(self, constraint: str, detail: str):
        super().__init__(f"constraint '{constraint}' could not be met: {detail}")
        self.constraint = constraint
        self.detail = detail


def resting_pose(shape: str, size: float, x: float, y: float, rotation_quat=(1.0, 0.0, 0.0, 0.0)) -> tuple:
    """Location (bounding-box centre) that puts the rotated mesh's lowest point on z = 0."""
    vertices = world_vertices(shape, size, (0.0, 0.0, 0.0), rotation_quat)
    return (round6(x), round6(y), round6(-vertices[:, 2].min()))


def yaw_quat(degrees: float) -> tuple[float, float, float, float]:
    return tuple(round6(v) for v in axis_angle_quat((0.0, 0.0, 1.0), degrees))  # type: ignore[return-value]


def footprint_radius(obj: SceneObject) -> float:
    """Radius of the object's ground footprint about its centre (from its mesh)."""
    vertices = object_world_vertices(obj, location=(0.0, 0.0, 0.0))
    return float(np.hypot(vertices[:, 0], vertices[:, 1]).max())


_BVH_CACHE_SIZE = 32
_bvh_cache: dict[tuple[str, float], fcl.BVHModel] = {}


def _bvh(obj: SceneObject) -> fcl.BVHModel:
    """FCL's bounding-volume hierarchy of the object's mesh in its own frame, cached per (geometry, size):
    building it is the slow part.

    Sizes are drawn per object, so hits come only from within one item; a small cache keeps
    them all (measured: the same hits at 16 as at 512 entries) while 512 entries of ~0.8 MB made
    a long-lived batch worker grow by ~1.6 MB per item (bench/batch_memory.py). Oldest entry out first.
    """
    key = (mesh_key(obj), float(obj.size))
    model = _bvh_cache.pop(key, None)
    if model is None:
        mesh = object_mesh(obj)
        model = trimesh.collision.mesh_to_BVH(trimesh.Trimesh(mesh.vertices * obj.size, mesh.faces, process=False))
        while len(_bvh_cache) >= _BVH_CACHE_SIZE:
            _bvh_cache.pop(next(iter(_bvh_cache)))
    _bvh_cache[key] = model  # re-inserted: most recently used last
    return model


def _bounding_radius(obj: SceneObject) -> float:
    return float(np.linalg.norm(object_mesh(obj).vertices, axis=1).max()) * obj.size


def mesh_distance(a: SceneObject, b: SceneObject, clearance: float = 0.0) -> float:
    """Distance between two objects' meshes (0 when they intersect).

    Bounding spheres settle most pairs; FCL measures the rest on the real triangles.
    Returns a lower bound greater than `clearance` whenever the spheres alone prove it.
    """
    gap = float(np.linalg.norm(np.subtract(a.location, b.location))) - _bounding_radius(a) - _bounding_radius(b)
    if gap > clearance:
        return gap
    objects = [
        fcl.CollisionObject(_bvh(o), fcl.Transform(quat_to_matrix(o.rotation_quat), np.asarray(o.location, dtype=float)))
        for o in (a, b)
    ]
    return max(0.0, float(fcl.distance(objects[0], objects[1], fcl.DistanceRequest(), fcl.DistanceResult())))


@dataclass
class Bounds:
    """Per-object visibility limits: floor always, ceiling for an object that must be partly hidden."""

    floor: float = 0.0
    ceiling: float = 1.0


@dataclass
class Layout:
    camera: Camera
    clearance: float = 0.03  # metres between any two meshes
    frame_margin_px: float = 2.0
    rays_per_pixel: int = 1
    objects: dict[int, SceneObject] = field(default_factory=dict)
    bounds: dict[int, Bounds] = field(default_factory=dict)
    rejections: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.canvas = VisibilityCanvas(self.camera, self.rays_per_pixel)
        self._geometry = geometry(self.camera)

    # -- checks ---------------------------------------------------------------------------------
    def in_frame(self, obj: SceneObject) -> bool:
        u, v, depth = self._geometry.project(object_world_vertices(obj))
        m = self.frame_margin_px
        return bool(
            np.all(depth > 0.1)
            and u.min() >= m and v.min() >= m
            and u.max() <= self.camera.width - m and v.max() <= self.camera.height - m
        )

    def clear_of_others(self, obj: SceneObject) -> bool:
        return all(
            mesh_distance(obj, other, self.clearance) >= self.clearance
            for other_id, other in self.objects.items()
            if other_id != obj.id
        )

    def try_put(self, obj: SceneObject, bounds: Bounds) -> bool:
        """Place or move `obj` if every constraint holds afterwards; else change nothing."""
        if not self.in_frame(obj):
            self.rejections["in_frame"] += 1
            return False
        if not self.clear_of_others(obj):
            self.rejections["no_interpenetration"] += 1
            return False
        trial = self.canvas.copy()
        trial.put(obj)
        visibility = trial.visibility()
        all_bounds = {**self.bounds, obj.id: bounds}
        for object_id, vis in visibility.items():
            b = all_bounds[object_id]
            if vis < b.floor:
                self.rejections["min_visibility"] += 1
                return False
            if vis > b.ceiling:
                self.rejections["least_visibility_band"] += 1
                return False
        self._commit(obj, bounds, trial)
        return True

    def _commit(self, obj: SceneObject, bounds: Bounds, canvas: VisibilityCanvas) -> None:
        self.objects[obj.id] = obj
        self.bounds[obj.id] = bounds
        self.canvas = canvas

    def visibility(self) -> dict[int, float]:
        return self.canvas.visibility()

    def worst_constraint(self) -> str:
        return self.rejections.most_common(1)[0][0] if self.rejections else "placement"

    # -- sampling -------------------------------------------------------------------------------
    def random_ground_point(self, rng: np.random.Generator, inset: float = 0.08) -> tuple[float, float] | None:
        """A ground point under a uniformly drawn image point (objects spread evenly in the picture)."""
        w, h = self.camera.width, self.camera.height
        u = rng.uniform(inset * w, (1 - inset) * w)
        v = rng.uniform(0.25 * h, (1 - inset) * h)
        origin, direction = self._geometry.rays(np.array([u]), np.array([v]))
        if direction[0, 2] >= -1e-3:
            return None
        t = -origin[0, 2] / direction[0, 2]
        point = origin[0] + t * direction[0]
        return float(point[0]), float(point[1])

    def place_randomly(
        self,
        make: Callable[[float, float, float], SceneObject],
        rng: np.random.Generator,
        bounds: Bounds,
        attempts: int = 200,
    ) -> SceneObject | None:
        """Draw positions (and a yaw) until `make(x, y, yaw)` fits; None when the budget runs out."""
        for _ in range(attempts):
            point = self.random_ground_point(rng)
            yaw = float(rng.uniform(0.0, 360.0))
            if point is None:
                continue
            obj = make(point[0], point[1], yaw)
            if self.try_put(obj, bounds):
                return obj
        return None


def occluder_path(layout: Layout, target: SceneObject, occluder: SceneObject, gap: float) -> tuple[np.ndarray, np.ndarray]:
    """Start point straight in front of `target` (towards the camera) and the sideways direction.

    The occluder slides along this line on the ground; at offset 0 it hides the
    most of the target, far out it hides nothing.
    """
    cam_xy = np.asarray(layout.camera.location[:2], dtype=float)
    target_xy = np.asarray(target.location[:2], dtype=float)
    toward = cam_xy - target_xy
    toward /= np.linalg.norm(toward)
    distance = footprint_radius(target) + footprint_radius(occluder) + gap
    start = target_xy + toward * distance
    sideways = np.array([-toward[1], toward[0]])
    return start, sideways


def solve_occluder_offset(
    visibility_at: Callable[[float], float],
    level: float,
    max_offset: float,
    tolerance: float,
    iterations: int = 40,
) -> tuple[float, float] | None:
    """Offset along the path where the target's visibility is within `tolerance` of `level`.

    Bisection on [0, max_offset]: visibility rises with the offset as the
    occluder slides off the target. Returns (offset, achieved) or None when
    the level is outside [visibility(0), visibility(max_offset)].
    """
    low, high = 0.0, max_offset
    v_low, v_high = visibility_at(low), visibility_at(high)
    if abs(v_low - level) <= tolerance:
        return low, v_low
    if abs(v_high - level) <= tolerance:
        return high, v_high
    if not v_low < level < v_high:
        return None
    for _ in range(iterations):
        mid = 0.5 * (low + high)
        v_mid = visibility_at(mid)
        if abs(v_mid - level) <= tolerance:
            return mid, v_mid
        if v_mid < level:
            low = mid
        else:
            high = mid
    return None
