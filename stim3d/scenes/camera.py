"""Pinhole camera in Blender's convention: projection, pixel rays, and Blender's lens settings.

The camera looks down its local -Z axis with +Y up (Blender). Image coordinates
have their origin at the top-left corner, x right, y down; pixel (i, j) covers
[i, i + 1) x [j, j + 1) and its centre is (i + 0.5, j + 0.5). Cycles' object-index
pass and this module's rays agree on that convention, which is what makes the
ray-cast instance map equal Blender's pass pixel for pixel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Camera, round6
from .primitives import matrix_to_quat, quat_to_matrix

SENSOR_MM = 36.0  # Blender's default sensor width; only the ratio lens / sensor matters


def look_at(location, target, width: int, height: int, focal_35mm: float = 40.0) -> Camera:
    """A camera at `location` aimed at `target`, world Z up, with a 35 mm-equivalent focal length."""
    eye = np.asarray(location, dtype=float)
    forward = np.asarray(target, dtype=float) - eye
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    if np.linalg.norm(right) < 1e-9:
        raise ValueError("camera looks straight up or down; choose a target off the vertical")
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    rotation = np.stack([right, up, -forward], axis=1)  # columns: camera x, y, z in world
    fx = focal_35mm / SENSOR_MM * max(width, height)
    return Camera(
        width=width,
        height=height,
        fx=round6(fx),
        fy=round6(fx),
        cx=width / 2.0,
        cy=height / 2.0,
        location=tuple(round6(v) for v in eye),
        rotation_quat=tuple(round6(v) for v in matrix_to_quat(rotation)),
    )


@dataclass(frozen=True)
class CameraGeometry:
    """Precomputed rotation for fast projection; build with `geometry(camera)`."""

    camera: Camera
    rotation: np.ndarray  # camera-to-world, (3, 3)
    origin: np.ndarray

    def to_camera(self, points: np.ndarray) -> np.ndarray:
        return (np.asarray(points, dtype=float) - self.origin) @ self.rotation

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(u, v, depth) of world points: continuous pixel coordinates, depth along the view axis."""
        cam = self.to_camera(points)
        depth = -cam[:, 2]
        c = self.camera
        with np.errstate(divide="ignore", invalid="ignore"):
            u = c.cx + c.fx * cam[:, 0] / depth
            v = c.cy - c.fy * cam[:, 1] / depth
        return u, v, depth

    def rays(self, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World-space ray origins and unit directions through image points (xs, ys), continuous."""
        c = self.camera
        local = np.stack(
            [(xs - c.cx) / c.fx, -(ys - c.cy) / c.fy, -np.ones_like(xs, dtype=float)], axis=1
        )
        directions = local @ self.rotation.T
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        origins = np.broadcast_to(self.origin, directions.shape)
        return origins, directions

    @property
    def forward(self) -> np.ndarray:
        return -self.rotation[:, 2]


def geometry(camera: Camera) -> CameraGeometry:
    return CameraGeometry(
        camera=camera,
        rotation=quat_to_matrix(camera.rotation_quat),
        origin=np.asarray(camera.location, dtype=float),
    )


def blender_lens(camera: Camera) -> dict[str, float | str]:
    """Blender camera settings that reproduce these intrinsics (sensor fit AUTO, square pixels)."""
    if abs(camera.fx - camera.fy) > 1e-6 * camera.fx:
        raise ValueError(f"Blender needs square pixels: fx={camera.fx} and fy={camera.fy} differ")
    largest = max(camera.width, camera.height)
    return {
        "sensor_fit": "AUTO",
        "sensor_width": SENSOR_MM,
        "lens": camera.fx * SENSOR_MM / largest,
        "shift_x": (camera.width / 2.0 - camera.cx) / largest,
        "shift_y": (camera.cy - camera.height / 2.0) / largest,
    }
