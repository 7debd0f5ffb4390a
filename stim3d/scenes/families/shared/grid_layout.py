"""Grids of objects seen by a camera: cell centres, a camera that frames them, and the image-order check.

Shared by the grid families (spatial_grid, odd_grid). Rows and columns are
numbered 1-based from the top-left of the *image*; a layout is only accepted when
projecting the objects' centres confirms that numbering (`order_preserved`), so a
question's "row 2, column 5" always means what a viewer of the image reads.
"""

from __future__ import annotations

import numpy as np

from ...camera import geometry, look_at
from ...model import Camera, SceneObject
from ..base import Frame

REVISION = 1  # bumped like a family's revision (scenes/families/shared/__init__.py)

FIT_STEPS = 8  # fixed-point steps of the framing distance


def cell_centre(row: int, col: int, rows: int, cols: int, pitch: float, row_pitch: float) -> tuple[float, float]:
    """Grid-plane position of a cell: columns along +x (left to right), row 1 at the far/top end (+y)."""
    return (col - (cols + 1) / 2.0) * pitch, ((rows + 1) / 2.0 - row) * row_pitch


def view_direction(elevation: float, azimuth: float) -> np.ndarray:
    """Unit vector from the target to a camera in front of it (-y side), `elevation` up, `azimuth` aside (radians)."""
    return np.array([np.sin(azimuth) * np.cos(elevation), -np.cos(azimuth) * np.cos(elevation), np.sin(elevation)])


def framing_camera(frame: Frame, target: np.ndarray, direction: np.ndarray, points: np.ndarray, distance: float,
                   focal_35mm: float, fill: float) -> Camera:
    """Camera on the line target + distance * direction whose image holds `points` within `fill` of the frame.

    The points' spread in the image scales about as 1/distance, so a few fixed-point
    steps from the starting `distance` fit it.
    """
    for _ in range(FIT_STEPS):
        camera = look_at(target + distance * direction, target, frame.width, frame.height, focal_35mm=focal_35mm)
        u, v, _ = geometry(camera).project(points)
        spread = max(
            2.0 * np.abs(u - camera.cx).max() / (fill * frame.width),
            2.0 * np.abs(v - camera.cy).max() / (fill * frame.height),
        )
        distance *= spread
    return look_at(target + distance * direction, target, frame.width, frame.height, focal_35mm=focal_35mm)


def order_preserved(objects: list[SceneObject], camera: Camera) -> bool:
    """Rows and columns in the image follow the grid.

    Within each row the projected centres run left to right by column, and every
    centre of row r lies above (smaller image y) every centre of row r + 1, so the
    rows do not interleave. `objects` are the grid's objects, each with integer
    `row` and `col` attributes, one per cell.
    """
    u, v, _ = geometry(camera).project(np.array([o.location for o in objects]))
    where = {(int(o.attributes["row"]), int(o.attributes["col"])): (u[i], v[i]) for i, o in enumerate(objects)}
    rows = max(r for r, _ in where)
    cols = max(c for _, c in where)
    for r in range(1, rows + 1):
        if any(where[(r, c)][0] >= where[(r, c + 1)][0] for c in range(1, cols)):
            return False
    for r in range(1, rows):
        if max(where[(r, c)][1] for c in range(1, cols + 1)) >= min(where[(r + 1, c)][1] for c in range(1, cols + 1)):
            return False
    return True


def centred_camera(frame: Frame, target: np.ndarray, direction: np.ndarray, points: np.ndarray, distance: float,
                   focal_35mm: float, fill: float, steps: int = 4) -> Camera:
    """`framing_camera`, then panned (same view direction) until the points' projected box is centred.

    Perspective makes the near part of a grid on the ground project larger, so a
    camera aimed at the grid's 3D centre leaves the far side of the frame empty;
    centring the projected box lets the grid fill `fill` of the frame.
    """
    target = np.asarray(target, dtype=float)
    camera = framing_camera(frame, target, direction, points, distance, focal_35mm, fill)
    for _ in range(steps):
        view = geometry(camera)
        u, v, _ = view.project(points)
        du, dv = 0.5 * (u.min() + u.max()) - camera.cx, 0.5 * (v.min() + v.max()) - camera.cy
        distance = float(np.linalg.norm(np.asarray(camera.location) - target))
        target = target + distance / camera.fx * (du * view.rotation[:, 0] - dv * view.rotation[:, 1])
        camera = framing_camera(frame, target, direction, points, distance, focal_35mm, fill)
    return camera
