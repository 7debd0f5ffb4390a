"""The OddGrid-3D grid's objects: one orientation for every cell, and the odd cell's differences built in.

scenes/families/oddgrid/odd_grid.py draws the plan and the camera; this module builds the objects
(`build_grid`, ids 1..rows*cols, row by row) in the orientation `base_orientation` draws, and turns
the odd cell about the symmetry-breaking axis whose turn changes its silhouette most (`_choose_axis`).
"""

from __future__ import annotations

import numpy as np

from ...camera import geometry
from ...model import Camera, Color, SceneObject, round6
from ...placement import InfeasibleError
from ...primitives import axis_angle_quat, quat_to_matrix
from ...visibility import cast_object
from ..shared.grid_layout import cell_centre
from ..shared.rotation import AXISYMMETRIC, axis_angle_to, breaks_symmetry, object_axis, random_rotation
from .odd_attributes import OddSpec
from .odd_layout import PITCH, SIZE, Plane, place_object, quat_of, symmetry_shape

BOARD_AXIS_DEG = (30.0, 60.0)  # a round shape's own axis vs the line of sight, on the board
AXIS_CANDIDATES = 6


def _silhouette(obj: SceneObject, camera: Camera, rays: int) -> set[tuple[int, int]]:
    cast = cast_object(obj, geometry(camera), rays)
    return set(zip(cast.gx.tolist(), cast.gy.tolist()))


def _choose_axis(kind: str, base: np.ndarray, angle: float, probe: SceneObject, camera: Camera, rays: int,
                 rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Among AXIS_CANDIDATES symmetry-breaking axes, the one whose turn changes the silhouette most."""
    shape = symmetry_shape(kind)
    before = _silhouette(probe, camera, rays)
    best: tuple[np.ndarray, float] | None = None
    tried = 0
    for _ in range(AXIS_CANDIDATES * 10):
        axis = object_axis(shape, base, rng)
        if not breaks_symmetry(shape, base, axis, angle):
            continue
        turned = probe.model_copy(update={"rotation_quat": quat_of(quat_to_matrix(axis_angle_quat(axis, angle)) @ base)})
        change = len(before ^ _silhouette(turned, camera, rays)) / max(len(before), 1)
        if best is None or change > best[1]:
            best = (axis, change)
        tried += 1
        if tried == AXIS_CANDIDATES:
            break
    if best is None:
        raise InfeasibleError("rotation_axis", f"no axis breaks the {shape}'s symmetry")
    return best


def base_orientation(plane: Plane, shape: str, camera: Camera, rng: np.random.Generator) -> np.ndarray:
    """Every object's orientation: upright with one random yaw on the ground, one random turn on the board.

    On the board a cylinder's, cone's or torus's own axis is BOARD_AXIS_DEG off the line of
    sight: neither end-on (a disc, whose turns about most axes barely show) nor side-on (a
    torus seen edge-on is a thin bar).
    """
    if plane.layout == "ground":
        return quat_to_matrix(axis_angle_quat((0.0, 0.0, 1.0), float(rng.uniform(0.0, 360.0))))
    forward = geometry(camera).forward
    shape = symmetry_shape(shape)
    while True:
        rotation = random_rotation(rng)
        if shape not in AXISYMMETRIC or BOARD_AXIS_DEG[0] <= axis_angle_to(rotation[:, 2], forward) <= BOARD_AXIS_DEG[1]:
            return rotation


def build_grid(plane: Plane, shape: str, base: np.ndarray, colors: tuple[Color, Color], spec: OddSpec,
               camera: Camera, rays: int, rng: np.random.Generator) -> list[SceneObject]:
    """The grid's objects, row by row (ids 1..rows*cols); the odd one records its nominal differences."""
    size = SIZE * PITCH
    objects: list[SceneObject] = []
    for row in range(1, plane.rows + 1):
        for col in range(1, plane.cols + 1):
            a, b = cell_centre(row, col, plane.rows, plane.cols, PITCH, plane.row_pitch)
            attributes: dict = {"row": row, "col": col}
            if not (spec.present and (row, col) == (spec.row, spec.col)):
                objects.append(place_object(len(objects) + 1, shape, size, plane.at(a, b), base, colors[0], plane, attributes))
                continue
            recorded = dict(spec.recorded)
            odd_size, rotation, centre = size * (spec.size_ratio or 1.0), base, plane.at(a, b)
            kind = spec.odd_object or shape
            if spec.size_ratio is not None:
                recorded["size_ratio"] = spec.size_ratio
            if spec.rotation_deg is not None:
                probe = place_object(1, kind, odd_size, centre, base, colors[1], plane, {})
                axis, change = _choose_axis(kind, base, spec.rotation_deg, probe, camera, rays, rng)
                rotation = quat_to_matrix(axis_angle_quat(axis, spec.rotation_deg)) @ base
                recorded.update(rotation_deg=spec.rotation_deg, axis_x=round6(axis[0]), axis_y=round6(axis[1]),
                                axis_z=round6(axis[2]), silhouette_change=round6(change))
            if spec.shift_share is not None:
                da, db = spec.shift_share[0] * PITCH, spec.shift_share[1] * plane.row_pitch
                centre = plane.at(a + da, b + db)
                recorded.update(shift_share_x=spec.shift_share[0], shift_share_y=spec.shift_share[1],
                                shift_m_x=round6(da), shift_m_y=round6(db))
            attributes.update(odd=True, odd_attributes="+".join(spec.attributes), **recorded)
            objects.append(place_object(len(objects) + 1, kind, odd_size, centre, rotation, colors[1], plane, attributes))
    return objects
