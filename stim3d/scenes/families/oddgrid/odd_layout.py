"""Where an odd-one-out grid's objects go: the grid's plane, its objects, the board and the labels' room.

Two layouts share one description, `Plane`: cell (a, b) offsets from
`grid_layout.cell_centre` map to `origin + a * right + b * up`, on the ground
(`up` = +y, away from the camera; objects rest on the ground) or on a vertical
board facing the camera (`up` = +z; objects float BOARD_GAP in front of the
board's face). Row numbers go left of column 1 and column numbers above row 1
(scenes/families/oddgrid/grid_labels.py); the camera frames that room in every variant, so
a scene looks the same with and without its labels.
"""

from __future__ import annotations

import numpy as np

from ...camera import geometry
from ...meshes import GROUND_CLEARANCE, source_mesh
from ...model import Camera, Color, ObjectTruth, SceneObject, round6
from ...object_library import composed_source, entry, library
from ...placement import resting_pose
from ...primitives import matrix_to_quat, quat_to_matrix, unit_dimensions
from ..shared.grid_layout import cell_centre
from .grid_labels import BLOCK_HEIGHT, DOT_SIZE, label_objects, number_width

PITCH = 1.0  # metres between column centres (and between rows on the board)
GROUND_ROW_PITCH = 1.3  # rows on the ground recede from the camera: they need more room
SIZE = 0.48  # base object size as a share of the pitch: an odd cube (115 %, turned, shifted 12 %) still clears its neighbour
BOARD_GAP = 0.6  # metres from the grid's plane to the board's face
BOARD_COLOR = Color(name="board", srgb=(0.82, 0.82, 0.8))
LABEL_GAP = {"ground": (0.35, 1.0), "board": (0.3, 0.3)}  # metres from the grid's objects to (row, column) labels


class Plane:
    """The grid's plane: cell (a, b) offsets from `cell_centre` map to origin + a * right + b * up."""

    def __init__(self, layout: str, rows: int, cols: int):
        self.layout = layout
        self.row_pitch = GROUND_ROW_PITCH if layout == "ground" else PITCH
        self.right = np.array([1.0, 0.0, 0.0])
        self.up = np.array([0.0, 1.0, 0.0]) if layout == "ground" else np.array([0.0, 0.0, 1.0])
        height = 0.0 if layout == "ground" else rows / 2.0 * PITCH + 1.0
        self.origin = np.array([0.0, 0.0, height])
        self.rows, self.cols = rows, cols
        side, top = LABEL_GAP[layout]
        half = SIZE * PITCH * 0.6
        self.label_right = cell_centre(1, 1, rows, cols, PITCH, self.row_pitch)[0] - half - side  # row labels end here
        self.label_bottom = cell_centre(1, 1, rows, cols, PITCH, self.row_pitch)[1] + half + top  # column labels start

    def at(self, a: float, b: float) -> np.ndarray:
        return self.origin + a * self.right + b * self.up

    def extent(self) -> np.ndarray:
        """Corners of everything the camera must frame: the grid, room above it, and the labels' room."""
        a0 = self.label_right - number_width(self.rows)
        a1 = (self.cols / 2.0) * PITCH
        b0 = -(self.rows / 2.0) * self.row_pitch
        b1 = self.label_bottom + BLOCK_HEIGHT
        lift = SIZE * PITCH * 1.2
        normal = np.cross(self.right, self.up)
        return np.array([self.at(a, b) + h * normal for a in (a0, a1) for b in (b0, b1)
                         for h in ((0.0, lift) if self.layout == "ground" else (-lift / 2, lift / 2))])

    def labels(self, first_id: int, eye: np.ndarray | None = None) -> list[SceneObject]:
        """The row and column numbers' dot cubes; with `eye` (the camera's position), placed in line with it.

        The labels lie on the ground or the board's face, but the objects' centres
        stand above the ground or float BOARD_GAP in front of the board: seen from
        the side, a label straight beside its row would drift towards the next row
        by parallax (a third of a row pitch at the board's far rows). With `eye`,
        each label's centre goes where the line from the eye through the point
        beside its row, at the objects' centre height, meets the labels' plane, so
        in the image it sits exactly in line with the row (or column) it names.
        """
        anchors = []
        for row in range(1, self.rows + 1):
            b = cell_centre(row, 1, self.rows, self.cols, PITCH, self.row_pitch)[1]
            anchors.append(("row", row, self.at(self.label_right - number_width(row) / 2.0, b)))
        for col in range(1, self.cols + 1):
            a = cell_centre(1, col, self.rows, self.cols, PITCH, self.row_pitch)[0]
            anchors.append(("col", col, self.at(a, self.label_bottom + BLOCK_HEIGHT / 2.0)))
        normal = np.cross(self.right, self.up)  # from the labels' plane towards the camera side
        if self.layout == "ground":
            lift = np.array([0.0, 0.0, DOT_SIZE / 2.0])
            centres = SIZE * PITCH / 2.0 * normal  # objects rest on the ground: centres about half a size up
        else:
            lift = np.array([0.0, BOARD_GAP - DOT_SIZE / 2.0 - 0.002, 0.0])
            centres = np.zeros(3)  # objects float in the grid's plane; `lift` takes the labels onto the board
        if eye is not None:
            eye = np.asarray(eye, dtype=float)
            moved = []
            for axis, number, anchor in anchors:
                beside = anchor + centres  # where the label's centre would be at the objects' depth
                t = float(np.dot(anchor + lift - eye, normal) / np.dot(beside - eye, normal))  # meets the labels' plane
                moved.append((axis, number, eye + t * (beside - eye) - lift))
            anchors = moved
        return label_objects(first_id, anchors, self.right, self.up, lift)


