"""Rotations several families share: the shapes' symmetries, uniform random rotations, symmetry-breaking axes.

Split out of form_constancy.py (odd_grid uses the same rules to turn its odd object),
so that no family imports another family's module (tests/test_family_imports.py).
`REVISION` is this module's own generator revision (scenes/families/shared/__init__.py).
"""

from __future__ import annotations

import itertools

import numpy as np

from ...model import round6
from ...primitives import axis_angle_quat, matrix_to_quat, quat_to_matrix

REVISION = 1
AXISYMMETRIC = ("cylinder", "cone", "torus")  # symmetric about their own (local Z) axis


def rounded_quat(matrix: np.ndarray) -> tuple[float, float, float, float]:
    """A rotation matrix as the (w, x, y, z) quaternion item.json stores, rounded to six decimals."""
    return tuple(round6(v) for v in matrix_to_quat(matrix))  # type: ignore[return-value]


# -- symmetry ---------------------------------------------------------------------------------------

def cube_symmetries() -> list[np.ndarray]:
    """The 24 rotations that map a cube onto itself (signed permutation matrices with determinant +1)."""
    found = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1.0, -1.0), repeat=3):
            m = np.zeros((3, 3))
            for row, (col, sign) in enumerate(zip(perm, signs)):
                m[row, col] = sign
            if np.linalg.det(m) > 0:
                found.append(m)
    return found


CUBE_SYMMETRIES = cube_symmetries()


def rotation_angle_deg(matrix: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip((np.trace(matrix) - 1.0) / 2.0, -1.0, 1.0))))


def axis_angle_to(own_axis: np.ndarray, axis: np.ndarray) -> float:
    """Angle in degrees between two lines (0..90)."""
    cosine = float(abs(float(own_axis @ axis)) / np.linalg.norm(own_axis) / np.linalg.norm(axis))
    return float(np.degrees(np.arccos(min(1.0, cosine))))


def breaks_symmetry(shape: str, base: np.ndarray, axis: np.ndarray, theta_deg: float, min_axis_angle_deg: float = 89.9) -> bool:
    """Whether turning a shape of world orientation `base` by theta about world `axis` changes what it looks like.

    Sphere: never. Cylinder, cone, torus: when the axis is at least `min_axis_angle_deg`
    away from the shape's own axis (89.9: perpendicular). Cube: when the turn,
    expressed in the cube's own frame, is more than a degree from each of its 24 symmetries.
    """
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    if shape == "sphere":
        return False
    if shape in AXISYMMETRIC:
        return axis_angle_to(base[:, 2], axis) >= min_axis_angle_deg
    turn = quat_to_matrix(axis_angle_quat(axis, theta_deg))
    local = base.T @ turn @ base
    return all(rotation_angle_deg(local @ sym.T) > 1.0 for sym in CUBE_SYMMETRIES)


# -- drawing ----------------------------------------------------------------------------------------

def random_unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A rotation drawn uniformly (normalised Gaussian quaternion), rounded as item.json stores it."""
    q = rng.normal(size=4)
    return quat_to_matrix(rounded_quat(quat_to_matrix(tuple(q / np.linalg.norm(q)))))


def object_axis(shape: str, base: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random axis that breaks the shape's symmetry: perpendicular to its own axis, or any axis for a cube."""
    axis = random_unit(rng)
    if shape in AXISYMMETRIC:
        own = base[:, 2]
        axis = axis - (axis @ own) * own
        axis /= np.linalg.norm(axis)
    return axis
