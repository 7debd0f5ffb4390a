"""Ray-cast visibility: what fraction of each object the camera really sees.

Definitions (docs/families.md and this docstring). Rays go through pixel centres (s x s per
pixel when `rays_per_pixel = s`), exactly the rays Cycles' object-index pass uses:
- `amodal_px`: rays that hit the object when every other object is ignored, on an
  image plane extended past the frame, so parts outside the frame count;
- `visible_px`: rays whose first hit is the object, inside the frame;
- `visibility = visible_px / amodal_px`, split into `truncation` (share of the
  amodal silhouette outside the frame) and `occlusion` (share of the in-frame
  silhouette hidden by other objects): visibility = (1 - truncation)(1 - occlusion).

How: each object is cast *alone* over the pixels of its projected bounding box
(embree through trimesh), giving its own hit distance per ray; the first-hit map
of the whole scene is then the per-ray minimum over objects (z-buffering of exact
ray hits). This is identical to casting against the union of all meshes, but it
makes adding, moving or removing one object cost one object's rays, which is
what placement and occlusion sweeps need: every object is re-measured after
every change. The ground plane is not an occluder: objects rest on it and the
camera is above it, so it never lies between the camera and an object.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np
import trimesh

from stim3d.errors import Stim3dError

from .camera import CameraGeometry, geometry
from .meshes import composed_mesh, object_mesh, object_world_vertices
from .model import Camera, ObjectTruth, Scene, SceneObject, round6


class RayBackendMissing(Stim3dError, RuntimeError):
    """trimesh has no embree: the pure-Python fallback is ~50x slower and needs huge memory."""


def _require_embree() -> None:
    if not trimesh.ray.has_embree:
        raise RayBackendMissing(
            "ray casting needs embree: install the 'embreex' package (pip install embreex); "
            "trimesh's pure-Python ray backend is too slow and memory-hungry for this"
        )


@dataclass(frozen=True)
class ObjectCast:
    """One object's rays and hits, cast alone. Sub-pixel grid coordinates (s per pixel)."""

    object_id: int
    gx: np.ndarray  # int64 sub-pixel column of each hit (may be outside the frame)
    gy: np.ndarray  # int64 sub-pixel row of each hit
    distance: np.ndarray  # float64 ray parameter of the hit (metres)
    depth: np.ndarray  # float64 depth along the camera axis (metres)
    center_depth: float  # depth of the object's bounding-box centre
    face: np.ndarray  # int64 index of the mesh face each ray hits first (a composed object's part: part_px)


def cast_object(obj: SceneObject, cam: CameraGeometry, rays_per_pixel: int = 1) -> ObjectCast:
    """Cast the rays of `obj`'s projected box against `obj` alone."""
    _require_embree()
    s = rays_per_pixel
    vertices = object_world_vertices(obj)
    u, v, depth = cam.project(vertices)
    center_depth = float(cam.project(np.asarray([obj.location]))[2][0])
    empty = np.zeros(0, dtype=np.int64)
    if np.any(depth <= 1e-6):
        # Part of the object is behind the camera: families never build this; report it unseen.
        return ObjectCast(obj.id, empty, empty, np.zeros(0), np.zeros(0), center_depth, empty)
    gx0, gx1 = int(np.floor(u.min() * s)), int(np.ceil(u.max() * s))
    gy0, gy1 = int(np.floor(v.min() * s)), int(np.ceil(v.max() * s))
    gx, gy = np.meshgrid(np.arange(gx0, gx1), np.arange(gy0, gy1))
    gx, gy = gx.ravel(), gy.ravel()
    origins, directions = cam.rays((gx + 0.5) / s, (gy + 0.5) / s)
    mesh = trimesh.Trimesh(vertices, object_mesh(obj).faces, process=False)
    locations, ray_index, face = mesh.ray.intersects_location(origins, directions, multiple_hits=False)
    if len(ray_index) == 0:
        return ObjectCast(obj.id, empty, empty, np.zeros(0), np.zeros(0), center_depth, empty)
    hit_distance = np.einsum("ij,ij->i", locations - origins[ray_index], directions[ray_index])
    hit_depth = (locations - cam.origin) @ cam.forward
    return ObjectCast(obj.id, gx[ray_index], gy[ray_index], hit_distance, hit_depth, center_depth,
                      np.asarray(face, dtype=np.int64))