def quat_of(matrix: np.ndarray) -> tuple[float, float, float, float]:
    return tuple(round6(v) for v in matrix_to_quat(matrix))  # type: ignore[return-value]


def kind_of(obj: SceneObject) -> str:
    """What `place_object` takes to build the object again: its primitive, or its library object's name."""
    return obj.source.name if obj.source is not None else obj.shape


def symmetry_shape(kind: str) -> str:
    """The primitive whose symmetry rules (scenes/families/shared/rotation.py) a cell's object follows.

    A library object marked `symmetric` (a tree, a lamp, a traffic cone) looks the same turned about its own
    vertical axis, like a cone; any other has no symmetry a 5-25 degree turn could hit, like a cube.
    """
    if kind not in library():
        return kind
    return "cone" if entry(kind).symmetric else "cube"


def place_library(object_id: int, name: str, size: float, centre: np.ndarray, rotation: np.ndarray, color: Color,
                  plane: Plane, attributes: dict) -> SceneObject:
    """Library object `name` in a cell: resting on the ground (GROUND_CLEARANCE, scenes/meshes.py) or floating at
    `centre` in front of the board, its longest extent `size`."""
    source = composed_source(name)
    quat = quat_of(rotation)
    unit = source_mesh(source).vertices
    x, y, z = (round6(v) for v in centre)
    if plane.layout == "ground":  # the stored (rounded) turn decides the lowest vertex, as it does in Blender
        z = round6(GROUND_CLEARANCE * size - float(((unit * size) @ quat_to_matrix(quat).T)[:, 2].min()))
    extents = unit.max(axis=0) - unit.min(axis=0)
    return SceneObject(id=object_id, shape="composed", size=round6(size), dimensions=tuple(round6(d * size) for d in extents),
                       location=(x, y, z), rotation_quat=quat, color=color, attributes={**attributes, "object": name},
                       source=source)


def place_object(object_id: int, shape: str, size: float, centre: np.ndarray, rotation: np.ndarray, color: Color,
            plane: Plane, attributes: dict) -> SceneObject:
    """A cell's object: primitive `shape`, or the library object it names (`place_library`)."""
    if shape in library():
        return place_library(object_id, shape, size, centre, rotation, color, plane, attributes)
    quat = quat_of(rotation)
    if plane.layout == "ground":
        location = resting_pose(shape, size, float(centre[0]), float(centre[1]), quat)
    else:
        location = tuple(round6(v) for v in centre)
    return SceneObject(id=object_id, shape=shape, size=round6(size),
                       dimensions=tuple(round6(d * size) for d in unit_dimensions(shape)),
                       location=location, rotation_quat=quat, color=color, attributes=attributes)


def object_px(truth: ObjectTruth) -> float:
    """An object's size in the image: the geometric mean of its projected (amodal) box's sides, in pixels.

    The box, not the area, so that a torus's ring or a cone's tip counts as big as it looks.
    """
    if truth.bbox_amodal is None:
        return 0.0
    x0, y0, x1, y1 = truth.bbox_amodal
    return float(np.sqrt((x1 - x0) * (y1 - y0)))


def board_object(object_id: int, plane: Plane, camera: Camera | None = None) -> SceneObject:
    """The board: a cube so large that only its front face, the panel at y = BOARD_GAP, shows behind the grid.

    With `camera`, the board also reaches past every image corner's line of sight
    (with a metre to spare), so no strip of background shows at the image's edge.
    """
    points = plane.extent()
    edge = float(max(points[:, 0].max() - points[:, 0].min(), points[:, 2].max())) + 6.0
    if camera is not None:
        view = geometry(camera)
        origins, directions = view.rays(np.array([0.0, camera.width, 0.0, camera.width]),
                                        np.array([0.0, 0.0, camera.height, camera.height]))
        for origin, direction in zip(origins, directions, strict=True):
            hit = origin + (BOARD_GAP - origin[1]) / max(float(direction[1]), 1e-6) * direction
            if hit[2] > 0.0:  # the corner sees the board's plane above the ground, not the ground first
                edge = max(edge, 2.0 * abs(float(hit[0])) + 2.0, float(hit[2]) + 1.0)
    return SceneObject(id=object_id, shape="cube", size=round6(edge), dimensions=(round6(edge),) * 3,
                       location=(0.0, round6(BOARD_GAP + edge / 2.0), round6(edge / 2.0)), color=BOARD_COLOR,
                       countable=False, attributes={"role": "board"})


# -- the item ---------------------------------------------------------------------------------------
