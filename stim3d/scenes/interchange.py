"""Camera matrices and 3D boxes in the forms other tools read, from an item's scene model.

Conventions (docs/architecture.md, Contracts):
- `K` = [[fx, 0, cx], [0, fy, cy], [0, 0, 1]] maps OpenCV camera coordinates (x right,
  y down, z forward) to continuous pixel coordinates whose origin is the top-left corner
  of the top-left pixel, so a pixel centre is at (i + 0.5, j + 0.5), as every pixel
  quantity in item.json (scenes/camera.py). For a tool that puts pixel centres on
  integers, subtract 0.5 from cx and cy.
- `camera_to_world_blender`: the camera's pose as Blender has it (looks down its local -Z,
  +Y up); `camera_to_world_opencv` = the same pose with the camera's Y and Z axes
  flipped (looks down +Z, +Y down). Both are 4x4, row-major, world Z up, metres.
- The normals pass (`normals.npy`, render/backends/blender.py) holds unit normals in
  OpenCV camera coordinates, the frame of `K` and `camera_to_world_opencv`: a
  surface facing the camera has z < 0; NaN where the pixel's ray hits nothing.
- A 3D box is the object's own bounding box (its `dimensions`, centred on `location`)
  turned by its rotation: oriented, not axis-aligned.
"""

from __future__ import annotations

import numpy as np

from stim3d.scenes.model import Box3D, Camera, CameraMatrices, GroundTruth, Item, SceneObject, round6
from stim3d.scenes.primitives import quat_to_matrix

BLENDER_TO_OPENCV = np.diag([1.0, -1.0, -1.0])  # camera-local axes: flip Y and Z


def _rounded(matrix: np.ndarray) -> list[list[float]]:
    return [[round6(float(v)) + 0.0 for v in row] for row in matrix]  # + 0.0: no "-0.0" in JSON


def intrinsics(camera: Camera) -> np.ndarray:
    """K (3x3) of `camera`, see the module docstring."""
    return np.array([[camera.fx, 0.0, camera.cx], [0.0, camera.fy, camera.cy], [0.0, 0.0, 1.0]])


def camera_to_world(camera: Camera, convention: str = "blender") -> np.ndarray:
    """The 4x4 camera-to-world matrix, `blender` (-Z forward, +Y up) or `opencv` (+Z forward, +Y down)."""
    rotation = quat_to_matrix(camera.rotation_quat)
    if convention == "opencv":
        rotation = rotation @ BLENDER_TO_OPENCV
    elif convention != "blender":
        raise ValueError(f"unknown camera convention {convention!r}; allowed: blender, opencv")
    matrix = np.eye(4)
    matrix[:3, :3] = rotation
    matrix[:3, 3] = camera.location
    return matrix


def normals_to_camera(world: np.ndarray, camera: Camera) -> np.ndarray:
    """(H, W, 3) world-space normals -> unit normals in OpenCV camera coordinates, float32.

    A pixel whose normal is (near) zero (Cycles writes 0 where a ray hits nothing) becomes NaN.
    """
    rotation = camera_to_world(camera, "opencv")[:3, :3]
    world = np.asarray(world, dtype=np.float64)
    length = np.linalg.norm(world, axis=-1, keepdims=True)
    hit = length > 0.5
    camera_space = (world / np.where(hit, length, 1.0)) @ rotation  # row vectors: n_cam = R^T n_world
    return np.where(hit, camera_space, np.nan).astype(np.float32)


def camera_matrices(camera: Camera) -> CameraMatrices:
    k = intrinsics(camera)
    return CameraMatrices(
        K=tuple(tuple(row) for row in _rounded(k)),
        camera_to_world_blender=_rounded(camera_to_world(camera, "blender")),
        camera_to_world_opencv=_rounded(camera_to_world(camera, "opencv")),
    )


def box_3d(obj: SceneObject) -> Box3D:
    """The object's oriented box; corners ordered by the signs of (x, y, z) in its own frame, x slowest."""
    half = np.asarray(obj.dimensions, dtype=float) / 2.0
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    corners = (signs * half) @ quat_to_matrix(obj.rotation_quat).T + np.asarray(obj.location, dtype=float)
    return Box3D(id=obj.id, center=obj.location, size=obj.dimensions, rotation_quat=obj.rotation_quat,
                 corners=[tuple(round6(float(v)) + 0.0 for v in c) for c in corners])


def project(camera: Camera, points: np.ndarray) -> np.ndarray:
    """(N, 3) world points -> (N, 3) of (u, v, depth) through K and the OpenCV pose: what a reader of the
    matrices computes (the tests compare it with the ray caster's pixels)."""
    world_to_camera = np.linalg.inv(camera_to_world(camera, "opencv"))
    homogeneous = np.c_[np.asarray(points, dtype=float), np.ones(len(points))]
    local = (homogeneous @ world_to_camera.T)[:, :3]
    pixels = local @ intrinsics(camera).T
    return np.c_[pixels[:, :2] / pixels[:, 2:3], local[:, 2]]


def with_interchange(item: Item) -> Item:
    """`item` with its camera matrices and 3D boxes in the ground truth (the rendered item.json carries them)."""
    truth: GroundTruth = item.ground_truth.model_copy(update={
        "camera_matrices": camera_matrices(item.scene.camera),
        "boxes_3d": [box_3d(obj) for obj in item.scene.objects],
    })
    return item.model_copy(update={"ground_truth": truth})