@dataclass
class VisibilityResult:
    """Per-object ground truth plus the instance-id and depth maps at pixel resolution."""

    truths: list[ObjectTruth]
    instance_map: np.ndarray  # (H, W) uint16, 0 = background
    depth: np.ndarray  # (H, W) float32, inf where nothing is hit

    def visibility(self) -> dict[int, float]:
        return {t.id: t.visibility for t in self.truths}


@dataclass
class VisibilityCanvas:
    """Incremental first-hit map: add, move or remove objects; query every object's visibility.

    Object order does not matter: the result equals a single cast against all
    meshes, whatever order objects were added in.
    """

    camera: Camera
    rays_per_pixel: int = 1
    casts: dict[int, ObjectCast] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._geometry = geometry(self.camera)
        s = self.rays_per_pixel
        self._shape = (self.camera.height * s, self.camera.width * s)
        self._distance = np.full(self._shape, np.inf)
        self._ids = np.zeros(self._shape, dtype=np.int64)
        self._dirty = False

    # -- building ---------------------------------------------------------------------------
    def cast(self, obj: SceneObject) -> ObjectCast:
        return cast_object(obj, self._geometry, self.rays_per_pixel)

    def put(self, obj_or_cast: SceneObject | ObjectCast) -> ObjectCast:
        """Add an object (or replace the one with the same id)."""
        cast = obj_or_cast if isinstance(obj_or_cast, ObjectCast) else self.cast(obj_or_cast)
        replacing = cast.object_id in self.casts
        self.casts[cast.object_id] = cast
        if replacing:
            self._dirty = True
        else:
            self._composite(cast)
        return cast

    def remove(self, object_id: int) -> None:
        del self.casts[object_id]
        self._dirty = True

    def copy(self) -> VisibilityCanvas:
        clone = VisibilityCanvas(self.camera, self.rays_per_pixel, dict(self.casts))
        self._refresh()
        clone._distance, clone._ids, clone._dirty = self._distance.copy(), self._ids.copy(), False
        return clone

    def _in_frame(self, cast: ObjectCast) -> np.ndarray:
        h, w = self._shape
        return (cast.gx >= 0) & (cast.gx < w) & (cast.gy >= 0) & (cast.gy < h)

    def _composite(self, cast: ObjectCast) -> None:
        inside = self._in_frame(cast)
        gy, gx, dist = cast.gy[inside], cast.gx[inside], cast.distance[inside]
        current = self._distance[gy, gx]
        # Exact ties (coplanar faces) go to the lower id, so the result never depends on order.
        nearer = (dist < current) | ((dist == current) & (cast.object_id < self._ids[gy, gx]))
        self._distance[gy[nearer], gx[nearer]] = dist[nearer]
        self._ids[gy[nearer], gx[nearer]] = cast.object_id

    def _refresh(self) -> None:
        if self._dirty:
            self._distance.fill(np.inf)
            self._ids.fill(0)
            for object_id in sorted(self.casts):
                self._composite(self.casts[object_id])
            self._dirty = False

    # -- queries ------------------------------------------------------------------------------
    def visible_counts(self) -> dict[int, int]:
        self._refresh()
        counts = np.bincount(self._ids.ravel(), minlength=max(self.casts, default=0) + 1)
        return {object_id: int(counts[object_id]) for object_id in self.casts}

    def visibility(self) -> dict[int, float]:
        """visible / amodal per object (0 for an object with no amodal pixels)."""
        visible = self.visible_counts()
        return {
            object_id: (visible[object_id] / len(cast.gx) if len(cast.gx) else 0.0)
            for object_id, cast in self.casts.items()
        }

    def part_px(self, obj: SceneObject) -> dict[str, float]:
        """Visible pixels of each named part of composed object `obj` (on this canvas): its rays whose first hit in
        the whole scene is the object, counted by the part owning the face they hit (meshes.composed_mesh)."""
        if obj.source is None or obj.source.kind != "composed":
            raise ValueError(f"object {obj.id} is not a composed object: it has no named parts")
        self._refresh()
        cast = self.casts[obj.id]
        inside = self._in_frame(cast)
        mine = self._ids[cast.gy[inside], cast.gx[inside]] == obj.id
        owner = composed_mesh(obj.source.parts)[1]
        counts = np.bincount(owner[cast.face[inside][mine]], minlength=len(obj.source.parts))
        per_ray = float(self.rays_per_pixel ** 2)
        return {part.name: round6(counts[i] / per_ray) for i, part in enumerate(obj.source.parts)}

    def result(self) -> VisibilityResult:
        """Full ground truth, instance map and depth map (pixel resolution)."""
        self._refresh()
        s = self.rays_per_pixel
        per_ray = float(s * s)
        truths = []
        for object_id in sorted(self.casts):
            truths.append(self._truth(self.casts[object_id], per_ray))
        # Pixel-resolution maps: the sub-ray nearest the pixel centre stands for the pixel.
        centre = s // 2
        ids = self._ids[centre::s, centre::s].astype(np.uint16)
        depth = self._depth_map()[centre::s, centre::s]
        return VisibilityResult(truths=truths, instance_map=ids, depth=depth)

    def _depth_map(self) -> np.ndarray:
        depth = np.full(self._shape, np.inf, dtype=np.float32)
        for cast in self.casts.values():
            inside = self._in_frame(cast)
            gy, gx = cast.gy[inside], cast.gx[inside]
            mine = self._ids[gy, gx] == cast.object_id
            depth[gy[mine], gx[mine]] = cast.depth[inside][mine]
        return depth

    def _truth(self, cast: ObjectCast, per_ray: float) -> ObjectTruth:
        s = self.rays_per_pixel
        inside = self._in_frame(cast)
        amodal = len(cast.gx)
        in_frame = int(inside.sum())
        gy, gx = cast.gy[inside], cast.gx[inside]
        mine = self._ids[gy, gx] == cast.object_id
        visible = int(mine.sum())
        vx, vy = gx[mine], gy[mine]

        def box(xs: np.ndarray, ys: np.ndarray) -> tuple[int, int, int, int] | None:
            if len(xs) == 0:
                return None
            return (int(xs.min() // s), int(ys.min() // s), int(xs.max() // s) + 1, int(ys.max() // s) + 1)

        return ObjectTruth(
            id=cast.object_id,
            visible_px=round6(visible / per_ray),
            amodal_px=round6(amodal / per_ray),
            visibility=round6(visible / amodal) if amodal else 0.0,
            occlusion=round6(1.0 - visible / in_frame) if in_frame else 0.0,
            truncation=round6(1.0 - in_frame / amodal) if amodal else 0.0,
            bbox_visible=box(vx, vy),
            bbox_amodal=box(cast.gx, cast.gy),
            centroid_px=(round6((vx.mean() + 0.5) / s), round6((vy.mean() + 0.5) / s)) if visible else None,
            depth_min=round6(cast.depth[inside][mine].min()) if visible else None,
            depth_centroid=round6(cast.center_depth),
        )


def measure(scene: Scene, rays_per_pixel: int = 1, parts_of: Collection[int] = ()) -> VisibilityResult:
    """Ground truth of every object in `scene` as the camera sees it; the composed objects whose ids are in
    `parts_of` also record their named parts' visible pixels (`part_px`, as ava_object records its target's)."""
    canvas = VisibilityCanvas(scene.camera, rays_per_pixel)
    for obj in scene.objects:
        canvas.put(obj)
    result = canvas.result()
    if parts_of:
        result.truths = [t.model_copy(update={"part_px": canvas.part_px(scene.object(t.id))}) if t.id in parts_of
                         else t for t in result.truths]
    return result
